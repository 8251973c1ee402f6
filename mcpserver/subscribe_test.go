package mcpserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// updated returns the URI of a notifications/resources/updated message,
// or "".
func updated(t *testing.T, m msg) string {
	t.Helper()
	if m.Method != "notifications/resources/updated" {
		return ""
	}
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params %s: %v", m.Params, err)
	}
	return p.URI
}

// nextUpdate reads messages until a resource update and returns its URI.
func (c *stdioClient) nextUpdate(t *testing.T) string {
	t.Helper()
	for {
		if uri := updated(t, c.recv()); uri != "" {
			return uri
		}
	}
}

func TestFileResourcesStdio(t *testing.T) {
	s, dir := newTestServer(t, Options{FixedWorkspace: true}, nil)
	writeFile(t, dir, "f.txt", "one\n")
	writeFile(t, dir, "g.txt", "one\n")
	writeFile(t, dir, "a b#c%d.txt", "odd name\n")
	writeFile(t, dir, "sub/x.txt", "x\n")
	c := startStdio(t, s, StdioOptions{})
	c.send(request(0, "initialize", initParams(nil)))
	m, _ := c.response(0)
	var init struct {
		Capabilities struct {
			Resources *struct {
				Subscribe bool `json:"subscribe"`
			} `json:"resources"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(m.Result, &init); err != nil || init.Capabilities.Resources == nil || !init.Capabilities.Resources.Subscribe {
		t.Fatalf("initialize does not advertise resources.subscribe: %s", m.Result)
	}
	c.send(notification("notifications/initialized", nil))

	ws := s.Workspace()
	uri := func(name string) string { return fileURI(filepath.Join(ws, name)) }
	subscribe := func(id int, u string) msg {
		c.send(request(id, "resources/subscribe", map[string]any{"uri": u}))
		m, _ := c.response(id)
		return m
	}

	// Refused: what is not a regular file of the workspace, or not a
	// local file URI.
	for i, bad := range []string{
		"file:///etc/passwd",
		fileURI(filepath.Join(filepath.Dir(ws), "x.txt")),
		uri("sub"),
		uri("missing.txt"),
		uri("f.txt") + "?x=1",
		"file://example.com" + filepath.ToSlash(filepath.Join(ws, "f.txt")),
		"memory://f.txt",
		"file:f.txt",
	} {
		if m := subscribe(10+i, bad); m.Error == nil {
			t.Errorf("subscribing to %s succeeded", bad)
		}
	}

	// An extension's resource is the extension's to update: recorded.
	if m := subscribe(9, "test://extension-resource"); m.Error != nil {
		t.Errorf("subscribing to an extension's resource: %s", m.Error.Message)
	}
	if m := subscribe(1, uri("f.txt")); m.Error != nil {
		t.Fatalf("subscribe: %s", m.Error.Message)
	}
	writeFile(t, dir, "f.txt", "two\n")
	if got := c.nextUpdate(t); got != uri("f.txt") {
		t.Errorf("update for %s, want %s", got, uri("f.txt"))
	}

	// The name is percent-encoded as RFC 8089 has it.
	odd := uri("a b#c%d.txt")
	if !strings.Contains(odd, "a%20b%23c%25d.txt") {
		t.Errorf("URI %s is not percent-encoded", odd)
	}
	if m := subscribe(2, odd); m.Error != nil {
		t.Fatalf("subscribe %s: %s", odd, m.Error.Message)
	}
	writeFile(t, dir, "a b#c%d.txt", "changed\n")
	if got := c.nextUpdate(t); got != odd {
		t.Errorf("update for %s, want %s", got, odd)
	}

	// resources/read returns the file's text.
	c.send(request(3, "resources/read", map[string]any{"uri": uri("f.txt")}))
	m, _ = c.response(3)
	var read struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &read) != nil || len(read.Contents) != 1 || read.Contents[0].Text != "two\n" {
		t.Errorf("resources/read: %s", m.raw)
	}
	c.send(request(4, "resources/read", map[string]any{"uri": "file:///etc/passwd"}))
	if m, _ := c.response(4); m.Error == nil {
		t.Errorf("resources/read of a file outside the workspace: %s", m.raw)
	}

	// Unsubscribed: f.txt's next change is not sent, g.txt's, made after
	// it, is.
	c.send(request(5, "resources/unsubscribe", map[string]any{"uri": uri("f.txt")}))
	if m, _ := c.response(5); m.Error != nil {
		t.Fatalf("unsubscribe: %s", m.Error.Message)
	}
	if m := subscribe(6, uri("g.txt")); m.Error != nil {
		t.Fatal(m.Error.Message)
	}
	writeFile(t, dir, "f.txt", "three\n")
	writeFile(t, dir, "g.txt", "three\n")
	if got := c.nextUpdate(t); got != uri("g.txt") {
		t.Errorf("update for %s, want %s", got, uri("g.txt"))
	}
}

// A file read by one session and changed by another's write: the first
// session's next result carries the notice, in its text and _meta.
func TestToolNoticesStdio(t *testing.T) {
	s, dir := newTestServer(t, Options{FixedWorkspace: true}, nil)
	writeFile(t, dir, "f.txt", "one\ntwo\n")
	a, b := startStdio(t, s, StdioOptions{}), startStdio(t, s, StdioOptions{})
	a.initialize(nil)
	b.initialize(nil)
	a.call(1, "read_file", map[string]any{"path": "f.txt"}).tool(t)
	if res := b.call(1, "write_file", map[string]any{"path": "f.txt", "content": "one\nTWO\n"}).tool(t); strings.Contains(res.text(), "notice:") {
		t.Errorf("the writer is told of its own write: %s", res.text())
	}
	deadline := time.Now().Add(10 * time.Second)
	for id := 2; ; id++ {
		m := a.call(id, "list_dir", map[string]any{})
		res := m.tool(t)
		var meta struct {
			Meta map[string][]struct {
				Path string `json:"path"`
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(m.Result, &meta); err != nil {
			t.Fatal(err)
		}
		if ns := meta.Meta["praxis/notices"]; len(ns) > 0 {
			if len(ns) != 1 || ns[0].Path != "f.txt" || ns[0].Kind != "changed" {
				t.Errorf("notices %+v", ns)
			}
			if !strings.HasSuffix(res.text(), "\n"+ns[0].Text) || !strings.HasPrefix(ns[0].Text, "notice: f.txt changed on disk (") {
				t.Errorf("the text does not end with the notice %q:\n%s", ns[0].Text, res.text())
			}
			if len(res.StructuredContent) == 0 {
				t.Error("the result with a notice lost its structured content")
			}
			break
		}
		if strings.Contains(res.text(), "notice:") {
			t.Fatalf("a notice in the text without _meta: %s", m.raw)
		}
		if time.Now().After(deadline) {
			t.Fatal("no notice within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Over HTTP the update comes on the session's standalone stream.
func TestFileSubscriptionHTTP(t *testing.T) {
	s, dir := newTestServer(t, Options{FixedWorkspace: true}, nil)
	writeFile(t, dir, "f.txt", "one\n")
	h := startHTTP(t, s, HTTPOptions{})
	c := h.client(t)
	c.initialize()
	stream := c.do(http.MethodGet)
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", stream.Status)
	}
	defer stream.Body.Close()
	updates := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m msg
				if json.Unmarshal([]byte(data), &m) == nil && m.Method == "notifications/resources/updated" {
					var p struct {
						URI string `json:"uri"`
					}
					json.Unmarshal(m.Params, &p)
					updates <- p.URI
				}
			}
		}
		close(updates)
	}()
	uri := fileURI(filepath.Join(s.Workspace(), "f.txt"))
	ms := messages(t, c.post(mustJSON(request(1, "resources/subscribe", map[string]any{"uri": uri}))))
	if len(ms) != 1 || ms[0].Error != nil {
		t.Fatalf("subscribe: %v", ms)
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-updates:
		if got != uri {
			t.Errorf("update for %s, want %s", got, uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10s")
	}
}

// On 2026-07-28, which has no sessions, subscriptions/listen subscribes
// to files for as long as its stream is open; the updates come on it.
func TestFileSubscriptionListen(t *testing.T) {
	s, dir := newTestServer(t, Options{FixedWorkspace: true}, nil)
	writeFile(t, dir, "f.txt", "one\n")
	c := startHTTP(t, s, HTTPOptions{}).client(t)
	uri := fileURI(filepath.Join(s.Workspace(), "f.txt"))
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{uri}}, "_meta": modernMeta}})
	resp := c.post(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscriptions/listen: %s", resp.Status)
	}
	events := make(chan msg, 8)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
				var m msg
				if json.Unmarshal([]byte(data), &m) == nil {
					events <- m
				}
			}
		}
		close(events)
	}()
	next := func() msg {
		select {
		case m, ok := <-events:
			if !ok {
				t.Fatal("the listen stream ended")
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("nothing on the listen stream within 10s")
		}
		return msg{}
	}
	if m := next(); m.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(m.Params), "f.txt") {
		t.Fatalf("first event %s, want the acknowledgement naming the file", m.raw)
	}
	writeFile(t, dir, "f.txt", "two\n")
	if m := next(); updated(t, m) != uri {
		t.Errorf("event %s, want the update of %s", m.raw, uri)
	}
}

// A subscription holds its workspace's engine until resources/unsubscribe
// or the session's end.
func TestSubscriptionEndsWithSession(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	root := t.TempDir()
	writeFile(t, root, "f.txt", "x\n")
	key, err := realDir(root)
	if err != nil {
		t.Fatal(err)
	}
	refs := func() int {
		s.engines.mu.Lock()
		defer s.engines.mu.Unlock()
		if pe := s.engines.engines[key]; pe != nil {
			return pe.refs
		}
		return 0
	}
	c := startStdio(t, s, StdioOptions{})
	c.initialize(map[string]any{"roots": map[string]any{}})
	uri := fileURI(filepath.Join(root, "f.txt"))
	c.send(request(1, "resources/subscribe", map[string]any{"uri": uri}))
	ask := c.recv()
	if ask.Method != "roots/list" {
		t.Fatalf("want roots/list, got %s", ask.raw)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(ask.ID), "result": map[string]any{
		"roots": []map[string]any{{"uri": fileURI(root), "name": "root"}}}})
	if m, _ := c.response(1); m.Error != nil {
		t.Fatalf("subscribe: %s", m.Error.Message)
	}
	if n := refs(); n != 2 {
		t.Fatalf("the root's engine has %d references, want 2 (the session's and the subscription's)", n)
	}
	c.send(request(2, "resources/unsubscribe", map[string]any{"uri": uri}))
	c.response(2)
	if n := refs(); n != 1 {
		t.Fatalf("after unsubscribing, %d references, want 1", n)
	}
	c.send(request(3, "resources/subscribe", map[string]any{"uri": uri}))
	c.response(3)
	c.drain()
	deadline := time.Now().Add(10 * time.Second)
	for refs() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the session ended, the root's engine still has %d references", refs())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
