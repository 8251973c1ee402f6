// Package mcpserver serves the Praxis engine's tools over the Model Context
// Protocol, on stdio and on streamable HTTP.
//
// The protocol (initialize, tools, resources, prompts, logging, completion,
// and the sessionless requests of 2026-07-28) and the transports are this
// package's own, built on the JSON-RPC envelope of internal/jsonrpc with
// the message types of github.com/mark3labs/mcp-go/mcp, so that it decides
// how messages are dispatched, framed, ordered and secured:
//
//   - notifications a call emits (progress, log messages) always reach the
//     client before that call's response, on both transports;
//   - a large tool result is encoded once, straight onto the wire;
//   - only notifications/cancelled cancels a request, and no response is
//     sent for a cancelled request;
//   - the HTTP endpoint checks Origin and Host, requires a bearer token off
//     loopback, keeps stateful sessions with random IDs, expires idle ones,
//     bounds their number, their requests in flight, the size of request
//     bodies and the time to send them;
//   - an HTTP call outlives its connection: its event stream's events carry
//     IDs and a session keeps them, so a client that reconnects with
//     Last-Event-ID gets what it missed.
//
// Callers hand it an engine opener and small interfaces for notes and
// skills, and get back a Server with Serve methods; an Extension adds
// tools, resources and prompts of its own (the conformance fixtures), the
// only place where MCP types cross the package's boundary.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/praxis"
)

// Options configure a Server.
type Options struct {
	// Open returns an engine working in dir. The server opens the default
	// workspace with it at start, and further workspaces when clients name
	// them as roots. Required.
	Open func(dir string) (*praxis.Engine, error)
	// Workspace is the default workspace directory. Default ".".
	Workspace string
	// FixedWorkspace, when true, ignores the roots clients offer: every
	// session works in Workspace. Set it when the user chose the workspace
	// explicitly.
	FixedWorkspace bool
	// Version is reported as the server's version in initialize.
	Version string
	// Notes, if set, returns the memory notes of an engine, served as
	// memory://KEY resources.
	Notes func(*praxis.Engine) Notes
	// Skills, if set, returns the skills of an engine, served as
	// skill://NAME resources and as prompts.
	Skills func(*praxis.Engine) Skills
	// Extensions add further MCP features: tools, resources and prompts
	// beyond the engine's. The conformance fixtures mount themselves this
	// way.
	Extensions []Extension
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
}

// Notes is a store of memory notes, keyed by name.
type Notes interface {
	// Keys lists the notes' keys.
	Keys(ctx context.Context) ([]string, error)
	// Read returns one note's text. A missing key is an error whose
	// praxis.CodeOf is E_NOT_FOUND.
	Read(ctx context.Context, key string) (string, error)
}

// Skill describes one skill.
type Skill struct {
	Name        string
	Description string
}

// Skills is a catalog of skills.
type Skills interface {
	// List returns the skills, sorted by name.
	List(ctx context.Context) ([]Skill, error)
	// Load returns one skill's instructions (its SKILL.md body). A missing
	// skill is an error whose praxis.CodeOf is E_NOT_FOUND.
	Load(ctx context.Context, name string) (string, error)
}

// Server is an MCP server for the Praxis engine. One Server may serve stdio
// and HTTP at the same time; each connection or HTTP session is a session of
// its own, with its own workspace when the client names roots.
type Server struct {
	opts    Options
	log     *slog.Logger
	reg     *registry
	engines *enginePool
	def     *praxis.Engine // the default workspace's engine
	release func()

	versions []string // SupportedProtocolVersions

	sessions    sync.Map // session ID -> *conn: the sessions told of list changes
	sessionless sync.Map // raw request ID -> *inflightCall: requests served without a session

	toolsMu     sync.Mutex      // held while the engine's tools are mounted
	engineTools map[string]bool // the engine's tools, as mounted

	listMu       sync.Mutex
	listedNotes  listed
	listedSkills listed
}

// New opens the default workspace and builds the server.
func New(opts Options) (*Server, error) {
	if opts.Open == nil {
		return nil, errors.New("mcpserver: Options.Open is required")
	}
	if opts.Workspace == "" {
		opts.Workspace = "."
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.Extensions = slices.Clone(opts.Extensions)
	go warmCodecs()
	s := &Server{opts: opts, log: log, engines: newEnginePool(opts.Open), versions: SupportedProtocolVersions()}
	def, release, err := s.engines.acquire(opts.Workspace)
	if err != nil {
		return nil, err
	}
	s.def, s.release = def, release

	s.reg = newRegistry()
	s.syncTools()
	s.mountNotes()
	s.mountSkills()
	s.mountFiles()
	for i := range s.opts.Extensions {
		s.mountExtension(&s.opts.Extensions[i])
	}
	return s, nil
}

// SupportedProtocolVersions returns the MCP protocol versions the server
// speaks, newest first: the same on stdio and HTTP. Versions from
// 2026-07-28 on are served without sessions (requests carry their version
// in _meta); older ones negotiate theirs with initialize.
func SupportedProtocolVersions() []string { return slices.Clone(mcp.ValidProtocolVersions) }

// skillsListed reports whether the skills were listed once.
func (s *Server) skillsListed() bool {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	return s.listedSkills.prompts != nil
}

// refreshLists lists the notes and skills again.
func (s *Server) refreshLists(ctx context.Context) {
	if s.opts.Notes != nil {
		s.refreshNotes(ctx)
	}
	if s.opts.Skills != nil {
		s.refreshSkills(ctx)
	}
}

const instructions = "Praxis works on one workspace directory. Read files with read_file before editing them: " +
	"edit_file names lines by the LINE:TAG anchors read_file shows. Failed calls start with an E_ code."

// Close releases the server's engines. Serve calls must have returned.
func (s *Server) Close() error {
	s.release()
	return s.engines.closeAll()
}

// Workspace returns the default workspace's directory.
func (s *Server) Workspace() string { return s.def.Workspace().Dir() }

// Sandbox describes how the default engine runs commands: see
// praxis.Engine.Sandbox.
func (s *Server) Sandbox() string { return s.def.Sandbox() }

// SandboxKnown describes it without starting a process: see
// praxis.Engine.SandboxKnown.
func (s *Server) SandboxKnown() string { return s.def.SandboxKnown() }

// syncTools mounts the default engine's catalog: tools added to the
// catalog since the last call are mounted, tools removed from it
// unmounted, and the sessions told when the list changed. Every tool of
// the catalog is served; nothing here knows tools by name.
func (s *Server) syncTools() {
	tools := s.def.Catalog().Tools()
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	current := make(map[string]bool, len(tools))
	changed := false
	s.reg.mu.Lock()
	for _, t := range tools {
		current[t.Name] = true
		if !s.engineTools[t.Name] {
			s.reg.tools[t.Name] = toolEntry{tool: mcpTool(t), handler: s.toolHandler(t.Name), engine: true}
			changed = true
		}
	}
	for name := range s.engineTools {
		if !current[name] {
			delete(s.reg.tools, name)
			changed = true
		}
	}
	s.reg.mu.Unlock()
	s.engineTools = current
	if changed {
		s.broadcast(mcp.MethodNotificationToolsListChanged)
	}
}

// broadcast sends the notification method, without params, to every
// initialized session.
func (s *Server) broadcast(method string) {
	n := newNotification(method, nil)
	s.sessions.Range(func(_, v any) bool {
		if c := v.(*conn); c.Initialized() {
			c.broadcast(n)
		}
		return true
	})
}

// mountExtension adds an extension's tools, resources and prompts. An
// extension's tool does not replace an engine tool of the same name.
func (s *Server) mountExtension(ext *Extension) {
	s.reg.mu.Lock()
	defer s.reg.mu.Unlock()
	for _, t := range ext.Tools {
		if e, ok := s.reg.tools[t.Tool.Name]; ok && e.engine {
			s.log.Warn("an extension's tool takes an engine tool's name; the engine's is served", "tool", t.Tool.Name)
			continue
		}
		s.reg.tools[t.Tool.Name] = toolEntry{tool: t.Tool, handler: t.Handler}
	}
	for _, r := range ext.Resources {
		s.reg.resources[r.Resource.URI] = resourceEntry{resource: r.Resource, read: r.Read}
	}
	for _, t := range ext.ResourceTemplates {
		s.reg.templates = append(s.reg.templates, templateEntry{template: t.Template, read: t.Read, owner: ext})
	}
	for _, p := range ext.Prompts {
		s.reg.prompts[p.Prompt.Name] = promptEntry{prompt: p.Prompt, handler: p.Handler, owner: ext}
	}
}

// mcpTool describes t for tools/list: its schemas verbatim and all four
// annotations set explicitly.
func mcpTool(t praxis.Tool) mcp.Tool {
	a := t.Annotations
	return mcp.Tool{
		Name:            t.Name,
		Description:     t.Description,
		RawInputSchema:  t.InputSchema,
		RawOutputSchema: t.OutputSchema,
		Annotations: mcp.ToolAnnotation{
			ReadOnlyHint:    &a.ReadOnly,
			DestructiveHint: &a.Destructive,
			IdempotentHint:  &a.Idempotent,
			OpenWorldHint:   &a.OpenWorld,
		},
	}
}

// toolHandler runs the tool called name on the engine of the calling
// session's workspace.
func (s *Server) toolHandler(name string) toolHandler {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		eng, release := s.engineFor(ctx)
		defer release()
		args := req.Params.RawArguments
		if bytes.Equal(args, []byte("null")) {
			args = nil // absent, as the fast path treats it
		}
		if len(args) == 0 && req.Params.Arguments != nil {
			b, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return nil, fmt.Errorf("arguments: %w", err)
			}
			args = b
		}
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			if c := callFromContext(ctx); c != nil {
				ctx = praxis.WithProgress(ctx, c.progressFunc(req.Params.Meta.ProgressToken))
			}
		}
		res, err := eng.Catalog().Call(ctx, name, args)
		if err != nil {
			return nil, err // unknown tool: a protocol error
		}
		return toolResult(res), nil
	}
}

// toolResult converts an engine result: its text, once, and its structured
// data when the call succeeded.
func toolResult(res praxis.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{
		Content: []mcp.Content{mcp.TextContent{Type: "text", Text: res.Text}},
		IsError: res.IsError,
	}
	out.Meta = noticeMeta(res.Notices)
	if !res.IsError && res.Structured != nil {
		out.StructuredContent = res.Structured
	}
	return out
}

// engineFor returns the engine of the workspace the session in ctx works
// in, and the function that releases it.
func (s *Server) engineFor(ctx context.Context) (*praxis.Engine, func()) {
	if c := connFromContext(ctx); c != nil && !s.opts.FixedWorkspace && !c.sessionless {
		if eng, release := c.ws.engine(ctx, s, callFromContext(ctx)); eng != nil {
			return eng, release
		}
	}
	return s.def, func() {}
}
