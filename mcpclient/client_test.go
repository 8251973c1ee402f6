package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/praxis-tools/praxis/praxis"
)

// syncBuffer is a log destination safe for the concurrent writes of
// several servers.
type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

// fakeStdio is the configuration of a fake server in the given mode.
func fakeStdio(t testing.TB, name, mode string, extra map[string]any) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]any{fakeServerEnv: mode}
	if e, ok := extra["env"].(map[string]any); ok {
		for k, v := range e {
			env[k] = v
		}
		delete(extra, "env")
	}
	s := map[string]any{"command": exe, "env": env}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// connect writes servers as a config file, loads it and connects.
func connect(t testing.TB, servers map[string]any) (*Manager, *syncBuffer) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(file, Vars{})
	if err != nil {
		t.Fatal(err)
	}
	logs := newSyncBuffer()
	m := Connect(context.Background(), cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	t.Cleanup(func() { _ = m.Close() })
	return m, logs
}

func toolByName(t *testing.T, m *Manager, name string) praxis.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name)
	}
	t.Fatalf("no tool %q; have %v", name, names)
	return praxis.Tool{}
}

// call runs a tool through a catalog, as the agent loop does.
func call(t *testing.T, m *Manager, name, args string) praxis.Result {
	t.Helper()
	cat, err := praxis.NewCatalog(m.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cat.Call(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStdioServerTools(t *testing.T) {
	m, logs := connect(t, map[string]any{
		"fake": fakeStdio(t, "fake", "stdio", map[string]any{"tools_deny": []string{"hang"}}),
	})
	st := m.Servers()
	if len(st) != 1 || st[0].State != StateConnected {
		t.Fatalf("servers = %+v\nlog:\n%s", st, logs)
	}
	if st[0].ServerName != "fake" || st[0].ServerVersion != "1.2.3" || st[0].ProtocolVersion == "" {
		t.Errorf("handshake info = %+v", st[0])
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name)
	}
	want := []string{"mcp__fake__a_b_c_d", "mcp__fake__crash", "mcp__fake__echo", "mcp__fake__fail", "mcp__fake__pid"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("tools = %v, want %v", names, want)
	}

	echo := toolByName(t, m, "mcp__fake__echo")
	if echo.Description != "Echoes its message." {
		t.Errorf("description = %q", echo.Description)
	}
	if (echo.Annotations != praxis.Annotations{ReadOnly: true, Idempotent: true}) {
		t.Errorf("echo annotations = %+v", echo.Annotations)
	}
	if !strings.Contains(string(echo.InputSchema), `"message"`) {
		t.Errorf("echo schema = %s", echo.InputSchema)
	}
	pid := toolByName(t, m, "mcp__fake__pid")
	if (pid.Annotations != praxis.Annotations{Destructive: true, OpenWorld: true}) {
		t.Errorf("unannotated tool: annotations = %+v, want destructive and open-world", pid.Annotations)
	}

	if res := call(t, m, "mcp__fake__echo", `{"message": "hi"}`); res.IsError || res.Text != "echo: hi" {
		t.Errorf("echo = %+v", res)
	}
	if res := call(t, m, "mcp__fake__a_b_c_d", `{}`); res.Text != "sanitised" {
		t.Errorf("sanitised tool = %+v", res)
	}
	// The catalog checks arguments against the server's schema.
	if res := call(t, m, "mcp__fake__echo", `{}`); !res.IsError || res.Code != praxis.EInvalidArgs {
		t.Errorf("echo without message = %+v", res)
	}
	res := call(t, m, "mcp__fake__fail", `{}`)
	if !res.IsError || res.Code != praxis.EExternal || res.Text != "E_EXTERNAL: the widget is broken" {
		t.Errorf("failing tool = %+v", res)
	}
	var denied bool
	for _, ti := range st[0].Tools {
		if ti.Original == "hang" && ti.Skipped != "" && ti.Name == "" {
			denied = true
		}
	}
	if !denied {
		t.Errorf("hang should be listed as skipped by tools_deny: %+v", st[0].Tools)
	}
}

func TestCrashMidCallRestartsOnce(t *testing.T) {
	m, logs := connect(t, map[string]any{"fake": fakeStdio(t, "fake", "stdio", nil)})
	first := call(t, m, "mcp__fake__pid", `{}`).Text

	res := call(t, m, "mcp__fake__crash", `{}`)
	if !res.IsError || res.Code != praxis.EUnavailable {
		t.Fatalf("crash = %+v", res)
	}
	for _, want := range []string{`MCP server "fake" failed during the call to crash`, "exit status 3", "crashing as asked", "was restarted"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("crash error lacks %q:\n%s", want, res.Text)
		}
	}
	second := call(t, m, "mcp__fake__pid", `{}`).Text
	if second == first || second == "" {
		t.Errorf("after the restart pid = %q, before %q: want a new process", second, first)
	}
	if st := m.Servers()[0]; st.State != StateConnected || st.Restarts != 1 {
		t.Errorf("after one crash: %+v", st)
	}

	res = call(t, m, "mcp__fake__crash", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "now stopped") {
		t.Errorf("second crash = %+v", res)
	}
	res = call(t, m, "mcp__fake__echo", `{"message": "x"}`)
	if !res.IsError || res.Code != praxis.EUnavailable || !strings.Contains(res.Text, "not available") {
		t.Errorf("call after the second crash = %+v", res)
	}
	if st := m.Servers()[0]; st.State != StateFailed || st.Error == "" {
		t.Errorf("after two crashes: %+v", st)
	}
	if !strings.Contains(logs.String(), "crashing as asked") {
		t.Errorf("the server's stderr is not in the log:\n%s", logs)
	}
}

func TestCallTimeout(t *testing.T) {
	// The timeout bounds the handshake too: it leaves a loaded machine
	// time to start the server.
	m, _ := connect(t, map[string]any{"fake": fakeStdio(t, "fake", "stdio", map[string]any{"timeout": "2s"})})
	start := time.Now()
	res := call(t, m, "mcp__fake__hang", `{}`)
	if !res.IsError || res.Code != praxis.ETimeout || !strings.Contains(res.Text, "within 2s") {
		t.Fatalf("hang = %+v", res)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	// The server is still usable.
	if res := call(t, m, "mcp__fake__echo", `{"message": "still here"}`); res.IsError {
		t.Errorf("echo after a timeout = %+v", res)
	}
}

func TestCallCancelled(t *testing.T) {
	m, _ := connect(t, map[string]any{"fake": fakeStdio(t, "fake", "stdio", nil)})
	cat, err := praxis.NewCatalog(m.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := cat.Call(ctx, "mcp__fake__hang", json.RawMessage(`{}`))
	if err != nil || res.Code != praxis.ECancelled {
		t.Errorf("cancelled call = %+v, %v", res, err)
	}
}

func TestBadServers(t *testing.T) {
	m, logs := connect(t, map[string]any{
		// Long enough for the silent server to start and say so on stderr.
		"silent":   fakeStdio(t, "silent", "silent", map[string]any{"timeout": 3}),
		"exits":    fakeStdio(t, "exits", "exit", nil),
		"missing":  map[string]any{"command": "praxis-no-such-mcp-server-command"},
		"refused":  map[string]any{"url": "http://127.0.0.1:1/mcp", "timeout": "2s"},
		"disabled": map[string]any{"command": "praxis-no-such-mcp-server-command", "enabled": false},
		"good":     fakeStdio(t, "good", "stdio", nil),
	})
	want := map[string]struct {
		state State
		err   string
	}{
		"silent":   {StateFailed, "no answer within 3s"},
		"exits":    {StateFailed, "missing API token"},
		"missing":  {StateFailed, "executable file not found"},
		"refused":  {StateFailed, "connection refused"},
		"disabled": {StateDisabled, ""},
		"good":     {StateConnected, ""},
	}
	for _, st := range m.Servers() {
		w := want[st.Name]
		if st.State != w.state || !strings.Contains(st.Error, w.err) || (w.err == "") != (st.Error == "") {
			t.Errorf("%s: state %s, error %q; want %s, %q", st.Name, st.State, st.Error, w.state, w.err)
		}
	}
	for _, tl := range m.Tools() {
		if !strings.HasPrefix(tl.Name, "mcp__good__") {
			t.Errorf("tool %s from a server that is not connected", tl.Name)
		}
	}
	if !strings.Contains(logs.String(), "silent fake server") {
		t.Errorf("stderr of the silent server not logged:\n%s", logs)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "child.pid")
	m, _ := connect(t, map[string]any{
		"fake": fakeStdio(t, "fake", "stdio", map[string]any{"env": map[string]any{"FAKE_CHILD_PIDFILE": pidfile}}),
	})
	serverPid, err := strconv.Atoi(call(t, m, "mcp__fake__pid", `{}`).Text)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	childPid, _ := strconv.Atoi(string(b))
	if !alive(serverPid) || !alive(childPid) {
		t.Fatalf("server %d alive %v, child %d alive %v before Close", serverPid, alive(serverPid), childPid, alive(childPid))
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (alive(serverPid) || alive(childPid)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(serverPid) || alive(childPid) {
		t.Errorf("after Close: server %d alive %v, its child %d alive %v", serverPid, alive(serverPid), childPid, alive(childPid))
	}
	if st := m.Servers()[0]; st.State != StateClosed {
		t.Errorf("state after Close = %s", st.State)
	}
	if res := call(t, m, "mcp__fake__echo", `{"message": "x"}`); res.Code != praxis.EUnavailable {
		t.Errorf("call after Close = %+v", res)
	}
}

// alive reports whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no procfs: trust kill
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestHTTPServer(t *testing.T) {
	srv := httptest.NewServer(server.NewStreamableHTTPServer(newFakeServer()))
	defer srv.Close()
	m, logs := connect(t, map[string]any{
		"remote": map[string]any{"type": "http", "url": srv.URL + "/mcp", "headers": map[string]any{"X-Test": "1"}},
	})
	if st := m.Servers()[0]; st.State != StateConnected || st.Transport != TransportHTTP {
		t.Fatalf("server = %+v\n%s", st, logs)
	}
	if res := call(t, m, "mcp__remote__echo", `{"message": "over http"}`); res.IsError || res.Text != "echo: over http" {
		t.Errorf("echo over HTTP = %+v", res)
	}
}

// TestSSEServer connects over the legacy HTTP+SSE transport to a real
// SSE server on loopback, sending the configured headers.
func TestSSEServer(t *testing.T) {
	var sawHeader atomic.Bool
	sse := server.NewSSEServer(newFakeServer())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer t0k" {
			sawHeader.Store(true)
		}
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the Manager's Close, which ends the event stream
	t.Setenv("PRAXIS_TEST_SSE_TOKEN", "t0k")
	m, logs := connect(t, map[string]any{
		"legacy": map[string]any{"type": "sse", "url": srv.URL + "/sse", "headers": map[string]any{"Authorization": "Bearer ${env:PRAXIS_TEST_SSE_TOKEN}"}},
	})
	if st := m.Servers()[0]; st.State != StateConnected || st.Transport != TransportSSE {
		t.Fatalf("server = %+v\n%s", st, logs)
	}
	if res := call(t, m, "mcp__legacy__echo", `{"message": "over sse"}`); res.IsError || res.Text != "echo: over sse" {
		t.Errorf("echo over SSE = %+v", res)
	}
	if !sawHeader.Load() {
		t.Error("the server never saw the configured Authorization header")
	}
}

// TestBadEntriesAreSkipped: a configuration as users have them, with
// entries that cannot be used next to good ones: the good ones start, the
// bad ones are listed as invalid with the reason and warned of by name.
func TestBadEntriesAreSkipped(t *testing.T) {
	srv := httptest.NewServer(server.NewStreamableHTTPServer(newFakeServer()))
	defer srv.Close()
	m, logs := connect(t, map[string]any{
		"good":         fakeStdio(t, "good", "stdio", nil),
		"remote":       map[string]any{"url": srv.URL + "/mcp"},
		"no-command":   map[string]any{"args": []string{"x"}},
		"unset-var":    map[string]any{"command": "x", "env": map[string]any{"K": "${PRAXIS_TEST_SURELY_UNSET}"}},
		"vscode-input": map[string]any{"command": "x", "args": []string{"${input:api-key}"}},
		"wrong-kind":   map[string]any{"command": "x", "args": "not a list"},
		"not-object":   "npx server",
	})
	want := map[string]string{
		"no-command":   `a stdio server needs "command"`,
		"unset-var":    "PRAXIS_TEST_SURELY_UNSET is not set",
		"vscode-input": "${input:api-key} asks the user for a value",
		"wrong-kind":   `"args" should be a list, not string`,
		"not-object":   "the value should be an object, not string",
	}
	for _, st := range m.Servers() {
		reason, bad := want[st.Name]
		switch {
		case bad && (st.State != StateInvalid || !strings.Contains(st.Error, reason)):
			t.Errorf("%s: %s %q; want invalid, %q", st.Name, st.State, st.Error, reason)
		case bad && !strings.Contains(logs.String(), "mcp_server="+st.Name):
			t.Errorf("no warning names %s:\n%s", st.Name, logs)
		case !bad && st.State != StateConnected:
			t.Errorf("%s: %s %s; want connected", st.Name, st.State, st.Error)
		}
	}
	if len(m.Servers()) != 7 {
		t.Errorf("%d servers listed; want all 7", len(m.Servers()))
	}
	toolByName(t, m, "mcp__good__echo")
	toolByName(t, m, "mcp__remote__echo")
}

func TestHTTPServerGoneRestartsOnce(t *testing.T) {
	srv := httptest.NewServer(server.NewStreamableHTTPServer(newFakeServer()))
	m, _ := connect(t, map[string]any{"remote": map[string]any{"url": srv.URL + "/mcp", "timeout": "3s"}})
	toolByName(t, m, "mcp__remote__echo")
	srv.Close()
	res := call(t, m, "mcp__remote__echo", `{"message": "x"}`)
	if !res.IsError || res.Code != praxis.EUnavailable || !strings.Contains(res.Text, `MCP server "remote"`) {
		t.Errorf("call to a server that went away = %+v", res)
	}
	if st := m.Servers()[0]; st.State != StateFailed || st.Restarts != 1 {
		t.Errorf("after the server went away: %+v", st)
	}
}
