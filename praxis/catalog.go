package praxis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrUnknownTool is returned by Catalog.Call for a name no tool has. It is a
// protocol error, not a tool failure.
var ErrUnknownTool = errors.New("unknown tool")

// Catalog is a set of tools, listed and called by name. It is safe for
// concurrent use.
type Catalog struct {
	mu    sync.RWMutex
	tools map[string]catalogEntry
}

type catalogEntry struct {
	tool   Tool
	schema func() *jsonschema.Resolved // returns nil: arguments are passed on unchecked
}

// NewCatalog returns a catalog holding tools.
func NewCatalog(tools ...Tool) (*Catalog, error) {
	c := &Catalog{tools: make(map[string]catalogEntry)}
	for _, t := range tools {
		if err := c.Add(t); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Add adds t. A second tool with the same name, a tool without a handler or
// with an input schema that is not a JSON object is an error.
//
// The input schema is resolved once, here or (for a tool made by NewTool,
// whose schemas are generated on first use) on its first call or listing,
// for validating each call's arguments with
// github.com/google/jsonschema-go. A schema that validator cannot take in
// full (another draft than 2020-12 or 07, a remote $ref), as an external
// tool may bring, is passed through: that tool's arguments reach its
// handler unchecked but for being a JSON object.
func (c *Catalog) Add(t Tool) error {
	if t.Name == "" || t.Handler == nil {
		return fmt.Errorf("tool %q: a tool needs a name and a handler", t.Name)
	}
	var s func() *jsonschema.Resolved
	if t.typedInput != nil {
		s = t.typedInput
	} else {
		rs, err := resolveInput(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		s = func() *jsonschema.Resolved { return rs }
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.tools[t.Name]; dup {
		return fmt.Errorf("tool %q: already in the catalog", t.Name)
	}
	c.tools[t.Name] = catalogEntry{tool: t, schema: s}
	return nil
}

// Remove removes the tool called name, if present.
func (c *Catalog) Remove(name string) {
	c.mu.Lock()
	delete(c.tools, name)
	c.mu.Unlock()
}

// Tools returns the tools sorted by name, each with its schemas (for a tool
// made by NewTool, generated here if this is their first use).
func (c *Catalog) Tools() []Tool {
	c.mu.RLock()
	out := make([]Tool, 0, len(c.tools))
	for _, e := range c.tools {
		out = append(out, e.tool.withSchemas())
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the tool called name, with its schemas, like Tools.
func (c *Catalog) Lookup(name string) (Tool, bool) {
	c.mu.RLock()
	e, ok := c.tools[name]
	c.mu.RUnlock()
	return e.tool.withSchemas(), ok
}

// Call validates args against the tool's input schema and runs it. Every
// tool failure, including invalid arguments and a panicking handler, comes
// back as a Result with IsError set; the returned error is non-nil only for
// an unknown tool (ErrUnknownTool).
func (c *Catalog) Call(ctx context.Context, name string, args json.RawMessage) (res Result, err error) {
	c.mu.RLock()
	e, ok := c.tools[name]
	c.mu.RUnlock()
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if verr := validateArgs(e.schema(), args); verr != nil {
		return ErrorResult(verr), nil
	}
	defer func() {
		if p := recover(); p != nil {
			res = ErrorResult(Errorf(EInternal, "tool %s panicked: %v", name, p).
				WithDetail("This is a bug in Praxis; the server keeps running. Please report it with the call that caused it."))
			err = nil
		}
	}()
	res, herr := e.tool.Handler(ctx, args)
	if herr != nil {
		return handlerError(ctx, name, herr), nil
	}
	if res.IsError && res.Code == "" {
		res.Code = EInternal
	}
	return res, nil
}

// handlerError is the result of the tool name's handler failing with err:
// a cancellation when the call was cancelled and err has no code.
func handlerError(ctx context.Context, name string, err error) Result {
	if ctx.Err() != nil && CodeOf(err) == "" {
		err = Errorf(ECancelled, "%s cancelled: %v", name, ctx.Err())
	}
	return ErrorResult(err)
}
