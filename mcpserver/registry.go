package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"slices"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// registry is what the server serves besides the protocol's own methods:
// tools, resources, resource templates and prompts, each with its handler.
// The engine's tools, the notes and the skills change while the server
// runs; a change of a list is announced to the sessions (list_changed).
type registry struct {
	mu        sync.RWMutex
	tools     map[string]toolEntry
	resources map[string]resourceEntry // by URI
	templates []templateEntry          // in the order they were added
	prompts   map[string]promptEntry
}

type toolHandler func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

type toolEntry struct {
	tool    mcp.Tool
	handler toolHandler
	engine  bool // a tool of the engine's catalog (served by fastToolCall)
}

type resourceEntry struct {
	resource mcp.Resource
	read     ResourceReader
}

type templateEntry struct {
	template mcp.ResourceTemplate
	read     ResourceReader
	owner    *Extension // nil for the server's own
}

type promptEntry struct {
	prompt  mcp.Prompt
	handler func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error)
	owner   *Extension // nil for the server's own
}

func newRegistry() *registry {
	return &registry{
		tools:     make(map[string]toolEntry),
		resources: make(map[string]resourceEntry),
		prompts:   make(map[string]promptEntry),
	}
}

func (r *registry) tool(name string) (toolEntry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// toolList returns the tools sorted by name.
func (r *registry) toolList() []mcp.Tool {
	return sortedEntries(r, r.tools, func(e toolEntry) mcp.Tool { return e.tool },
		func(a, b mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
}

// resourceList returns the listed resources sorted by name, then URI.
func (r *registry) resourceList() []mcp.Resource {
	return sortedEntries(r, r.resources, func(e resourceEntry) mcp.Resource { return e.resource },
		func(a, b mcp.Resource) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.URI, b.URI)) })
}

// templateList returns the resource templates sorted by name.
func (r *registry) templateList() []mcp.ResourceTemplate {
	r.mu.RLock()
	out := make([]mcp.ResourceTemplate, 0, len(r.templates))
	for _, e := range r.templates {
		out = append(out, e.template)
	}
	r.mu.RUnlock()
	slices.SortStableFunc(out, func(a, b mcp.ResourceTemplate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// promptList returns the prompts sorted by name.
func (r *registry) promptList() []mcp.Prompt {
	return sortedEntries(r, r.prompts, func(e promptEntry) mcp.Prompt { return e.prompt },
		func(a, b mcp.Prompt) int { return cmp.Compare(a.Name, b.Name) })
}

// sortedEntries returns what item makes of every entry of m, one of r's
// maps, read under r's lock, in the order compare gives.
func sortedEntries[E, T any](r *registry, m map[string]E, item func(E) T, compare func(a, b T) int) []T {
	r.mu.RLock()
	out := make([]T, 0, len(m))
	for _, e := range m {
		out = append(out, item(e))
	}
	r.mu.RUnlock()
	slices.SortStableFunc(out, compare)
	return out
}

func (r *registry) prompt(name string) (promptEntry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.prompts[name]
	return p, ok
}

// reader returns the handler that reads uri: the listed resource's, or the
// first matching template's, with the template's variables as arguments.
func (r *registry) reader(uri string) (ResourceReader, map[string]any, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.resources[uri]; ok {
		return e.read, nil, true
	}
	for _, e := range r.templates {
		t := e.template.URITemplate
		if t == nil || t.Template == nil || !t.Regexp().MatchString(uri) {
			continue
		}
		vars := t.Match(uri)
		args := make(map[string]any, len(vars))
		for name, v := range vars {
			args[name] = v.V
		}
		return e.read, args, true
	}
	return nil, nil, false
}

// completer returns the completer for a prompt or a resource template:
// its extension's, or the first extension's that has one.
func (r *registry) completer(exts []Extension, prompt, uri string) Completer {
	r.mu.RLock()
	var owner *Extension
	if prompt != "" {
		owner = r.prompts[prompt].owner
	} else {
		for _, e := range r.templates {
			if e.template.URITemplate != nil && e.template.URITemplate.Template != nil && e.template.URITemplate.Raw() == uri {
				owner = e.owner
				break
			}
		}
	}
	r.mu.RUnlock()
	if owner != nil && owner.Completer != nil {
		return owner.Completer
	}
	for i := range exts {
		if exts[i].Completer != nil {
			return exts[i].Completer
		}
	}
	return nil
}

// page returns the items after cursor (the base64 of the last name a
// client saw), and the cursor of the next page: none, as lists are not
// paginated.
func page[T mcp.Named](items []T, cursor mcp.Cursor) ([]T, error) {
	start := 0
	if cursor != "" {
		c, err := base64.StdEncoding.DecodeString(string(cursor))
		if err != nil {
			return nil, err
		}
		after := string(c)
		start = sort.Search(len(items), func(i int) bool { return items[i].GetName() > after })
	}
	out := items[start:]
	if out == nil {
		out = []T{}
	}
	return out, nil
}
