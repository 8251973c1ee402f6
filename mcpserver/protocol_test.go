package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/praxis-tools/praxis/praxis"
)

// wire sends raw messages over one transport of a server that serves
// notes, skills and the test tools.
type wire interface {
	// initialize opens a session on protocol version.
	initialize(version string)
	// exchange sends one raw message and returns the raw messages that
	// answer it (none for a notification).
	exchange(raw string) []string
}

type stdioWire struct {
	t testing.TB
	c *stdioClient
}

func (w *stdioWire) initialize(version string) {
	p := initParams(nil)
	p["protocolVersion"] = version
	w.c.send(request(0, "initialize", p))
	w.c.response(0)
	w.c.send(notification("notifications/initialized", nil))
}

// exchange waits for the answer to raw: the response with its id, an
// error with a null id, or, for a batch holding requests, an array. For a
// message that expects no answer it sends a ping after it: what arrives
// before the ping's response answers raw.
func (w *stdioWire) exchange(raw string) []string {
	w.t.Helper()
	id, batch := expectsAnswer(raw)
	w.c.sendRaw(raw)
	if id == "" && !batch {
		w.c.sendRaw(`{"jsonrpc":"2.0","id":"sentinel","method":"ping"}`)
	}
	var out []string
	for {
		m := w.c.recv()
		if string(m.ID) == `"sentinel"` {
			return out
		}
		out = append(out, m.raw)
		waiting := id != "" || batch
		if waiting && ((id != "" && string(m.ID) == id) || (m.Error != nil && string(m.ID) == "null") || (batch && strings.HasPrefix(m.raw, "["))) {
			return out
		}
	}
}

// expectsAnswer returns the id of a request whose answer carries it, or
// reports a batch holding a request.
func expectsAnswer(raw string) (id string, batch bool) {
	var one struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal([]byte(raw), &one) == nil && one.Method != nil && one.ID != nil && string(one.ID) != "null" && utf8.Valid(one.ID) && (one.ID[0] == '"' || one.ID[0] >= '0' && one.ID[0] <= '9') {
		return string(one.ID), false
	}
	var many []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(raw), &many) == nil {
		for _, m := range many {
			if m.ID != nil && m.Method != "" {
				return "", true
			}
		}
	}
	return "", false
}

type httpWire struct {
	t testing.TB
	c *httpClient
}

func (w *httpWire) initialize(version string) {
	p := initParams(nil)
	p["protocolVersion"] = version
	resp := w.c.post(mustJSON(request(0, "initialize", p)))
	w.c.session = resp.Header.Get("Mcp-Session-Id")
	messages(w.t, resp)
	w.c.post(mustJSON(notification("notifications/initialized", nil))).Body.Close()
}

func (w *httpWire) exchange(raw string) []string {
	w.t.Helper()
	resp := w.c.post(raw)
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var out []string
		for _, m := range messages(w.t, resp) {
			out = append(out, m.raw)
		}
		return out
	}
	b, _ := io.ReadAll(resp.Body)
	if len(b) == 0 {
		return nil
	}
	return []string{string(b)}
}

// transports runs f on a fresh server over stdio and over HTTP.
func transports(t *testing.T, f func(t *testing.T, w wire)) {
	notes := &fakeNotes{notes: map[string]string{"a": "note a"}}
	opts := Options{Notes: func(*praxis.Engine) Notes { return notes }, Skills: func(*praxis.Engine) Skills { return fakeSkills{} }}
	t.Run("stdio", func(t *testing.T) {
		s, _ := newTestServer(t, opts, nil)
		f(t, &stdioWire{t: t, c: startStdio(t, s, StdioOptions{})})
	})
	t.Run("http", func(t *testing.T) {
		s, _ := newTestServer(t, opts, nil)
		f(t, &httpWire{t: t, c: startHTTP(t, s, HTTPOptions{}).client(t)})
	})
}

// goNames matches what Go says of its types.
var goNames = regexp.MustCompile(`Go (struct field|value)|of type|mcpserver\.|mcp\.[A-Z]|interface \{\}|map\[|\[\][a-z]`)

// oneError decodes the single error response in got.
func oneError(t *testing.T, got []string) (id string, code int, message string) {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("want one response, got %q", got)
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got[0]), &m); err != nil || m.Error == nil {
		t.Fatalf("want an error response, got %s", got[0])
	}
	if !utf8.ValidString(got[0]) {
		t.Errorf("response is not valid UTF-8: %q", got[0])
	}
	if goNames.MatchString(m.Error.Message) {
		t.Errorf("error message names Go types: %s", m.Error.Message)
	}
	return string(m.ID), m.Error.Code, m.Error.Message
}

// TestInvalidMessages sends malformed messages over both transports: each
// gets the protocol's error, with its id only when the id is one a client
// can match, and no Go type names.
func TestInvalidMessages(t *testing.T) {
	cases := []struct {
		name, raw string
		id        string
		code      int
	}{
		{"null id is an invalid request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", -32600},
		{"invalid UTF-8 id is not echoed", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\xfe\",\"method\":\"ping\"}", "null", -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":5}`, "3", -32600},
		{"params not structured", `{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"}`, "4", -32600},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, "5", -32600},
		{"no method and no id", `{"jsonrpc":"2.0"}`, "null", -32600},
		{"not an object", `"ping"`, "null", -32600},
		{"not JSON", `{"jsonrpc":"2.0","id":6,`, "null", -32700},
		{"params of the wrong type", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}`, "7", -32600},
		{"missing note", `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"memory://nope"}}`, "9", -32002},
		{"missing skill", `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"skill://nope"}}`, "10", -32002},
		{"no such resource", `{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"nothing://x"}}`, "11", -32002},
		{"batch on 2025-06-18", `[{"jsonrpc":"2.0","id":12,"method":"ping"}]`, "null", -32600},
	}
	transports(t, func(t *testing.T, w wire) {
		w.initialize("2025-06-18")
		for _, tc := range cases {
			id, code, msg := oneError(t, w.exchange(tc.raw))
			if id != tc.id || code != tc.code {
				t.Errorf("%s: id %s code %d (%s), want id %s code %d", tc.name, id, code, msg, tc.id, tc.code)
			}
		}
	})
}

// TestBatchBeforeInitialize: a batch cannot open a session.
func TestBatchBeforeInitialize(t *testing.T) {
	transports(t, func(t *testing.T, w wire) {
		_, code, _ := oneError(t, w.exchange(`[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}]`))
		if code != -32600 {
			t.Errorf("code %d", code)
		}
	})
}

// TestBatches: a session on 2025-03-26 may batch requests, notifications
// and responses; the answer is one array of the requests' responses.
func TestBatches(t *testing.T) {
	transports(t, func(t *testing.T, w wire) {
		w.initialize("2025-03-26")
		got := w.exchange(`[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
			`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"steps","arguments":{"n":1}}},` +
			`{"jsonrpc":"2.0","id":null,"method":"ping"},` +
			`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}]`)
		if len(got) != 1 {
			t.Fatalf("want one array, got %q", got)
		}
		var resps []struct {
			ID     json.RawMessage     `json:"id"`
			Result json.RawMessage     `json:"result"`
			Error  *struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(got[0]), &resps); err != nil {
			t.Fatalf("%s: %v", got[0], err)
		}
		byID := map[string]string{}
		for _, r := range resps {
			if r.Error != nil {
				byID[string(r.ID)] = "error"
			} else {
				byID[string(r.ID)] = string(r.Result)
			}
		}
		if len(resps) != 4 || byID["1"] != "{}" || !strings.Contains(byID[`"two"`], "1 steps") || byID["null"] != "error" || byID["3"] != "error" {
			t.Errorf("batch answered %s", got[0])
		}
		// A request cancelled later in its batch ends, unanswered.
		got = w.exchange(`[{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block","arguments":{}}},` +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}},` +
			`{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
		if len(got) != 1 || got[0] != `[{"jsonrpc":"2.0","id":4,"result":{}}]` {
			t.Errorf("batch with a cancelled call answered %q", got)
		}
		// Only notifications: nothing to answer.
		if got := w.exchange(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`); len(got) != 0 {
			t.Errorf("a batch of notifications was answered: %q", got)
		}
		if _, code, _ := oneError(t, w.exchange(`[]`)); code != -32600 {
			t.Errorf("empty batch: code %d", code)
		}
	})
}

// modernMeta is the _meta a request of protocol 2026-07-28 carries.
var modernMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

// TestProtocolVersions: both transports speak the same versions,
// 2026-07-28 included, and say so in server/discover.
func TestProtocolVersions(t *testing.T) {
	want := SupportedProtocolVersions()
	if !slices.Contains(want, "2026-07-28") || !slices.Contains(want, "2025-03-26") {
		t.Fatalf("supported versions %v", want)
	}
	discover := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": map[string]any{"_meta": modernMeta}})
	call := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "steps", "arguments": map[string]any{"n": 2}, "_meta": modernMeta}})
	check := func(t *testing.T, discovered, called []string) {
		var d struct {
			Result struct {
				SupportedVersions []string `json:"supportedVersions"`
			} `json:"result"`
		}
		if len(discovered) != 1 || json.Unmarshal([]byte(discovered[0]), &d) != nil || !slices.Equal(d.Result.SupportedVersions, want) {
			t.Errorf("server/discover answered %q, want versions %v", discovered, want)
		}
		if len(called) == 0 || !strings.Contains(called[len(called)-1], "2 steps") {
			t.Errorf("tools/call on 2026-07-28 answered %q", called)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		s, _ := newTestServer(t, Options{}, nil)
		w := &stdioWire{t: t, c: startStdio(t, s, StdioOptions{})}
		check(t, w.exchange(discover), w.exchange(call))
	})
	t.Run("http", func(t *testing.T) {
		s, _ := newTestServer(t, Options{}, nil)
		c := startHTTP(t, s, HTTPOptions{}).client(t)
		post := func(body, method, name string) []string {
			resp := c.post(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name)
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s: a session was opened on 2026-07-28", method)
			}
			var out []string
			for _, m := range messages(t, resp) {
				out = append(out, m.raw)
			}
			return out
		}
		check(t, post(discover, "server/discover", ""), post(call, "tools/call", "steps"))
		for _, v := range want {
			if v >= "2026-07-28" {
				continue
			}
			w := &httpWire{t: t, c: startHTTP(t, s, HTTPOptions{}).client(t)}
			w.initialize(v)
			w.c.header.Set("MCP-Protocol-Version", v)
			if got := w.exchange(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); len(got) != 1 || !strings.Contains(got[0], `"result"`) {
				t.Errorf("version %s: ping answered %q", v, got)
			}
		}
		resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "MCP-Protocol-Version", "1999-01-01")
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("an unknown version: %s", resp.Status)
		}
		resp.Body.Close()
	})
}

// TestNoResponseAfterCancel: over both transports, a request cancelled by
// notifications/cancelled gets no response.
func TestNoResponseAfterCancel(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		started := make(chan string, 4)
		s, _ := newTestServer(t, Options{}, started)
		c := startStdio(t, s, StdioOptions{})
		c.initialize(nil)
		c.send(request(1, "tools/call", callParams("block", map[string]any{}, nil)))
		<-started
		c.send(notification("notifications/cancelled", map[string]any{"requestId": 1}))
		<-started
		for _, m := range c.drain() {
			t.Errorf("answered after notifications/cancelled: %s", m.raw)
		}
	})
	t.Run("http", func(t *testing.T) {
		started := make(chan string, 4)
		s, _ := newTestServer(t, Options{}, started)
		c := startHTTP(t, s, HTTPOptions{}).client(t)
		c.initialize()
		done := make(chan []msg, 1)
		go func() {
			done <- messages(t, c.post(mustJSON(request(1, "tools/call", callParams("block", map[string]any{}, nil)))))
		}()
		<-started
		c.post(mustJSON(notification("notifications/cancelled", map[string]any{"requestId": 1}))).Body.Close()
		for _, m := range <-done {
			t.Errorf("answered after notifications/cancelled: %s", m.raw)
		}
	})
}

// TestSessionlessCancel: on 2026-07-28 over HTTP, notifications/cancelled
// comes in a POST of its own, without a session, and still cancels the
// call it names: the call ends, and answers as cancelled.
func TestSessionlessCancel(t *testing.T) {
	started := make(chan string, 4)
	s, _ := newTestServer(t, Options{}, started)
	c := startHTTP(t, s, HTTPOptions{}).client(t)
	done := make(chan []msg, 1)
	go func() {
		body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
			"params": map[string]any{"name": "block", "arguments": map[string]any{}, "_meta": modernMeta}})
		done <- messages(t, c.post(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "block"))
	}()
	<-started
	cancel := mustJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": 7, "_meta": modernMeta}})
	c.post(cancel, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "notifications/cancelled").Body.Close()
	select {
	case ms := <-done:
		if len(ms) == 0 || !strings.HasPrefix(ms[len(ms)-1].tool(t).text(), "E_CANCELLED") {
			t.Errorf("cancelled call answered %v", ms)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call was not cancelled")
	}
}
