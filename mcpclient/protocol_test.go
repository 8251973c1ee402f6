package mcpclient

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/internal/sse"
)

// scriptedServer is a streamable HTTP server written message by message,
// for what the real servers do not do on demand: it answers
// server/discover with an empty result, as a server that answers every
// method with one does, so the client falls back to initialize; it pages
// tools/list; during the call of "ask" it sends a notification, a ping
// and a sampling request on the call's stream, waits for the client's
// answers, then breaks the stream before the result, which it replays to
// a GET with Last-Event-ID; its standalone GET stream sends a ping; and
// it records the session's DELETE.
type scriptedServer struct {
	t *testing.T

	mu       sync.Mutex
	answers  map[string]string // the client's answers to the server's requests, by id
	answered chan struct{}     // signalled at each answer
	headers  []string          // "METHOD: Mcp-Session-Id / MCP-Protocol-Version" of each request after initialize
	deleted  bool
	replay   []byte // the result of ask, for the resuming GET
	broken   time.Time
	resumed  time.Time
}

// scriptedRetry is the reconnection time the call's stream sets.
const scriptedRetry = 300 * time.Millisecond

const scriptedSession = "session-7f3a"

func newScriptedServer(t *testing.T) *scriptedServer {
	return &scriptedServer{t: t, answers: map[string]string{}, answered: make(chan struct{}, 16)}
}

func (s *scriptedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Session-Id") != "" {
		s.mu.Lock()
		s.headers = append(s.headers, r.Method+": "+r.Header.Get("Mcp-Session-Id")+" / "+r.Header.Get("MCP-Protocol-Version"))
		s.mu.Unlock()
	}
	switch r.Method {
	case http.MethodDelete:
		s.mu.Lock()
		s.deleted = r.Header.Get("Mcp-Session-Id") == scriptedSession
		s.mu.Unlock()
	case http.MethodGet:
		s.get(w, r)
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		m, bad := jsonrpc.Decode(body)
		if bad != nil {
			http.Error(w, bad.Message, http.StatusBadRequest)
			return
		}
		s.post(w, r, m)
	}
}

func (s *scriptedServer) get(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	if r.Header.Get("Last-Event-ID") == "ask-1" {
		s.mu.Lock()
		replay := s.replay
		s.resumed = time.Now()
		s.mu.Unlock()
		_ = sse.Write(bw, sse.Event{ID: "ask-2", Data: replay})
		bw.Flush()
		return
	}
	// The standalone stream.
	_ = sse.Write(bw, sse.Event{ID: "get-1", Data: []byte(`{"jsonrpc":"2.0","id":"get-ping","method":"ping"}`)})
	bw.Flush()
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func (s *scriptedServer) post(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	jsonAnswer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonrpc.AppendResult(nil, m.ID, json.RawMessage(result)))
	}
	switch {
	case m.Kind == jsonrpc.KindResponse:
		answer := string(m.Result)
		if m.Error != nil {
			answer = fmt.Sprintf("error %d", jsonrpc.DecodeError(m.Error).Code)
		}
		s.mu.Lock()
		s.answers[strings.Trim(string(m.ID), `"`)] = answer
		s.mu.Unlock()
		s.answered <- struct{}{}
		w.WriteHeader(http.StatusAccepted)
	case m.Kind == jsonrpc.KindNotification:
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", scriptedSession)
		jsonAnswer(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"scripted","version":"0.1"}}`)
	case m.Method == "tools/list":
		var p struct{ Cursor string }
		_ = json.Unmarshal(m.Params, &p)
		page := map[string]string{
			"":   `{"tools":[{"name":"ask","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`,
			"p2": `{"tools":[{"name":"second","inputSchema":{"type":"object"}}],"nextCursor":"p3"}`,
			"p3": `{"tools":[{"name":"third"}]}`,
		}[p.Cursor]
		jsonAnswer(page)
	case m.Method == "tools/call":
		s.ask(w, r, m)
	case m.Method == "server/discover":
		jsonAnswer(`{}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonrpc.AppendError(nil, m.ID, jsonrpc.CodeMethodNotFound, "no "+m.Method))
	}
}

// ask streams the server's requests, waits for the answers, and breaks
// the stream before the result.
func (s *scriptedServer) ask(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	_ = sse.Retry(bw, scriptedRetry)
	_ = sse.Write(bw, sse.Event{ID: "ask-0", Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)})
	_ = sse.Write(bw, sse.Event{ID: "ask-1", Data: []byte(`[{"jsonrpc":"2.0","id":"call-ping","method":"ping"},{"jsonrpc":"2.0","id":"call-sampling","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}]`)})
	bw.Flush()
	w.(http.Flusher).Flush()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		ping, sampling := s.answers["call-ping"], s.answers["call-sampling"]
		s.mu.Unlock()
		if ping != "" && sampling != "" {
			text := fmt.Sprintf("ping=%s sampling=%s", ping, sampling)
			content, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
			s.mu.Lock()
			s.replay = jsonrpc.AppendResult(nil, m.ID, content)
			s.broken = time.Now()
			s.mu.Unlock()
			return // the stream breaks before the result
		}
		select {
		case <-s.answered:
		case <-deadline:
			s.t.Errorf("the client did not answer the server's requests: %v", s.answers)
			return
		}
	}
}

// TestStreamableHTTPProtocol drives the client through the scripted
// server: initialize after a server/discover answered without versions, the session's ID
// and protocol version on every later request, three pages of tools, the
// server's requests on a call's stream answered (ping with a result,
// sampling with method-not-found), the broken stream resumed with
// Last-Event-ID no sooner than the stream's retry field says, the
// standalone stream's ping answered, and DELETE on Close.
func TestStreamableHTTPProtocol(t *testing.T) {
	s := newScriptedServer(t)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close) // after the Manager's Close, which ends the standalone stream
	m, logs := connect(t, map[string]any{"scripted": map[string]any{"url": srv.URL + "/mcp", "timeout": "20s"}})
	st := m.Servers()[0]
	if st.State != StateConnected || st.ProtocolVersion != "2025-06-18" || st.ServerName != "scripted" {
		t.Fatalf("server = %+v\nlog:\n%s", st, logs)
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "mcp__scripted__ask mcp__scripted__second mcp__scripted__third" {
		t.Errorf("tools of three pages = %s", got)
	}
	res := call(t, m, "mcp__scripted__ask", `{}`)
	if res.IsError || res.Text != "ping={} sampling=error -32601" {
		t.Errorf("ask = %+v\nlog:\n%s", res, logs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		ping := s.answers["get-ping"]
		s.mu.Unlock()
		if ping == "{}" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standalone stream's ping was not answered: %q", ping)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.deleted {
		t.Error("Close sent no DELETE with the session's ID")
	}
	if gap := s.resumed.Sub(s.broken); gap < scriptedRetry {
		t.Errorf("the stream was resumed %s after it broke; its retry field asked for %s", gap, scriptedRetry)
	}
	for _, h := range s.headers {
		if !strings.HasSuffix(h, ": "+scriptedSession+" / 2025-06-18") {
			t.Errorf("a request after initialize carried %q", h)
		}
	}
	if len(s.headers) < 6 {
		t.Errorf("%d requests carried the session's ID: %v", len(s.headers), s.headers)
	}
}

// TestSSEEndpointElsewhere: a legacy SSE server whose endpoint is on
// another origin is refused, so the client's messages and headers never
// go there.
func TestSSEEndpointElsewhere(t *testing.T) {
	for _, endpoint := range []string{"http://elsewhere.example/message", "//elsewhere.example/message", "https://127.0.0.1/message"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			bw := bufio.NewWriter(w)
			_ = sse.Write(bw, sse.Event{Event: "endpoint", Data: []byte(endpoint)})
			bw.Flush()
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		m, _ := connect(t, map[string]any{"legacy": map[string]any{"type": "sse", "url": srv.URL + "/sse", "timeout": "5s"}})
		if st := m.Servers()[0]; st.State != StateFailed || !strings.Contains(st.Error, "is not on http://127.0.0.1") {
			t.Errorf("endpoint %s: %+v", endpoint, st)
		}
		m.Close()
		srv.Close()
	}
}

// TestInitializeNegotiation: initialize offers the newest version the
// handshake can negotiate; the server's older choice is taken when Praxis
// knows it, and a version it does not know fails the connection.
func TestInitializeNegotiation(t *testing.T) {
	for _, tc := range []struct {
		answer, state, err string
	}{
		{"2025-11-25", string(StateConnected), ""},
		{"2025-03-26", string(StateConnected), ""},
		{"2024-11-05", string(StateConnected), ""},
		{"1999-01-01", string(StateFailed), `the server speaks protocol version "1999-01-01"`},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			var offered sync.Map
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				m, bad := jsonrpc.Decode(body)
				if bad != nil || m.Kind != jsonrpc.KindRequest {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				switch m.Method {
				case "initialize":
					var p struct{ ProtocolVersion string }
					_ = json.Unmarshal(m.Params, &p)
					offered.Store("version", p.ProtocolVersion)
					w.Write(jsonrpc.AppendResult(nil, m.ID, json.RawMessage(`{"protocolVersion":"`+tc.answer+`","capabilities":{},"serverInfo":{"name":"old","version":"1"}}`)))
				default:
					w.Write(jsonrpc.AppendError(nil, m.ID, jsonrpc.CodeMethodNotFound, "no "+m.Method))
				}
			}))
			t.Cleanup(srv.Close)
			m, _ := connect(t, map[string]any{"old": map[string]any{"url": srv.URL, "timeout": "10s"}})
			st := m.Servers()[0]
			if string(st.State) != tc.state || !strings.Contains(st.Error, tc.err) {
				t.Errorf("state %s, error %q; want %s, %q", st.State, st.Error, tc.state, tc.err)
			}
			if tc.err == "" && st.ProtocolVersion != tc.answer {
				t.Errorf("protocol version %q, want the server's %q", st.ProtocolVersion, tc.answer)
			}
			if v, _ := offered.Load("version"); v != "2025-11-25" {
				t.Errorf("initialize offered %v, want 2025-11-25", v)
			}
		})
	}
}
