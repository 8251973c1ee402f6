// Package mcpclient connects to external MCP servers described by a
// configuration file (the format Claude Desktop, Claude Code and VS Code
// use) and exposes their tools as praxis.Tool values, so that the agent loop
// calls them exactly like the engine's own tools.
//
// A Manager owns the connections. Every tool call has a timeout; a server
// that dies is restarted once and the call that saw it die fails with a
// clear tool error; Close ends every connection and every process a stdio
// server started.
package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/praxis"
)

// State is where a server's connection stands.
type State string

// The states of a server.
const (
	StateInvalid   State = "invalid"   // its configuration entry cannot be used
	StateDisabled  State = "disabled"  // the configuration switches it off
	StateConnected State = "connected" // its tools can be called
	StateFailed    State = "failed"    // it could not be reached, or died twice
	StateClosed    State = "closed"    // the Manager was closed
)

// Options configure a Manager.
type Options struct {
	// Logger receives diagnostics and the stderr of stdio servers, one
	// record per line. Default: discard.
	Logger *slog.Logger
	// ClientName and ClientVersion identify Praxis to the servers. Default
	// "praxis" and "dev".
	ClientName, ClientVersion string
}

// Manager holds the connections to a configuration's servers. It is safe
// for concurrent use.
type Manager struct {
	log     *slog.Logger
	servers []*remote
	tools   []praxis.Tool
}

// ServerStatus describes one server for listings.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     State  `json:"state"`
	// Error says why the server failed, when it did.
	Error string `json:"error,omitempty"`
	// ServerName, ServerVersion and ProtocolVersion come from the
	// handshake.
	ServerName      string `json:"server_name,omitempty"`
	ServerVersion   string `json:"server_version,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Restarts counts restarts after the server died.
	Restarts int        `json:"restarts"`
	Tools    []ToolInfo `json:"tools"`
}

// ToolInfo describes one external tool.
type ToolInfo struct {
	// Name is the tool's name in Praxis (mcp__SERVER__TOOL).
	Name string `json:"name"`
	// Original is the name the server gives it.
	Original    string             `json:"original"`
	Description string             `json:"description"`
	Annotations praxis.Annotations `json:"annotations"`
	// Skipped, when set, says why the tool is not offered (a filter in the
	// configuration, a schema Praxis cannot use).
	Skipped string `json:"skipped,omitempty"`
}

// Connect starts and initializes every enabled server of cfg, in parallel,
// each within its own timeout. A server that cannot be reached does not make
// Connect fail: it is reported by Servers with StateFailed and contributes
// no tools. ctx bounds the connection attempts only; the connections live
// until Close.
func Connect(ctx context.Context, cfg *Config, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.ClientName = cmp.Or(opts.ClientName, "praxis")
	opts.ClientVersion = cmp.Or(opts.ClientVersion, "dev")
	m := &Manager{log: opts.Logger}
	for _, inv := range cfg.Invalid {
		opts.Logger.Warn("MCP server skipped: its configuration entry cannot be used", "mcp_server", inv.Name, "reason", inv.Reason)
		m.servers = append(m.servers, &remote{
			cfg:   ServerConfig{Name: inv.Name},
			state: StateInvalid,
			err:   errors.New(inv.Reason),
		})
	}
	var wg sync.WaitGroup
	for _, sc := range cfg.Servers {
		s := &remote{
			cfg:    sc,
			info:   mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion},
			log:    opts.Logger.With("mcp_server", sc.Name),
			state:  StateDisabled,
			stderr: newLineLog(opts.Logger.With("mcp_server", sc.Name, "stream", "stderr")),
		}
		m.servers = append(m.servers, s)
		if !sc.Enabled {
			continue
		}
		wg.Go(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if err := s.connectLocked(ctx); err != nil {
				s.state, s.err = StateFailed, err
				s.log.Warn("MCP server not available", "err", err)
				return
			}
			s.state = StateConnected
		})
	}
	wg.Wait()
	m.buildTools()
	return m
}

// Tools returns the tools of the connected servers that their filters
// keep, named mcp__SERVER__TOOL, sorted by name.
func (m *Manager) Tools() []praxis.Tool { return slices.Clone(m.tools) }

// Servers reports every server of the configuration, in name order,
// including the invalid entries (StateInvalid, Error saying why).
func (m *Manager) Servers() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	slices.SortFunc(out, func(a, b ServerStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Close ends every connection and stops every process the stdio servers
// started, including their children. It waits for them to exit.
func (m *Manager) Close() error {
	var wg sync.WaitGroup
	errs := make([]error, len(m.servers))
	for i, s := range m.servers {
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// buildTools names the servers' tools and makes their praxis.Tool values.
func (m *Manager) buildTools() {
	var ids []ToolID
	for _, s := range m.servers {
		for _, t := range s.listed {
			if s.cfg.allows(t.Name) {
				ids = append(ids, ToolID{s.cfg.Name, t.Name})
			}
		}
	}
	names := QualifiedNames(ids)
	for _, s := range m.servers {
		for _, t := range s.listed {
			info := ToolInfo{Original: t.Name, Description: t.Description, Annotations: annotations(t.Annotations)}
			name, ok := names[ToolID{s.cfg.Name, t.Name}]
			if !ok {
				info.Skipped = "excluded by tools_allow / tools_deny"
				s.infos = append(s.infos, info)
				continue
			}
			info.Name = name
			pt, err := s.praxisTool(name, t)
			if err == nil {
				_, err = praxis.NewCatalog(pt) // the engine must accept the schema
			}
			if err != nil {
				info.Skipped = err.Error()
				s.log.Warn("MCP tool skipped", "tool", t.Name, "err", err)
			} else {
				m.tools = append(m.tools, pt)
			}
			s.infos = append(s.infos, info)
		}
	}
	slices.SortFunc(m.tools, func(a, b praxis.Tool) int { return strings.Compare(a.Name, b.Name) })
}

// remote is one configured server and its current connection.
type remote struct {
	cfg    ServerConfig
	info   mcp.Implementation
	log    *slog.Logger
	stderr *lineLog

	mu       sync.Mutex
	state    State
	err      error
	c        *conn
	gen      int // connection generation, bumped on every (re)connect
	restarts int
	server   mcp.Implementation // from the last handshake
	protocol string             // the protocol version of the last handshake
	listed   []tool             // the tools of the first connection
	infos    []ToolInfo
}

// connectLocked starts the server and performs the handshake. s.mu is held.
func (s *remote) connectLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()

	var t transport
	switch s.cfg.Transport {
	case TransportStdio:
		env := make([]string, 0, len(s.cfg.Env))
		for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
			env = append(env, k+"="+s.cfg.Env[k])
		}
		t = &stdioTransport{command: s.cfg.Command, args: s.cfg.Args, env: env, dir: s.cfg.Cwd, stderr: s.stderr, log: s.log}
	case TransportHTTP:
		t = &httpTransport{url: s.cfg.URL, headers: s.cfg.Headers, client: newHTTPClient(), log: s.log}
	case TransportSSE:
		t = &sseTransport{url: s.cfg.URL, headers: s.cfg.Headers, client: newHTTPClient(), log: s.log}
	default:
		return fmt.Errorf("unknown transport %q", s.cfg.Transport)
	}

	c := newConn(t, s.log, s.info)
	fail := func(what string, err error) error {
		_ = c.close()
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", s.cfg.Timeout)
		}
		if tail := s.stderr.tail(); tail != "" {
			return fmt.Errorf("%s: %w (stderr: %s)", what, err, tail)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := t.start(ctx, c); err != nil {
		return fail("starting", err)
	}
	// The legacy SSE transport predates server/discover.
	tryModern := s.cfg.Transport != TransportSSE
	if err := c.handshake(ctx, tryModern, min(discoverProbe, s.cfg.Timeout)); err != nil {
		return fail("initializing", err)
	}
	var tools []tool
	if c.caps.Tools != nil {
		var err error
		if tools, err = c.listTools(ctx); err != nil {
			return fail("listing tools", err)
		}
	}
	s.c, s.server, s.protocol = c, c.server, c.protocolVersion()
	s.gen++
	if s.listed == nil {
		slices.SortFunc(tools, func(a, b tool) int { return strings.Compare(a.Name, b.Name) })
		s.listed = tools
	}
	s.log.Info("MCP server connected", "server", c.server.Name, "version", c.server.Version,
		"protocol", c.protocolVersion(), "tools", len(tools))
	return nil
}

// discoverProbe bounds the wait for an answer to server/discover: a server
// of an older protocol may ignore the method instead of refusing it.
const discoverProbe = 5 * time.Second

// disconnectLocked closes the connection, ending a stdio server's
// process group, and returns what went wrong closing it. s.mu is held.
func (s *remote) disconnectLocked() error {
	if s.c == nil {
		return nil
	}
	err := s.c.close()
	s.c = nil
	return err
}

func (s *remote) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.disconnectLocked()
	if s.state == StateConnected {
		s.state = StateClosed
	}
	if err != nil {
		return fmt.Errorf("MCP server %q: close: %w", s.cfg.Name, err)
	}
	return nil
}

func (s *remote) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{
		Name:      s.cfg.Name,
		Transport: s.cfg.Transport,
		State:     s.state,
		Restarts:  s.restarts,
		Tools:     slices.Clone(s.infos),
	}
	if s.err != nil {
		st.Error = s.err.Error()
	}
	st.ServerName, st.ServerVersion, st.ProtocolVersion = s.server.Name, s.server.Version, s.protocol
	return st
}

// current returns the live connection and its generation.
func (s *remote) current() (*conn, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		msg := "it is " + string(s.state)
		if s.err != nil {
			msg += ": " + s.err.Error()
		}
		return nil, 0, praxis.Errorf(praxis.EUnavailable, "MCP server %q is not available; %s", s.cfg.Name, msg)
	}
	return s.c, s.gen, nil
}

// praxisTool turns an MCP tool into a praxis.Tool named name.
func (s *remote) praxisTool(name string, t tool) (praxis.Tool, error) {
	schema := t.InputSchema
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type": "object"}`)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = fmt.Sprintf("The tool %q of the MCP server %q.", t.Name, s.cfg.Name)
	}
	original := t.Name
	return praxis.Tool{
		Name:        name,
		Description: desc,
		InputSchema: schema,
		Annotations: annotations(t.Annotations),
		Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
			return s.call(ctx, original, args)
		},
	}, nil
}

// annotations converts MCP's hints. A missing hint takes the value MCP
// specifies as its default: not read-only, destructive, not idempotent,
// open-world. A read-only tool is never destructive.
func annotations(a mcp.ToolAnnotation) praxis.Annotations {
	get := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	ro := get(a.ReadOnlyHint, false)
	return praxis.Annotations{
		ReadOnly:    ro,
		Destructive: !ro && get(a.DestructiveHint, true),
		Idempotent:  get(a.IdempotentHint, false),
		OpenWorld:   get(a.OpenWorldHint, true),
	}
}

// call runs the server's tool called tool.
func (s *remote) call(ctx context.Context, tool string, args json.RawMessage) (praxis.Result, error) {
	c, gen, err := s.current()
	if err != nil {
		return praxis.Result{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := c.callTool(cctx, tool, args)
	switch {
	case err == nil:
		return convertResult(res), nil
	case ctx.Err() != nil:
		return praxis.Result{}, praxis.Errorf(praxis.ECancelled, "call to %s on MCP server %q cancelled", tool, s.cfg.Name)
	case cctx.Err() != nil:
		return praxis.Result{}, praxis.Errorf(praxis.ETimeout, "MCP server %q did not answer the call to %s within %s", s.cfg.Name, tool, s.cfg.Timeout).
			WithDetail("The server is still connected; the call may have taken effect. Raise \"timeout\" for this server in the MCP configuration if the tool is slow.")
	case isConnectionError(err):
		return praxis.Result{}, s.died(ctx, gen, tool, err)
	case isInvalidParams(err):
		return praxis.Result{}, praxis.Errorf(praxis.EInvalidArgs, "MCP server %q refused the arguments of %s: %v", s.cfg.Name, tool, err)
	default:
		return praxis.Result{}, praxis.Errorf(praxis.EUnavailable, "MCP server %q failed the call to %s: %v", s.cfg.Name, tool, err)
	}
}

// isInvalidParams reports whether err is the server's JSON-RPC refusal of
// a request's parameters.
func isInvalidParams(err error) bool {
	var re *rpcError
	return errors.As(err, &re) && re.Code == jsonrpc.CodeInvalidParams
}

// died handles a connection that failed during a call on generation gen:
// the first time, the server is restarted; the second, it is stopped for
// good. Either way the call fails with E_UNAVAILABLE saying what happened.
func (s *remote) died(ctx context.Context, gen int, tool string, cause error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	what := fmt.Sprintf("MCP server %q failed during the call to %s", s.cfg.Name, tool)
	if s.gen != gen || s.c == nil {
		// Another call saw the same failure and handled it.
		return praxis.Errorf(praxis.EUnavailable, "%s: %v", what, cause).
			WithDetail(s.afterDeathDetailLocked())
	}
	exitErr := s.disconnectLocked()
	reason := cause.Error()
	if exitErr != nil {
		reason = fmt.Sprintf("%v (%v)", cause, exitErr)
	}
	if tail := s.stderr.tail(); tail != "" {
		reason += "; its last stderr line: " + tail
	}
	if s.restarts >= 1 {
		s.state, s.err = StateFailed, fmt.Errorf("died again after a restart: %s", reason)
		s.log.Error("MCP server died again; not restarting", "err", reason)
		return praxis.Errorf(praxis.EUnavailable, "%s: %s", what, reason).WithDetail(s.afterDeathDetailLocked())
	}
	s.restarts++
	s.log.Warn("MCP server died; restarting it once", "err", reason)
	if err := s.connectLocked(context.WithoutCancel(ctx)); err != nil {
		s.state, s.err = StateFailed, fmt.Errorf("died (%s) and could not be restarted: %w", reason, err)
		return praxis.Errorf(praxis.EUnavailable, "%s: %s", what, reason).
			WithDetail("The restart failed: " + err.Error() + "\nIts tools are unavailable for the rest of the run.")
	}
	return praxis.Errorf(praxis.EUnavailable, "%s: %s", what, reason).WithDetail(s.afterDeathDetailLocked())
}

func (s *remote) afterDeathDetailLocked() string {
	if s.c != nil {
		return "The server was restarted; the call may have taken effect before the failure. Check before calling again."
	}
	return "The server had already been restarted once and is now stopped; its tools are unavailable for the rest of the run."
}

// convertResult turns an MCP tool result into a praxis.Result. Images
// are kept as images, and named in the text.
func convertResult(res *mcp.CallToolResult) praxis.Result {
	var parts []string
	var images []praxis.Image
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			parts = append(parts, c.Text)
		case mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes of base64]", c.MIMEType, len(c.Data)))
			images = append(images, praxis.Image{MIMEType: c.MIMEType, Data: c.Data})
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes of base64]", c.MIMEType, len(c.Data)))
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", c.Name, c.URI))
		case mcp.EmbeddedResource:
			switch r := c.Resource.(type) {
			case mcp.TextResourceContents:
				parts = append(parts, r.Text)
			case mcp.BlobResourceContents:
				parts = append(parts, fmt.Sprintf("[resource: %s %s, %d bytes of base64]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	text := strings.Join(parts, "\n")
	out := praxis.Result{Text: text, Structured: res.StructuredContent, Images: images}
	if text == "" && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Text = string(b)
		}
	}
	if res.IsError {
		out.IsError = true
		out.Code = praxis.EExternal
		out.Text = string(praxis.EExternal) + ": " + out.Text
	}
	return out
}
