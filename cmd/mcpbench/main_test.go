package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// TestMain doubles as a stdio MCP server when mcpbench, under test, spawns
// this test binary with MCPBENCH_TEST_SERVER=1.
func TestMain(m *testing.M) {
	if os.Getenv("MCPBENCH_TEST_SERVER") == "1" {
		serveFake(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// answer is the fake server's reply to one request: tool "echo" succeeds
// after a progress notification, tool "fail" returns isError, anything
// else is a JSON-RPC error.
func answer(m rpc) (notes []string, resp string) {
	id := string(m.ID)
	switch {
	case m.Method == "initialize":
		return nil, `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}}`
	case m.Method == "ping":
		return nil, `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
	case m.Method == "tools/list":
		return nil, `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[]}}`
	case m.Method == "tools/call" && m.Params.Name == "echo":
		return []string{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`},
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]},"id":` + id + `}`
	case m.Method == "tools/call" && m.Params.Name == "hang":
		time.Sleep(time.Hour) // never answers
	case m.Method == "tools/call" && m.Params.Name == "fail":
		return nil, `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"E_NOT_FOUND: no such file\nmore"}],"isError":true}}`
	}
	return nil, `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"Method not found"}}`
}

func serveFake(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		var m rpc
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		notes, resp := answer(m)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
		fmt.Fprintln(w, resp)
		w.Flush()
	}
}

// fakeHTTP serves the same answers over streamable HTTP on loopback: JSON
// for ping and initialize, SSE (notification first) for tool calls.
func fakeHTTP(t *testing.T) (url string, sessions *atomic.Int32) {
	sessions = new(atomic.Int32)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			return
		}
		var m rpc
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, "bad", 400)
			return
		}
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", strconv.Itoa(int(sessions.Add(1))))
		} else if r.Header.Get("Mcp-Session-Id") == "" {
			http.Error(w, "no session", 400)
			return
		}
		notes, resp := answer(m)
		if m.Method != "tools/call" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, n := range append(notes, resp) {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", n)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return fmt.Sprintf("http://%s/mcp", ln.Addr()), sessions
}

// hangingURL is a loopback HTTP endpoint that accepts requests and never
// answers them.
func hangingURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })}
	go srv.Serve(ln)
	t.Cleanup(func() { close(release); srv.Close() })
	return fmt.Sprintf("http://%s/mcp", ln.Addr())
}

func runBench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func selfServer(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPBENCH_TEST_SERVER", "1")
	return []string{"--", exe}
}

func TestMeasures(t *testing.T) {
	url, sessions := fakeHTTP(t)
	tests := []struct {
		name      string
		args      []string
		transport string
		clients   int
		spawned   bool
	}{
		{"stdio tool call", append([]string{"-tool", "echo", "-n", "50", "-warmup", "5", "-cold", "3"}, selfServer(t)...), "stdio", 1, true},
		{"stdio ping", append([]string{"-method", "ping", "-n", "50", "-warmup", "0", "-cold", "0"}, selfServer(t)...), "stdio", 1, true},
		{"stdio 4 in flight", append([]string{"-tool", "echo", "-n", "50", "-c", "4", "-cold", "2", "-cold-until", "tools/list"}, selfServer(t)...), "stdio", 4, true},
		{"an idle wait longer than -timeout", append([]string{"-method", "ping", "-n", "50", "-cold", "0", "-idle-wait", "400ms", "-timeout", "100ms"}, selfServer(t)...), "stdio", 1, true},
		{"http SSE tool call", []string{"-url", url, "-tool", "echo", "-n", "50", "-warmup", "2"}, "http", 1, false},
		{"http 4 clients", []string{"-url", url, "-method", "ping", "-n", "50", "-c", "4"}, "http", 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := runBench(t, append([]string{"-json", "-idle-wait", "1ms"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var r result
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if r.Transport != tt.transport || r.Clients != tt.clients || r.Calls != 50 {
				t.Errorf("got %+v", r)
			}
			if !(r.P50Us > 0 && r.P50Us <= r.P90Us && r.P90Us <= r.P99Us && r.P99Us <= r.MaxUs && r.CallsPerSec > 0) {
				t.Errorf("implausible latencies: %+v", r)
			}
			if r.ResponseBytes == 0 {
				t.Errorf("no response size: %+v", r)
			}
			if tt.spawned && (r.IdleRSSMiB <= 0 || r.PeakRSSMiB < r.IdleRSSMiB*0.5) {
				t.Errorf("spawned server without RSS: %+v", r)
			}
			if tt.spawned && strings.Contains(strings.Join(tt.args, " "), "-cold 3") && r.ColdStartUs <= 0 {
				t.Errorf("no cold start: %+v", r)
			}
		})
	}
	if n := sessions.Load(); n != 1+4 {
		t.Errorf("HTTP sessions opened: %d, want 5 (one per client)", n)
	}
}

func TestRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"an isError result", append([]string{"-tool", "fail", "-cold", "0"}, selfServer(t)...), 1, "E_NOT_FOUND: no such file"},
		{"a JSON-RPC error", append([]string{"-method", "nope", "-cold", "0"}, selfServer(t)...), 1, "-32601"},
		{"a server that never answers", append([]string{"-tool", "hang", "-cold", "0", "-timeout", "300ms"}, selfServer(t)...), 1, "no response for 300ms"},
		{"an HTTP server that never answers", []string{"-url", hangingURL(t), "-method", "ping", "-timeout", "300ms"}, 1, "no response for 300ms"},
		{"a non-loopback URL", []string{"-url", "http://192.0.2.1/mcp", "-method", "ping"}, 1, "loopback"},
		{"a cold start to another response", append([]string{"-method", "ping", "-cold-until", "ping"}, selfServer(t)...), 2, "-cold-until is initialize or tools/list"},
		{"no server", []string{"-method", "ping"}, 2, "give a server"},
		{"tools/call without a tool", append([]string{}, selfServer(t)...), 2, "needs -tool"},
		{"arguments that are not an object", append([]string{"-tool", "echo", "-args", "[1]"}, selfServer(t)...), 2, "JSON object"},
		{"an unknown field", append([]string{"-method", "ping", "-n", "5", "-cold", "0", "-fields", "p50_us,bogus"}, selfServer(t)...), 2, `unknown field "bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := runBench(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errs, tt.code, tt.msg)
			}
		})
	}
}

func TestFields(t *testing.T) {
	out, errs, code := runBench(t, append([]string{"-method", "ping", "-n", "20", "-cold", "0", "-fields", "calls,transport,cold_start_us"}, selfServer(t)...)...)
	if code != 0 {
		t.Fatal(errs)
	}
	if got := strings.TrimSpace(out); got != "20 stdio -" {
		t.Errorf("fields: %q, want %q", got, "20 stdio -")
	}
}

func TestRequestEncoding(t *testing.T) {
	c := config{method: "tools/call", tool: "read_file", args: "{\n  \"path\": \"a \\\"b\\\".txt\"\n}"}
	got := jsonrpc.AppendRequest(nil, 7, c.method, c.params())
	if bytes.ContainsRune(got, '\n') {
		t.Errorf("request spans lines: %s", got)
	}
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if m.JSONRPC != "2.0" || m.ID != 7 || m.Method != "tools/call" || m.Params.Name != "read_file" || m.Params.Arguments["path"] != `a "b".txt` {
		t.Errorf("decoded %+v from %s", m, got)
	}
	if got := string(jsonrpc.AppendRequest(nil, 1, "ping", nil)); got != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Errorf("ping: %s", got)
	}
}
