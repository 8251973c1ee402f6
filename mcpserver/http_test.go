package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// httpServer runs ServeStreamableHTTP on a loopback port.
type httpServer struct {
	url  string
	stop context.CancelFunc
	done chan error
}

func startHTTP(t testing.TB, s *Server, opts HTTPOptions) *httpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &httpServer{url: "http://" + ln.Addr().String() + "/mcp", stop: cancel, done: make(chan error, 1)}
	go func() { h.done <- s.ServeStreamableHTTP(ctx, ln, opts) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("ServeStreamableHTTP did not return")
		}
	})
	return h
}

// httpClient speaks raw JSON-RPC over HTTP.
type httpClient struct {
	t       testing.TB
	url     string
	session string
	header  http.Header
}

func (h *httpServer) client(t testing.TB) *httpClient {
	return &httpClient{t: t, url: h.url, header: http.Header{}}
}

// post sends body with the headers a client sends and returns the
// response, its body not read.
func (c *httpClient) post(body string, extra ...string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i] == "Host" {
			req.Host = extra[i+1]
			continue
		}
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *httpClient) do(method string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// messages reads the messages of a response: one JSON body, or the events
// of a stream.
func messages(t testing.TB, resp *http.Response) []msg {
	t.Helper()
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var out []msg
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
				out = append(out, decodeMsg(t, []byte(data)))
			}
		}
		return out
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return []msg{decodeMsg(t, b)}
}

func (c *httpClient) initialize() {
	c.t.Helper()
	resp := c.post(mustJSON(request(0, "initialize", initParams(nil))))
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("initialize: %s", resp.Status)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	messages(c.t, resp)
	if len(c.session) < 32 {
		c.t.Fatalf("session id %q is not a long random id", c.session)
	}
	if r := c.post(mustJSON(notification("notifications/initialized", nil))); r.StatusCode != http.StatusAccepted {
		c.t.Fatalf("initialized: %s", r.Status)
	}
}

// call runs a tool and returns the messages of the response, the last one
// being the response.
func (c *httpClient) call(id int, name string, args any, token any) []msg {
	c.t.Helper()
	ms, err := c.tryCall(id, name, args, token)
	if err != nil {
		c.t.Fatal(err)
	}
	return ms
}

// tryCall is call for goroutines other than the test's: it reports
// failures instead of stopping the test.
func (c *httpClient) tryCall(id int, name string, args any, token any) ([]msg, error) {
	body := mustJSON(request(id, "tools/call", callParams(name, args, token)))
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("tools/call %s: %s", name, resp.Status)
	}
	ms := messages(c.t, resp)
	if len(ms) == 0 || string(ms[len(ms)-1].ID) != fmt.Sprint(id) {
		return nil, fmt.Errorf("tools/call %s: no response at the end of %v", name, ms)
	}
	if e := ms[len(ms)-1].Error; e != nil {
		return nil, fmt.Errorf("tools/call %s: error %d %s", name, e.Code, e.Message)
	}
	return ms, nil
}

func errorCode(t testing.TB, resp *http.Response) int {
	t.Helper()
	ms := messages(t, resp)
	if len(ms) != 1 || ms[0].Error == nil {
		t.Fatalf("want one JSON-RPC error, got %v", ms)
	}
	return ms[0].Error.Code
}

func TestHTTPToolCall(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	writeFile(t, dir, "a.txt", "hello\n")
	c := startHTTP(t, s, HTTPOptions{}).client(t)
	c.initialize()
	ms := c.call(1, "read_file", map[string]any{"path": "a.txt"}, nil)
	res := ms[len(ms)-1].tool(t)
	if res.IsError || !strings.Contains(res.text(), "|hello") {
		t.Fatalf("read_file: %s", ms[len(ms)-1].raw)
	}
}

func TestHTTPOriginAndHost(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{AllowedOrigins: []string{"https://app.example.com", "vscode-file://vscode-app"}})
	init := mustJSON(request(0, "initialize", initParams(nil)))
	for _, tc := range []struct {
		name   string
		header []string
		status int
	}{
		{"no origin", nil, 200},
		{"loopback origin", []string{"Origin", "http://localhost:3000"}, 200},
		{"loopback IP origin", []string{"Origin", "http://127.0.0.1:8765"}, 200},
		{"allowed origin", []string{"Origin", "https://app.example.com"}, 200},
		{"foreign origin", []string{"Origin", "http://evil.example.com"}, 403},
		{"lookalike origin", []string{"Origin", "http://localhost.evil.example.com"}, 403},
		{"null origin", []string{"Origin", "null"}, 403},
		{"allowed non-http origin", []string{"Origin", "vscode-file://vscode-app"}, 200},
		{"loopback with another scheme", []string{"Origin", "file://localhost"}, 403},
		{"IP lookalike", []string{"Origin", "http://127.0.0.1.evil.example.com"}, 403},
		{"foreign host", []string{"Host", "evil.example.com"}, 403},
		{"rebinding", []string{"Host", "evil.example.com:80", "Origin", "http://evil.example.com"}, 403},
		{"localhost host", []string{"Host", "localhost:1234"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.client(t).post(init, tc.header...)
			messages(t, resp)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

func TestHTTPToken(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{Token: "s3cret-token"})
	init := mustJSON(request(0, "initialize", initParams(nil)))
	for _, tc := range []struct {
		auth   string
		status int
	}{
		{"", 401},
		{"Bearer wrong", 401},
		{"Bearer s3cret-toke", 401},
		{"Basic s3cret-token", 401},
		{"Bearer s3cret-token", 200},
		{"bearer s3cret-token", 200},
	} {
		c := h.client(t)
		if tc.auth != "" {
			c.header.Set("Authorization", tc.auth)
		}
		resp := c.post(init)
		messages(t, resp)
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, resp.StatusCode, tc.status)
		}
		if tc.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge")
		}
	}
}

// fakeAddrListener reports a non-loopback address while listening on
// loopback, to test the refusal without binding anywhere else.
type fakeAddrListener struct{ net.Listener }

func (fakeAddrListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 80} }

func TestHTTPOffLoopbackNeedsToken(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = s.ServeStreamableHTTP(context.Background(), fakeAddrListener{ln}, HTTPOptions{})
	if !errors.Is(err, ErrTokenRequired) {
		t.Fatalf("got %v, want ErrTokenRequired", err)
	}
	// With a token it serves, and does not check Host (it is not loopback).
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeStreamableHTTP(ctx, fakeAddrListener{ln}, HTTPOptions{Token: "t"}) }()
	c := &httpClient{t: t, url: "http://" + ln.Addr().String() + "/mcp", header: http.Header{}}
	resp := c.post(mustJSON(request(0, "initialize", initParams(nil))), "Host", "praxis.internal:8765")
	messages(t, resp)
	if resp.StatusCode != 401 {
		t.Errorf("no token: %d, want 401", resp.StatusCode)
	}
	c.header.Set("Authorization", "Bearer t")
	resp = c.post(mustJSON(request(0, "initialize", initParams(nil))), "Host", "praxis.internal:8765")
	messages(t, resp)
	if resp.StatusCode != 200 {
		t.Errorf("with token: %d, want 200", resp.StatusCode)
	}
	cancel()
	<-done
}

func TestHTTPSessions(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{MaxSessions: 2})
	list := mustJSON(request(1, "tools/list", nil))

	a := h.client(t)
	a.initialize()
	if r := a.post(list); r.StatusCode != 200 {
		t.Fatalf("tools/list in session: %s", r.Status)
	}
	b := h.client(t)
	b.initialize()
	if b.session == a.session {
		t.Fatal("two sessions share an id")
	}

	// No session id after initialization: 400. Unknown id: 404.
	none := h.client(t)
	if r := none.post(list); r.StatusCode != 400 {
		t.Errorf("no session id: %s, want 400", r.Status)
	}
	none.session = strings.Repeat("0", 32)
	if r := none.post(list); r.StatusCode != 404 {
		t.Errorf("unknown session id: %s, want 404", r.Status)
	}
	// Initialize must not carry a session id.
	if r := a.post(mustJSON(request(0, "initialize", initParams(nil)))); r.StatusCode != 400 {
		t.Errorf("initialize with a session id: %s, want 400", r.Status)
	}

	// Terminating a session frees its place; its id is then unknown.
	if r := a.do(http.MethodDelete); r.StatusCode != 200 {
		t.Errorf("DELETE: %s", r.Status)
	}
	if r := a.post(list); r.StatusCode != 404 {
		t.Errorf("after DELETE: %s, want 404", r.Status)
	}
	if r := a.do(http.MethodDelete); r.StatusCode != 404 {
		t.Errorf("second DELETE: %s, want 404", r.Status)
	}
	c := h.client(t)
	c.initialize()

	// At the limit, a new session replaces the least recently active idle
	// one (b, whose last request is older than c's).
	d := h.client(t)
	d.initialize()
	if r := b.post(list); r.StatusCode != 404 {
		t.Errorf("evicted session: %s, want 404", r.Status)
	}
	if r := c.post(list); r.StatusCode != 200 {
		t.Errorf("recent session: %s, want 200", r.Status)
	}

	// When every session is busy (an open stream), initialize gets 503.
	for _, cl := range []*httpClient{c, d} {
		stream := cl.do(http.MethodGet)
		if stream.StatusCode != 200 {
			t.Fatalf("GET: %s", stream.Status)
		}
		defer stream.Body.Close()
	}
	over := h.client(t)
	resp := over.post(mustJSON(request(0, "initialize", initParams(nil))))
	if code := errorCode(t, resp); resp.StatusCode != 503 || code != -32603 {
		t.Errorf("initialize with every session busy: %d %d, want 503", resp.StatusCode, code)
	}
}

func TestHTTPIdleSessionsExpire(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	// Idle long enough that a loaded machine opens the busy session's
	// stream before it expires.
	h := startHTTP(t, s, HTTPOptions{SessionIdle: 500 * time.Millisecond})
	list := mustJSON(request(1, "tools/list", nil))
	idle, busy := h.client(t), h.client(t)
	idle.initialize()
	busy.initialize()
	// A session with an open stream is not idle.
	stream := busy.do(http.MethodGet)
	if stream.StatusCode != 200 {
		t.Fatalf("GET stream: %s", stream.Status)
	}
	defer stream.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := idle.post(list)
		r.Body.Close()
		if r.StatusCode == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle session never expired")
		}
		time.Sleep(700 * time.Millisecond) // longer than the idle time: this request does not keep it alive
	}
	if r := busy.post(list); r.StatusCode != 200 {
		t.Errorf("session with an open stream: %s, want 200", r.Status)
	}
}

func TestHTTPBadRequests(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{MaxBodyBytes: 1024})
	c := h.client(t)
	c.initialize()
	big := mustJSON(request(1, "tools/call", callParams("steps", map[string]any{"pad": strings.Repeat("x", 2048)}, nil)))
	for _, tc := range []struct {
		name   string
		body   string
		header []string
		status int
		code   int
	}{
		{"malformed", `{"jsonrpc":"2.0","id":1,`, nil, 400, -32700},
		{"not json", `hello`, nil, 400, -32700},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 400, -32600},
		{"no method", `{"jsonrpc":"2.0","id":1}`, nil, 400, -32600},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, nil, 400, -32600},
		{"too large", big, nil, 413, -32600},
		{"content type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Content-Type", "text/plain"}, 415, -32600},
		{"accept", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Accept", "text/html"}, 406, -32600},
		{"protocol version", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"MCP-Protocol-Version", "1999-01-01"}, 400, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := c.post(tc.body, tc.header...)
			if code := errorCode(t, resp); resp.StatusCode != tc.status || code != tc.code {
				t.Errorf("got %d %d, want %d %d", resp.StatusCode, code, tc.status, tc.code)
			}
		})
	}
	// The session still works.
	ms := c.call(2, "steps", map[string]any{"n": 1}, nil)
	if res := ms[len(ms)-1].tool(t); res.text() != "1 steps" {
		t.Errorf("after bad requests: %q", res.text())
	}
	for _, m := range []string{http.MethodPut, http.MethodPatch} {
		if r := c.do(m); r.StatusCode != 405 {
			t.Errorf("%s: %s, want 405", m, r.Status)
		}
	}
}

// TestHTTPNotificationsPrecedeResponse runs concurrent calls in one session
// many times: each POST's stream carries exactly its own notifications, all
// before its response.
func TestHTTPNotificationsPrecedeResponse(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	c := startHTTP(t, s, HTTPOptions{}).client(t)
	c.initialize()
	messages(t, c.post(mustJSON(request(1, "logging/setLevel", map[string]any{"level": "debug"}))))

	const rounds, parallel, steps = 50, 4, 5
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, parallel)
		for p := range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := 1000*round + p + 10
				tag := fmt.Sprintf("tag-%d", id)
				var ms []msg
				var err error
				if p%2 == 0 {
					ms, err = c.tryCall(id, "steps", map[string]any{"n": steps}, tag)
				} else {
					ms, err = c.tryCall(id, "log", map[string]any{"n": steps, "tag": tag}, nil)
				}
				if err != nil {
					errs <- err
					return
				}
				if len(ms) != steps+1 {
					errs <- fmt.Errorf("call %d: %d messages, want %d notifications then the response", id, len(ms), steps+1)
					return
				}
				for _, m := range ms[:steps] {
					var p struct {
						Token string `json:"progressToken"`
						Data  string `json:"data"`
					}
					json.Unmarshal(m.Params, &p)
					if p.Token != tag && p.Data != tag {
						errs <- fmt.Errorf("call %d got another call's notification %s", id, m.raw)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// TestHTTPCancellation: notifications/cancelled stops the call and no
// response is sent for it; a client that hangs up does not cancel its
// call.
func TestHTTPCancellation(t *testing.T) {
	started := make(chan string, 4)
	s, dir := newTestServer(t, Options{}, started)
	c := startHTTP(t, s, HTTPOptions{}).client(t)
	c.initialize()
	result := make(chan *http.Response, 1)
	go func() {
		result <- c.post(mustJSON(request(7, "tools/call", callParams("block", map[string]any{}, nil))))
	}()
	<-started
	if r := c.post(mustJSON(notification("notifications/cancelled", map[string]any{"requestId": 7}))); r.StatusCode != 202 {
		t.Fatalf("cancel: %s", r.Status)
	}
	select {
	case resp := <-result:
		for _, m := range messages(t, resp) {
			t.Errorf("the cancelled call was answered: %s", m.raw)
		}
		if got := <-started; got != "cancelled" {
			t.Errorf("the tool reported %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not stop the call")
	}

	// A client that hangs up leaves its call running to its result.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(mustJSON(request(8, "tools/call", callParams("gate", map[string]any{"path": "go"}, nil)))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", c.session)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if got := <-started; got != "gate" {
		t.Fatalf("got %q", got)
	}
	cancel()
	<-done
	// The session's next call runs beside it; the gate opens and the first
	// call finishes without having been cancelled.
	writeFile(t, dir, "go", "")
	c.call(9, "steps", map[string]any{"n": 1}, nil)
	select {
	case got := <-started:
		t.Errorf("hanging up cancelled the call: the tool reported %q", got)
	default:
	}
}

// TestHTTPShutdown cancels the server's context with a call in flight: the
// call is cancelled and ServeStreamableHTTP returns promptly.
func TestHTTPShutdown(t *testing.T) {
	started := make(chan string, 4)
	s, _ := newTestServer(t, Options{}, started)
	h := startHTTP(t, s, HTTPOptions{})
	c := h.client(t)
	c.initialize()
	stream := c.do(http.MethodGet) // an open standalone stream must not hold the shutdown
	defer stream.Body.Close()
	result := make(chan []msg, 1)
	go func() {
		resp := c.post(mustJSON(request(3, "tools/call", callParams("block", map[string]any{}, nil))))
		result <- messages(t, resp)
	}()
	<-started
	h.stop()
	select {
	case err := <-h.done:
		if err != nil {
			t.Errorf("ServeStreamableHTTP: %v", err)
		}
		h.done <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	ms := <-result
	if len(ms) == 0 || !strings.HasPrefix(ms[len(ms)-1].tool(t).text(), "E_CANCELLED") {
		t.Errorf("in-flight call at shutdown answered %v", ms)
	}
}

func TestHTTPGetStream(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{KeepAlive: 20 * time.Millisecond})
	c := h.client(t)
	if r := c.do(http.MethodGet); r.StatusCode != 400 {
		t.Errorf("GET without a session: %s, want 400", r.Status)
	}
	c.initialize()
	first := c.do(http.MethodGet)
	defer first.Body.Close()
	if first.StatusCode != 200 || first.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %s %s", first.Status, first.Header.Get("Content-Type"))
	}
	if r := c.do(http.MethodGet); r.StatusCode != 409 {
		t.Errorf("second GET stream: %s, want 409", r.Status)
	}
	// A tool list change reaches the session on its stream.
	s.def.Catalog().Remove("boom")
	s.syncTools()
	sc := bufio.NewScanner(first.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications/tools/list_changed") {
			return
		}
	}
	t.Fatal("no list_changed notification on the GET stream")
}

// TestHTTPPreflight: a browser client on a loopback origin gets its CORS
// preflight answered, a foreign origin does not.
func TestHTTPPreflight(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	h := startHTTP(t, s, HTTPOptions{Token: "t"})
	for _, tc := range []struct {
		origin string
		status int
	}{
		{"http://localhost:6274", 204},
		{"http://evil.example.com", 403},
	} {
		req, _ := http.NewRequest(http.MethodOptions, h.url, nil)
		req.Header.Set("Origin", tc.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("preflight from %s: %d, want %d", tc.origin, resp.StatusCode, tc.status)
		}
		if tc.status == 204 {
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.origin {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			for _, hdr := range []string{"Authorization", "Mcp-Session-Id", "MCP-Protocol-Version"} {
				if !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), hdr) {
					t.Errorf("preflight does not allow %s", hdr)
				}
			}
			if !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
				t.Error("Mcp-Session-Id not exposed")
			}
		}
	}
}
