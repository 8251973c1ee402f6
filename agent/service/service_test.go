package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/journal"
	"github.com/praxis-tools/praxis/praxis"
)

// script is the model's part of the tests: a reply that reasons, says
// something and reads a file, the answer after the tool, then the answers
// to follow-ups.
var script = []agent.ScriptTurn{
	{Reasoning: "I should read the file first.", Text: "Let me read it.", ToolCalls: []agent.ScriptCall{{Name: "read_file", Input: json.RawMessage(`{"path":"notes.txt"}`)}}},
	{Text: "The file says hello world."},
	{Text: "Follow-up answered."},
	{Text: "Second follow-up answered."},
}

// readFile is a read-only tool that answers with the file's "content";
// "block.txt" blocks until the call is cancelled; "bad.txt" fails.
func readFile() praxis.Tool {
	return praxis.Tool{
		Name: "read_file", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: praxis.Annotations{ReadOnly: true},
		Handler: func(ctx context.Context, in json.RawMessage) (praxis.Result, error) {
			var a struct{ Path string }
			_ = json.Unmarshal(in, &a)
			switch a.Path {
			case "block.txt":
				<-ctx.Done()
				return praxis.ErrorResult(praxis.Errorf(praxis.ECancelled, "cancelled")), nil
			case "bad.txt":
				return praxis.ErrorResult(praxis.Errorf(praxis.ENotFound, "no such file: bad.txt")), nil
			}
			return praxis.Result{Text: "1:abcd|hello world\n"}, nil
		},
	}
}

// newTestService serves a Service with the scripted turns over real HTTP
// on loopback.
func newTestService(t *testing.T, dir string, turns []agent.ScriptTurn, mod func(*Options)) (*Service, *httptest.Server) {
	t.Helper()
	cat, err := praxis.NewCatalog(readFile())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Dir: dir, Loopback: true, KeepAlive: 50 * time.Millisecond,
		Setup: func(o SessionOptions) (agent.Config, *agent.Harness, error) {
			cfg := agent.Config{Provider: &agent.Scripted{Turns: turns}, Model: "script", Tools: cat, MaxSteps: 10}
			if o.Model != "" {
				cfg.Model = o.Model
			}
			return cfg, &agent.Harness{MaxToolCalls: o.MaxToolCalls}, nil
		},
	}
	if mod != nil {
		mod(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); srv.Close() })
	return s, srv
}

func do(t *testing.T, method, url, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func create(t *testing.T, srv *httptest.Server, body string) string {
	t.Helper()
	code, out := do(t, "POST", srv.URL+"/v1/sessions", body)
	var r struct{ ID string }
	if err := json.Unmarshal([]byte(out), &r); code != http.StatusCreated || err != nil || r.ID == "" {
		t.Fatalf("create: %d %s", code, out)
	}
	return r.ID
}

// sseFrame is one server-sent event as a client reads it.
type sseFrame struct{ id, event, data string }

// readFrames reads a stream's frames until it ends, or until stop says so
// (the frame it stops at included).
func readFrames(t *testing.T, r io.Reader, stop func(sseFrame) bool) []sseFrame {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var out []sseFrame
	var cur sseFrame
	var data []string
	has := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has && len(data) > 0 {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
				if stop != nil && stop(cur) {
					return out
				}
			}
			cur, data, has = sseFrame{}, nil, false
			continue
		}
		if strings.HasPrefix(line, ":") || strings.HasPrefix(line, "retry:") {
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		has = true
		switch k {
		case "id":
			cur.id = v
		case "event":
			cur.event = v
		case "data":
			data = append(data, v)
		}
	}
	return out
}

// events opens a session's event stream.
func events(t *testing.T, srv *httptest.Server, id, query string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/v1/sessions/"+id+"/events"+query, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func nativeUntil(t *testing.T, r io.Reader, typ agent.EventType, n int) []agent.Event {
	t.Helper()
	var evs []agent.Event
	seen := 0
	readFrames(t, r, func(f sseFrame) bool {
		var ev agent.Event
		if err := json.Unmarshal([]byte(f.data), &ev); err != nil {
			t.Fatalf("native frame is not an event: %v: %s", err, f.data)
		}
		if f.id != fmt.Sprint(ev.Seq) {
			t.Errorf("frame id %q for event %d", f.id, ev.Seq)
		}
		evs = append(evs, ev)
		if ev.Type == typ {
			seen++
		}
		return seen == n
	})
	return evs
}

func TestSessionLifecycle(t *testing.T) {
	dir := t.TempDir()
	_, srv := newTestService(t, dir, script, nil)
	id := create(t, srv, `{"task":"read notes.txt"}`)
	resp := events(t, srv, id, "")
	evs := nativeUntil(t, resp.Body, agent.EventRunComplete, 1)
	last := evs[len(evs)-1]
	if last.StopReason != agent.StopCompleted || last.Final != "The file says hello world." {
		t.Fatalf("first turn: %+v", last)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || ev.RunID != id {
			t.Fatalf("event %d: seq %d run %s", i, ev.Seq, ev.RunID)
		}
	}
	// The same events are in the journal, as the command line writes it.
	jevs, _, err := agent.ReadSession(dir, id)
	if err != nil || len(jevs) != len(evs) {
		t.Fatalf("journal: %d events, %v; streamed %d", len(jevs), err, len(evs))
	}

	code, out := do(t, "POST", srv.URL+"/v1/sessions/"+id+"/messages", `{"text":"and now?"}`)
	if code != http.StatusAccepted {
		t.Fatalf("message: %d %s", code, out)
	}
	// The native stream goes on with the next turn.
	more := nativeUntil(t, resp.Body, agent.EventRunComplete, 1)
	if more[0].Type != agent.EventRunStart || !more[0].Resumed || more[0].Seq != last.Seq+1 {
		t.Errorf("the follow-up's first event: %+v", more[0])
	}
	if f := more[len(more)-1].Final; f != "Follow-up answered." {
		t.Errorf("follow-up final %q", f)
	}

	code, out = do(t, "GET", srv.URL+"/v1/sessions/"+id, "")
	var sum Summary
	if err := json.Unmarshal([]byte(out), &sum); code != 200 || err != nil {
		t.Fatalf("show: %d %s", code, out)
	}
	if sum.Turns != 2 || sum.Running || sum.StopReason != agent.StopCompleted || sum.Task != "read notes.txt" || sum.ToolCalls != 1 || sum.LastEventID != more[len(more)-1].Seq {
		t.Errorf("summary %+v", sum)
	}
	code, out = do(t, "GET", srv.URL+"/v1/sessions", "")
	if code != 200 || !strings.Contains(out, id) {
		t.Errorf("list: %d %s", code, out)
	}

	if code, out = do(t, "DELETE", srv.URL+"/v1/sessions/"+id, ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, out)
	}
	if code, _ = do(t, "GET", srv.URL+"/v1/sessions/"+id, ""); code != http.StatusNotFound {
		t.Errorf("a deleted session: %d", code)
	}
	if list, _ := journal.List(dir); len(list) != 0 {
		t.Errorf("the journal is still there: %v", list)
	}
}

func TestRestartListsAndContinues(t *testing.T) {
	dir := t.TempDir()
	s1, srv1 := newTestService(t, dir, script, nil)
	id := create(t, srv1, `{"task":"read notes.txt"}`)
	nativeUntil(t, events(t, srv1, id, "").Body, agent.EventRunComplete, 1)
	s1.Close()
	srv1.Close()

	_, srv2 := newTestService(t, dir, script, nil)
	code, out := do(t, "GET", srv2.URL+"/v1/sessions", "")
	if code != 200 || !strings.Contains(out, `"id":"`+id+`"`) || !strings.Contains(out, `"stop_reason":"completed"`) {
		t.Fatalf("a restarted service's list: %d %s", code, out)
	}
	if code, out = do(t, "POST", srv2.URL+"/v1/sessions/"+id+"/messages", `{"text":"go on"}`); code != http.StatusAccepted {
		t.Fatalf("continue: %d %s", code, out)
	}
	evs := nativeUntil(t, events(t, srv2, id, "").Body, agent.EventRunComplete, 2)
	if f := evs[len(evs)-1].Final; f != "Follow-up answered." {
		t.Errorf("the continued session's answer: %q", f)
	}
}

func TestCancel(t *testing.T) {
	turns := []agent.ScriptTurn{{ToolCalls: []agent.ScriptCall{{Name: "read_file", Input: json.RawMessage(`{"path":"block.txt"}`)}}}}
	_, srv := newTestService(t, t.TempDir(), turns, nil)
	id := create(t, srv, `{"task":"block"}`)
	resp := events(t, srv, id, "")
	nativeUntil(t, resp.Body, agent.EventToolStart, 1)
	if code, out := do(t, "POST", srv.URL+"/v1/sessions/"+id+"/messages", `{"text":"again"}`); code != http.StatusConflict {
		t.Errorf("a message while a turn runs: %d %s", code, out)
	}
	if code, out := do(t, "DELETE", srv.URL+"/v1/sessions/"+id, ""); code != http.StatusConflict {
		t.Errorf("deleting a running session: %d %s", code, out)
	}
	code, out := do(t, "POST", srv.URL+"/v1/sessions/"+id+"/cancel", "")
	if code != 200 || !strings.Contains(out, `"cancelled":true`) {
		t.Fatalf("cancel: %d %s", code, out)
	}
	evs := nativeUntil(t, resp.Body, agent.EventRunComplete, 1)
	if last := evs[len(evs)-1]; last.StopReason != agent.StopCancelled {
		t.Errorf("stop reason %s", last.StopReason)
	}
}

func TestFork(t *testing.T) {
	dir := t.TempDir()
	_, srv := newTestService(t, dir, script, nil)
	id := create(t, srv, `{"task":"read notes.txt"}`)
	evs := nativeUntil(t, events(t, srv, id, "").Body, agent.EventRunComplete, 1)
	at := evs[slices.IndexFunc(evs, func(e agent.Event) bool { return e.Type == agent.EventToolResult })].Seq
	code, out := do(t, "POST", srv.URL+"/v1/sessions/"+id+"/fork", fmt.Sprintf(`{"event":%d}`, at))
	var f struct{ ID string }
	if err := json.Unmarshal([]byte(out), &f); code != http.StatusCreated || err != nil || f.ID == "" || f.ID == id {
		t.Fatalf("fork: %d %s", code, out)
	}
	fevs, _, err := agent.ReadSession(dir, f.ID)
	if err != nil || len(fevs) != int(at) || fevs[len(fevs)-1].RunID != f.ID {
		t.Fatalf("the fork's journal: %d events (want %d), %v", len(fevs), at, err)
	}
	// The fork goes on from the tool's result: the model's next reply
	// answers it.
	if code, out = do(t, "POST", srv.URL+"/v1/sessions/"+f.ID+"/messages", `{"text":"what does it say?"}`); code != http.StatusAccepted {
		t.Fatalf("message to the fork: %d %s", code, out)
	}
	more := nativeUntil(t, events(t, srv, f.ID, fmt.Sprintf("?after=%d", at)).Body, agent.EventRunComplete, 1)
	if more[0].Seq != at+1 || more[len(more)-1].StopReason != agent.StopCompleted {
		t.Errorf("the fork's turn: first %+v last %+v", more[0], more[len(more)-1])
	}
	for _, bad := range []string{`{"event":0}`, fmt.Sprintf(`{"event":%d}`, len(evs)+1), `{"event":"x"}`} {
		if code, out := do(t, "POST", srv.URL+"/v1/sessions/"+id+"/fork", bad); code != http.StatusBadRequest || !strings.Contains(out, "E_INVALID_ARGS") {
			t.Errorf("fork %s: %d %s", bad, code, out)
		}
	}
}

// TestReconnectLosesNothing cuts each format's stream after every frame in
// turn and reconnects with the last ID seen: the frames before and after
// are the whole stream, once.
func TestReconnectLosesNothing(t *testing.T) {
	_, srv := newTestService(t, t.TempDir(), script, nil)
	id := create(t, srv, `{"task":"read notes.txt"}`)
	nativeUntil(t, events(t, srv, id, "").Body, agent.EventRunComplete, 1)
	for _, f := range []Format{Native, Vercel, OpenAI, Anthropic} {
		t.Run(string(f), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/sessions/"+id+"/events?format="+string(f), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			whole := readFrames(t, resp.Body, func(fr sseFrame) bool { return f == Native && strings.Contains(fr.data, `"run_complete"`) })
			resp.Body.Close()
			if len(whole) < 10 {
				t.Fatalf("%d frames", len(whole))
			}
			for cut := 1; cut < len(whole); cut++ {
				lastID := ""
				for _, fr := range whole[:cut] {
					if fr.id != "" {
						lastID = fr.id
					}
				}
				if lastID == "" {
					continue
				}
				resp := events(t, srv, id, "?format="+string(f), "Last-Event-ID", lastID)
				rest := readFrames(t, resp.Body, func(fr sseFrame) bool { return f == Native && strings.Contains(fr.data, `"run_complete"`) })
				resp.Body.Close()
				// What came after the last ID, then the rest, is the whole.
				seen := slices.IndexFunc(whole, func(fr sseFrame) bool { return fr.id == lastID })
				got := append(slices.Clone(whole[:seen+1]), rest...)
				if !slices.Equal(got, whole) {
					t.Fatalf("reconnecting after %s: got %d frames, want %d\n got %v\nwant %v", lastID, len(got), len(whole), got, whole)
				}
			}
		})
	}
}

func TestStreamFormats(t *testing.T) {
	_, srv := newTestService(t, t.TempDir(), script, nil)
	id := create(t, srv, `{"task":"read notes.txt"}`)
	nativeUntil(t, events(t, srv, id, "").Body, agent.EventRunComplete, 1)

	resp := events(t, srv, id, "", "Accept", "text/event-stream; format=vercel")
	if resp.Header.Get("X-Vercel-AI-UI-Message-Stream") != "v1" {
		t.Errorf("vercel header: %v", resp.Header)
	}
	var types []string
	for _, fr := range readFrames(t, resp.Body, nil) {
		var p struct{ Type string }
		if fr.data == "[DONE]" {
			types = append(types, "[DONE]")
			continue
		}
		_ = json.Unmarshal([]byte(fr.data), &p)
		if len(types) == 0 || types[len(types)-1] != p.Type {
			types = append(types, p.Type)
		}
	}
	want := "start start-step reasoning-start reasoning-delta reasoning-end text-start text-delta text-end tool-input-start tool-input-delta tool-input-available tool-output-available finish-step start-step text-start text-delta text-end finish-step finish [DONE]"
	if strings.Join(types, " ") != want {
		t.Errorf("vercel parts:\n got %s\nwant %s", strings.Join(types, " "), want)
	}

	resp = events(t, srv, id, "?format=openai")
	var content strings.Builder
	frames := readFrames(t, resp.Body, nil)
	for _, fr := range frames {
		if fr.data == "[DONE]" {
			continue
		}
		var c struct {
			Object  string
			Choices []struct{ Delta struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(fr.data), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("openai chunk %s: %v", fr.data, err)
		}
		content.WriteString(c.Choices[0].Delta.Content)
	}
	if frames[len(frames)-1].data != "[DONE]" || !strings.Contains(content.String(), "> tool read_file") || !strings.HasSuffix(content.String(), "The file says hello world.") {
		t.Errorf("openai content %q", content.String())
	}

	resp = events(t, srv, id, "?format=anthropic")
	var names []string
	for _, fr := range readFrames(t, resp.Body, nil) {
		if len(names) == 0 || names[len(names)-1] != fr.event {
			names = append(names, fr.event)
		}
	}
	wantA := "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != wantA {
		t.Errorf("anthropic events:\n got %s\nwant %s", strings.Join(names, " "), wantA)
	}

	if code, out := do(t, "GET", srv.URL+"/v1/sessions/"+id+"/events?format=xml", ""); code != 400 || !strings.Contains(out, "E_INVALID_ARGS") {
		t.Errorf("unknown format: %d %s", code, out)
	}
	if code, out := do(t, "GET", srv.URL+"/v1/sessions/"+id+"/events", "", "Last-Event-ID", "x"); code != 400 {
		t.Errorf("bad Last-Event-ID: %d %s", code, out)
	}
}

func TestRequestChecks(t *testing.T) {
	_, srv := newTestService(t, t.TempDir(), script, func(o *Options) { o.Token = "s3cret"; o.MaxBodyBytes = 64 })
	auth := []string{"Authorization", "Bearer s3cret"}
	tests := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"no token", "GET", "/v1/sessions", "", nil, 401, "E_UNAUTHORIZED"},
		{"wrong token", "GET", "/v1/sessions", "", []string{"Authorization", "Bearer nope"}, 401, "E_UNAUTHORIZED"},
		{"foreign origin", "GET", "/v1/sessions", "", append([]string{"Origin", "https://evil.example"}, auth...), 403, "E_FORBIDDEN"},
		{"rebinding host", "GET", "/v1/sessions", "", append([]string{"Host", "evil.example"}, auth...), 403, "E_FORBIDDEN"},
		{"body too large", "POST", "/v1/sessions", `{"task":"` + strings.Repeat("x", 100) + `"}`, auth, 413, "E_TOO_LARGE"},
		{"not JSON", "POST", "/v1/sessions", `{"task":`, auth, 400, "E_INVALID_ARGS"},
		{"no task", "POST", "/v1/sessions", `{}`, auth, 400, "E_INVALID_ARGS"},
		{"negative budget", "POST", "/v1/sessions", `{"task":"t","max_steps":-1}`, auth, 400, "E_INVALID_ARGS"},
		{"unknown session", "GET", "/v1/sessions/nope", "", auth, 404, "E_NOT_FOUND"},
		{"path in the ID", "GET", "/v1/sessions/..%2F..%2Fetc", "", auth, 404, "E_NOT_FOUND"},
		{"unknown endpoint", "GET", "/v2/x", "", auth, 404, "E_NOT_FOUND"},
		{"chat without a user message", "POST", "/v1/chat/completions", `{"messages":[]}`, auth, 400, "E_INVALID_ARGS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				if tt.hdr[i] == "Host" {
					req.Host = tt.hdr[i+1]
				} else {
					req.Header.Set(tt.hdr[i], tt.hdr[i+1])
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error struct{ Code, Message string }
			}
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &e); resp.StatusCode != tt.status || err != nil || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("%d %s, want %d %s", resp.StatusCode, b, tt.status, tt.code)
			}
		})
	}
}

func TestDropInsWhole(t *testing.T) {
	svc, srv := newTestService(t, t.TempDir(), script, nil)
	code, out := do(t, "POST", srv.URL+"/v1/chat/completions", `{"model":"praxis","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"read notes.txt"}]}`)
	var c struct {
		Object  string
		Choices []struct {
			Message struct {
				Role, Content    string
				ReasoningContent string `json:"reasoning_content"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(out), &c); code != 200 || err != nil || c.Object != "chat.completion" || len(c.Choices) != 1 {
		t.Fatalf("chat completions: %d %s", code, out)
	}
	m := c.Choices[0]
	if !strings.Contains(m.Message.Content, "> tool read_file") || !strings.HasSuffix(m.Message.Content, "The file says hello world.") ||
		m.Message.ReasoningContent != "I should read the file first." || m.FinishReason != "stop" || c.Usage.TotalTokens == 0 {
		t.Errorf("chat completion %+v", c)
	}

	code, out = do(t, "POST", srv.URL+"/v1/messages", `{"model":"praxis","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"read notes.txt"}]}]}`)
	var a struct {
		Type       string
		Content    []struct{ Type, Text, Thinking string }
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(out), &a); code != 200 || err != nil || a.Type != "message" || len(a.Content) != 2 {
		t.Fatalf("messages: %d %s", code, out)
	}
	if a.Content[0].Thinking != "I should read the file first." || !strings.HasSuffix(a.Content[1].Text, "The file says hello world.") || a.StopReason != "end_turn" {
		t.Errorf("message %+v", a)
	}
	// The stateless APIs' sessions leave memory, and stay listed from
	// their journals.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		svc.mu.Lock()
		n := len(svc.sessions)
		svc.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still in memory", n)
		}
	}
	if code, out := do(t, "GET", srv.URL+"/v1/sessions", ""); code != 200 || strings.Count(out, `"stop_reason":"completed"`) != 2 {
		t.Errorf("list: %d %s", code, out)
	}
}

// TestStreamHintsAndKeepAlive checks the stream's retry hint and the
// comment lines it sends while the session is quiet.
func TestStreamHintsAndKeepAlive(t *testing.T) {
	_, srv := newTestService(t, t.TempDir(), script, nil)
	id := create(t, srv, `{"task":"read notes.txt"}`)
	resp := events(t, srv, id, "")
	sc := bufio.NewScanner(resp.Body)
	var first string
	keepAlives := 0
	for sc.Scan() && keepAlives < 2 {
		line := sc.Text()
		if first == "" {
			first = line
		}
		if line == ": keep-alive" {
			keepAlives++
		}
	}
	if first != "retry: 2000" || keepAlives < 2 {
		t.Errorf("first line %q, %d keep-alives", first, keepAlives)
	}
	if resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("headers %v", resp.Header)
	}
}

// TestChatStreamEnding: once a turn's run_complete is out, the turn is
// over for clients, even while its goroutine still closes the journal:
// useChat's resumption gets 204, as the summary says it is not running.
// A client that read the stream to its end asks at once, inside that
// window.
func TestChatStreamEnding(t *testing.T) {
	s, srv := newTestService(t, t.TempDir(), nil, nil)
	ss := newSession("ending", SessionOptions{})
	ss.running, ss.ending = true, true
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	// A stream would wait for the turn's events: the answer must come at
	// once.
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(srv.URL + "/v1/chat/ending/stream")
	if err != nil {
		t.Fatalf("resuming a chat whose turn's run_complete is out: %v, want 204 at once", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("resuming a chat whose turn's run_complete is out: %s, want 204", resp.Status)
	}
	if ss.summary().Running {
		t.Error("the summary says the turn runs")
	}
}
