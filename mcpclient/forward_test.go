package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/mcpclient"
	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

// remote is a Praxis MCP server on loopback HTTP, with a tool that
// reports progress, and a record of the sessions its responses named.
type remote struct {
	url     string
	handler *mcpserver.HTTPHandler
	dir     string

	mu       sync.Mutex
	sessions []string // in the order they first answered
}

func startRemote(t *testing.T, token string) *remote {
	t.Helper()
	rm := &remote{dir: t.TempDir()}
	srv, err := mcpserver.New(mcpserver.Options{
		Workspace: rm.dir,
		Open: func(dir string) (*praxis.Engine, error) {
			eng, err := praxis.New(praxis.Options{Workspace: dir, NoSync: true})
			if err != nil {
				return nil, err
			}
			return eng, eng.Catalog().Add(stepsTool)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rm.handler = srv.NewHTTPHandler(mcpserver.HTTPOptions{Token: token})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rm.handler.ServeHTTP(w, r)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			rm.mu.Lock()
			if !strings.Contains(strings.Join(rm.sessions, " "), id) {
				rm.sessions = append(rm.sessions, id)
			}
			rm.mu.Unlock()
		}
	}))
	t.Cleanup(func() { hs.Close(); rm.handler.Close(); srv.Close() })
	rm.url = hs.URL + "/mcp"
	return rm
}

func (rm *remote) opened() []string {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return append([]string(nil), rm.sessions...)
}

var stepsTool = praxis.Tool{
	Name: "steps", Description: "Reports n progress steps.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
	Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
		var a struct{ N int }
		json.Unmarshal(args, &a)
		for i := 1; i <= a.N; i++ {
			praxis.ReportProgress(ctx, float64(i), float64(a.N), "")
		}
		return praxis.Result{Text: fmt.Sprintf("%d steps", a.N)}, nil
	},
}

// client is a stdio MCP client on the two ends of Forward.
type client struct {
	t    *testing.T
	in   *io.PipeWriter
	msgs chan *jsonrpc.Message
	done chan error // what Forward returned
}

func forward(t *testing.T, url string, opts mcpclient.ForwardOptions) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, msgs: make(chan *jsonrpc.Message, 64), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := mcpclient.Forward(ctx, url, opts, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			m, bad := jsonrpc.Decode(sc.Bytes())
			if bad != nil {
				t.Errorf("Forward wrote %q: %v", sc.Bytes(), bad)
				continue
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() { inW.Close(); cancel() })
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() *jsonrpc.Message {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("Forward closed its output")
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message from Forward")
	}
	return nil
}

// response reads up to the response to id and returns the messages before
// it too.
func (c *client) response(id string) (*jsonrpc.Message, []*jsonrpc.Message) {
	c.t.Helper()
	var before []*jsonrpc.Message
	for {
		m := c.recv()
		if m.Kind == jsonrpc.KindResponse && string(m.ID) == id {
			return m, before
		}
		before = append(before, m)
	}
}

func (c *client) initialize(caps string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"clientInfo":{"name":"t","version":"1"}}}`)
	if m, _ := c.response("0"); m.Error != nil {
		c.t.Fatalf("initialize: %s", m.Error)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// toolText returns a tools/call result's text, failing on an error.
func toolText(t *testing.T, m *jsonrpc.Message) string {
	t.Helper()
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.IsError || len(r.Content) == 0 {
		t.Fatalf("tool call failed: result %s error %s", m.Result, m.Error)
	}
	return r.Content[0].Text
}

// TestForward drives a remote HTTP server through Forward, as a stdio
// client would: the handshake, a call that makes the server ask the client
// for its roots (a server-to-client request and its answer, both through
// the forwarder), a call with progress, a protocol error from the server,
// a line that is no message, and the end of the input, which deletes the
// session.
func TestForward(t *testing.T) {
	rm := startRemote(t, "tok")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "r.txt"), []byte("from the root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := forward(t, rm.url, mcpclient.ForwardOptions{Token: "tok"})
	c.initialize(`{"roots":{}}`)

	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"r.txt"}}}`)
	ask := c.recv()
	if ask.Kind != jsonrpc.KindRequest || ask.Method != "roots/list" {
		t.Fatalf("want roots/list from the server, got %+v", ask)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(root)}
	c.send(string(jsonrpc.AppendResult(nil, ask.ID, json.RawMessage(`{"roots":[{"uri":"`+u.String()+`"}]}`))))
	if m, _ := c.response("2"); !strings.Contains(toolText(t, m), "from the root") {
		t.Errorf("read in the client's root: %s", m.Result)
	}

	c.send(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"steps","arguments":{"n":3},"_meta":{"progressToken":"p"}}}`)
	m, before := c.response(`"s"`)
	if len(before) != 3 || before[0].Method != "notifications/progress" {
		t.Errorf("progress through the forwarder: %+v", before)
	}
	if got := toolText(t, m); got != "3 steps" {
		t.Errorf("steps: %s", got)
	}

	c.send(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`)
	if m, _ := c.response("3"); m.Error == nil || jsonrpc.DecodeError(m.Error).Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("unknown method: %s %s", m.Result, m.Error)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":5}`)
	if m, _ := c.response("4"); m.Error == nil || jsonrpc.DecodeError(m.Error).Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("an invalid message is answered by the forwarder: %s", m.Error)
	}

	c.in.Close()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("Forward: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Forward did not return at EOF")
	}
	if n := rm.handler.Sessions(); n != 0 || len(rm.opened()) != 1 {
		t.Errorf("after EOF: %d sessions open of %d opened", n, len(rm.opened()))
	}
}

// TestForwardUnauthorized: a wrong token makes requests fail with an error
// response rather than hang.
func TestForwardUnauthorized(t *testing.T) {
	rm := startRemote(t, "tok")
	c := forward(t, rm.url, mcpclient.ForwardOptions{Token: "wrong"})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	m, _ := c.response("0")
	if e := jsonrpc.DecodeError(m.Error); e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, "401") {
		t.Errorf("initialize with a wrong token: %s", m.Error)
	}
}

// TestForwardReopensLostSession: when the server no longer knows the
// session (it was deleted, expired or the server restarted), the forwarder
// opens a new one with the client's initialize and the call goes through.
func TestForwardReopensLostSession(t *testing.T) {
	rm := startRemote(t, "")
	if err := os.WriteFile(filepath.Join(rm.dir, "a.txt"), []byte("still here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := forward(t, rm.url, mcpclient.ForwardOptions{})
	c.initialize(`{}`)
	// End the session behind the forwarder's back.
	req, _ := http.NewRequest(http.MethodDelete, rm.url, nil)
	req.Header.Set("Mcp-Session-Id", rm.opened()[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`)
	if m, _ := c.response("1"); !strings.Contains(toolText(t, m), "still here") {
		t.Errorf("call after the session was lost: %s", m.Result)
	}
	if got := rm.opened(); len(got) != 2 {
		t.Errorf("sessions opened: %q, want the lost one and a new one", got)
	}
}
