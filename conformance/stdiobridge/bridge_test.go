package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain doubles as a tiny stdio MCP server when the bridge under test
// spawns this test binary with BRIDGE_TEST_SERVER=1.
func TestMain(m *testing.M) {
	if os.Getenv("BRIDGE_TEST_SERVER") == "1" {
		fakeServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServer answers initialize and three tools: "crash" exits, "after"
// notifies after its response, and any other reports two progress
// notifications and logs once before its response.
func fakeServer(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	w := bufio.NewWriter(out)
	send := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(append(b, '\n'))
		w.Flush()
	}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch {
		case m.Method == "initialize":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "1"}}})
		case m.Method == "tools/call" && m.Params.Name == "crash":
			os.Exit(3)
		case m.Method == "tools/call" && m.Params.Name == "after":
			// A notification after the response: no POST stream is
			// waiting, so it belongs on the GET stream.
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": []any{}}})
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
		case m.Method == "tools/call":
			for i := 1; i <= 2 && len(m.Params.Meta.ProgressToken) > 0; i++ {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": m.Params.Meta.ProgressToken, "progress": i}})
			}
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
				"params": map[string]any{"level": "info", "data": "working"}})
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": "done " + m.Params.Name}}}})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no"}})
		}
	}
}

// startBridge serves a bridge over this binary's fake server on a
// loopback port and returns its URL.
func startBridge(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BRIDGE_TEST_SERVER", "1")
	b := newBridge([]string{exe}, 4, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: b}
	go srv.Serve(ln)
	t.Cleanup(func() {
		b.closeAll()
		srv.Close()
	})
	return fmt.Sprintf("http://%s/mcp", ln.Addr())
}

type reply struct {
	status  int
	session string
	events  []string // data of each SSE event, or the JSON body
}

func post(t *testing.T, url, session, body string, hdr ...string) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if len(hdr) >= 2 && hdr[0] == "Host" {
		req.Host = hdr[1]
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, session: resp.Header.Get(sessionHeader)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				r.events = append(r.events, d)
			}
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		r.events = []string{string(bytes.TrimSpace(b))}
	}
	return r
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func initSession(t *testing.T, url string) string {
	t.Helper()
	r := post(t, url, "", initBody)
	if r.status != 200 || r.session == "" || len(r.events) != 1 || !strings.Contains(r.events[0], `"serverInfo"`) {
		t.Fatalf("initialize: %+v", r)
	}
	return r.session
}

func TestCallStreamsNotificationsBeforeResponse(t *testing.T) {
	url := startBridge(t)
	s := initSession(t, url)
	if r := post(t, url, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		t.Fatalf("notification: status %d, want 202", r.status)
	}
	r := post(t, url, s, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p1"}}}`)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	want := []string{`"progress":1`, `"progress":2`, `notifications/message`, `"id":"c1"`}
	if len(r.events) != len(want) {
		t.Fatalf("got %d events, want %d: %q", len(r.events), len(want), r.events)
	}
	for i, w := range want {
		if !strings.Contains(r.events[i], w) {
			t.Errorf("event %d = %s, want it to contain %s", i, r.events[i], w)
		}
	}
}

func TestConcurrentCallsEachGetTheirResponse(t *testing.T) {
	url := startBridge(t)
	s := initSession(t, url)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := post(t, url, s, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d","_meta":{"progressToken":%d}}}`, 100+i, i, i))
			last := r.events[len(r.events)-1]
			if !strings.Contains(last, fmt.Sprintf(`"id":%d`, 100+i)) || !strings.Contains(last, fmt.Sprintf("done t%d", i)) {
				t.Errorf("call %d: last event %s", i, last)
			}
			for _, e := range r.events {
				if strings.Contains(e, "notifications/progress") && !strings.Contains(e, fmt.Sprintf(`"progressToken":%d`, i)) {
					t.Errorf("call %d got another call's progress: %s", i, e)
				}
			}
		}()
	}
	wg.Wait()
}

func TestHTTPErrors(t *testing.T) {
	url := startBridge(t)
	s := initSession(t, url)
	tests := []struct {
		name    string
		session string
		body    string
		hdr     []string
		status  int
		text    string
	}{
		{"unknown session", "nope", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil, 404, "Session not found"},
		{"no session after init", "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil, 400, "Mcp-Session-Id"},
		{"malformed JSON", s, `{"jsonrpc":`, nil, 400, "-32700"},
		{"not an object", s, `42`, nil, 400, "-32600"},
		{"a null id", s, `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, 400, `id\" must not be null`},
		{"an empty batch", s, `[]`, nil, 400, "an empty batch"},
		{"an invalid message in a batch", s, `[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"1.0","id":1,"method":"ping"}]`, nil, 400, `jsonrpc\" must be \"2.0`},
		{"foreign Host", s, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Host", "evil.example.com"}, 403, "forbidden: host"},
		{"foreign Origin", s, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Origin", "http://evil.example.com"}, 403, "forbidden: origin"},
		{"Origin of another scheme", s, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Origin", "file://localhost"}, 403, "forbidden: origin"},
		{"loopback Origin", s, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, []string{"Origin", "http://localhost:3000"}, 200, `"id":2`},
		{"huge body", s, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}}`, nil, 413, "Too Large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, url, tt.session, tt.body, tt.hdr...)
			if r.status != tt.status || len(r.events) == 0 || !strings.Contains(strings.Join(r.events, "\n"), tt.text) {
				t.Errorf("got %d %q, want %d containing %q", r.status, r.events, tt.status, tt.text)
			}
		})
	}
}

func TestSessionsEndWithDeleteOrProcessExit(t *testing.T) {
	url := startBridge(t)
	a, b := initSession(t, url), initSession(t, url)
	if a == b {
		t.Fatal("two sessions got the same ID")
	}

	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set(sessionHeader, a)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if r := post(t, url, a, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.status != 404 {
		t.Errorf("after DELETE: %d, want 404", r.status)
	}

	// A crash ends the call's stream and the session, not the bridge.
	done := make(chan reply, 1)
	go func() {
		done <- post(t, url, b, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"crash"}}`)
	}()
	select {
	case r := <-done:
		if r.status != 200 || len(r.events) != 0 {
			t.Errorf("crashed call: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream of a crashed server never closed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for post(t, url, b, `{"jsonrpc":"2.0","id":4,"method":"ping"}`).status != 404 {
		if time.Now().After(deadline) {
			t.Fatal("session of a crashed server still answers")
		}
		time.Sleep(10 * time.Millisecond)
	}
	initSession(t, url) // the bridge still serves new sessions
}

func TestMaxSessions(t *testing.T) {
	url := startBridge(t) // max 4
	for range 4 {
		initSession(t, url)
	}
	if r := post(t, url, "", initBody); r.status != http.StatusServiceUnavailable {
		t.Errorf("fifth session: %d, want 503", r.status)
	}
}

func TestServerMessagesWithoutARequestGoToTheGETStream(t *testing.T) {
	url := startBridge(t)
	s := initSession(t, url)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set(sessionHeader, s)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	// A second GET stream for the session is refused.
	req2, _ := http.NewRequest(http.MethodGet, url, nil)
	req2.Header.Set(sessionHeader, s)
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusConflict {
		t.Errorf("second GET: %d, want 409", resp2.StatusCode)
	}

	r := post(t, url, s, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"after"}}`)
	if len(r.events) != 1 || !strings.Contains(r.events[0], `"id":5`) {
		t.Fatalf("POST stream: %q", r.events)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				got <- d
				return
			}
		}
	}()
	select {
	case d := <-got:
		if !strings.Contains(d, "notifications/tools/list_changed") {
			t.Errorf("GET stream got %s", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("notification never reached the GET stream")
	}
}
