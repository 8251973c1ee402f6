package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/agent/doomloop"
	"github.com/praxis-tools/praxis/praxis"
)

// sseStream renders server-sent events: each pair is an event name ("" for
// none) and its data.
func sseStream(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			fmt.Fprintf(&b, "event: %s\n", pairs[i])
		}
		fmt.Fprintf(&b, "data: %s\n\n", pairs[i+1])
	}
	return b.String()
}

// anthropicCallReply is a streamed Anthropic reply calling tool with the
// raw argument text args.
func anthropicCallReply(id, tool, args string) string {
	return sseStream(
		"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":100,"cache_read_input_tokens":40,"cache_creation_input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"`+id+`","name":"`+tool+`","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+jsonOf(args)+`}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
}

// anthropicText is a streamed Anthropic reply of text only.
func anthropicText(text string) string {
	return sseStream(
		"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":200,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonOf(text)+`}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
}

// openaiCallReply is a streamed OpenAI reply calling tool with the raw
// argument text args.
func openaiCallReply(id, tool, args string) string {
	return sseStream(
		"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+tool+`","arguments":""}}]}}]}`,
		"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+jsonOf(args)+`}}]}}]}`,
		"", `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		"", `{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":40}}}`,
		"", `[DONE]`,
	)
}

func openaiText(text string) string {
	return sseStream(
		"", `{"choices":[{"index":0,"delta":{"content":`+jsonOf(text)+`}}]}`,
		"", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		"", `{"choices":[],"usage":{"prompt_tokens":200,"completion_tokens":5}}`,
		"", `[DONE]`,
	)
}

// echoTool is a tool with a required string argument.
func echoTool() praxis.Tool {
	return praxis.Tool{
		Name: "echo", Description: "Echoes text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		Annotations: praxis.Annotations{ReadOnly: true},
		Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(args, &in)
			return praxis.Result{Text: "echo: " + in.Text}, nil
		},
	}
}

// runAgainst runs an agent with provider p over the echo tool.
func runAgainst(t *testing.T, p Provider, cfg Config) (Outcome, []Event) {
	t.Helper()
	cat, err := praxis.NewCatalog(echoTool())
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	cfg.Provider, cfg.Tools = p, cat
	cfg.OnEvent = func(e Event) { events = append(events, e) }
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := a.Run(context.Background(), "the task")
	checkEventStream(t, events)
	return out, events
}

func toolResults(events []Event) []Event {
	var out []Event
	for _, e := range events {
		if e.Type == EventToolResult {
			out = append(out, e)
		}
	}
	return out
}

// TestBadToolCallsAreResults checks that whatever the model gets wrong in
// a tool call comes back to it as a tool result with a stable code, and
// the run goes on.
func TestBadToolCallsAreResults(t *testing.T) {
	tests := []struct {
		name, tool, args, code, says string
	}{
		{"args not JSON", "echo", `{"text": "hi`, "E_INVALID_ARGS", "not valid JSON"},
		{"args a trailing comma", "echo", `{"text": "hi",}`, "E_INVALID_ARGS", "not valid JSON"},
		{"args not an object", "echo", `["hi"]`, "E_INVALID_ARGS", ""},
		{"args missing a required field", "echo", `{}`, "E_INVALID_ARGS", "text"},
		{"args with an unknown field", "echo", `{"text":"a","mode":"x"}`, "E_INVALID_ARGS", "mode"},
		{"args of the wrong type", "echo", `{"text": 7}`, "E_INVALID_ARGS", "text"},
		{"unknown tool", "rm_rf", `{}`, "E_UNKNOWN_TOOL", `"rm_rf"`},
		{"empty tool name", "", `{}`, "E_UNKNOWN_TOOL", `""`},
	}
	for _, provider := range []string{"anthropic", "openai"} {
		for _, tt := range tests {
			t.Run(provider+"/"+tt.name, func(t *testing.T) {
				var p Provider
				var api *fakeAPI
				if provider == "anthropic" {
					a, srv := newFakeAPI(t, reply{sse: anthropicCallReply("c1", tt.tool, tt.args)}, reply{sse: anthropicText("sorry")})
					api, p = a, &Anthropic{APIKey: "k", BaseURL: srv.URL}
				} else {
					a, srv := newFakeAPI(t, reply{sse: openaiCallReply("c1", tt.tool, tt.args)}, reply{sse: openaiText("sorry")})
					api, p = a, &OpenAI{APIKey: "k", BaseURL: srv.URL}
				}
				out, events := runAgainst(t, p, Config{Model: "m"})
				if out.StopReason != StopCompleted || out.Final != "sorry" {
					t.Fatalf("outcome %+v", out)
				}
				res := toolResults(events)
				if len(res) != 1 || !res[0].IsError || res[0].Code != tt.code ||
					!strings.HasPrefix(res[0].Output, tt.code+": ") || !strings.Contains(res[0].Output, tt.says) {
					t.Fatalf("results %+v, want one %s saying %q", res, tt.code, tt.says)
				}
				// Both calls' usage counts.
				if out.Usage.InputTokens != 300 || out.Usage.OutputTokens != 25 {
					t.Errorf("usage %+v, want both calls counted", out.Usage)
				}
				// The second request carries the bad call and its answer.
				body := jsonOf(api.got[1].body)
				if !strings.Contains(body, tt.code) {
					t.Errorf("the second request lacks the answer: %s", body)
				}
				if provider == "openai" && !strings.Contains(body, jsonOf(tt.args)) {
					t.Errorf("the second request does not send the call's arguments back as they came: %s", body)
				}
			})
		}
	}
}

// TestBadToolCallsFeedTheLoopDetector checks that a model repeating the
// same malformed call is stopped as a doom loop, not by an API failure.
func TestBadToolCallsFeedTheLoopDetector(t *testing.T) {
	for _, tt := range []struct{ name, tool, args string }{
		{"invalid JSON", "echo", `{"text": `},
		{"unknown tool", "nope", `{"x":1}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rs []reply
			for i := range 8 {
				rs = append(rs, reply{sse: anthropicCallReply(fmt.Sprint("c", i), tt.tool, tt.args)})
			}
			_, srv := newFakeAPI(t, rs...)
			out, _ := runAgainst(t, &Anthropic{APIKey: "k", BaseURL: srv.URL},
				Config{Model: "m", Harness: &Harness{DoomLoop: &doomloop.Config{Threshold: 3}}})
			if out.StopReason != StopDoomLoop {
				t.Fatalf("stop %s (%v), want doom_loop", out.StopReason, out.Err)
			}
			if out.Usage.InputTokens != 100*out.Steps {
				t.Errorf("usage %+v after %d steps", out.Usage, out.Steps)
			}
		})
	}
}

// TestStalledStreamIsRetried checks that a stream that goes silent is cut
// after the idle timeout and tried again.
func TestStalledStreamIsRetried(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			var (
				p   Provider
				api *fakeAPI
			)
			if provider == "anthropic" {
				half := strings.SplitAfter(anthropicText("hello"), "\n\n")
				a, srv := newFakeAPI(t,
					reply{sse: strings.Join(half[:3], ""), hang: true}, // text started, then silence
					reply{hang: true}, // silence from the start
					reply{sse: anthropicText("hello")})
				api, p = a, &Anthropic{APIKey: "k", BaseURL: srv.URL, IdleTimeout: 500 * time.Millisecond}
			} else {
				half := strings.SplitAfter(openaiText("hello"), "\n\n")
				a, srv := newFakeAPI(t,
					reply{sse: half[0], hang: true},
					reply{hang: true},
					reply{sse: openaiText("hello")})
				api, p = a, &OpenAI{APIKey: "k", BaseURL: srv.URL, IdleTimeout: 500 * time.Millisecond}
			}
			var retries []RetryInfo
			rp := WithRetry(p, RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, func(ri RetryInfo) { retries = append(retries, ri) })
			resp, err := rp.Complete(context.Background(), conversation(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != "hello" || len(api.got) != 3 {
				t.Errorf("reply %q after %d requests", resp.Message.Text(), len(api.got))
			}
			if len(retries) != 2 || retries[0].Err.Kind != ErrStalled || retries[1].Err.Kind != ErrStalled {
				t.Errorf("retries %+v, want two stalls", retries)
			}
		})
	}
	t.Run("reported as stalled", func(t *testing.T) {
		_, srv := newFakeAPI(t, reply{hang: true})
		_, err := (&OpenAI{BaseURL: srv.URL, IdleTimeout: 50 * time.Millisecond}).Complete(context.Background(), conversation(), nil)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Kind != ErrStalled || !ae.Retryable() || !strings.Contains(ae.Error(), "sent nothing for 50ms") {
			t.Errorf("err %v", err)
		}
	})
}

// TestStreamingRefused checks that a provider refusing to stream gets the
// same request without streaming, and no streaming request after that.
func TestStreamingRefused(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		api, srv := newFakeAPI(t,
			reply{status: 400, body: `{"error":{"message":"Your organization must be verified to stream this model.","type":"invalid_request_error","param":"stream","code":"unsupported_value"}}`},
			reply{body: `{"choices":[{"index":0,"message":{"role":"assistant","content":"Reading.","tool_calls":[{"id":"c9","type":"function","function":{"name":"echo","arguments":"{\"text\":\"x\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":20}}}`},
			reply{body: `{"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":60,"completion_tokens":2}}`},
		)
		p := &OpenAI{BaseURL: srv.URL}
		onText, streamed := collect()
		resp, err := p.Complete(context.Background(), conversation(), onText)
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"type":"text","text":"Reading."},{"type":"tool_use","id":"c9","name":"echo","input":{"text":"x"}}]`
		if jsonOf(resp.Message.Content) != want || streamed.String() != "Reading." || resp.Usage != (Usage{InputTokens: 50, OutputTokens: 7, CacheReadTokens: 20}) {
			t.Errorf("reply %s, streamed %q, usage %+v", jsonOf(resp.Message.Content), streamed, resp.Usage)
		}
		if _, err := p.Complete(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		if len(api.got) != 3 || api.got[0].body["stream"] != true || api.got[1].body["stream"] != false ||
			api.got[1].body["stream_options"] != nil || api.got[2].body["stream"] != false {
			t.Errorf("requests: %+v", api.got)
		}
		if api.got[1].header.Get("Accept") != "application/json" {
			t.Errorf("Accept %q", api.got[1].header.Get("Accept"))
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		api, srv := newFakeAPI(t,
			reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"stream: streaming is not supported by this deployment"}}`},
			reply{body: `{"type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"text","text":"Hi."},{"type":"tool_use","id":"tu1","name":"echo","input":{"text":"y"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":5,"cache_creation_input_tokens":2}}`},
		)
		p := &Anthropic{BaseURL: srv.URL}
		resp, err := p.Complete(context.Background(), conversation(), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"type":"thinking","text":"hmm","signature":"sig1"},{"type":"text","text":"Hi."},{"type":"tool_use","id":"tu1","name":"echo","input":{"text":"y"}}]`
		if jsonOf(resp.Message.Content) != want || resp.Usage != (Usage{InputTokens: 10, OutputTokens: 3, CacheReadTokens: 5, CacheWriteTokens: 2}) {
			t.Errorf("reply %s, usage %+v", jsonOf(resp.Message.Content), resp.Usage)
		}
		if len(api.got) != 2 || api.got[1].body["stream"] != false {
			t.Errorf("requests %+v", api.got)
		}
	})
	t.Run("a JSON reply to a streaming request", func(t *testing.T) {
		_, srv := newFakeAPI(t, reply{body: `{"choices":[{"index":0,"message":{"content":"plain"},"finish_reason":"stop"}]}`})
		resp, err := (&OpenAI{BaseURL: srv.URL}).Complete(context.Background(), conversation(), nil)
		if err != nil || resp.Message.Text() != "plain" {
			t.Errorf("reply %+v, err %v", resp, err)
		}
	})
	for _, msg := range []string{"messages: too long", "the upstream model is not available", "livestreams are not supported"} {
		t.Run("not for: "+msg, func(t *testing.T) {
			api, srv := newFakeAPI(t, reply{status: 400, body: `{"error":{"message":"` + msg + `","type":"invalid_request_error"}}`})
			if _, err := (&OpenAI{BaseURL: srv.URL}).Complete(context.Background(), conversation(), nil); err == nil || len(api.got) != 1 {
				t.Errorf("err %v after %d requests", err, len(api.got))
			}
		})
	}
}

// TestUsageOfFailedCalls checks that a call failing mid-stream still
// counts the tokens the provider reported, those of every try (10 input
// tokens each).
func TestUsageOfFailedCalls(t *testing.T) {
	_, srv := newFakeAPI(t,
		reply{fixture: "anthropic_overloaded_midstream.sse"},
		reply{fixture: "anthropic_overloaded_midstream.sse"},
	)
	p := WithRetry(&Anthropic{APIKey: "k", BaseURL: srv.URL}, RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}, nil)
	out, events := runAgainst(t, p, Config{Model: "claude-sonnet-4-5"})
	if out.StopReason != StopError {
		t.Fatalf("outcome %+v", out)
	}
	var one Usage
	for _, e := range events {
		if e.Type == EventUsage {
			one = *e.Usage
		}
	}
	if one.InputTokens != 20 || out.Usage != one || events[len(events)-1].Usage == nil || *events[len(events)-1].Usage != one {
		t.Errorf("usage event %+v, outcome %+v", one, out.Usage)
	}
}

// countCacheControl counts the cache breakpoints anywhere in v.
func countCacheControl(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "cache_control" {
				n++
			}
			n += countCacheControl(x)
		}
	case []any:
		for _, x := range v {
			n += countCacheControl(x)
		}
	}
	return n
}

// TestAnthropicCacheBreakpoints checks where the breakpoints go in
// conversations of every length: never more than four, the tools and the
// system prompt always, the latest message always, and the user message
// before it, never on a thinking block.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	tool := ToolDef{Name: "echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	msgs := []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: "task"}}}}
	for turn := range 6 {
		msgs = append(msgs,
			Message{Role: RoleAssistant, Content: []Block{
				{Type: BlockThinking, Text: "thought", Signature: "s"},
				{Type: BlockToolUse, ID: fmt.Sprint("t", turn), Name: "echo", Input: json.RawMessage(`{}`)},
			}},
			Message{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ID: fmt.Sprint("t", turn), Text: "ok"}}})
	}
	for n := 1; n <= len(msgs); n++ {
		for _, withTools := range []bool{true, false} {
			req := &Request{Model: "m", System: "sys", Messages: msgs[:n]}
			if withTools {
				req.Tools = []ToolDef{tool, tool}
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(jsonOf((&Anthropic{}).body(req, true))), &body); err != nil {
				t.Fatal(err)
			}
			total := countCacheControl(body)
			if total > 4 {
				t.Fatalf("%d messages: %d breakpoints, the API allows 4", n, total)
			}
			if withTools && countCacheControl(body["tools"].([]any)[1]) != 1 || withTools && countCacheControl(body["tools"].([]any)[0]) != 0 {
				t.Errorf("%d messages: the breakpoint is not on the last tool: %s", n, jsonOf(body["tools"]))
			}
			if countCacheControl(body["system"]) != 1 {
				t.Errorf("%d messages: no breakpoint on the system prompt", n)
			}
			ms := body["messages"].([]any)
			last := ms[len(ms)-1].(map[string]any)["content"].([]any)
			if countCacheControl(last[len(last)-1]) != 1 {
				t.Errorf("%d messages: no breakpoint on the latest block: %s", n, jsonOf(last))
			}
			for _, m := range ms {
				for _, b := range m.(map[string]any)["content"].([]any) {
					if b.(map[string]any)["type"] == "thinking" && countCacheControl(b) > 0 {
						t.Errorf("%d messages: a breakpoint on a thinking block", n)
					}
				}
			}
			for i := len(ms) - 2; i >= 0; i-- {
				if prev := ms[i].(map[string]any); prev["role"] == "user" {
					if countCacheControl(prev) != 1 {
						t.Errorf("%d messages: no breakpoint on the previous user message: %s", n, jsonOf(prev))
					}
					break
				}
			}
		}
	}
}

// TestAnthropicThinking checks that thinking is asked for with its budget,
// streams as reasoning, and goes back unchanged, signature and redacted
// blocks included, on the next request.
func TestAnthropicThinking(t *testing.T) {
	first := sseStream(
		"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":100,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants "}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"an echo."}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu1","name":"echo","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"text\":\"hi\"}"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
	api, srv := newFakeAPI(t, reply{sse: first}, reply{sse: anthropicText("done")})
	out, events := runAgainst(t, &Anthropic{APIKey: "k", BaseURL: srv.URL}, Config{Model: "m", Thinking: 2048, MaxTokens: 1000})
	if out.StopReason != StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
	var reasoning, text strings.Builder
	for _, e := range events {
		switch e.Type {
		case EventThinking:
			reasoning.WriteString(e.Text)
		case EventTextDelta:
			text.WriteString(e.Text)
		}
	}
	if reasoning.String() != "The user wants an echo." || text.String() != "done" {
		t.Errorf("reasoning %q, text %q", reasoning.String(), text.String())
	}
	for i, got := range api.got {
		th, _ := got.body["thinking"].(map[string]any)
		if th["type"] != "enabled" || th["budget_tokens"] != float64(2048) {
			t.Errorf("request %d: thinking %v", i, got.body["thinking"])
		}
		if mt, _ := got.body["max_tokens"].(float64); mt <= 2048 {
			t.Errorf("request %d: max_tokens %v does not exceed the thinking budget", i, mt)
		}
	}
	msgs := api.got[1].body["messages"].([]any)
	back := jsonOf(msgs[1].(map[string]any)["content"])
	want := `[{"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds","thinking":"The user wants an echo.","type":"thinking"},` +
		`{"data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP","type":"redacted_thinking"},` +
		`{"id":"tu1","input":{"text":"hi"},"name":"echo","type":"tool_use"}]`
	if back != want {
		t.Errorf("the assistant turn sent back:\n got %s\nwant %s", back, want)
	}
}

// TestOpenAIRequestFields checks max_completion_tokens (with the fallback
// to max_tokens for servers that refuse it), reasoning_effort, and
// reasoning text streamed by compatible servers.
func TestOpenAIRequestFields(t *testing.T) {
	reasoning := sseStream(
		"", `{"choices":[{"index":0,"delta":{"reasoning_content":"Think "}}]}`,
		"", `{"choices":[{"index":0,"delta":{"reasoning":"twice."}}]}`,
		"", `{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
		"", `[DONE]`,
	)
	api, srv := newFakeAPI(t,
		reply{sse: reasoning},
		reply{status: 400, body: `{"error":{"message":"Unrecognized request argument supplied: max_completion_tokens","type":"invalid_request_error"}}`},
		reply{sse: openaiText("ok")},
		reply{sse: openaiText("ok")},
	)
	p := &OpenAI{BaseURL: srv.URL}
	req := conversation()
	req.MaxTokens, req.Thinking = 1234, 20000
	var got strings.Builder
	ctx := WithReasoningStream(context.Background(), func(s string) { got.WriteString(s) })
	resp, err := p.Complete(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "Think twice." || resp.Message.Text() != "ok" {
		t.Errorf("reasoning %q, text %q", got.String(), resp.Message.Text())
	}
	b := api.got[0].body
	if b["max_completion_tokens"] != float64(1234) || b["max_tokens"] != nil || b["reasoning_effort"] != "high" {
		t.Errorf("first request: %s", jsonOf(b))
	}
	// A server that refuses max_completion_tokens gets max_tokens, from
	// then on.
	for range 2 {
		if _, err := p.Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(api.got) != 4 {
		t.Fatalf("%d requests", len(api.got))
	}
	for _, i := range []int{2, 3} {
		if b := api.got[i].body; b["max_tokens"] != float64(1234) || b["max_completion_tokens"] != nil {
			t.Errorf("request %d: %s", i, jsonOf(b))
		}
	}
	for budget, want := range map[int]string{0: "", 1024: "low", 4096: "low", 8000: "medium", 16384: "medium", 32000: "high"} {
		if got := reasoningEffort(budget); got != want {
			t.Errorf("reasoningEffort(%d) = %q, want %q", budget, got, want)
		}
	}
}
