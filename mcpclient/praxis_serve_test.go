package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/praxis"
)

// buildPraxis builds the praxis command, the real server the tests in
// this file connect to.
func buildPraxis(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "praxis")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/praxis-tools/praxis/cmd/praxis").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var serveURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// servePraxisHTTP starts "praxis serve --http" on a free loopback port
// and returns its URL.
func servePraxisHTTP(t *testing.T, bin, workspace string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http=127.0.0.1:0", "--workspace", workspace, "--sandbox", "none")
	return startLogging(t, cmd, serveURL, 20*time.Second)
}

// TestPraxisServe connects to Praxis's own server, built from this
// repository, over stdio and over streamable HTTP: the handshake settles
// on 2026-07-28 (server/discover), tools are listed and called, a tool's
// failure is E_EXTERNAL with the server's code, and a cancelled call is
// cancelled on the server too: the command it started is killed.
func TestPraxisServe(t *testing.T) {
	bin := buildPraxis(t)
	for _, transport := range []string{TransportStdio, TransportHTTP} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			entry := map[string]any{"command": bin, "args": []string{"serve", "--workspace", dir, "--sandbox", "none"}}
			if transport == TransportHTTP {
				entry = map[string]any{"type": "http", "url": servePraxisHTTP(t, bin, dir)}
			}
			m, logs := connect(t, map[string]any{"px": entry})
			st := m.Servers()[0]
			if st.State != StateConnected || st.ServerName != "praxis" || st.ProtocolVersion != "2026-07-28" || st.Transport != transport {
				t.Fatalf("server = %+v\nlog:\n%s", st, logs)
			}
			if res := call(t, m, "mcp__px__read_file", `{"path": "hello.txt"}`); res.IsError || !strings.Contains(res.Text, "hello from the workspace") {
				t.Errorf("read_file = %+v", res)
			}
			if res := call(t, m, "mcp__px__write_file", `{"path": "new.txt", "content": "written through MCP\n"}`); res.IsError {
				t.Errorf("write_file = %+v", res)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "written through MCP\n" {
				t.Errorf("new.txt = %q, %v", b, err)
			}
			res := call(t, m, "mcp__px__read_file", `{"path": "missing.txt"}`)
			if !res.IsError || res.Code != praxis.EExternal || !strings.HasPrefix(res.Text, "E_EXTERNAL: E_") {
				t.Errorf("read_file of a missing file = %+v", res)
			}

			// A cancelled call: the server kills the command it started,
			// a sleep of a duration no other process has.
			secs := "600." + strconv.Itoa(os.Getpid()) + strconv.Itoa(len(transport))
			cat, err := praxis.NewCatalog(m.Tools()...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan praxis.Result, 1)
			go func() {
				r, _ := cat.Call(ctx, "mcp__px__bash", json.RawMessage(`{"command": "exec sleep `+secs+`", "timeout_ms": 1200000}`))
				done <- r
			}()
			pid := waitCommand(t, "sleep\x00"+secs)
			cancel()
			if r := <-done; r.Code != praxis.ECancelled {
				t.Errorf("cancelled call = %+v", r)
			}
			deadline := time.Now().Add(10 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				t.Errorf("the command of the cancelled call (pid %d) still runs: the server did not cancel it", pid)
			}
			if res := call(t, m, "mcp__px__read_file", `{"path": "hello.txt"}`); res.IsError {
				t.Errorf("a call after the cancelled one = %+v", res)
			}
		})
	}
}

// waitCommand waits for a process whose command line (NUL-separated
// arguments) is cmdline, and returns its pid.
func waitCommand(t *testing.T, cmdline string) int {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc to find the command's process in")
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.TrimRight(string(b), "\x00") == cmdline {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				return pid
			}
		}
	}
	t.Fatalf("no process %q", cmdline)
	return 0
}
