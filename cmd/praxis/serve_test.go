package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is a running praxis subprocess speaking JSON-RPC lines.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	return startEnv(t, dir, nil, args...)
}

// startEnv is start with env added to the environment.
func startEnv(t *testing.T, dir string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(praxisBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PRAXIS_TOKEN="), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out), stderr: &syncBuffer{}}
	p.out.Buffer(make([]byte, 1<<20), 64<<20)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// recv reads one line and checks it is a JSON-RPC message.
func (p *proc) recv() map[string]any {
	p.t.Helper()
	if !p.out.Scan() {
		p.t.Fatalf("no more output (stderr: %s)", p.stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
		p.t.Fatalf("stdout carried a non-protocol line %q", p.out.Text())
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func (p *proc) handshake() {
	p.t.Helper()
	p.send(initLine)
	if m := p.recv(); m["result"] == nil {
		p.t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		p.t.Fatalf("praxis did not exit (stderr: %s)", p.stderr.String())
	}
	return -1
}

func TestServeStdioWithNoConfiguration(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi there\n"), 0o644)
	p := start(t, dir, "serve")
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`)
	m := p.recv()
	b, _ := json.Marshal(m)
	if !strings.Contains(string(b), "hi there") {
		t.Fatalf("read_file in the current directory: %s", b)
	}
	// SIGTERM ends the server cleanly.
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(5 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM (stderr: %s)", code, p.stderr.String())
	}
	// The server said which sandbox mode runs, as far as it is known
	// without starting a process: with bwrap on PATH, that it is tried at
	// the first command; without, that commands run unisolated.
	want := `sandbox="isolation auto, network on (bwrap is tried at the first command)"`
	if _, err := exec.LookPath("bwrap"); err != nil {
		want = `sandbox="isolation none (policy auto), network on; bwrap unavailable: `
	}
	if !strings.Contains(p.stderr.String(), want) {
		t.Errorf("the sandbox mode is not on stderr as %s:\n%s", want, p.stderr.String())
	}
}

// TestServeHTTPStartLineProbes: over HTTP the start line names the mode
// actually running, so bwrap is probed at start, with no command: a bwrap
// that cannot build the sandbox shows in the line as the fallback, with
// its reason.
func TestServeHTTPStartLineProbes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir, bin := t.TempDir(), t.TempDir()
	ran := filepath.Join(bin, "ran")
	fake := "#!/bin/sh\necho run >> " + ran + "\necho 'bwrap: no namespaces here' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startEnv(t, dir, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "serve", "--http=127.0.0.1:0", "--workspace", dir)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), `msg="praxis serve"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no start line:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := `sandbox="isolation none (policy auto), network on; bwrap unavailable: `; !strings.Contains(p.stderr.String(), want) ||
		!strings.Contains(p.stderr.String(), "bwrap: no namespaces here") {
		t.Errorf("the start line does not name the fallback and its reason:\n%s", p.stderr.String())
	}
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "run") != 1 {
		t.Errorf("bwrap ran %d times at start, want 1", strings.Count(string(b), "run"))
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(5 * time.Second)
}

// TestServeProbesAtFirstCommand: an idle server on stdio starts no
// process. Under isolation auto, bwrap is first run for the first bash
// command; a bwrap that cannot build the sandbox then makes commands run
// unisolated, and the server says so, with bwrap's own words.
func TestServeProbesAtFirstCommand(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir, bin := t.TempDir(), t.TempDir()
	ran := filepath.Join(bin, "ran")
	fake := "#!/bin/sh\necho run >> " + ran + "\necho 'bwrap: no namespaces here' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startEnv(t, dir, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "serve", "--workspace", dir)
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	p.recv()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), `msg="praxis serve"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no start line:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := `sandbox="isolation auto, network on (bwrap is tried at the first command)"`; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("the start line lacks %s:\n%s", want, p.stderr.String())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the idle server ran bwrap")
	}

	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hello from bash"}}}`)
	b, _ := json.Marshal(p.recv())
	if !strings.Contains(string(b), "hello from bash") {
		t.Fatalf("bash after the fallback: %s", b)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Error("the first command did not probe bwrap")
	}
	if want := "bwrap: no namespaces here"; !strings.Contains(p.stderr.String(), want) || !strings.Contains(p.stderr.String(), "isolation none (policy auto)") {
		t.Errorf("the fallback is not logged with %q:\n%s", want, p.stderr.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(5 * time.Second)
	if n := strings.Count(p.stderr.String(), `msg="praxis serve"`); n != 1 {
		t.Errorf("%d start lines; want 1:\n%s", n, p.stderr.String())
	}
}

// TestServeHasNoFixtures: the conformance fixtures live in their own
// command; praxis serves only its own tools and capabilities (subscribing
// to files among them).
func TestServeHasNoFixtures(t *testing.T) {
	p := start(t, t.TempDir(), "serve")
	p.send(initLine)
	init, _ := json.Marshal(p.recv())
	if bytes.Contains(init, []byte(`"completions"`)) {
		t.Errorf("initialize advertises completions: %s", init)
	}
	if !bytes.Contains(init, []byte(`"subscribe":true`)) {
		t.Errorf("initialize does not advertise its file subscriptions: %s", init)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	b, _ := json.Marshal(p.recv())
	if !bytes.Contains(b, []byte(`"read_file"`)) || bytes.Contains(b, []byte(`"test_simple_text"`)) {
		t.Errorf("tools/list: %s", b)
	}
	p.in.Close()
	if code := p.wait(5 * time.Second); code != 0 {
		t.Errorf("exit code %d at EOF", code)
	}
	if code := start(t, t.TempDir(), "serve", "--conformance-fixtures").wait(5 * time.Second); code != exitUsage {
		t.Errorf("--conformance-fixtures: exit code %d, want the usage error", code)
	}
}

func TestServeHTTPNeedsTokenOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		p := start(t, t.TempDir(), "serve", "--http="+addr)
		if code := p.wait(5 * time.Second); code != exitUsage {
			t.Errorf("--http=%s without a token: exit %d, want %d", addr, code, exitUsage)
		}
		if !strings.Contains(p.stderr.String(), "requires a bearer token") {
			t.Errorf("--http=%s: stderr %q", addr, p.stderr.String())
		}
	}
}

var urlRE = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// TestConnectThroughHTTP runs "praxis serve --http" with a token and
// "praxis connect" in front of it, and reads a file through both.
func TestConnectThroughHTTP(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("shared content\n"), 0o644)
	srv := start(t, dir, "serve", "--http=127.0.0.1:0", "--workspace", dir, "--token", "tok")
	var url string
	for deadline := time.Now().Add(5 * time.Second); url == ""; time.Sleep(20 * time.Millisecond) {
		if m := urlRE.FindStringSubmatch(srv.stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no URL logged: %s", srv.stderr.String())
		}
	}
	p := start(t, t.TempDir(), "connect", "--token", "tok", url)
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"shared.txt"}}}`)
	b, _ := json.Marshal(p.recv())
	if !strings.Contains(string(b), "shared content") {
		t.Fatalf("read through connect: %s", b)
	}
	p.in.Close()
	if code := p.wait(5 * time.Second); code != 0 {
		t.Errorf("connect exit code %d", code)
	}
	srv.cmd.Process.Signal(syscall.SIGINT)
	if code := srv.wait(5 * time.Second); code != 0 {
		t.Errorf("serve exit code %d after SIGINT", code)
	}
}

// TestServeRootTakesItsOwnConfig: a workspace named by the client's roots
// gets the sandbox policy of its own .praxis/config.yaml.
func TestServeRootTakesItsOwnConfig(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis"), 0o755)
	os.WriteFile(filepath.Join(root, ".praxis", "config.yaml"), []byte("sandbox:\n  shell: false\n"), 0o644)
	p := start(t, t.TempDir(), "serve")
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	p.recv()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hi"}}}`)
	ask := p.recv()
	if ask["method"] != "roots/list" {
		t.Fatalf("want roots/list, got %v", ask)
	}
	id, _ := json.Marshal(ask["id"])
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file://%s"}]}}`, id, filepath.ToSlash(root)))
	b, _ := json.Marshal(p.recv())
	if !strings.Contains(string(b), "E_POLICY") {
		t.Errorf("bash in a root whose config disables the shell: %s", b)
	}
}

// TestServeStartLine: serve says on stderr, in one line at start, how it
// serves: the transport, the workspace, the sandbox mode and the number of
// tools; stdout carries nothing but protocol.
func TestServeStartLine(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "serve", "--sandbox", "none", "--workspace", dir)
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m := p.recv()
	tools, _ := m["result"].(map[string]any)["tools"].([]any)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(5 * time.Second)
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(p.stderr.String()), "\n") {
		if strings.Contains(l, `msg="praxis serve"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d start lines; want 1:\n%s", len(lines), p.stderr.String())
	}
	real, _ := filepath.EvalSymlinks(dir)
	for _, w := range []string{"transport=stdio", `sandbox="isolation none, network on"`, fmt.Sprintf("tools=%d", len(tools))} {
		if !strings.Contains(lines[0], w) {
			t.Errorf("the start line lacks %s: %s", w, lines[0])
		}
	}
	if !strings.Contains(lines[0], "workspace="+dir) && !strings.Contains(lines[0], "workspace="+real) {
		t.Errorf("the start line does not name the workspace %s: %s", dir, lines[0])
	}
	if len(tools) == 0 {
		t.Error("no tools listed")
	}
}
