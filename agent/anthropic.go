package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/praxis-tools/praxis/internal/sse"
)

// Anthropic defaults.
const (
	AnthropicBaseURL      = "https://api.anthropic.com"
	AnthropicModel        = "claude-sonnet-4-5"
	anthropicVersion      = "2023-06-01"
	anthropicMaxTokensDef = 8192
)

// Anthropic is the Anthropic Messages API, streamed over server-sent
// events.
//
// Requests mark the stable prefix for prompt caching: the tools, the system
// prompt, the latest message and the user's message before it each end
// with a cache_control breakpoint (four, the API's limit), so that every
// step reads the conversation so far from the cache and writes only what
// is new. With Request.Thinking the model thinks first (extended
// thinking); its signed thinking blocks go back unchanged, as the API
// requires.
type Anthropic struct {
	// APIKey is sent as x-api-key.
	APIKey string
	// BaseURL defaults to AnthropicBaseURL; requests go to BaseURL/v1/messages.
	BaseURL string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout bounds the silence of a streamed reply; default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration

	// noStream is set once the API refused to stream: later calls ask for
	// whole replies.
	noStream atomic.Bool
}

// Name returns "anthropic".
func (a *Anthropic) Name() string { return "anthropic" }

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content is a tool result's: a string, or text and image blocks.
	Content   any              `json:"content,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
	Source    *anthropicSource `json:"source,omitempty"`
	Thinking  *string          `json:"thinking,omitempty"`
	Signature string           `json:"signature,omitempty"`
	Data      string           `json:"data,omitempty"`
	// CacheControl marks a cache breakpoint.
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicTool struct {
	ToolDef
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type anthropicThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    []anthropicBlock   `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools,omitempty"`
	Thinking  *anthropicThinking `json:"thinking,omitempty"`
	Stream    bool               `json:"stream"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// anthropicContent is a content block of a reply, whole or as it starts
// in a stream.
type anthropicContent struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

// anthropicEvent is any event of the stream; which fields are set depends
// on Type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int              `json:"index"`
	ContentBlock anthropicContent `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anthropicReply is a whole (not streamed) reply.
type anthropicReply struct {
	Content    []anthropicContent `json:"content"`
	StopReason string             `json:"stop_reason"`
	Usage      anthropicUsage     `json:"usage"`
}

func (a *Anthropic) body(req *Request, stream bool) anthropicRequest {
	out := anthropicRequest{
		Model:     req.Model,
		MaxTokens: cmp.Or(req.MaxTokens, anthropicMaxTokensDef),
		Stream:    stream,
	}
	if req.Thinking > 0 {
		out.Thinking = &anthropicThinking{Type: "enabled", BudgetTokens: req.Thinking}
		if out.MaxTokens <= req.Thinking { // the budget counts within max_tokens
			out.MaxTokens = req.Thinking + anthropicMaxTokensDef
		}
	}
	if req.System != "" {
		out.System = []anthropicBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	for i, t := range req.Tools {
		at := anthropicTool{ToolDef: t}
		if i == len(req.Tools)-1 {
			at.CacheControl = ephemeral
		}
		out.Tools = append(out.Tools, at)
	}
	sent := imagesSent(req.Messages)
	for i, m := range req.Messages {
		am := anthropicMessage{Role: string(m.Role)}
		for j, b := range m.Content {
			switch b.Type {
			case BlockText:
				if b.Text != "" { // the API refuses empty text blocks
					am.Content = append(am.Content, anthropicBlock{Type: "text", Text: b.Text})
				}
			case BlockToolUse:
				// Arguments that were not JSON go back as an empty object: the
				// API takes no other; the tool result says what was wrong.
				am.Content = append(am.Content, anthropicBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: objectOrEmpty(b.Input)})
			case BlockToolResult:
				if !sent[[2]int{i, j}] {
					b.Images = nil
				}
				am.Content = append(am.Content, anthropicBlock{Type: "tool_result", ToolUseID: b.ID, Content: anthropicResultContent(b), IsError: b.IsError})
			case BlockThinking:
				thinking := b.Text
				am.Content = append(am.Content, anthropicBlock{Type: "thinking", Thinking: &thinking, Signature: b.Signature})
			case BlockRedactedThinking:
				am.Content = append(am.Content, anthropicBlock{Type: "redacted_thinking", Data: b.Data})
			}
		}
		if len(am.Content) == 0 {
			am.Content = []anthropicBlock{{Type: "text", Text: "(no content)"}}
		}
		out.Messages = append(out.Messages, am)
	}
	// The conversation's breakpoints: the latest message, and the user's
	// message before it, which the previous request wrote to the cache.
	if n := len(out.Messages); n > 0 {
		markCache(&out.Messages[n-1])
		for i := n - 2; i >= 0; i-- {
			if out.Messages[i].Role == string(RoleUser) {
				markCache(&out.Messages[i])
				break
			}
		}
	}
	return out
}

// markCache puts a cache breakpoint on the last block of m that may carry
// one (thinking blocks may not).
func markCache(m *anthropicMessage) {
	for i := len(m.Content) - 1; i >= 0; i-- {
		if t := m.Content[i].Type; t != "thinking" && t != "redacted_thinking" {
			m.Content[i].CacheControl = ephemeral
			return
		}
	}
}

// anthropicResultContent is a tool result's content: its text, or, with
// images, a text block and image blocks.
func anthropicResultContent(b Block) any {
	if len(b.Images) == 0 {
		return b.Text
	}
	var out []anthropicBlock
	if b.Text != "" {
		out = append(out, anthropicBlock{Type: "text", Text: b.Text})
	}
	for _, img := range b.Images {
		out = append(out, anthropicBlock{Type: "image", Source: &anthropicSource{Type: "base64", MediaType: img.MIMEType, Data: img.Data}})
	}
	return out
}

// Complete sends req to the Messages API, streamed unless the API refused
// to stream before.
func (a *Anthropic) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	h := http.Header{}
	h.Set("x-api-key", a.APIKey)
	h.Set("anthropic-version", anthropicVersion)
	e := endpoint{
		provider: a.Name(), hc: httpClient(a.HTTPClient), header: h, classify: classifyAnthropic, idle: a.IdleTimeout,
		url: strings.TrimRight(cmp.Or(a.BaseURL, AnthropicBaseURL), "/") + "/v1/messages",
	}
	if !a.noStream.Load() {
		out, err := a.complete(ctx, e, req, true, onText)
		if !refusesStreaming(err) {
			return out, err
		}
		a.noStream.Store(true)
	}
	return a.complete(ctx, e, req, false, onText)
}

// anthropicPartial is a content block being received.
type anthropicPartial struct {
	block Block
	json  strings.Builder
}

func (a *Anthropic) complete(ctx context.Context, e endpoint, req *Request, stream bool, onText StreamFunc) (*Response, error) {
	var (
		blocks  = map[int]*anthropicPartial{}
		order   []int
		out     = &Response{Message: Message{Role: RoleAssistant}}
		stopped bool
	)
	onThinking := reasoningStream(ctx)
	onInput := toolInputStream(ctx)
	start := func(i int, c anthropicContent) {
		p := &anthropicPartial{}
		switch c.Type {
		case "text":
			p.block = Block{Type: BlockText, Text: c.Text}
		case "tool_use":
			p.block = Block{Type: BlockToolUse, ID: c.ID, Name: c.Name}
		case "thinking":
			p.block = Block{Type: BlockThinking, Text: c.Thinking, Signature: c.Signature}
		case "redacted_thinking":
			p.block = Block{Type: BlockRedactedThinking, Data: c.Data}
		default:
			return // block kinds Praxis does not know are not kept
		}
		blocks[i] = p
		order = append(order, i)
	}
	err := e.post(ctx, a.body(req, stream), stream, func(ctx context.Context, resp *http.Response, body io.Reader) error {
		if !stream || isJSONReply(resp) {
			var r anthropicReply
			if err := json.NewDecoder(body).Decode(&r); err != nil {
				return a.streamError(fmt.Sprintf("undecodable reply: %v", err))
			}
			for i, c := range r.Content {
				start(i, c)
				if p := blocks[i]; p != nil && c.Type == "tool_use" {
					p.json.Write(c.Input)
				}
				if c.Type == "text" && onText != nil && c.Text != "" {
					onText(c.Text)
				}
				if c.Type == "thinking" && onThinking != nil && c.Thinking != "" {
					onThinking(c.Thinking)
				}
			}
			out.StopReason, out.Usage, stopped = r.StopReason, anthropicToUsage(r.Usage), true
			return nil
		}
		return readSSE(ctx, body, func(ev sse.Event) error {
			var e anthropicEvent
			if err := json.Unmarshal(ev.Data, &e); err != nil {
				return a.streamError(fmt.Sprintf("undecodable %s event: %v", ev.Event, err))
			}
			switch e.Type {
			case "message_start":
				out.Usage = anthropicToUsage(e.Message.Usage)
			case "content_block_start":
				start(e.Index, e.ContentBlock)
			case "content_block_delta":
				p := blocks[e.Index]
				if p == nil {
					return nil
				}
				switch e.Delta.Type {
				case "text_delta":
					p.block.Text += e.Delta.Text
					if onText != nil && e.Delta.Text != "" {
						onText(e.Delta.Text)
					}
				case "input_json_delta":
					p.json.WriteString(e.Delta.PartialJSON)
					if onInput != nil && e.Delta.PartialJSON != "" {
						onInput(p.block.ID, p.block.Name, e.Delta.PartialJSON)
					}
				case "thinking_delta":
					p.block.Text += e.Delta.Thinking
					if onThinking != nil && e.Delta.Thinking != "" {
						onThinking(e.Delta.Thinking)
					}
				case "signature_delta":
					p.block.Signature += e.Delta.Signature
				}
			case "message_delta":
				if e.Delta.StopReason != "" {
					out.StopReason = e.Delta.StopReason
				}
				if e.Usage != nil {
					u := anthropicToUsage(*e.Usage)
					out.Usage.OutputTokens = u.OutputTokens
					if u.InputTokens > 0 {
						out.Usage.InputTokens = u.InputTokens
					}
					if u.CacheReadTokens > 0 {
						out.Usage.CacheReadTokens = u.CacheReadTokens
					}
					if u.CacheWriteTokens > 0 {
						out.Usage.CacheWriteTokens = u.CacheWriteTokens
					}
				}
			case "message_stop":
				stopped = true
			case "error":
				if e.Error == nil {
					return a.streamError("error event without an error")
				}
				kind, msg := anthropicErrorKind(e.Error.Type), e.Error.Message
				return &APIError{Provider: a.Name(), Kind: kind, Message: fmt.Sprintf("%s: %s", e.Error.Type, msg)}
			}
			return nil
		})
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, ok := errors.AsType[*APIError](err); !ok {
			err = a.streamError(err.Error())
		}
		return nil, withUsage(err, out.Usage)
	}
	if !stopped {
		return nil, withUsage(a.streamError(errStreamEnded.Error()), out.Usage)
	}
	for _, i := range order {
		p := blocks[i]
		if p.block.Type == BlockToolUse {
			in := strings.TrimSpace(p.json.String())
			if in == "" {
				in = "{}"
			}
			if json.Valid([]byte(in)) {
				p.block.Input = json.RawMessage(in)
			} else {
				p.block.InvalidInput = in
			}
		}
		out.Message.Content = append(out.Message.Content, p.block)
	}
	if out.StopReason == "refusal" {
		return nil, withUsage(&APIError{Provider: a.Name(), Kind: ErrRefused, Message: "the model declined the request (stop_reason \"refusal\")"}, out.Usage)
	}
	return out, nil
}

func (a *Anthropic) streamError(msg string) *APIError {
	return &APIError{Provider: a.Name(), Kind: ErrServer, Message: "stream: " + msg}
}

func anthropicToUsage(u anthropicUsage) Usage {
	return Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

// classifyAnthropic reads an error response: {"type": "error", "error":
// {"type": ..., "message": ...}}.
func classifyAnthropic(status int, body []byte) (ErrorKind, string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Type == "" {
		return kindForStatus(status), ""
	}
	kind := anthropicErrorKind(e.Error.Type)
	if kind == ErrServer && status < 500 {
		kind = kindForStatus(status)
	}
	return kind, e.Error.Type + ": " + e.Error.Message
}

func anthropicErrorKind(typ string) ErrorKind {
	switch typ {
	case "authentication_error", "permission_error":
		return ErrAuth
	case "not_found_error":
		return ErrUnknownModel
	case "rate_limit_error":
		return ErrRateLimited
	case "overloaded_error":
		return ErrOverloaded
	case "invalid_request_error", "request_too_large":
		return ErrRefused
	default:
		return ErrServer
	}
}

func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return http.DefaultClient
}

// objectOrEmpty returns raw, or {} when raw is empty.
func objectOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}
