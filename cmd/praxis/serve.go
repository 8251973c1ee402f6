package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

// httpFlag is --http: a boolean flag that may carry an address.
type httpFlag struct {
	set  bool
	addr string
	// def is the address of --http alone; empty for mcpserver's default.
	def string
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
		f.addr = cmp.Or(f.def, mcpserver.DefaultHTTPAddr)
	case "false":
		f.set = false
	default:
		host, port, err := net.SplitHostPort(v)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsAny(host, "/ ") {
			return fmt.Errorf("wants HOST:PORT, such as %s or :8765", mcpserver.DefaultHTTPAddr)
		}
		f.addr = v
	}
	return nil
}

// checkOrigin checks an --allow-origin value: scheme://host[:port], as a
// browser sends it in the Origin header.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("wants an origin: scheme://host[:port], such as https://app.example.com")
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
	atLeast(fs, "max-sessions", 1)
	positive(fs, "session-idle")
	positive(fs, "max-body")
	positive(fs, "max-session-requests")
	atLeast(fs, "replay-buffer", 0)
	check(fs, "allow-origin", func(o string, _ any) error { return checkOrigin(o) })
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	if fs.NArg() > 0 {
		if httpAddr.set && httpAddr.addr == mcpserver.DefaultHTTPAddr {
			return badArgs(fs, io, "takes no arguments, and was given %q (an address is written --http=ADDR)", strings.Join(fs.Args(), " "))
		}
		return noArgs(fs, io)
	}
	log := newLogger(io)
	var tools atomic.Int64 // the default workspace's, the first opened
	var opened atomic.Bool
	opts := mcpserver.Options{
		// Each workspace gets the sandbox policy its own config file sets
		// (a client's root has its own .praxis/config.yaml). The first
		// opened, by mcpserver.New, is the default workspace, whose policy
		// parseFlags has just loaded.
		Open: func(dir string) (*praxis.Engine, error) {
			wf := *ef
			wf.workspace = dir
			if opened.Swap(true) {
				if err := wf.loadPolicy(); err != nil {
					return nil, err
				}
			}
			eng, err := praxis.New(wf.options(log))
			if err == nil {
				tools.CompareAndSwap(0, int64(len(eng.Catalog().Tools())))
			}
			return eng, err
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
	transport := "stdio"
	if httpAddr.set {
		transport = "http " + httpAddr.addr
	}
	// The start line names the sandbox mode. Over HTTP, a service that
	// runs for long, it names the mode actually running, which under
	// isolation auto means probing bwrap (tens of milliseconds, processes
	// of its own): the line is written once the probe is done, while the
	// server already serves. On stdio, where clients start a server for
	// each session and often only to list its tools, an idle server starts
	// no process: the line, written once the client's first requests are
	// likely answered, says what is known without a probe, and bwrap is
	// probed at the first command (a fallback to no isolation is logged
	// then). Either way the line is written before serve returns.
	var once sync.Once
	startLine := func(sandbox func() string) func() {
		return func() {
			once.Do(func() {
				log.Info("praxis serve", "transport", transport, "workspace", srv.Workspace(), "sandbox", sandbox(), "tools", tools.Load())
			})
		}
	}

	if !httpAddr.set {
		line := startLine(srv.SandboxKnown)
		later := time.AfterFunc(stdioLineDelay, line)
		defer func() {
			later.Stop()
			line()
		}()
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
		fmt.Fprintf(io.err, "praxis serve: serving HTTP on %s, off loopback, requires a bearer token: give --token or set PRAXIS_TOKEN\n", httpAddr.addr)
		return exitUsage
	}
	ln, err := net.Listen("tcp", httpAddr.addr)
	if err != nil {
		fmt.Fprintf(io.err, "praxis serve: %v\n", err)
		return exitUsage
	}
	line := startLine(srv.Sandbox)
	go line()
	defer line()
	err = srv.ServeStreamableHTTP(ctx, ln, hopts)
	switch {
	case errors.Is(err, mcpserver.ErrTokenRequired):
		fmt.Fprintf(io.err, "praxis serve: %v: give --token or set PRAXIS_TOKEN\n", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(io.err, "praxis serve: %v\n", err)
		return exitToolError
	}
	return exitOK
}

// stdioLineDelay is how long serve on stdio waits before it writes its
// start line: a client's initialize and tools/list are answered within
// tens of milliseconds of the start.
const stdioLineDelay = 100 * time.Millisecond

// flagSet reports whether the flag called name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
