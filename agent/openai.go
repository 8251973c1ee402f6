package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/praxis-tools/praxis/internal/sse"
)

// OpenAI defaults.
const (
	OpenAIBaseURL = "https://api.openai.com/v1"
	OpenAIModel   = "gpt-4.1"
)

// OpenAI is an OpenAI-compatible chat completions API (OpenAI, and the
// servers that copy it: Ollama, vLLM, llama.cpp and others), streamed over
// server-sent events.
//
// The reply bound goes out as max_completion_tokens, which OpenAI's newer
// models require; a server that refuses that name gets max_tokens from
// then on. Request.Thinking becomes reasoning_effort; reasoning text that
// compatible servers stream (reasoning_content, reasoning) is reported
// apart from the answer. Images of tool results follow the tool message
// in a user message, the only place chat completions takes them; a server
// that refuses images (a model without vision) gets their mention in the
// text alone from then on.
type OpenAI struct {
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// BaseURL defaults to OpenAIBaseURL; requests go to
	// BaseURL/chat/completions.
	BaseURL string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout bounds the silence of a streamed reply; default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration

	// noStream is set once the server refused to stream; legacyMax once it
	// refused max_completion_tokens; noImages once it refused images.
	noStream, legacyMax, noImages atomic.Bool
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

// openaiPart is a part of a user message's content.
type openaiPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

type openaiMessage struct {
	Role string `json:"role"`
	// Content is a string, null, or (user messages with images) parts.
	Content    any              `json:"content"`
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

type openaiStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type openaiRequest struct {
	Model               string               `json:"model"`
	Messages            []openaiMessage      `json:"messages"`
	Tools               []openaiTool         `json:"tools,omitempty"`
	MaxTokens           int                  `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                  `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string               `json:"reasoning_effort,omitempty"`
	Stream              bool                 `json:"stream"`
	StreamOptions       *openaiStreamOptions `json:"stream_options,omitempty"`
}

type openaiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *openaiUsage) usage() Usage {
	return Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		CacheReadTokens: u.PromptTokensDetails.CachedTokens,
	}
}

// openaiDelta is a streamed choice's delta, or a whole reply's message.
type openaiDelta struct {
	Content          string           `json:"content"`
	Refusal          string           `json:"refusal"`
	ReasoningContent string           `json:"reasoning_content"`
	Reasoning        string           `json:"reasoning"`
	ToolCalls        []openaiToolCall `json:"tool_calls"`
}

type openaiChunk struct {
	Choices []struct {
		Index        int         `json:"index"`
		Delta        openaiDelta `json:"delta"`
		Message      openaiDelta `json:"message"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Usage *openaiUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// reasoningEffort maps a thinking budget in tokens to reasoning_effort.
func reasoningEffort(budget int) string {
	switch {
	case budget <= 0:
		return ""
	case budget <= 4096:
		return "low"
	case budget <= 16384:
		return "medium"
	default:
		return "high"
	}
}

func (o *OpenAI) body(req *Request, stream bool) openaiRequest {
	out := openaiRequest{Model: req.Model, Stream: stream, ReasoningEffort: reasoningEffort(req.Thinking)}
	if o.legacyMax.Load() {
		out.MaxTokens = req.MaxTokens
	} else {
		out.MaxCompletionTokens = req.MaxTokens
	}
	if stream {
		out.StreamOptions = &openaiStreamOptions{IncludeUsage: true}
	}
	if req.System != "" {
		out.Messages = append(out.Messages, openaiMessage{Role: "system", Content: req.System})
	}
	sent := imagesSent(req.Messages)
	for i, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			om := openaiMessage{Role: "assistant"}
			if t := m.Text(); t != "" {
				om.Content = t
			}
			for _, b := range m.ToolCalls() {
				tc := openaiToolCall{ID: b.ID, Type: "function"}
				tc.Function.Name = b.Name
				tc.Function.Arguments = string(objectOrEmpty(b.Input))
				if b.InvalidInput != "" {
					tc.Function.Arguments = b.InvalidInput
				}
				om.ToolCalls = append(om.ToolCalls, tc)
			}
			out.Messages = append(out.Messages, om)
		default:
			// Tool results become "tool" messages; their images and the
			// text become a user message after them.
			var parts []openaiPart
			var text []string
			for j, b := range m.Content {
				switch b.Type {
				case BlockToolResult:
					out.Messages = append(out.Messages, openaiMessage{Role: "tool", ToolCallID: b.ID, Content: b.Text})
					if o.noImages.Load() || !sent[[2]int{i, j}] {
						continue
					}
					for i, img := range b.Images {
						p := openaiPart{Type: "image_url"}
						p.ImageURL = &struct {
							URL string `json:"url"`
						}{URL: "data:" + img.MIMEType + ";base64," + img.Data}
						parts = append(parts, openaiPart{Type: "text", Text: fmt.Sprintf("Image %d of %d of the result of tool call %s:", i+1, len(b.Images), b.ID)}, p)
					}
				case BlockText:
					text = append(text, b.Text)
				}
			}
			switch {
			case len(parts) > 0:
				if len(text) > 0 {
					parts = append(parts, openaiPart{Type: "text", Text: strings.Join(text, "\n")})
				}
				out.Messages = append(out.Messages, openaiMessage{Role: "user", Content: parts})
			case len(text) > 0:
				out.Messages = append(out.Messages, openaiMessage{Role: "user", Content: strings.Join(text, "\n")})
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

// Complete sends req to BaseURL/chat/completions, streamed unless the
// server refused to stream before.
func (o *OpenAI) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	h := http.Header{}
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	e := endpoint{
		provider: o.Name(), hc: httpClient(o.HTTPClient), header: h, classify: classifyOpenAI, idle: o.IdleTimeout,
		url: strings.TrimRight(cmp.Or(o.BaseURL, OpenAIBaseURL), "/") + "/chat/completions",
	}
	for {
		stream := !o.noStream.Load()
		out, err := o.complete(ctx, e, req, stream, onText)
		switch {
		case req.MaxTokens > 0 && !o.legacyMax.Load() && refusesParam(err, "max_completion_tokens"):
			o.legacyMax.Store(true)
		case stream && refusesStreaming(err):
			o.noStream.Store(true)
		case hasImages(req) && !o.noImages.Load() && refusesParam(err, "image"):
			o.noImages.Store(true)
		default:
			return out, err
		}
	}
}

// hasImages reports whether a tool result of req has images.
func hasImages(req *Request) bool {
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if len(b.Images) > 0 {
				return true
			}
		}
	}
	return false
}

// refusesParam reports whether err is a refusal of the request parameter
// name.
func refusesParam(err error, name string) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Kind == ErrRefused && strings.Contains(ae.Message, name)
}

func (o *OpenAI) complete(ctx context.Context, e endpoint, req *Request, stream bool, onText StreamFunc) (*Response, error) {
	var (
		text    strings.Builder
		refusal strings.Builder
		calls   = map[int]*openaiToolCall{}
		out     = &Response{}
		done    bool
	)
	onReasoning := reasoningStream(ctx)
	onInput := toolInputStream(ctx)
	chunk := func(c openaiChunk, whole bool) error {
		if c.Error != nil {
			return &APIError{Provider: o.Name(), Kind: ErrServer, Message: "stream: " + c.Error.Message}
		}
		if c.Usage != nil {
			out.Usage = c.Usage.usage()
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if whole {
				d = ch.Message
			}
			if r := cmp.Or(d.ReasoningContent, d.Reasoning); r != "" && onReasoning != nil {
				onReasoning(r)
			}
			if d.Content != "" {
				text.WriteString(d.Content)
				if onText != nil {
					onText(d.Content)
				}
			}
			refusal.WriteString(d.Refusal)
			for i, tc := range d.ToolCalls {
				idx := i
				if tc.Index != nil && !whole {
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
				if onInput != nil && !whole && tc.Function.Arguments != "" {
					onInput(acc.ID, acc.Function.Name, tc.Function.Arguments)
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.StopReason = *ch.FinishReason
			}
		}
		return nil
	}
	err := e.post(ctx, o.body(req, stream), stream, func(ctx context.Context, resp *http.Response, body io.Reader) error {
		if !stream || isJSONReply(resp) {
			var c openaiChunk
			if err := json.NewDecoder(body).Decode(&c); err != nil {
				return o.streamError(fmt.Sprintf("undecodable reply: %v", err))
			}
			done = true
			return chunk(c, true)
		}
		return readSSE(ctx, body, func(ev sse.Event) error {
			if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
				done = true
				return nil
			}
			var c openaiChunk
			if err := json.Unmarshal(ev.Data, &c); err != nil {
				return o.streamError(fmt.Sprintf("undecodable chunk: %v", err))
			}
			return chunk(c, false)
		})
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, ok := errors.AsType[*APIError](err); !ok {
			err = o.streamError(err.Error())
		}
		return nil, withUsage(err, out.Usage)
	}
	if !done && out.StopReason == "" {
		return nil, withUsage(o.streamError(errStreamEnded.Error()), out.Usage)
	}
	if refusal.Len() > 0 || out.StopReason == "content_filter" {
		msg := cmp.Or(refusal.String(), "the reply was stopped by the content filter")
		return nil, withUsage(&APIError{Provider: o.Name(), Kind: ErrRefused, Message: "the model declined the request: " + msg}, out.Usage)
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
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", idx)
		}
		b := Block{Type: BlockToolUse, ID: id, Name: tc.Function.Name}
		if json.Valid([]byte(args)) {
			b.Input = json.RawMessage(args)
		} else {
			b.InvalidInput = args
		}
		out.Message.Content = append(out.Message.Content, b)
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
