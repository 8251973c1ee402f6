//go:build linux

package praxis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/praxis-tools/praxis/internal/dockerimage"
	"github.com/praxis-tools/praxis/sandbox"
)

// withDocker enables the shell under isolation docker, edited by edit.
func withDocker(t *testing.T, edit func(*sandbox.Policy)) func(*Options) {
	img := dockerimage.Image(t)
	return withShell(func(p *sandbox.Policy) {
		p.Isolation = sandbox.IsolationDocker
		p.Image = img
		if edit != nil {
			edit(p)
		}
	})
}

// workspaceContainers returns the ids of the engine's containers labelled
// with workspace dir.
func workspaceContainers(t *testing.T, dir string) []string {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{
		All: true, Filters: make(client.Filters).Add("label", "praxis.workspace="+realTestPath(t, dir)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

// The bash tool's contract does not change with the runner: results,
// error codes, jobs and the end of the session.
func TestBashDocker(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"sub/a.txt": "x\n"}, withDocker(t, func(p *sandbox.Policy) {
		p.Limits.Processes = 64
		p.BackgroundAfter = -1
	}))

	res := mustOK(t, call(t, e, "bash", map[string]any{"command": "ls; pwd; echo oops >&2; exit 3", "cwd": "sub"}))
	if !strings.HasPrefix(res.Text, "exit code 3 after ") ||
		!strings.Contains(res.Text, "--- stdout ---\na.txt\n"+realTestPath(t, dir)+"/sub\n") ||
		!strings.Contains(res.Text, "--- stderr ---\noops\n") {
		t.Errorf("result:\n%s", res.Text)
	}

	res = mustOK(t, call(t, e, "bash", map[string]any{"command": "sleep 300 & echo started"}))
	if !strings.Contains(res.Text, "note: 1 background process(es) were still running") ||
		res.Structured.(bashInfo).LeftoversKilled != 1 {
		t.Errorf("leftovers:\n%s", res.Text)
	}

	mustFail(t, call(t, e, "bash", map[string]any{"command": "echo before; sleep 60", "timeout_ms": 1000}),
		ETimeout, "ran past its time limit of 1s", "--- stdout ---\nbefore\n")
	mustFail(t, call(t, e, "bash", map[string]any{"command": "f() { f | f & }; f; wait", "timeout_ms": 60000}),
		EBudgetExceeded, "more processes than the policy allows")

	res = mustOK(t, call(t, e, "bash", map[string]any{"command": "printf 'fi%st\\n' rs; sleep 300", "background": true}))
	id := jobID.FindStringSubmatch(res.Text)
	if id == nil {
		t.Fatalf("no job id:\n%s", res.Text)
	}
	var seen string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(seen, "first") && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		seen += mustOK(t, call(t, e, "job_output", map[string]any{"job": id[1]})).Text
	}
	if !strings.Contains(seen, "first") {
		t.Fatalf("job output:\n%s", seen)
	}
	killed := mustOK(t, call(t, e, "job_kill", map[string]any{"job": id[1]}))
	if !strings.HasPrefix(killed.Text, "job "+id[1]+" killed") {
		t.Errorf("job_kill:\n%s", killed.Text)
	}
	// The container lives through all of it, and is the session's only one.
	if ids := workspaceContainers(t, dir); len(ids) != 1 {
		t.Errorf("containers of the workspace: %v, want one", ids)
	}
	mustOK(t, call(t, e, "bash", map[string]any{"command": "sleep 300", "background": true}))
	e.Close()
	if ids := workspaceContainers(t, dir); len(ids) != 0 {
		t.Errorf("containers left after Close: %v", ids)
	}
}

func TestBashDockerMemory(t *testing.T) {
	e, _ := newTestEngine(t, nil, withDocker(t, func(p *sandbox.Policy) {
		p.Limits.Memory = 64 << 20
		p.Limits.AddressSpace = -1
	}))
	res := mustOK(t, call(t, e, "bash", map[string]any{"command": "tail /dev/zero", "timeout_ms": 60000}))
	if !strings.Contains(strings.SplitN(res.Text, "\n", 2)[0], "(stopped by the memory limit)") {
		t.Errorf("result:\n%s", res.Text)
	}
}

// realTestPath returns path with symlinks resolved.
func realTestPath(t *testing.T, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
