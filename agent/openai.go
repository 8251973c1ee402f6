package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// OpenAI defaults.
const (
	OpenAIBaseURL = "https://api.openai.com/v1"
	OpenAIModel   = "gpt-4.1"
)

// OpenAI is an OpenAI-compatible chat completions API (OpenAI, and the
// servers that copy it: Ollama, vLLM, llama.cpp and others), streamed over
// server-sent events.
type OpenAI struct {
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// BaseURL defaults to OpenAIBaseURL; requests go to
	// BaseURL/chat/completions.
	BaseURL string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
}

// Name returns "openai".
func (o *OpenAI) Name() string { return "openai" }

type openaiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content"`
	ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type openaiRequest struct {
	Model         string          `json:"model"`
	Messages      []openaiMessage `json:"messages"`
	Tools         []openaiTool    `json:"tools,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type openaiChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string           `json:"content"`
			Refusal   string           `json:"refusal"`
			ToolCalls []openaiToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func strPtr(s string) *string { return &s }

func (o *OpenAI) body(req *Request) openaiRequest {
	out := openaiRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	out.StreamOptions.IncludeUsage = true
	if req.System != "" {
		out.Messages = append(out.Messages, openaiMessage{Role: "system", Content: strPtr(req.System)})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			om := openaiMessage{Role: "assistant"}
			if t := m.Text(); t != "" {
				om.Content = strPtr(t)
			}
			for _, b := range m.ToolCalls() {
				tc := openaiToolCall{ID: b.ID, Type: "function"}
				tc.Function.Name = b.Name
				tc.Function.Arguments = string(objectOrEmpty(b.Input))
				om.ToolCalls = append(om.ToolCalls, tc)
			}
			out.Messages = append(out.Messages, om)
		default:
			// Tool results become "tool" messages; text becomes a user
			// message after them.
			var text []string
			for _, b := range m.Content {
				switch b.Type {
				case BlockToolResult:
					out.Messages = append(out.Messages, openaiMessage{Role: "tool", ToolCallID: b.ID, Content: strPtr(b.Text)})
				case BlockText:
					text = append(text, b.Text)
				}
			}
			if len(text) > 0 {
				out.Messages = append(out.Messages, openaiMessage{Role: "user", Content: strPtr(strings.Join(text, "\n"))})
			}
		}
	}
	for _, t := range req.Tools {
		ot := openaiTool{Type: "function"}
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, t.InputSchema
		out.Tools = append(out.Tools, ot)
	}
	return out
}

// Complete sends req to BaseURL/chat/completions with streaming on.
func (o *OpenAI) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	h := http.Header{}
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	url := strings.TrimRight(cmp.Or(o.BaseURL, OpenAIBaseURL), "/") + "/chat/completions"
	resp, err := postJSON(ctx, httpClient(o.HTTPClient), o.Name(), url, h, o.body(req), classifyOpenAI)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	var (
		text    strings.Builder
		refusal strings.Builder
		calls   = map[int]*openaiToolCall{}
		out     = &Response{}
		done    bool
	)
	err = readSSE(ctx, resp.Body, func(ev sseEvent) error {
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			done = true
			return nil
		}
		var c openaiChunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			return o.streamError(fmt.Sprintf("undecodable chunk: %v", err))
		}
		if c.Error != nil {
			return &APIError{Provider: o.Name(), Kind: ErrServer, Message: "stream: " + c.Error.Message}
		}
		if c.Usage != nil {
			out.Usage = Usage{
				InputTokens:     c.Usage.PromptTokens,
				OutputTokens:    c.Usage.CompletionTokens,
				CacheReadTokens: c.Usage.PromptTokensDetails.CachedTokens,
			}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if d := ch.Delta.Content; d != "" {
				text.WriteString(d)
				if onText != nil {
					onText(d)
				}
			}
			refusal.WriteString(ch.Delta.Refusal)
			for i, tc := range ch.Delta.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				acc := calls[idx]
				if acc == nil {
					acc = &openaiToolCall{}
					calls[idx] = acc
				}
				if tc.ID != "" {
					acc.ID = tc.ID
				}
				if tc.Function.Name != "" {
					acc.Function.Name += tc.Function.Name
				}
				acc.Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.StopReason = *ch.FinishReason
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, ok := err.(*APIError); ok {
			return nil, err
		}
		return nil, o.streamError(err.Error())
	}
	if !done && out.StopReason == "" {
		return nil, o.streamError(errStreamEnded.Error())
	}
	if refusal.Len() > 0 || out.StopReason == "content_filter" {
		msg := cmp.Or(refusal.String(), "the reply was stopped by the content filter")
		return nil, &APIError{Provider: o.Name(), Kind: ErrRefused, Message: "the model declined the request: " + msg}
	}
	out.Message = Message{Role: RoleAssistant}
	if text.Len() > 0 {
		out.Message.Content = append(out.Message.Content, Block{Type: BlockText, Text: text.String()})
	}
	for _, idx := range slices.Sorted(maps.Keys(calls)) {
		tc := calls[idx]
		args := strings.TrimSpace(tc.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			return nil, o.streamError(fmt.Sprintf("tool call %s: arguments are not valid JSON: %q", tc.Function.Name, args))
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", idx)
		}
		out.Message.Content = append(out.Message.Content, Block{Type: BlockToolUse, ID: id, Name: tc.Function.Name, Input: json.RawMessage(args)})
	}
	return out, nil
}

func (o *OpenAI) streamError(msg string) *APIError {
	return &APIError{Provider: o.Name(), Kind: ErrServer, Message: "stream: " + msg}
}

// classifyOpenAI reads an error response: {"error": {"message", "type",
// "code"}}. A "model_not_found" code marks an unknown model whatever the
// status.
func classifyOpenAI(status int, body []byte) (ErrorKind, string) {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return kindForStatus(status), ""
	}
	kind := kindForStatus(status)
	code, _ := e.Error.Code.(string)
	switch code {
	case "model_not_found":
		kind = ErrUnknownModel
	case "invalid_api_key":
		kind = ErrAuth
	case "insufficient_quota":
		kind = ErrRefused // retrying does not help
	}
	msg := e.Error.Message
	if code != "" {
		msg = code + ": " + msg
	}
	return kind, msg
}
