package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// TestForward drives a remote HTTP server through Forward, as a stdio
// client would: the handshake, a call with progress, a call that makes the
// server ask the client for its roots (a server-to-client request and its
// answer, both through the forwarder), and an error from the server.
func TestForward(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{Token: "tok"})
	root := t.TempDir()
	writeFile(t, root, "r.txt", "from the root\n")

	ended := make(chan string, 1)
	s.mcp.GetHooks().AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { ended <- cs.SessionID() })

	c := startPipes(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return Forward(ctx, h.url, ForwardOptions{Token: "tok"}, r, w)
	})
	c.initialize(map[string]any{"roots": map[string]any{}})

	c.send(request(2, "tools/call", callParams("read_file", map[string]any{"path": "r.txt"}, nil)))
	ask := c.recv()
	if ask.Method != "roots/list" {
		t.Fatalf("want roots/list from the server, got %s", ask.raw)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(root)}
	c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(ask.ID), "result": map[string]any{"roots": []map[string]any{{"uri": u.String()}}}})
	m, _ := c.response(2)
	if res := m.tool(t); res.IsError || !strings.Contains(res.text(), "from the root") {
		t.Errorf("read in the client's root: %s", m.raw)
	}

	c.send(request(1, "tools/call", callParams("steps", map[string]any{"n": 3}, "p")))
	m, before := c.response(1)
	if len(before) != 3 || before[0].Method != "notifications/progress" {
		t.Errorf("progress through the forwarder: %v", before)
	}
	if res := m.tool(t); res.text() != "3 steps" {
		t.Errorf("steps: %s", m.raw)
	}

	if m := c.call(3, "no_such_tool", map[string]any{}); m.Error == nil {
		t.Errorf("unknown tool: %s", m.raw)
	}
	// Closing the input ends the session on the server.
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Forward did not return at EOF")
	}
	if c.err != nil {
		t.Errorf("Forward: %v", c.err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the session was not deleted")
	}
}

// TestForwardUnauthorized: a wrong token makes requests fail with an error
// response rather than hang.
func TestForwardUnauthorized(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{Token: "tok"})
	c := startPipes(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return Forward(ctx, h.url, ForwardOptions{Token: "wrong"}, r, w)
	})
	c.send(request(0, "initialize", initParams(nil)))
	m, _ := c.response(0)
	if m.Error == nil || !strings.Contains(m.Error.Message, "401") {
		t.Errorf("initialize with a wrong token: %s", m.raw)
	}
}

// TestForwardReopensLostSession: when the server no longer knows the
// session (it was deleted, expired or the server restarted), the forwarder
// opens a new one with the client's initialize and the call goes through.
func TestForwardReopensLostSession(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	writeFile(t, dir, "a.txt", "still here\n")
	h := startHTTP(t, s, HTTPOptions{})
	opened, ended := make(chan string, 4), make(chan string, 4)
	s.mcp.GetHooks().AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) { opened <- cs.SessionID() })
	s.mcp.GetHooks().AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { ended <- cs.SessionID() })
	c := startPipes(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return Forward(ctx, h.url, ForwardOptions{}, r, w)
	})
	c.initialize(nil)
	// End the session behind the forwarder's back.
	other := h.client(t)
	other.session = <-opened
	if r := other.do(http.MethodDelete); r.StatusCode != 200 {
		t.Fatalf("DELETE: %s", r.Status)
	}
	<-ended
	m := c.call(1, "read_file", map[string]any{"path": "a.txt"})
	if res := m.tool(t); res.IsError || !strings.Contains(res.text(), "still here") {
		t.Errorf("call after the session was lost: %s", m.raw)
	}
	select {
	case <-opened:
	default:
		t.Error("no new session was opened")
	}
}
