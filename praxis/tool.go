package praxis

import (
	"context"
	"encoding/json"
)

// Annotations are hints about a tool's behaviour, as MCP defines them. Every
// tool sets all four explicitly.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Handler runs a tool. args is the JSON object of the call's arguments,
// already validated against the tool's input schema. A failure is reported
// by returning an *Error (or a Result with IsError set); any other error is
// treated as E_INTERNAL.
type Handler func(ctx context.Context, args json.RawMessage) (Result, error)

// Tool is one tool, built-in or external. Every front end (MCP server, agent
// loop, CLI) sees tools only through this shape.
type Tool struct {
	Name string
	// Description is prose for a model: what the tool does, when to use it,
	// what it returns.
	Description string
	// InputSchema is a JSON Schema for the arguments object.
	InputSchema json.RawMessage
	// OutputSchema, if set, is a JSON Schema that Result.Structured matches.
	OutputSchema json.RawMessage
	Annotations  Annotations
	Handler      Handler
}

// Result is the outcome of a tool call.
type Result struct {
	// Text is what the model reads. On failure its first line is
	// "E_CODE: message".
	Text string
	// Structured is optional structured data (small: versions, counts,
	// ranges; never a second copy of a file's content). When the tool has an
	// OutputSchema, Structured matches it.
	Structured any
	IsError    bool
	// Code is set when IsError is.
	Code Code
	// Images are images the result carries (an external MCP tool's image
	// content), for clients that can show them to a model; Text mentions
	// each, for those that cannot.
	Images []Image
}

// Image is an image of a tool result.
type Image struct {
	// MIMEType is the image's media type, e.g. image/png.
	MIMEType string
	// Data is the image, base64-encoded.
	Data string
}

type progressKey struct{}

// ProgressFunc receives progress reports from a long-running call. total is
// 0 when unknown.
type ProgressFunc func(progress, total float64, message string)

// WithProgress returns a context whose calls report progress to fn.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress reports progress to the function installed with
// WithProgress, if any. Tools that may run long (commands, searches over big
// trees) call it now and then.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		fn(progress, total, message)
	}
}
