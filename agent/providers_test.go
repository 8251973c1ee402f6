package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorded is one request a fake API received.
type recorded struct {
	path   string
	header http.Header
	body   map[string]any
}

// reply is what a fake API answers to one request.
type reply struct {
	status  int
	header  map[string]string
	body    string // a JSON error body, or SSE
	fixture string // a testdata file to stream as SSE
	sse     string // server-sent events to stream
	// hang keeps the stream open without a byte more until the client
	// goes away.
	hang bool
}

// fakeAPI serves replies in order, recording the requests.
type fakeAPI struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	got     []recorded
}

func newFakeAPI(t *testing.T, replies ...reply) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v: %s", err, b)
	}
	f.mu.Lock()
	f.got = append(f.got, recorded{r.URL.Path, r.Header.Clone(), body})
	if len(f.replies) == 0 {
		f.mu.Unlock()
		http.Error(w, `{"error": {"type": "api_error", "message": "no more replies"}}`, 500)
		return
	}
	rep := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.fixture != "" || rep.sse != "" || rep.hang {
		data := []byte(rep.sse)
		if rep.fixture != "" {
			var err error
			if data, err = os.ReadFile("testdata/" + rep.fixture); err != nil {
				f.t.Fatal(err)
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		// Stream event by event, flushing, as a real API does.
		for ev := range strings.SplitAfterSeq(string(data), "\n\n") {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
		if rep.hang {
			<-r.Context().Done()
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(rep.status, http.StatusOK))
	_, _ = io.WriteString(w, rep.body)
}

// conversation is a request with history in every block kind.
func conversation() *Request {
	return &Request{
		Model:  "test-model",
		System: "You are a test.",
		Messages: []Message{
			{Role: RoleUser, Content: []Block{{Type: BlockText, Text: "Fix notes.txt"}}},
			{Role: RoleAssistant, Content: []Block{
				{Type: BlockText, Text: "Reading."},
				{Type: BlockToolUse, ID: "t1", Name: "read_file", Input: json.RawMessage(`{"path":"notes.txt"}`)},
			}},
			{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ID: "t1", Text: "E_NOT_FOUND: no such file", IsError: true}}},
		},
		Tools: []ToolDef{{Name: "read_file", Description: "Reads.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
}

func collect() (StreamFunc, *strings.Builder) {
	var b strings.Builder
	return func(s string) { b.WriteString(s) }, &b
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAnthropicStreaming(t *testing.T) {
	api, srv := newFakeAPI(t, reply{fixture: "anthropic_tool_use.sse"})
	p := &Anthropic{APIKey: "sk-test", BaseURL: srv.URL + "/"}
	onText, streamed := collect()
	resp, err := p.Complete(context.Background(), conversation(), onText)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.String() != "Let me read the file." {
		t.Errorf("streamed %q", streamed)
	}
	want := Message{Role: RoleAssistant, Content: []Block{
		{Type: BlockText, Text: "Let me read the file."},
		{Type: BlockToolUse, ID: "toolu_01A", Name: "read_file", Input: json.RawMessage(`{"path": "notes.txt"}`)},
		{Type: BlockToolUse, ID: "toolu_01B", Name: "list_dir", Input: json.RawMessage(`{}`)},
	}}
	if jsonOf(resp.Message) != jsonOf(want) {
		t.Errorf("message:\n got %s\nwant %s", jsonOf(resp.Message), jsonOf(want))
	}
	if resp.StopReason != "tool_use" || resp.Usage != (Usage{InputTokens: 472, OutputTokens: 89, CacheReadTokens: 128}) {
		t.Errorf("stop %q, usage %+v", resp.StopReason, resp.Usage)
	}

	got := api.got[0]
	if got.path != "/v1/messages" || got.header.Get("x-api-key") != "sk-test" || got.header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("request %s, headers %v", got.path, got.header)
	}
	// Four cache breakpoints: the tools, the system prompt, the latest
	// message and the user's message before it.
	wantBody := `{"max_tokens":8192,"messages":[` +
		`{"content":[{"cache_control":{"type":"ephemeral"},"text":"Fix notes.txt","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Reading.","type":"text"},{"id":"t1","input":{"path":"notes.txt"},"name":"read_file","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"cache_control":{"type":"ephemeral"},"content":"E_NOT_FOUND: no such file","is_error":true,"tool_use_id":"t1","type":"tool_result"}],"role":"user"}],` +
		`"model":"test-model","stream":true,"system":[{"cache_control":{"type":"ephemeral"},"text":"You are a test.","type":"text"}],` +
		`"tools":[{"cache_control":{"type":"ephemeral"},"description":"Reads.","input_schema":{"properties":{"path":{"type":"string"}},"type":"object"},"name":"read_file"}]}`
	if b := jsonOf(got.body); b != wantBody {
		t.Errorf("body:\n got %s\nwant %s", b, wantBody)
	}
}

func TestOpenAIStreaming(t *testing.T) {
	api, srv := newFakeAPI(t, reply{fixture: "openai_tool_calls.sse"})
	p := &OpenAI{APIKey: "sk-test", BaseURL: srv.URL + "/v1"}
	onText, streamed := collect()
	resp, err := p.Complete(context.Background(), conversation(), onText)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.String() != "Let me read the file." {
		t.Errorf("streamed %q", streamed)
	}
	want := Message{Role: RoleAssistant, Content: []Block{
		{Type: BlockText, Text: "Let me read the file."},
		{Type: BlockToolUse, ID: "call_abc", Name: "read_file", Input: json.RawMessage(`{"path": "notes.txt"}`)},
		{Type: BlockToolUse, ID: "call_def", Name: "list_dir", Input: json.RawMessage(`{}`)},
	}}
	if jsonOf(resp.Message) != jsonOf(want) {
		t.Errorf("message:\n got %s\nwant %s", jsonOf(resp.Message), jsonOf(want))
	}
	if resp.StopReason != "tool_calls" || resp.Usage != (Usage{InputTokens: 472, OutputTokens: 89, CacheReadTokens: 128}) {
		t.Errorf("stop %q, usage %+v", resp.StopReason, resp.Usage)
	}
	got := api.got[0]
	if got.path != "/v1/chat/completions" || got.header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request %s, headers %v", got.path, got.header)
	}
	wantBody := `{"messages":[` +
		`{"content":"You are a test.","role":"system"},` +
		`{"content":"Fix notes.txt","role":"user"},` +
		`{"content":"Reading.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"path\":\"notes.txt\"}","name":"read_file"},"id":"t1","type":"function"}]},` +
		`{"content":"E_NOT_FOUND: no such file","role":"tool","tool_call_id":"t1"}],` +
		`"model":"test-model","stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"function":{"description":"Reads.","name":"read_file","parameters":{"properties":{"path":{"type":"string"}},"type":"object"}},"type":"function"}]}`
	if b := jsonOf(got.body); b != wantBody {
		t.Errorf("body:\n got %s\nwant %s", b, wantBody)
	}
}

func TestProviderErrors(t *testing.T) {
	anthropicErr := func(status int, typ, msg string) reply {
		return reply{status: status, body: `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`}
	}
	openaiErr := func(status int, code, msg string) reply {
		return reply{status: status, body: `{"error":{"message":"` + msg + `","type":"invalid_request_error","param":null,"code":"` + code + `"}}`}
	}
	tests := []struct {
		name     string
		provider string
		reply    reply
		kind     ErrorKind
		msg      string
	}{
		{"anthropic bad key", "anthropic", anthropicErr(401, "authentication_error", "invalid x-api-key"), ErrAuth, "check the API key"},
		{"anthropic unknown model", "anthropic", anthropicErr(404, "not_found_error", "model: claude-nope"), ErrUnknownModel, "model: claude-nope"},
		{"anthropic invalid request", "anthropic", anthropicErr(400, "invalid_request_error", "messages: roles must alternate"), ErrRefused, "roles must alternate"},
		{"anthropic rate limited", "anthropic", anthropicErr(429, "rate_limit_error", "slow down"), ErrRateLimited, "slow down"},
		{"anthropic overloaded", "anthropic", anthropicErr(529, "overloaded_error", "Overloaded"), ErrOverloaded, "Overloaded"},
		{"anthropic overloaded mid-stream", "anthropic", reply{fixture: "anthropic_overloaded_midstream.sse"}, ErrOverloaded, "Overloaded"},
		{"anthropic truncated stream", "anthropic", reply{fixture: "anthropic_truncated.sse"}, ErrServer, "ended before"},
		{"anthropic non-JSON 502", "anthropic", reply{status: 502, body: "<html>bad gateway</html>"}, ErrServer, "bad gateway"},
		{"openai bad key", "openai", openaiErr(401, "invalid_api_key", "Incorrect API key provided"), ErrAuth, "Incorrect API key"},
		{"openai unknown model", "openai", openaiErr(404, "model_not_found", "The model `gpt-nope` does not exist"), ErrUnknownModel, "gpt-nope"},
		{"ollama unknown model", "openai", reply{status: 404, body: `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error"}}`}, ErrUnknownModel, "llama9"},
		{"openai quota", "openai", openaiErr(429, "insufficient_quota", "You exceeded your current quota"), ErrRefused, "quota"},
		{"openai refusal", "openai", reply{fixture: "openai_refusal.sse"}, ErrRefused, "I can't help with that."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeAPI(t, tt.reply)
			var p Provider = &Anthropic{APIKey: "k", BaseURL: srv.URL}
			if tt.provider == "openai" {
				p = &OpenAI{APIKey: "k", BaseURL: srv.URL}
			}
			_, err := p.Complete(context.Background(), conversation(), nil)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T), want *APIError", err, err)
			}
			if ae.Kind != tt.kind || !strings.Contains(ae.Error(), tt.msg) {
				t.Errorf("error %q kind %s; want kind %s and %q", ae, ae.Kind, tt.kind, tt.msg)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	api, srv := newFakeAPI(t,
		reply{status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		reply{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		reply{fixture: "anthropic_tool_use.sse"},
	)
	var retries []RetryInfo
	p := WithRetry(&Anthropic{APIKey: "k", BaseURL: srv.URL},
		RetryPolicy{BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond},
		func(ri RetryInfo) { retries = append(retries, ri) })
	start := time.Now()
	resp, err := p.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls()) != 2 || len(api.got) != 3 {
		t.Errorf("%d requests, reply %+v", len(api.got), resp)
	}
	if len(retries) != 2 || retries[0].Wait != time.Second || retries[0].Err.Kind != ErrRateLimited ||
		retries[1].Wait < 10*time.Millisecond || retries[1].Wait > 20*time.Millisecond {
		t.Errorf("retries = %+v", retries)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("finished after %s: the Retry-After of 1s was not honoured", d)
	}
}

func TestRetryStops(t *testing.T) {
	t.Run("not on a bad key", func(t *testing.T) {
		api, srv := newFakeAPI(t, reply{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"bad"}}`})
		p := WithRetry(&Anthropic{APIKey: "k", BaseURL: srv.URL}, RetryPolicy{BaseDelay: time.Millisecond}, nil)
		if _, err := p.Complete(context.Background(), conversation(), nil); err == nil || len(api.got) != 1 {
			t.Errorf("err %v after %d requests", err, len(api.got))
		}
	})
	t.Run("after MaxAttempts", func(t *testing.T) {
		var rs []reply
		for range 5 {
			rs = append(rs, reply{status: 503, body: `{"error":{"message":"down"}}`})
		}
		api, srv := newFakeAPI(t, rs...)
		p := WithRetry(&OpenAI{BaseURL: srv.URL}, RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}, nil)
		_, err := p.Complete(context.Background(), conversation(), nil)
		if !IsRetryable(err) || len(api.got) != 3 {
			t.Errorf("err %v after %d requests, want 3", err, len(api.got))
		}
	})
	t.Run("not after streamed text", func(t *testing.T) {
		fp := &flaky{}
		p := WithRetry(fp, RetryPolicy{BaseDelay: time.Millisecond}, nil)
		if _, err := p.Complete(context.Background(), conversation(), nil); err == nil || fp.calls != 1 {
			t.Errorf("err %v after %d calls, want 1", err, fp.calls)
		}
	})
	t.Run("a Retry-After beyond the cap", func(t *testing.T) {
		api, srv := newFakeAPI(t, reply{status: 429, header: map[string]string{"Retry-After": "3600"}, body: `{}`})
		p := WithRetry(&OpenAI{BaseURL: srv.URL}, RetryPolicy{MaxRetryAfter: time.Minute}, nil)
		if _, err := p.Complete(context.Background(), conversation(), nil); err == nil || len(api.got) != 1 {
			t.Errorf("err %v after %d requests, want 1", err, len(api.got))
		}
	})
	t.Run("cancelled during the wait", func(t *testing.T) {
		_, srv := newFakeAPI(t, reply{status: 500, body: `{}`}, reply{status: 500, body: `{}`})
		p := WithRetry(&OpenAI{BaseURL: srv.URL}, RetryPolicy{BaseDelay: time.Hour}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := p.Complete(ctx, conversation(), nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	})
}

// flaky streams some text, then fails with a retryable error.
type flaky struct{ calls int }

func (f *flaky) Name() string { return "flaky" }

func (f *flaky) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	f.calls++
	onText("partial ")
	return nil, &APIError{Provider: "flaky", Kind: ErrOverloaded, Message: "overloaded"}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	for attempt, max := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 9: time.Second} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d, ok := p.delay(attempt, 0)
			if !ok || d < max/2 || d > max {
				t.Fatalf("attempt %d: delay %s, want within [%s, %s]", attempt, d, max/2, max)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("attempt %d: no jitter in 50 draws", attempt)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tt.h, got, tt.want)
		}
	}
}

func TestNewProvider(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name   string
		opts   ProviderOptions
		want   string
		model  string
		errMsg string
	}{
		{"none", ProviderOptions{Getenv: env()}, "", "", "set ANTHROPIC_API_KEY"},
		{"anthropic key", ProviderOptions{Getenv: env("ANTHROPIC_API_KEY", "a", "OPENAI_API_KEY", "o")}, "anthropic", AnthropicModel, ""},
		{"openai key", ProviderOptions{Getenv: env("OPENAI_API_KEY", "o")}, "openai", OpenAIModel, ""},
		{"local openai server", ProviderOptions{Getenv: env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"), Model: "llama3"}, "openai", "llama3", ""},
		{"explicit without key", ProviderOptions{Name: "anthropic", Getenv: env("OPENAI_API_KEY", "o")}, "", "", "ANTHROPIC_API_KEY is not set"},
		{"unknown", ProviderOptions{Name: "gemini", Getenv: env()}, "", "", `unknown provider "gemini"`},
		{"scripted without script", ProviderOptions{Name: "scripted", Getenv: env()}, "", "", "a script file is required"},
		{"scripted", ProviderOptions{Script: "testdata/script_finish.json", Getenv: env("ANTHROPIC_API_KEY", "a")}, "scripted", "script", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, model, err := NewProvider(tt.opts)
			if tt.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMsg) {
					t.Errorf("err = %v, want %q", err, tt.errMsg)
				}
				return
			}
			if err != nil || p.Name() != tt.want || model != tt.model {
				t.Errorf("got %v %q %v; want %s %q", p, model, err, tt.want, tt.model)
			}
		})
	}
}

// TestToolInputStreams checks that each provider passes the pieces of the
// tool calls' arguments on as they arrive, and that they join up to the
// arguments of the reply's tool_use blocks.
func TestToolInputStreams(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string
		provider func(url string) Provider
		pieces   int // at least
	}{
		{"anthropic", "anthropic_tool_use.sse", func(u string) Provider { return &Anthropic{APIKey: "k", BaseURL: u + "/"} }, 2},
		{"openai", "openai_tool_calls.sse", func(u string) Provider { return &OpenAI{APIKey: "k", BaseURL: u + "/v1"} }, 2},
		{"scripted", "", func(string) Provider {
			// The conversation holds one reply: the second turn answers.
			return &Scripted{Turns: []ScriptTurn{{Text: "Reading."}, {ToolCalls: []ScriptCall{
				{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a/long/path/to/notes.txt"}`)},
				{ID: "c2", Name: "list_dir"}}}}}
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := ""
			if tt.fixture != "" {
				_, srv := newFakeAPI(t, reply{fixture: tt.fixture})
				url = srv.URL
			}
			got := map[string]*strings.Builder{}
			names := map[string]string{}
			n := 0
			ctx := WithToolInputStream(context.Background(), func(id, tool, delta string) {
				if got[id] == nil {
					got[id] = &strings.Builder{}
				}
				got[id].WriteString(delta)
				names[id] = tool
				n++
			})
			resp, err := tt.provider(url).Complete(ctx, conversation(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if n < tt.pieces {
				t.Errorf("%d pieces, want at least %d", n, tt.pieces)
			}
			for _, c := range resp.Message.ToolCalls() {
				s := ""
				if b := got[c.ID]; b != nil {
					s = b.String()
				}
				if s == "" && string(c.Input) == "{}" {
					continue // no arguments to stream
				}
				if s != string(c.Input) || names[c.ID] != c.Name {
					t.Errorf("call %s (%s): streamed %q as %s, want %s", c.ID, c.Name, s, names[c.ID], c.Input)
				}
			}
		})
	}
}
