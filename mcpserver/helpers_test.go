package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/praxis"
)

// testTools are engine tools the tests add to every engine they open on
// dir.
func testTools(t testing.TB, started chan<- string, dir string) []praxis.Tool {
	obj := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"size":{"type":"integer"},"path":{"type":"string"}},"additionalProperties":false}`)
	ann := praxis.Annotations{ReadOnly: true, Idempotent: true}
	return []praxis.Tool{
		{
			Name: "steps", Description: "Reports n progress steps.", InputSchema: obj, Annotations: ann,
			Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
				var a struct{ N int }
				json.Unmarshal(args, &a)
				for i := 1; i <= a.N; i++ {
					praxis.ReportProgress(ctx, float64(i), float64(a.N), fmt.Sprintf("step %d", i))
				}
				return praxis.Result{Text: fmt.Sprintf("%d steps", a.N)}, nil
			},
		},
		{
			Name: "gate", Description: "Waits until the file path exists in the workspace, or until cancelled.", InputSchema: obj, Annotations: ann,
			Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
				var a struct{ Path string }
				json.Unmarshal(args, &a)
				if started != nil {
					started <- "gate"
				}
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for {
					if _, err := os.Stat(filepath.Join(dir, a.Path)); err == nil {
						return praxis.Result{Text: "released " + a.Path}, nil
					}
					select {
					case <-ctx.Done():
						if started != nil {
							started <- "cancelled"
						}
						return praxis.Result{}, praxis.Errorf(praxis.ECancelled, "gate: %v", ctx.Err())
					case <-tick.C:
					}
				}
			},
		},
		{
			Name: "boom", Description: "Panics.", InputSchema: obj, Annotations: ann,
			Handler: func(context.Context, json.RawMessage) (praxis.Result, error) { panic("kaboom") },
		},
		{
			Name: "block", Description: "Waits until cancelled.", InputSchema: obj, Annotations: ann,
			Handler: func(ctx context.Context, _ json.RawMessage) (praxis.Result, error) {
				if started != nil {
					started <- "block"
				}
				<-ctx.Done()
				if started != nil {
					select {
					case started <- "cancelled":
					default:
					}
				}
				return praxis.Result{}, praxis.Errorf(praxis.ECancelled, "block: %v", ctx.Err())
			},
		},
	}
}

// logTool is an extension's tool that sends n log messages through its
// session, then answers.
var logTool = ExtensionTool{
	Tool: mcp.NewTool("log", mcp.WithNumber("n"), mcp.WithString("tag")),
	Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, tag := req.GetInt("n", 3), req.GetString("tag", "")
		sess := SessionFromContext(ctx)
		for range n {
			if err := sess.Log(mcp.LoggingLevelInfo, "test", tag); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("%d logs", n)), nil
	},
}

// newTestServer returns a server on a fresh workspace holding the engine's
// tools plus the test tools.
func newTestServer(t testing.TB, opts Options, started chan<- string) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	if opts.Workspace == "" {
		opts.Workspace = dir
	}
	opts.Open = func(d string) (*praxis.Engine, error) {
		eng, err := praxis.New(praxis.Options{Workspace: d, NoSync: true})
		if err != nil {
			return nil, err
		}
		for _, tool := range testTools(t, started, d) {
			if err := eng.Catalog().Add(tool); err != nil {
				return nil, err
			}
		}
		return eng, nil
	}
	opts.Extensions = append(opts.Extensions, Extension{Tools: []ExtensionTool{logTool}})
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// msg is a decoded JSON-RPC message.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func decodeMsg(t testing.TB, line []byte) msg {
	t.Helper()
	if len(line) > 0 && line[0] == '[' { // a batch's responses
		if !json.Valid(line) {
			t.Fatalf("server sent invalid JSON %q", line)
		}
		return msg{raw: string(line)}
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("server sent invalid JSON %q: %v", line, err)
	}
	m.raw = string(line)
	return m
}

// wireResult is a tools/call result.
type wireResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (m msg) tool(t testing.TB) wireResult {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error response: %d %s", m.Error.Code, m.Error.Message)
	}
	var r wireResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	return r
}

func (r wireResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// stdioClient drives ServeStdio through pipes, speaking raw JSON-RPC.
type stdioClient struct {
	t    testing.TB
	in   *io.PipeWriter
	msgs chan msg
	done chan struct{} // closed when ServeStdio returned
	err  error         // what it returned
	mu   sync.Mutex
}

func startStdio(t testing.TB, s *Server, opts StdioOptions) *stdioClient {
	t.Helper()
	return startPipes(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return s.ServeStdio(ctx, r, w, opts)
	})
}

// startPipes runs serve on pipes the returned client writes and reads.
func startPipes(t testing.TB, serve func(context.Context, io.Reader, io.Writer) error) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, msgs: make(chan msg, 1024), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.err = serve(ctx, inR, outW)
		outW.Close()
		close(c.done)
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			c.msgs <- decodeMsg(t, sc.Bytes())
		}
		close(c.msgs)
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return")
		}
	})
	return c
}

func (c *stdioClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
}

func (c *stdioClient) sendRaw(line string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *stdioClient) recv() msg {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("server closed its output")
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("timed out waiting for a message")
	}
	return msg{}
}

// drain closes the client's input, waits for ServeStdio to return (the
// calls in flight answer first) and returns the messages not read yet.
func (c *stdioClient) drain() []msg {
	c.t.Helper()
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.t.Fatal("ServeStdio did not return at EOF")
	}
	var rest []msg
	for m := range c.msgs {
		rest = append(rest, m)
	}
	return rest
}

// response reads messages until the response with id, returning the
// messages before it too.
func (c *stdioClient) response(id int) (msg, []msg) {
	c.t.Helper()
	var before []msg
	for {
		m := c.recv()
		if m.Method == "" && string(m.ID) == fmt.Sprint(id) {
			return m, before
		}
		before = append(before, m)
	}
}

func request(id int, method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

func notification(method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

func initParams(caps map[string]any) map[string]any {
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "test", "version": "1"},
	}
}

func callParams(name string, args any, token any) map[string]any {
	p := map[string]any{"name": name, "arguments": args}
	if token != nil {
		p["_meta"] = map[string]any{"progressToken": token}
	}
	return p
}

// initialize performs the handshake.
func (c *stdioClient) initialize(caps map[string]any) {
	c.t.Helper()
	c.send(request(0, "initialize", initParams(caps)))
	if m, _ := c.response(0); m.Error != nil {
		c.t.Fatalf("initialize: %s", m.Error.Message)
	}
	c.send(notification("notifications/initialized", nil))
}

func (c *stdioClient) call(id int, name string, args any) msg {
	c.t.Helper()
	c.send(request(id, "tools/call", callParams(name, args, nil)))
	m, _ := c.response(id)
	return m
}
