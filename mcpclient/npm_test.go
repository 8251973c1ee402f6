package mcpclient

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/npmservers"
	"github.com/praxis-tools/praxis/praxis"
)

// TestNPMServers runs the official reference servers from npm, which
// Praxis did not write, over stdio.
func TestNPMServers(t *testing.T) {
	memBin := npmservers.Bin(t, npmservers.Memory)
	evBin := npmservers.Bin(t, npmservers.Everything)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	m, logs := connect(t, map[string]any{
		"memory":     map[string]any{"command": memBin, "env": map[string]any{"MEMORY_FILE_PATH": memFile}},
		"everything": map[string]any{"command": evBin, "args": []string{"stdio"}, "tools_allow": []string{"echo", "get-*"}},
	})
	for _, st := range m.Servers() {
		if st.State != StateConnected {
			t.Fatalf("%s: %+v\nlog:\n%s", st.Name, st, logs)
		}
	}

	res := call(t, m, "mcp__memory__create_entities",
		`{"entities": [{"name": "praxis", "entityType": "project", "observations": ["written in Go"]}]}`)
	if res.IsError {
		t.Fatalf("create_entities: %+v", res)
	}
	res = call(t, m, "mcp__memory__read_graph", `{}`)
	if res.IsError || !strings.Contains(res.Text, "written in Go") {
		t.Errorf("read_graph = %+v", res)
	}
	if b, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(b), "written in Go") {
		t.Errorf("memory file: %q, %v", b, err)
	}

	if res := call(t, m, "mcp__everything__echo", `{"message": "from Go"}`); res.IsError || !strings.Contains(res.Text, "from Go") {
		t.Errorf("echo = %+v", res)
	}
	if res := call(t, m, "mcp__everything__get-sum", `{"a": 2, "b": 40}`); res.IsError || !strings.Contains(res.Text, "42") {
		t.Errorf("get-sum = %+v", res)
	}
	if res := call(t, m, "mcp__everything__get-tiny-image", `{}`); res.IsError || !strings.Contains(res.Text, "[image: image/png") {
		t.Errorf("get-tiny-image = %+v", res)
	}
	// The filter kept only echo and get-*; the schema came through.
	var n int
	for _, tl := range m.Tools() {
		if strings.HasPrefix(tl.Name, "mcp__everything__") {
			n++
			if !strings.HasPrefix(tl.Name, "mcp__everything__echo") && !strings.HasPrefix(tl.Name, "mcp__everything__get-") {
				t.Errorf("tool %s passed the filter", tl.Name)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d everything tools", n)
	}
	sum := toolByName(t, m, "mcp__everything__get-sum")
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(sum.InputSchema, &schema); err != nil || schema.Properties["a"] == nil {
		t.Errorf("get-sum schema = %s", sum.InputSchema)
	}
	if res := call(t, m, "mcp__everything__get-sum", `{"a": "two"}`); res.Code != praxis.EInvalidArgs {
		t.Errorf("get-sum with bad arguments = %+v", res)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestNPMServerOverHTTP runs the official "everything" server from npm
// over streamable HTTP and over the legacy HTTP+SSE transport, on
// loopback, and calls its tools.
func TestNPMServerOverHTTP(t *testing.T) {
	bin := npmservers.Bin(t, npmservers.Everything)
	script, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	preload, err := filepath.Abs(filepath.Join("testdata", "loopback.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, typ, path string }{
		{"streamableHttp", TransportHTTP, "/mcp"},
		{"sse", TransportSSE, "/sse"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			addr := startNode(t, "--import", "file://"+preload, script, tc.mode)
			m, logs := connect(t, map[string]any{"ev": map[string]any{"type": tc.typ, "url": "http://" + addr + tc.path}})
			st := m.Servers()[0]
			if st.State != StateConnected || st.Transport != tc.typ || st.ProtocolVersion != legacyVersions()[0] {
				t.Fatalf("server = %+v\nlog:\n%s", st, logs)
			}
			if res := call(t, m, "mcp__ev__echo", `{"message": "from Go over `+tc.typ+`"}`); res.IsError || !strings.Contains(res.Text, "from Go over "+tc.typ) {
				t.Errorf("echo = %+v", res)
			}
			if res := call(t, m, "mcp__ev__get-sum", `{"a": 2, "b": 40}`); res.IsError || !strings.Contains(res.Text, "42") {
				t.Errorf("get-sum = %+v", res)
			}
			if res := call(t, m, "mcp__ev__get-tiny-image", `{}`); res.IsError || len(res.Images) != 1 || res.Images[0].MIMEType != "image/png" {
				t.Errorf("get-tiny-image = %+v", res)
			}
			if err := m.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

var listeningRE = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// startNode runs node with args and PORT=0, and returns the loopback
// address it says it listens on.
func startNode(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), "PORT=0")
	return startLogging(t, cmd, listeningRE, 30*time.Second)
}

// startLogging starts cmd, kills it at the end of the test, and returns
// the first submatch of re in its standard error, waiting for it up to
// limit.
func startLogging(t *testing.T, cmd *exec.Cmd, re *regexp.Regexp, limit time.Duration) string {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v logged nothing matching %s:\n%s", cmd.Args, re, stderr)
		}
	}
}
