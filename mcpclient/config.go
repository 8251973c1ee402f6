package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonerr"
)

// Transport kinds a server can use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
	TransportSSE   = "sse"  // the legacy HTTP+SSE transport of protocol 2024-11-05
)

// DefaultTimeout bounds one tool call, and the connection handshake, of a
// server whose configuration gives no timeout.
const DefaultTimeout = 60 * time.Second

// Config is a set of external MCP servers, sorted by name.
type Config struct {
	Servers []ServerConfig
	// Invalid are the entries that could not be used, sorted by name; the
	// others do not depend on them.
	Invalid []InvalidServer
}

// InvalidServer is a configuration entry that was left out, and why.
type InvalidServer struct {
	Name   string
	Reason string
}

// Vars are what the ${...} references of a configuration expand to.
type Vars struct {
	// Lookup finds environment variables: ${VAR} and ${env:VAR}.
	// os.LookupEnv when nil.
	Lookup func(string) (string, bool)
	// Workspace is ${workspaceFolder}; the current directory when empty.
	Workspace string
	// Home is ${userHome}; os.UserHomeDir when empty.
	Home string
}

// ServerConfig describes one external MCP server.
type ServerConfig struct {
	// Name is the key of the server in the configuration file.
	Name string
	// Transport is TransportStdio, TransportHTTP or TransportSSE.
	Transport string

	// Command, Args, Env and Cwd start a stdio server. Env is added to
	// Praxis's own environment.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// URL and Headers reach an HTTP server, over streamable HTTP or SSE.
	URL     string
	Headers map[string]string

	// Enabled is false for a server the configuration switches off.
	Enabled bool
	// ToolsAllow, if not empty, keeps only the tools whose names (as the
	// server gives them) match one of its glob patterns; ToolsDeny then
	// drops the tools matching one of its patterns. Patterns use path.Match
	// syntax.
	ToolsAllow []string
	ToolsDeny  []string
	// Timeout bounds each tool call and the connection handshake.
	Timeout time.Duration
}

// LoadConfig reads the configuration file at name; see ParseConfig.
func LoadConfig(name string, vars Vars) (*Config, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("MCP config %s does not exist", name)
	}
	if err != nil {
		return nil, fmt.Errorf("MCP config %s cannot be read: %w", name, errors.Unwrap(err))
	}
	cfg, err := ParseConfig(data, vars)
	if err != nil {
		return nil, fmt.Errorf("MCP config %s: %w", name, err)
	}
	return cfg, nil
}

// ParseConfig parses an MCP server configuration. Two layouts are accepted:
// the one of Claude Desktop and Claude Code, {"mcpServers": {NAME: {...}}},
// and the one of VS Code, {"servers": {NAME: {...}}}. A server has either
// "command" (with optional "args", "env", "cwd") or "url" (with optional
// "headers"); "type" may say "stdio", "http" ("streamable-http" and
// "streamableHttp" mean "http") or "sse" (the legacy HTTP+SSE transport).
// Praxis adds, per server: "enabled" (or "disabled"), "tools_allow",
// "tools_deny" and "timeout" (a duration such as "30s", or a number of
// seconds).
//
// In every string value, ${VAR} and ${env:VAR} are replaced with the
// environment variable VAR, ${VAR:-default} with VAR or, when VAR is unset
// or empty, with default; ${workspaceFolder} with the workspace,
// ${workspaceFolderBasename} with its last element, ${userHome} with the
// home directory, ${pathSeparator} and ${/} with "/". VS Code's
// ${input:ID}, which asks the user, is not supported.
//
// An entry that cannot be used (no command, an unknown type, an unset
// variable, ${input:...}, a value of the wrong kind) is left out and listed
// in Invalid with the reason; the other entries are unaffected. Only a file
// that is not a configuration at all is an error.
func ParseConfig(data []byte, vars Vars) (*Config, error) {
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("is not valid JSON (%s)", jsonerr.Describe(err))
	}
	if top.MCPServers != nil && top.Servers != nil {
		return nil, errors.New(`has both "mcpServers" and "servers"; keep one`)
	}
	raw := top.MCPServers
	if raw == nil {
		raw = top.Servers
	}
	if raw == nil {
		return nil, errors.New(`has no "mcpServers" (or "servers") object`)
	}
	cfg := &Config{}
	for name, r := range raw {
		sc, err := parseServer(name, r, vars)
		if err != nil {
			cfg.Invalid = append(cfg.Invalid, InvalidServer{Name: name, Reason: err.Error()})
			continue
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	slices.SortFunc(cfg.Servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(cfg.Invalid, func(a, b InvalidServer) int { return strings.Compare(a.Name, b.Name) })
	return cfg, nil
}

// rawServer is a server entry as written in the file.
type rawServer struct {
	Type       string            `json:"type"`
	Command    string            `json:"command"`
	Args       []string          `json:"args"`
	Env        map[string]string `json:"env"`
	Cwd        string            `json:"cwd"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers"`
	Enabled    *bool             `json:"enabled"`
	Disabled   *bool             `json:"disabled"`
	ToolsAllow []string          `json:"tools_allow"`
	ToolsDeny  []string          `json:"tools_deny"`
	Timeout    json.RawMessage   `json:"timeout"`
}

func parseServer(name string, data json.RawMessage, vars Vars) (ServerConfig, error) {
	var r rawServer
	if err := json.Unmarshal(data, &r); err != nil {
		return ServerConfig{}, errors.New(jsonerr.Describe(err))
	}
	if name == "" {
		return ServerConfig{}, errors.New("a server needs a name")
	}
	x := expander{vars: vars}
	sc := ServerConfig{
		Name:       name,
		Command:    x.expand(r.Command),
		Args:       x.expandAll(r.Args),
		Env:        x.expandMap(r.Env),
		Cwd:        x.expand(r.Cwd),
		URL:        x.expand(r.URL),
		Headers:    x.expandMap(r.Headers),
		Enabled:    true,
		ToolsAllow: r.ToolsAllow,
		ToolsDeny:  r.ToolsDeny,
		Timeout:    DefaultTimeout,
	}
	if x.err != nil {
		return ServerConfig{}, x.err
	}
	if r.Enabled != nil {
		sc.Enabled = *r.Enabled
	}
	if r.Disabled != nil && *r.Disabled {
		sc.Enabled = false
	}
	switch strings.ToLower(r.Type) {
	case "":
		if sc.URL != "" {
			sc.Transport = TransportHTTP
		} else {
			sc.Transport = TransportStdio
		}
	case "stdio":
		sc.Transport = TransportStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		sc.Transport = TransportHTTP
	case "sse":
		sc.Transport = TransportSSE
	default:
		return ServerConfig{}, fmt.Errorf("unknown type %q (want \"stdio\", \"http\" or \"sse\")", r.Type)
	}
	switch sc.Transport {
	case TransportStdio:
		if sc.Command == "" {
			return ServerConfig{}, errors.New(`a stdio server needs "command"`)
		}
		if sc.URL != "" {
			return ServerConfig{}, errors.New(`a server has "command" or "url", not both`)
		}
	case TransportHTTP, TransportSSE:
		if sc.URL == "" {
			return ServerConfig{}, fmt.Errorf(`an %s server needs "url"`, sc.Transport)
		}
		if !strings.HasPrefix(sc.URL, "http://") && !strings.HasPrefix(sc.URL, "https://") {
			return ServerConfig{}, fmt.Errorf("url %q: want an http:// or https:// URL", sc.URL)
		}
		if sc.Command != "" {
			return ServerConfig{}, errors.New(`a server has "command" or "url", not both`)
		}
	}
	for _, p := range slices.Concat(sc.ToolsAllow, sc.ToolsDeny) {
		if _, err := path.Match(p, ""); err != nil {
			return ServerConfig{}, fmt.Errorf("tool pattern %q: %w", p, err)
		}
	}
	if len(r.Timeout) > 0 && string(r.Timeout) != "null" {
		d, err := parseTimeout(r.Timeout)
		if err != nil {
			return ServerConfig{}, err
		}
		sc.Timeout = d
	}
	return sc, nil
}

// parseTimeout reads a duration string ("30s", "2m") or a number of seconds.
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	var d time.Duration
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		var perr error
		if d, perr = time.ParseDuration(s); perr != nil {
			if secs, ferr := strconv.ParseFloat(s, 64); ferr == nil {
				d = time.Duration(secs * float64(time.Second))
			} else {
				return 0, fmt.Errorf("timeout %q: want a duration such as \"30s\" or a number of seconds", s)
			}
		}
	} else {
		var secs float64
		if err := json.Unmarshal(raw, &secs); err != nil {
			return 0, fmt.Errorf("timeout %s: want a duration such as \"30s\" or a number of seconds", raw)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("timeout %s: must be positive", raw)
	}
	return d, nil
}

// allows reports whether the server's tool filters keep the tool called name.
func (sc *ServerConfig) allows(name string) bool {
	if len(sc.ToolsAllow) > 0 && !matchAny(sc.ToolsAllow, name) {
		return false
	}
	return !matchAny(sc.ToolsDeny, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// expander expands references, remembering the first error.
type expander struct {
	vars Vars
	err  error
}

func (x *expander) expandAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = x.expand(s)
	}
	return out
}

func (x *expander) expandMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = x.expand(v)
	}
	return out
}

func (x *expander) expand(s string) string {
	out, err := x.vars.Expand(s)
	if err != nil && x.err == nil {
		x.err = err
	}
	return out
}

// Expand replaces the references of s (see ParseConfig): ${VAR} and
// ${env:VAR} with the value of VAR, ${VAR:-default} with the value of VAR
// or, when VAR is unset or empty, default (itself not expanded), and VS
// Code's ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome},
// ${pathSeparator} and ${/}. A "$" not followed by "{" is kept as is. An
// unset VAR without a default, ${input:...}, an unterminated "${" and a
// name that is not [A-Za-z_][A-Za-z0-9_]* are errors.
func (v Vars) Expand(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	lookup := v.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		ref := rest[:end]
		s = rest[end+1:]
		switch ref {
		case "workspaceFolder", "workspaceRoot":
			b.WriteString(v.workspace())
			continue
		case "workspaceFolderBasename":
			b.WriteString(filepath.Base(v.workspace()))
			continue
		case "userHome":
			home := v.Home
			if home == "" {
				h, err := os.UserHomeDir()
				if err != nil {
					return "", errors.New("${userHome}: the home directory is unknown (set HOME)")
				}
				home = h
			}
			b.WriteString(home)
			continue
		case "pathSeparator", "/":
			b.WriteString(string(filepath.Separator))
			continue
		}
		if id, ok := strings.CutPrefix(ref, "input:"); ok {
			return "", fmt.Errorf("${input:%s} asks the user for a value, which Praxis does not support; set an environment variable and write ${env:NAME} instead", id)
		}
		ref = strings.TrimPrefix(ref, "env:")
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("bad variable reference ${%s}", ref)
		}
		val, ok := lookup(name)
		switch {
		case hasDef && val == "":
			val = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (set it, or write ${%s:-default} to give a default)", name, name)
		}
		b.WriteString(val)
	}
}

func (v Vars) workspace() string {
	if v.Workspace != "" {
		return v.Workspace
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
