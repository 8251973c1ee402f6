package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/praxis"
)

func TestToolsListServesTheCatalog(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	c.send(request(1, "tools/list", nil))
	m, _ := c.response(1)
	var res struct {
		Tools []struct {
			Name         string                     `json:"name"`
			Description  string                     `json:"description"`
			InputSchema  json.RawMessage            `json:"inputSchema"`
			OutputSchema json.RawMessage            `json:"outputSchema"`
			Annotations  map[string]json.RawMessage `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for i, tool := range res.Tools {
		listed[tool.Name] = i
	}
	for _, want := range s.def.Catalog().Tools() {
		i, ok := listed[want.Name]
		if !ok {
			t.Errorf("tool %s not listed", want.Name)
			continue
		}
		got := res.Tools[i]
		if got.Description != want.Description {
			t.Errorf("%s: description differs", want.Name)
		}
		if !jsonEqual(t, got.InputSchema, want.InputSchema) {
			t.Errorf("%s: input schema %s, want %s", want.Name, got.InputSchema, want.InputSchema)
		}
		if len(want.OutputSchema) > 0 && !jsonEqual(t, got.OutputSchema, want.OutputSchema) {
			t.Errorf("%s: output schema %s, want %s", want.Name, got.OutputSchema, want.OutputSchema)
		}
		a := want.Annotations
		for hint, v := range map[string]bool{"readOnlyHint": a.ReadOnly, "destructiveHint": a.Destructive, "idempotentHint": a.Idempotent, "openWorldHint": a.OpenWorld} {
			if string(got.Annotations[hint]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %s, want %v (set explicitly)", want.Name, hint, got.Annotations[hint], v)
			}
		}
	}
	for _, name := range []string{"read_file", "edit_file", "write_file", "list_dir"} {
		if _, ok := listed[name]; !ok {
			t.Errorf("engine tool %s missing", name)
		}
	}
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// TestReadThenEdit reads a file, edits it with anchors from the read, and
// checks the bytes on disk and that structured results match the text.
func TestReadThenEdit(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	path := writeFile(t, dir, "src/main.go", "package main\r\n\r\nfunc main() {}\r\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)

	read := c.call(1, "read_file", map[string]any{"path": "src/main.go"}).tool(t)
	if read.IsError {
		t.Fatalf("read_file failed: %s", read.text())
	}
	var info struct {
		Path    string `json:"path"`
		Version string `json:"version"`
		Total   int    `json:"total_lines"`
		EOL     string `json:"eol"`
	}
	if err := json.Unmarshal(read.StructuredContent, &info); err != nil {
		t.Fatalf("structuredContent %s: %v", read.StructuredContent, err)
	}
	header := strings.SplitN(read.text(), "\n", 2)[0]
	wantHeader := fmt.Sprintf("# %s version=%s lines=1-%d of %d eol=%s", info.Path, info.Version, info.Total, info.Total, info.EOL)
	if header != wantHeader {
		t.Errorf("text header %q does not mirror structuredContent (%q)", header, wantHeader)
	}
	anchor := regexp.MustCompile(`(?m)^(3:[0-9a-f]+)\|`).FindStringSubmatch(read.text())
	if anchor == nil {
		t.Fatalf("no anchor for line 3 in %q", read.text())
	}
	edit := c.call(2, "edit_file", map[string]any{
		"path": "src/main.go",
		"ops":  []map[string]any{{"op": "replace_line", "tag": anchor[1], "new_text": "func main() { println(\"hi\") }"}},
	}).tool(t)
	if edit.IsError {
		t.Fatalf("edit_file failed: %s", edit.text())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "package main\r\n\r\nfunc main() { println(\"hi\") }\r\n"; string(got) != want {
		t.Errorf("file is %q, want %q", got, want)
	}
}

func TestFailuresAreResults(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	writeFile(t, dir, "bin", "a\x00b")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	for i, tc := range []struct {
		tool string
		args any
		code praxis.Code
	}{
		{"read_file", map[string]any{"path": "../outside"}, praxis.EPathOutside},
		{"read_file", map[string]any{"path": "missing.txt"}, praxis.ENotFound},
		{"read_file", map[string]any{"path": "bin"}, praxis.EBinary},
		{"read_file", map[string]any{"path": 7}, praxis.EInvalidArgs},
		{"boom", map[string]any{}, praxis.EInternal},
	} {
		res := c.call(10+i, tc.tool, tc.args).tool(t)
		if !res.IsError || !strings.HasPrefix(res.text(), string(tc.code)+":") {
			t.Errorf("%s %v: got isError=%v %q, want %s", tc.tool, tc.args, res.IsError, res.text(), tc.code)
		}
	}
	// The server survived the panic.
	if res := c.call(20, "steps", map[string]any{"n": 1}).tool(t); res.IsError {
		t.Errorf("after a panic: %s", res.text())
	}
	// Unknown tools are protocol errors.
	if m := c.call(21, "no_such_tool", map[string]any{}); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("unknown tool: got %s, want a JSON-RPC error -32602", m.raw)
	}
}

func TestMalformedInput(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	c := startStdio(t, s, StdioOptions{MaxMessageBytes: 4096})
	c.initialize(nil)
	for _, tc := range []struct {
		line string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, -32700},
		{`not json at all`, -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{"pad":"` + strings.Repeat("x", 8000) + `"}}}`, -32600},
		{`{"jsonrpc":"2.0","id":3}`, -32600},
	} {
		c.sendRaw(tc.line)
		m := c.recv()
		if m.Error == nil || m.Error.Code != tc.code {
			t.Errorf("%.40q: got %s, want error %d", tc.line, m.raw, tc.code)
		}
	}
	// Nothing was lost: the next request is served.
	if res := c.call(4, "steps", map[string]any{"n": 2}).tool(t); res.text() != "2 steps" {
		t.Errorf("after bad input: %q", res.text())
	}
}

// TestStdioNotificationsPrecedeResponse checks, many times over and with
// calls in flight together, that every notification of a call is written
// before the call's response: progress reported through the engine, and log
// messages an extension's tool sends through its Session.
func TestStdioNotificationsPrecedeResponse(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	c.send(request(1, "logging/setLevel", map[string]any{"level": "debug"}))
	c.response(1)

	const rounds, parallel, steps = 100, 4, 5
	id := 100
	for range rounds {
		want := map[string]string{} // call id -> the tag of its notifications
		for p := range parallel {
			id++
			tag := fmt.Sprintf("tag-%d", id)
			if p%2 == 0 {
				c.send(request(id, "tools/call", callParams("steps", map[string]any{"n": steps}, tag)))
			} else {
				c.send(request(id, "tools/call", callParams("log", map[string]any{"n": steps, "tag": tag}, nil)))
			}
			want[fmt.Sprint(id)] = tag
		}
		seen := map[string]int{} // notifications by tag
		for len(want) > 0 {
			m := c.recv()
			var p struct {
				Token string `json:"progressToken"`
				Data  string `json:"data"`
			}
			json.Unmarshal(m.Params, &p)
			switch m.Method {
			case "notifications/progress":
				seen[p.Token]++
			case "notifications/message":
				seen[p.Data]++
			case "":
				tag, ok := want[string(m.ID)]
				if !ok {
					t.Fatalf("unexpected response %s", m.raw)
				}
				delete(want, string(m.ID))
				if seen[tag] != steps {
					t.Fatalf("response %s came after %d of its %d notifications", m.ID, seen[tag], steps)
				}
			default:
				t.Fatalf("unexpected message %s", m.raw)
			}
		}
	}
}

func TestProgressOnlyWithToken(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	c.send(request(1, "tools/call", callParams("steps", map[string]any{"n": 3}, nil)))
	if _, before := c.response(1); len(before) != 0 {
		t.Errorf("notifications without a progress token: %v", before)
	}
	c.send(request(2, "tools/call", callParams("steps", map[string]any{"n": 3}, 42)))
	_, before := c.response(2)
	if len(before) != 3 {
		t.Fatalf("got %d notifications, want 3", len(before))
	}
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	}
	json.Unmarshal(before[2].Params, &p)
	if string(p.Token) != "42" || p.Progress != 3 || p.Total != 3 || p.Message != "step 3" {
		t.Errorf("last progress notification %s", before[2].raw)
	}
}

func TestCancelledStopsTheCall(t *testing.T) {
	started := make(chan string, 4)
	s, _ := newTestServer(t, Options{}, started)
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	c.send(request(7, "tools/call", callParams("block", map[string]any{}, nil)))
	<-started
	c.send(notification("notifications/cancelled", map[string]any{"requestId": 7, "reason": "test"}))
	if got := <-started; got != "cancelled" {
		t.Fatalf("the tool reported %q", got)
	}
	for _, m := range c.drain() {
		t.Errorf("the cancelled call was answered: %s", m.raw)
	}
}

// TestCancelRightBehindItsRequest: a notifications/cancelled that follows
// its request at once (in the same write, after a batch holding the
// request, or later in the same batch) always finds the request: every
// call ends cancelled, and none is answered.
func TestCancelRightBehindItsRequest(t *testing.T) {
	const n = 900
	started := make(chan string, 2*n)
	s, _ := newTestServer(t, Options{}, started)
	c := startStdio(t, s, StdioOptions{})
	p := initParams(nil)
	p["protocolVersion"] = "2025-03-26" // has batches
	c.send(request(0, "initialize", p))
	if m, _ := c.response(0); m.Error != nil {
		t.Fatalf("initialize: %s", m.Error.Message)
	}
	c.send(notification("notifications/initialized", nil))

	encode := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i := range n {
		id := 100 + i
		call := encode(request(id, "tools/call", callParams("block", map[string]any{}, nil)))
		cancel := encode(notification("notifications/cancelled", map[string]any{"requestId": id}))
		switch i % 3 {
		case 0:
			c.sendRaw(call + "\n" + cancel)
		case 1:
			c.sendRaw("[" + call + "]\n" + cancel)
		case 2:
			c.sendRaw("[" + call + "," + cancel + "]")
		}
	}
	c.send(request(1, "ping", nil))
	if _, before := c.response(1); len(before) > 0 {
		t.Errorf("cancelled calls were answered: %s", before[0].raw)
	}
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		blocked, cancelled := 0, 0
		for len(started) > 0 {
			if <-started == "block" {
				blocked++
			} else {
				cancelled++
			}
		}
		t.Fatalf("calls still run 10 s after their cancellation: %d started, %d ended", blocked, cancelled)
	}
	for m := range c.msgs {
		t.Errorf("a cancelled call was answered: %s", m.raw)
	}
}

// TestEOFLetsCallsFinish closes the input while a call runs: the call's
// response is still written before ServeStdio returns.
func TestEOFLetsCallsFinish(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	writeFile(t, dir, "a.txt", "x\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	c.send(request(1, "tools/call", callParams("read_file", map[string]any{"path": "a.txt"}, nil)))
	c.in.Close()
	m, _ := c.response(1)
	if res := m.tool(t); res.IsError {
		t.Errorf("read after EOF: %s", res.text())
	}
	select {
	case <-c.done:
		if c.err != nil {
			t.Errorf("ServeStdio: %v", c.err)
		}
	case <-time.After(5 * time.Second):
		t.Error("ServeStdio did not return at EOF")
	}
}

// TestStdioCallsRunConcurrently: more calls than there are idle workers
// block at once, and the connection still reads and answers; cancelling
// them ends each without a response. A request on the last line, without
// its newline, is served before ServeStdio returns.
func TestStdioCallsRunConcurrently(t *testing.T) {
	const blocked = 2*stdioWorkers + 1
	started := make(chan string, 2*blocked)
	s, _ := newTestServer(t, Options{}, started)
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	for i := range blocked {
		c.send(request(100+i, "tools/call", callParams("block", map[string]any{}, nil)))
	}
	for range blocked {
		if got := <-started; got != "block" {
			t.Fatalf("the tool reported %q", got)
		}
	}
	c.send(request(1, "ping", nil))
	if m, _ := c.response(1); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("ping while %d calls block: %s", blocked, m.raw)
	}
	for i := range blocked {
		c.send(notification("notifications/cancelled", map[string]any{"requestId": 100 + i}))
	}
	for range blocked {
		if got := <-started; got != "cancelled" {
			t.Fatalf("the tool reported %q", got)
		}
	}
	c.mu.Lock()
	c.in.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{"n":1}}}`))
	c.mu.Unlock()
	rest := c.drain()
	if len(rest) != 1 || string(rest[0].ID) != "2" || !strings.Contains(rest[0].raw, "1 steps") {
		t.Errorf("after the cancellations: %v, want the last call's response alone", rest)
	}
}

// TestRootsBecomeTheWorkspace: without a fixed workspace, the client's first
// root is the workspace, and a change of roots is followed.
func TestRootsBecomeTheWorkspace(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	rootA, rootB := t.TempDir(), t.TempDir()
	writeFile(t, rootA, "a.txt", "in A\n")
	writeFile(t, rootB, "b.txt", "in B\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(map[string]any{"roots": map[string]any{"listChanged": true}})

	answerRoots := func(dir string) {
		t.Helper()
		m := c.recv()
		if m.Method != "roots/list" {
			t.Fatalf("expected roots/list, got %s", m.raw)
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
		c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID), "result": map[string]any{
			"roots": []map[string]any{{"uri": u.String(), "name": "root"}, {"uri": "file:///", "name": "other"}},
		}})
	}
	c.send(request(1, "tools/call", callParams("read_file", map[string]any{"path": "a.txt"}, nil)))
	answerRoots(rootA)
	m, _ := c.response(1)
	if res := m.tool(t); res.IsError {
		t.Fatalf("read in first root: %s", res.text())
	}
	// Known roots are not asked for again.
	if res := c.call(2, "read_file", map[string]any{"path": "b.txt"}).tool(t); !res.IsError {
		t.Fatalf("b.txt readable outside root B: %s", res.text())
	}
	c.send(notification("notifications/roots/list_changed", nil))
	c.send(request(3, "tools/call", callParams("read_file", map[string]any{"path": "b.txt"}, nil)))
	answerRoots(rootB)
	m, _ = c.response(3)
	if res := m.tool(t); res.IsError || !strings.Contains(res.text(), "in B") {
		t.Fatalf("read after the roots changed: %s", res.text())
	}
}

// TestFixedWorkspaceIgnoresRoots: with --workspace, roots are not asked for.
func TestFixedWorkspaceIgnoresRoots(t *testing.T) {
	s, dir := newTestServer(t, Options{FixedWorkspace: true}, nil)
	writeFile(t, dir, "a.txt", "fixed\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(map[string]any{"roots": map[string]any{"listChanged": true}})
	c.send(request(1, "tools/call", callParams("read_file", map[string]any{"path": "a.txt"}, nil)))
	m, before := c.response(1)
	if len(before) != 0 {
		t.Errorf("server sent %s with a fixed workspace", before[0].raw)
	}
	if res := m.tool(t); res.IsError {
		t.Errorf("read: %s", res.text())
	}
}

// TestRootsChangeDuringRefresh: a roots/list_changed notification that
// arrives while the server waits for the client's roots does not hold up
// the answer behind it.
func TestRootsChangeDuringRefresh(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	root := t.TempDir()
	writeFile(t, root, "r.txt", "root\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(map[string]any{"roots": map[string]any{"listChanged": true}})
	c.send(request(1, "tools/call", callParams("read_file", map[string]any{"path": "r.txt"}, nil)))
	ask := c.recv()
	if ask.Method != "roots/list" {
		t.Fatalf("want roots/list, got %s", ask.raw)
	}
	c.send(notification("notifications/roots/list_changed", nil))
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(root)}
	c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(ask.ID), "result": map[string]any{"roots": []map[string]any{{"uri": u.String()}}}})
	m, _ := c.response(1)
	// Held up, the answer would come after the server gave up waiting and
	// read in the default workspace, where r.txt does not exist.
	if res := m.tool(t); res.IsError {
		t.Fatalf("read: %s", res.text())
	}
}

// TestTwoStdioConnections serves two stdio clients from one server at once.
func TestTwoStdioConnections(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	writeFile(t, dir, "a.txt", "shared\n")
	a, b := startStdio(t, s, StdioOptions{}), startStdio(t, s, StdioOptions{})
	a.initialize(nil)
	b.initialize(nil)
	for _, c := range []*stdioClient{a, b} {
		if res := c.call(1, "read_file", map[string]any{"path": "a.txt"}).tool(t); res.IsError {
			t.Errorf("read: %s", res.text())
		}
	}
}
