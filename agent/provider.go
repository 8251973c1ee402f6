package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Role is who wrote a message.
type Role string

// The roles of a conversation. Tool results travel in user messages, as the
// Anthropic Messages API has them; providers translate.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

// The kinds of content block.
const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
	// BlockThinking is the model's reasoning before its answer. Anthropic
	// signs it (Signature) and wants it back unchanged on the next request.
	BlockThinking BlockType = "thinking"
	// BlockRedactedThinking is reasoning the provider encrypted (Data); it
	// too goes back unchanged.
	BlockRedactedThinking BlockType = "redacted_thinking"
)

// Block is one piece of a message: text, a tool call the model makes, or
// the result of one.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block, or the content of a tool result.
	Text string `json:"text,omitempty"`
	// ID identifies a tool call; a tool result carries the ID of its call.
	ID string `json:"id,omitempty"`
	// Name and Input are the tool and arguments of a tool call.
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// InvalidInput is the raw text of a tool call's arguments when they
	// were not valid JSON (Input is then empty): the call is answered with
	// E_INVALID_ARGS, and the text goes back to the provider as it came.
	InvalidInput string `json:"invalid_input,omitempty"`
	// IsError marks a failed tool result.
	IsError bool `json:"is_error,omitempty"`
	// Images are the images of a tool result, for providers that accept
	// them.
	Images []Image `json:"images,omitempty"`
	// Signature signs a thinking block; Data is the payload of a redacted
	// thinking block. Both go back to the provider byte for byte.
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// maxRequestImages bounds the images one request carries: those of the
// latest tool results go as images, older ones as the mention in their
// text only (APIs cap images per request, and each costs tokens).
const maxRequestImages = 20

// imagesSent returns which tool results of msgs send their images, by
// message and block index: the latest, up to maxRequestImages images.
func imagesSent(msgs []Message) map[[2]int]bool {
	sent := map[[2]int]bool{}
	left := maxRequestImages
	for i := len(msgs) - 1; i >= 0; i-- {
		for j := len(msgs[i].Content) - 1; j >= 0; j-- {
			if n := len(msgs[i].Content[j].Images); n > 0 && n <= left {
				sent[[2]int{i, j}] = true
				left -= n
			}
		}
	}
	return sent
}

// Image is an image in a tool result.
type Image struct {
	// MIMEType is the image's type: image/png, image/jpeg, image/gif or
	// image/webp.
	MIMEType string `json:"mime_type"`
	// Data is the image, base64-encoded.
	Data string `json:"data"`
}

// Message is one turn of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// ToolCalls returns the tool_use blocks of m.
func (m Message) ToolCalls() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// Text returns the text blocks of m, concatenated.
func (m Message) Text() string {
	var s string
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// ToolDef is a tool as a model sees it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one call to a model.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolDef
	// MaxTokens bounds the reply's output tokens; 0 means the provider's
	// default.
	MaxTokens int
	// Compacted is the number of model replies that compaction folded into
	// a summary: the conversation had that many more than Messages shows.
	Compacted int
	// Thinking, if positive, asks for the model's reasoning before its
	// answer, with this budget of tokens: Anthropic's extended thinking,
	// OpenAI's reasoning_effort (low up to 4096, medium up to 16384, high
	// above).
	Thinking int
}

// Usage counts the tokens of one call, or of a run. Providers count
// differently: Anthropic's input tokens exclude the cache reads and writes,
// OpenAI's prompt tokens (InputTokens) include the cached ones it reads.
// OpenAI reports no cache writes.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Response is a model's complete reply.
type Response struct {
	// Message is the assistant message: text and tool calls, in order.
	Message Message
	// StopReason is the provider's own word for why the reply ended
	// ("end_turn", "tool_use", "stop", "tool_calls", "max_tokens", ...).
	StopReason string
	Usage      Usage
}

// StreamFunc receives the model's text as it arrives.
type StreamFunc func(text string)

type reasoningKey struct{}

// WithReasoningStream returns a context whose model calls pass the model's
// reasoning text (thinking), as it arrives, to fn. Reasoning is not part of
// the answer's text: StreamFunc never sees it.
func WithReasoningStream(ctx context.Context, fn StreamFunc) context.Context {
	return context.WithValue(ctx, reasoningKey{}, fn)
}

// reasoningStream returns the reasoning receiver of ctx, or nil.
func reasoningStream(ctx context.Context) StreamFunc {
	fn, _ := ctx.Value(reasoningKey{}).(StreamFunc)
	return fn
}

type toolInputKey struct{}

// ToolInputFunc receives a piece of a tool call's arguments (JSON text) as
// it arrives from the model, with the call's ID and tool name.
type ToolInputFunc func(callID, tool, delta string)

// WithToolInputStream returns a context whose model calls pass the pieces
// of the tool calls' arguments, as they arrive, to fn. The whole arguments
// are in the reply's tool_use blocks whether or not fn is set.
func WithToolInputStream(ctx context.Context, fn ToolInputFunc) context.Context {
	return context.WithValue(ctx, toolInputKey{}, fn)
}

// toolInputStream returns the tool input receiver of ctx, or nil.
func toolInputStream(ctx context.Context) ToolInputFunc {
	fn, _ := ctx.Value(toolInputKey{}).(ToolInputFunc)
	return fn
}

// Provider is a model behind an API. Complete sends the request, streams
// the reply's text to onText as it arrives (onText may be nil) and returns
// the whole reply. A failure of the API is an *APIError.
type Provider interface {
	// Name is the provider's name: "anthropic", "openai", "scripted".
	Name() string
	Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error)
}

// ErrorKind classifies an API failure.
type ErrorKind string

// The kinds of API failure.
const (
	ErrAuth         ErrorKind = "auth"          // the key is missing, wrong or lacks permission
	ErrUnknownModel ErrorKind = "unknown_model" // the model does not exist or is not available
	ErrRefused      ErrorKind = "refused"       // the request was refused: invalid, too large, or declined by the model
	ErrRateLimited  ErrorKind = "rate_limited"  // 429: too many requests
	ErrOverloaded   ErrorKind = "overloaded"    // the API is overloaded (Anthropic's 529)
	ErrServer       ErrorKind = "server"        // a 5xx or a broken stream
	ErrNetwork      ErrorKind = "network"       // the API could not be reached
	ErrStalled      ErrorKind = "stalled"       // the stream sent nothing for the idle timeout
)

// APIError is a failed model call.
type APIError struct {
	Provider string
	Kind     ErrorKind
	// Status is the HTTP status, 0 when there was no response.
	Status int
	// Message is what the API said, or what went wrong.
	Message string
	// RetryAfter is how long the API asked to wait, 0 when it did not say.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
	// Usage is what the failed call (and, after retries, the failed tries
	// before it) cost, as far as the provider reported it.
	Usage Usage
}

func (e *APIError) Error() string {
	var hint string
	switch e.Kind {
	case ErrAuth:
		hint = " (check the API key)"
	case ErrUnknownModel:
		hint = " (check the model name)"
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s: %s (HTTP %d): %s%s", e.Provider, e.Kind, e.Status, e.Message, hint)
	}
	return fmt.Sprintf("%s: %s: %s%s", e.Provider, e.Kind, e.Message, hint)
}

func (e *APIError) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed later.
func (e *APIError) Retryable() bool {
	switch e.Kind {
	case ErrRateLimited, ErrOverloaded, ErrServer, ErrNetwork, ErrStalled:
		return true
	}
	return false
}

// IsRetryable reports whether err is an *APIError worth retrying.
func IsRetryable(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Retryable()
}

// kindForStatus classifies an HTTP status.
func kindForStatus(status int) ErrorKind {
	switch {
	case status == 401 || status == 403:
		return ErrAuth
	case status == 404:
		return ErrUnknownModel
	case status == 429:
		return ErrRateLimited
	case status == 529 || status == 503:
		return ErrOverloaded
	case status >= 500:
		return ErrServer
	default:
		return ErrRefused
	}
}
