package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
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
// already validated against the tool's input schema where the catalog's
// validator implements it (see Catalog.Add). A failure is reported
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
	// InputSchema is a JSON Schema for the arguments object. A tool made by
	// NewTool leaves it unset: the catalog fills it in when it lists or
	// looks up the tool (see Catalog.Tools).
	InputSchema json.RawMessage
	// OutputSchema, if set, is a JSON Schema that Result.Structured matches;
	// filled in like InputSchema for a tool made by NewTool.
	OutputSchema json.RawMessage
	Annotations  Annotations
	Handler      Handler

	// typed returns the generated schemas of a tool made by NewTool,
	// generating them on first use; nil for a tool built by hand.
	typed func() *typedSchemas
	// typedInput returns the input schema of a tool made by NewTool,
	// resolved for validating arguments, generating it on first use: a
	// call needs neither the output schema nor the JSON of either.
	typedInput func() *jsonschema.Resolved
}

// typedSchemas are the schemas NewTool generates from a tool's types, as
// listings show them.
type typedSchemas struct {
	in, out json.RawMessage
}

// withSchemas returns t with its generated schemas filled in.
func (t Tool) withSchemas() Tool {
	if t.typed != nil {
		s := t.typed()
		t.InputSchema, t.OutputSchema = s.in, s.out
	}
	return t
}

// Output is the result type of a typed tool. Its JSON encoding is the
// call's structured result, which the output schema generated from the
// type describes; Text is what the model reads.
type Output interface {
	Text() string
}

// NewTool declares a tool from Go types. The input schema is generated
// from In and the output schema from Out, both structs, with the struct
// tags schema.go describes: descriptions, enums, defaults and bounds.
// The schemas are generated once per returned Tool, on first use: when a
// catalog first lists or looks up the tool, or on its first call, so that
// building an engine costs none of them; a call generates and resolves the
// input schema only, the output schema and the JSON of both wait for a
// listing. The catalog validates a call's
// arguments against the input schema before h runs; h then receives them
// decoded into an In that holds the declared defaults of the arguments
// left out. h's Out becomes the Result: its Text, and the value itself as
// Structured. A failure is an error from h, an *Error for a coded one.
//
// The schemas' generation panics if In or Out cannot be described by a
// schema: a declaration mistake, which any test that lists the engine's
// tools finds.
func NewTool[In any, Out Output](name, description string, ann Annotations, h func(context.Context, In) (Out, error)) Tool {
	// What a call needs: the input schema, resolved, and the defaults.
	input := sync.OnceValues(func() (*inputSchema, In) {
		var defaults In
		in, err := typeSchema(reflect.TypeFor[In]())
		if err != nil {
			panic(fmt.Sprintf("praxis: tool %s: input: %v", name, err))
		}
		d, err := defaultsOf(in)
		if err != nil {
			panic(fmt.Sprintf("praxis: tool %s: %v", name, err))
		}
		if d != nil {
			if err := json.Unmarshal(d, &defaults); err != nil {
				panic(fmt.Sprintf("praxis: tool %s: defaults: %v", name, err))
			}
		}
		rs, err := in.Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("praxis: tool %s: input schema: %v", name, err)) // a schema For made always resolves
		}
		return &inputSchema{schema: in, resolved: rs}, defaults
	})
	// What a listing needs besides: both schemas' JSON.
	listing := sync.OnceValue(func() *typedSchemas {
		in, _ := input()
		out, err := typeSchema(reflect.TypeFor[Out]())
		if err != nil {
			panic(fmt.Sprintf("praxis: tool %s: output: %v", name, err))
		}
		return &typedSchemas{in: mustMarshal(in.schema), out: mustMarshal(out)}
	})
	return Tool{
		Name:        name,
		Description: description,
		Annotations: ann,
		typed:       listing,
		typedInput: func() *jsonschema.Resolved {
			in, _ := input()
			return in.resolved
		},
		Handler: func(ctx context.Context, args json.RawMessage) (Result, error) {
			_, a := input()
			if len(args) > 0 {
				if err := json.Unmarshal(args, &a); err != nil {
					return Result{}, Errorf(EInvalidArgs, "arguments: %v", err)
				}
			}
			v, err := h(ctx, a)
			if err != nil {
				return Result{}, err
			}
			return Result{Text: v.Text(), Structured: v}, nil
		},
	}
}

// inputSchema is a typed tool's generated input schema and its resolved
// form.
type inputSchema struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

func mustMarshal(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a generated schema always marshals
	}
	return b
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
	// Notices tell that files the session was shown changed on disk by
	// someone else; Text ends with their lines. See Session.
	Notices []Notice
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

// noArgs are the arguments of a tool that takes none.
type noArgs struct{}
