package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
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
type Anthropic struct {
	// APIKey is sent as x-api-key.
	APIKey string
	// BaseURL defaults to AnthropicBaseURL; requests go to BaseURL/v1/messages.
	BaseURL string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
}

// Name returns "anthropic".
func (a *Anthropic) Name() string { return "anthropic" }

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []ToolDef          `json:"tools,omitempty"`
	Stream    bool               `json:"stream"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// anthropicEvent is any event of the stream; which fields are set depends
// on Type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (a *Anthropic) body(req *Request) anthropicRequest {
	out := anthropicRequest{
		Model:     req.Model,
		MaxTokens: cmp.Or(req.MaxTokens, anthropicMaxTokensDef),
		System:    req.System,
		Tools:     req.Tools,
		Stream:    true,
	}
	for _, m := range req.Messages {
		am := anthropicMessage{Role: string(m.Role)}
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				if b.Text != "" { // the API refuses empty text blocks
					am.Content = append(am.Content, anthropicBlock{Type: "text", Text: b.Text})
				}
			case BlockToolUse:
				am.Content = append(am.Content, anthropicBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: objectOrEmpty(b.Input)})
			case BlockToolResult:
				am.Content = append(am.Content, anthropicBlock{Type: "tool_result", ToolUseID: b.ID, Content: b.Text, IsError: b.IsError})
			}
		}
		if len(am.Content) == 0 {
			am.Content = []anthropicBlock{{Type: "text", Text: "(no content)"}}
		}
		out.Messages = append(out.Messages, am)
	}
	return out
}

// Complete sends req to the Messages API with streaming on.
func (a *Anthropic) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	h := http.Header{}
	h.Set("x-api-key", a.APIKey)
	h.Set("anthropic-version", anthropicVersion)
	url := strings.TrimRight(cmp.Or(a.BaseURL, AnthropicBaseURL), "/") + "/v1/messages"
	resp, err := postJSON(ctx, httpClient(a.HTTPClient), a.Name(), url, h, a.body(req), classifyAnthropic)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	type partial struct {
		block Block
		json  strings.Builder
	}
	var (
		blocks  = map[int]*partial{}
		order   []int
		out     = &Response{Message: Message{Role: RoleAssistant}}
		stopped bool
	)
	err = readSSE(ctx, resp.Body, func(ev sseEvent) error {
		var e anthropicEvent
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return a.streamError(fmt.Sprintf("undecodable %s event: %v", ev.Event, err))
		}
		switch e.Type {
		case "message_start":
			out.Usage = anthropicToUsage(e.Message.Usage)
		case "content_block_start":
			p := &partial{}
			switch e.ContentBlock.Type {
			case "text":
				p.block = Block{Type: BlockText, Text: e.ContentBlock.Text}
			case "tool_use":
				p.block = Block{Type: BlockToolUse, ID: e.ContentBlock.ID, Name: e.ContentBlock.Name}
			default:
				return nil // thinking and other blocks are not kept
			}
			blocks[e.Index] = p
			order = append(order, e.Index)
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
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, ok := err.(*APIError); ok {
			return nil, err
		}
		return nil, a.streamError(err.Error())
	}
	if !stopped {
		return nil, a.streamError(errStreamEnded.Error())
	}
	for _, i := range order {
		p := blocks[i]
		if p.block.Type == BlockToolUse {
			in := strings.TrimSpace(p.json.String())
			if in == "" {
				in = "{}"
			}
			if !json.Valid([]byte(in)) {
				return nil, a.streamError(fmt.Sprintf("tool call %s: arguments are not valid JSON: %q", p.block.Name, in))
			}
			p.block.Input = json.RawMessage(in)
		}
		out.Message.Content = append(out.Message.Content, p.block)
	}
	if out.StopReason == "refusal" {
		return nil, &APIError{Provider: a.Name(), Kind: ErrRefused, Message: "the model declined the request (stop_reason \"refusal\")"}
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
