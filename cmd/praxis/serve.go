package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

// httpFlag is --http: a boolean flag that may carry an address.
type httpFlag struct {
	set  bool
	addr string
}

func (f *httpFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.addr
}

func (f *httpFlag) Set(v string) error {
	f.set = true
	switch v {
	case "", "true":
		f.addr = mcpserver.DefaultHTTPAddr
	case "false":
		f.set = false
	default:
		f.addr = v
	}
	return nil
}

func (f *httpFlag) IsBoolFlag() bool { return true }

// stringsFlag collects a repeatable string flag.
type stringsFlag []string

func (f *stringsFlag) String() string     { return strings.Join(*f, ",") }
func (f *stringsFlag) Set(v string) error { *f = append(*f, v); return nil }

func runServe(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("serve", "[flags]",
		"Serves the engine's tools over MCP: on standard input and output by default, or over\n"+
			"streamable HTTP at /mcp with --http (default address "+mcpserver.DefaultHTTPAddr+").\n"+
			"Without --workspace, a client's first root becomes the workspace; without roots,\n"+
			"the current directory. Off loopback, HTTP requires a bearer token (--token or\n"+
			"PRAXIS_TOKEN).", io)
	ef := addEngineFlags(fs)
	var httpAddr httpFlag
	fs.Var(&httpAddr, "http", "serve streamable HTTP on `ADDR` (host:port; --http alone: "+mcpserver.DefaultHTTPAddr+")")
	token := fs.String("token", "", "bearer `token` HTTP clients must send (default $PRAXIS_TOKEN)")
	var origins stringsFlag
	fs.Var(&origins, "allow-origin", "an `origin` (scheme://host[:port]) allowed besides loopback ones; repeatable")
	maxSessions := fs.Int("max-sessions", mcpserver.DefaultMaxSessions, "most HTTP sessions open at once")
	idle := fs.Duration("session-idle", mcpserver.DefaultSessionIdle, "end HTTP sessions idle this long")
	maxBody := fs.Int("max-body", 0, "largest request `bytes` (default 4 MiB over HTTP, 96 MiB on stdio)")
	maxRequests := fs.Int("max-session-requests", mcpserver.DefaultMaxSessionRequests, "most requests one HTTP session has in flight")
	replay := fs.Int("replay-buffer", mcpserver.DefaultReplayBytes, "`bytes` of each HTTP session's events kept for clients that resume with Last-Event-ID")
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	log := newLogger(io)
	opts := mcpserver.Options{
		// Each workspace gets the sandbox policy its own config file sets
		// (a client's root has its own .praxis/config.yaml).
		Open: func(dir string) (*praxis.Engine, error) {
			wf := *ef
			wf.workspace = dir
			if err := wf.loadPolicy(); err != nil {
				return nil, err
			}
			return praxis.New(wf.options(log))
		},
		Workspace:      ef.workspace,
		FixedWorkspace: flagSet(fs, "workspace"),
		Version:        versionString(),
		Notes:          mcpserver.EngineNotes,
		Skills:         mcpserver.EngineSkills,
		Logger:         log,
	}
	srv, err := mcpserver.New(opts)
	if err != nil {
		fmt.Fprintf(io.err, "praxis serve: %v\n", err)
		return exitUsage
	}
	defer srv.Close()

	if !httpAddr.set {
		err = srv.ServeStdio(ctx, io.in, io.out, mcpserver.StdioOptions{MaxMessageBytes: *maxBody})
		if err != nil {
			fmt.Fprintf(io.err, "praxis serve: %v\n", err)
			return exitToolError
		}
		return exitOK
	}
	if *token == "" {
		*token = os.Getenv("PRAXIS_TOKEN")
	}
	hopts := mcpserver.HTTPOptions{
		Token:              *token,
		AllowedOrigins:     origins,
		MaxSessions:        *maxSessions,
		SessionIdle:        *idle,
		MaxBodyBytes:       *maxBody,
		MaxSessionRequests: *maxRequests,
		ReplayBytes:        *replay,
	}
	if hopts.Token == "" && !mcpserver.LoopbackAddr(httpAddr.addr) {
		fmt.Fprintf(io.err, "praxis serve: %v\n", mcpserver.ErrTokenRequired)
		return exitUsage
	}
	ln, err := net.Listen("tcp", httpAddr.addr)
	if err != nil {
		fmt.Fprintf(io.err, "praxis serve: %v\n", err)
		return exitUsage
	}
	err = srv.ServeStreamableHTTP(ctx, ln, hopts)
	switch {
	case errors.Is(err, mcpserver.ErrTokenRequired):
		fmt.Fprintf(io.err, "praxis serve: %v\n", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(io.err, "praxis serve: %v\n", err)
		return exitToolError
	}
	return exitOK
}

// flagSet reports whether the flag called name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
