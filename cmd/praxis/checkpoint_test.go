package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/internal/gittest"
)

// TestAgentGitCheckpoints runs the real binary with --git on a real
// repository: the session works on praxis/<session>, each step that wrote
// a file is a commit with the session's trailers, recorded in the journal;
// a dirty tree is refused.
func TestAgentGitCheckpoints(t *testing.T) {
	repo := gittest.New(t, map[string]string{"a.txt": "one\n"})
	ws, git := repo.Dir, repo.Git
	script := writeFile(t, filepath.Join(t.TempDir(), "s.json"), `{"turns": [
		{"text": "Writing b.", "tool_calls": [{"name": "write_file", "input": {"path": "b.txt", "content": "bee\n"}}]},
		{"text": "Looking.", "tool_calls": [{"name": "list_dir", "input": {}}]},
		{"text": "Writing c.", "tool_calls": [{"name": "write_file", "input": {"path": "c.txt", "content": "sea\n"}}]},
		{"text": "Done."}]}`)

	writeFile(t, filepath.Join(ws, "a.txt"), "dirty\n")
	r := runPraxis(t, ws, "", "agent", "--git", "--provider", "scripted", "--script", script, "write things")
	if r.code != exitUsage || !strings.Contains(r.stderr, "uncommitted changes") || !strings.Contains(r.stderr, "--git=stash") {
		t.Fatalf("a dirty tree: exit %d\n%s", r.code, r.stderr)
	}
	if b := git("branch", "--list", "praxis/*"); b != "" {
		t.Fatalf("a refused session made a branch: %s", b)
	}
	git("checkout", "-q", "--", "a.txt")

	r = runPraxis(t, ws, "", "agent", "--git", "--json", "--provider", "scripted", "--script", script, "write things")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	ids := sessionIDs(r.stderr)
	if len(ids) != 1 {
		t.Fatalf("sessions %v\n%s", ids, r.stderr)
	}
	id := ids[0]
	if cur := git("branch", "--show-current"); cur != "praxis/"+id {
		t.Fatalf("on branch %q", cur)
	}
	log := git("log", "--format=%H %s|%(trailers:key=Praxis-Session,valueonly,separator=)|%(trailers:key=Praxis-Step,valueonly)", "main..HEAD")
	var lines []string // git ends each trailer's value with a newline
	for l := range strings.SplitSeq(log, "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("commits on the branch:\n%s", log)
	}
	// Newest first: step 3 wrote c.txt, step 1 b.txt; step 2 changed nothing.
	for i, want := range []struct{ subject, step string }{{"Writing c.", "3"}, {"Writing b.", "1"}} {
		if _, rest, _ := strings.Cut(lines[i], " "); rest != want.subject+"|"+id+"|"+want.step {
			t.Errorf("commit %d: %q", i, lines[i])
		}
	}
	events, _, err := agent.ReadSession(filepath.Join(ws, ".praxis", "sessions"), id)
	if err != nil {
		t.Fatal(err)
	}
	var commits []string
	for _, ev := range events {
		if ev.Type == agent.EventCheckpoint {
			commits = append(commits, ev.Commit)
		}
		if ev.Type == agent.EventRunStart && ev.Branch != "praxis/"+id {
			t.Errorf("run_start branch %q", ev.Branch)
		}
	}
	want := []string{strings.Fields(lines[1])[0], strings.Fields(lines[0])[0]}
	if strings.Join(commits, " ") != strings.Join(want, " ") {
		t.Errorf("journaled checkpoints %v, want %v", commits, want)
	}
	if out := git("ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(out, ".praxis") {
		t.Errorf("the journal was committed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "c.txt")); err != nil {
		t.Error(err)
	}
}
