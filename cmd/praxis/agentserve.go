package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/service"
	"github.com/praxis-tools/praxis/internal/httpguard"
)

// tighter returns the tighter of two budgets, where 0 is none.
func tighter[N int | float64](flag, req N) N {
	if req > 0 && (flag == 0 || req < flag) {
		return req
	}
	return flag
}

func runAgentServe(ctx context.Context, args []string, io stdio, getenv func(string) string) int {
	fs := newFlagSet("agent serve", "[flags]",
		"Runs agent sessions as an HTTP service (default address "+service.DefaultAddr+"): the sessions API\n"+
			"under /v1/sessions, their events as server-sent events (native, vercel, openai or\n"+
			"anthropic), the drop-in endpoints /v1/chat, /v1/chat/completions and /v1/messages, and\n"+
			"a page to watch and steer sessions at /. The agent's flags are the sessions' defaults.\n"+
			"Sessions are journaled under the workspace's .praxis/sessions/, so a restarted service\n"+
			"lists and continues them. Off loopback, a bearer token is required (--token or\n"+
			"PRAXIS_TOKEN).", io)
	af := addAgentFlags(fs)
	httpAddr := httpFlag{def: service.DefaultAddr}
	fs.Var(&httpAddr, "http", "serve on `ADDR` (host:port; default "+service.DefaultAddr+")")
	token := fs.String("token", "", "bearer `token` clients must send (default $PRAXIS_TOKEN)")
	var origins stringsFlag
	fs.Var(&origins, "allow-origin", "an `origin` (scheme://host[:port]) allowed besides loopback ones; repeatable")
	maxBody := fs.Int("max-body", service.DefaultMaxBodyBytes, "largest request `bytes`")
	positive(fs, "max-body")
	check(fs, "allow-origin", func(o string, _ any) error { return checkOrigin(o) })
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return noArgs(fs, io)
	}
	hf := af.hf
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(io.err, "praxis agent serve: "+format+"\n", a...)
		return code
	}
	switch {
	case hf.resuming() || hf.iterations > 0 || hf.noJournal:
		return fail(exitUsage, "--resume, --continue, --iterations and --no-journal are for one run; the service's sessions are journaled and continued over HTTP")
	case len(hf.ask) > 0:
		return fail(exitUsage, "--ask needs a terminal to ask on; the service has none (use --allow or --deny)")
	}
	addr := service.DefaultAddr
	if httpAddr.set {
		addr = httpAddr.addr
	}
	if *token == "" {
		*token = getenv("PRAXIS_TOKEN")
	}
	if *token == "" && !httpguard.LoopbackAddr(addr) {
		return fail(exitUsage, "serving on %s, off loopback, requires a bearer token: give --token or set PRAXIS_TOKEN", addr)
	}
	st, code := af.setup(ctx, "agent serve", io, getenv)
	if st == nil {
		return code
	}
	defer st.close()
	ws, err := filepath.Abs(st.eng.Workspace().Dir())
	if err != nil {
		return fail(exitToolError, "%v", err)
	}
	dir := sessionsDir(ws)
	if err := insideWorkspace(ws, dir); err != nil {
		return fail(exitToolError, "the sessions directory: %v", err)
	}
	h, err := hf.harness(st.cfg.Provider.Name(), ws, toolNames(st.cfg), false, io, st.log)
	if err != nil {
		return fail(exitUsage, "%s", fileProblem("the settings file", err))
	}
	base := st.cfg
	setup := func(o service.SessionOptions) (agent.Config, *agent.Harness, error) {
		// A request may tighten the service's budgets, never loosen them.
		cfg, hh := base, *h
		if o.Model != "" {
			cfg.Model = o.Model
		}
		cfg.MaxSteps = tighter(cfg.MaxSteps, o.MaxSteps)
		hh.MaxToolCalls = tighter(hh.MaxToolCalls, o.MaxToolCalls)
		hh.MaxTokens = tighter(hh.MaxTokens, o.MaxTokens)
		hh.MaxCost = tighter(hh.MaxCost, o.MaxCost)
		if _, ok := st.prices.Lookup(cfg.Model); hh.MaxCost > 0 && !ok {
			return cfg, nil, fmt.Errorf("max_cost: there is no price for the model %s", cfg.Model)
		}
		return cfg, &hh, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	st.log.Info("praxis agent serve", "url", "http://"+ln.Addr().String()+"/", "workspace", ws, "provider", base.Provider.Name(), "model", base.Model, "sandbox", st.eng.Sandbox())
	opts := service.Options{
		Dir: dir, Setup: setup, Token: *token, AllowedOrigins: origins, MaxBodyBytes: *maxBody, Logger: st.log, Workspace: ws,
	}
	if hf.git.set {
		opts.Git = hf.git.mode
	}
	err = service.Serve(ctx, ln, opts)
	switch {
	case errors.Is(err, service.ErrTokenRequired):
		return fail(exitUsage, "%v", err)
	case err != nil:
		return fail(exitToolError, "%v", err)
	}
	return exitOK
}
