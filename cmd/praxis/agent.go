package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/mcpclient"
	"github.com/praxis-tools/praxis/praxis"
)

// Exit statuses of "praxis agent" beyond the shared ones.
const (
	exitMaxSteps  = 3   // the run hit --max-steps
	exitTimeout   = 4   // the run hit --timeout
	exitCancelled = 130 // the run was interrupted (Ctrl-C), as shells report SIGINT
)

// agentExit maps a stop reason to the exit status.
func agentExit(stop agent.StopReason) int {
	if code, ok := harnessExit(stop); ok {
		return code
	}
	switch stop {
	case agent.StopCompleted:
		return exitOK
	case agent.StopMaxSteps:
		return exitMaxSteps
	case agent.StopTimeout:
		return exitTimeout
	case agent.StopCancelled:
		return exitCancelled
	default:
		return exitToolError
	}
}

func runAgent(ctx context.Context, args []string, io stdio) int {
	return runAgentEnv(ctx, args, io, os.Getenv)
}

func runAgentEnv(ctx context.Context, args []string, io stdio, getenv func(string) string) int {
	if len(args) > 0 && args[0] == "serve" {
		return runAgentServe(ctx, args[1:], io, getenv)
	}
	fs := newFlagSet("agent", "[flags] TASK",
		"Runs an agent on TASK (\"-\" reads it from standard input): a model that works in the\n"+
			"workspace through Praxis's tools and the tools of external MCP servers, until it answers\n"+
			"without calling a tool or a limit stops it. Without TASK on a terminal, it reads the turns\n"+
			"of a conversation from you (Ctrl-C cancels a turn, Ctrl-D ends). \"praxis agent serve\"\n"+
			"runs sessions over HTTP instead.\n\n"+
			"The provider is --provider, or else follows from the environment: ANTHROPIC_API_KEY\n"+
			"(anthropic), OPENAI_API_KEY or OPENAI_BASE_URL (openai, or any OpenAI-compatible server).\n\n"+
			"Exit status: 0 when the model finished, 1 on errors, 2 on usage errors, 3 when\n"+
			"--max-steps stopped the run, 4 when --timeout did, 130 when it was interrupted.", io)
	af := addAgentFlags(fs)
	var (
		asJSON       = fs.Bool("json", false, "print Praxis's own events as JSON Lines on standard output instead of a transcript")
		outputFormat = fs.String("output-format", "text", "the `format` of standard output: text (a transcript), json (one result object at the end) or stream-json (Claude Code's stream-json lines)")
	)
	hf := af.hf
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(io.err, "praxis agent: "+format+"\n", a...)
		return code
	}
	// Without a task, on a terminal, the user gives the turns.
	tty, _ := io.in.(*os.File)
	interactive := fs.NArg() == 0 && isTerminal(io.in) && *outputFormat == "text" && !*asJSON && hf.iterations == 0
	if fs.NArg() == 0 && !hf.resuming() && !interactive {
		return badArgs(fs, io, `needs a TASK ("-" reads it from standard input), or a terminal to read turns from`)
	}
	var task string
	var err error
	if fs.NArg() > 0 { // a resumed session may go on without a new prompt
		if task, err = agentTask(fs.Args(), io.in); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	format := *outputFormat
	switch {
	case format != "text" && format != "json" && format != "stream-json":
		return fail(exitUsage, "--output-format %q: want text, json or stream-json", format)
	case *asJSON && format != "text":
		return fail(exitUsage, "--json prints Praxis's events; it does not combine with --output-format %s", format)
	case *asJSON:
		format = "events"
	}
	st, code := af.setup(ctx, "agent", io, getenv)
	if st == nil {
		return code
	}
	defer st.close()
	var sink func(agent.Event)
	switch format {
	case "events":
		sink = agent.JSONLines(io.out)
	case "stream-json":
		sink = agent.ClaudeStreamJSON(io.out, agent.ClaudeInit{Cwd: st.eng.Workspace().Dir(), MCPServers: st.servers})
	case "json":
		sink = agent.ClaudeJSON(io.out)
	default:
		sink = agent.TranscriptHandler(io.out)
	}
	cfg := st.cfg
	cfg.OnEvent = sink
	var out agent.Outcome
	if interactive {
		out, code = hf.converse(ctx, cfg, st.eng.Workspace().Dir(), tty, io, st.log)
	} else {
		out, code = hf.runHarnessed(ctx, cfg, task, st.eng.Workspace().Dir(), format, io, st.log)
	}
	if code >= 0 {
		return code
	}
	if out.Err != nil {
		err := out.Err
		if out.StopReason == agent.StopMaxCost {
			err = fmt.Errorf("%w (--max-cost)", err) // the budget in the user's words
		}
		st.log.Log(ctx, levelFor(out.StopReason), "agent run ended", "run", out.RunID, "stop_reason", out.StopReason, "err", err)
	}
	return agentExit(out.StopReason)
}

// agentFlags are the flags of "praxis agent" that say how a run is set
// up, shared by "praxis agent serve" as its sessions' defaults.
type agentFlags struct {
	ef                                   *engineFlags
	hf                                   *harnessFlags
	providerName, model, baseURL, script *string
	mcpConfig, toolsFlag                 *string
	maxSteps, maxTokens, thinking        *int
	timeout, idleTimeout                 *time.Duration
	systemFile, systemAppend             *string
}

func addAgentFlags(fs *flag.FlagSet) *agentFlags {
	af := &agentFlags{ef: addEngineFlags(fs)}
	af.providerName = fs.String("provider", "", "the model `provider`: anthropic, openai or scripted (default: from the environment)")
	af.model = fs.String("model", "", "the `model` to use (default: claude-sonnet-4-5 or gpt-4.1)")
	af.baseURL = fs.String("base-url", "", "the API's base `URL` (default: $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL, else the provider's)")
	af.script = fs.String("script", "", "the script `file` the scripted provider replays")
	af.mcpConfig = fs.String("mcp-config", "", "a `file` of external MCP servers (mcpServers or VS Code servers format)")
	af.toolsFlag = fs.String("tools", "", "only these `tools`: comma-separated names or globs (e.g. read_file,mcp__github__*)")
	af.maxSteps = fs.Int("max-steps", agent.DefaultMaxSteps, "stop after this many model replies")
	af.timeout = fs.Duration("timeout", 0, "stop the run after this `duration` (e.g. 10m; default none)")
	af.maxTokens = fs.Int("max-output-tokens", 0, "bound each reply to this many output tokens (default: the provider's)")
	af.systemFile = fs.String("system", "", "replace the system prompt with this `file`")
	af.systemAppend = fs.String("system-append", "", "append this `file` to the system prompt")
	af.thinking = fs.Int("thinking", 0, "let the model think before it answers, with a budget of `N` tokens (Anthropic: at least 1024; OpenAI: sets reasoning_effort)")
	af.idleTimeout = fs.Duration("stream-idle-timeout", agent.DefaultIdleTimeout, "retry a model reply that sends nothing for this `duration`")
	af.hf = addHarnessFlags(fs)
	positive(fs, "max-steps")
	return af
}

// agentSetup is what the flags set up for runs: the configuration (without
// OnEvent), the engine, the external servers.
type agentSetup struct {
	cfg     agent.Config
	prices  agent.Prices
	eng     *praxis.Engine
	servers []agent.ClaudeMCPServer
	log     *slog.Logger
	closers []func()
}

func (st *agentSetup) close() {
	for _, c := range slices.Backward(st.closers) {
		c()
	}
}

// setup checks the flags and opens what runs need. It returns nil and the
// exit status when it cannot (the reason printed).
func (af *agentFlags) setup(ctx context.Context, cmd string, io stdio, getenv func(string) string) (*agentSetup, int) {
	fail := func(code int, format string, a ...any) (*agentSetup, int) {
		fmt.Fprintf(io.err, "praxis "+cmd+": "+format+"\n", a...)
		return nil, code
	}
	switch {
	case *af.maxSteps <= 0:
		return fail(exitUsage, "--max-steps must be positive")
	case *af.thinking < 0:
		return fail(exitUsage, "--thinking must be a number of tokens, 0 for none")
	case *af.idleTimeout <= 0:
		return fail(exitUsage, "--stream-idle-timeout must be positive, e.g. 2m")
	}
	prov, modelName, err := agent.NewProvider(agent.ProviderOptions{
		Name: *af.providerName, Model: *af.model, BaseURL: *af.baseURL, Script: *af.script, Getenv: getenv, IdleTimeout: *af.idleTimeout,
	})
	switch {
	case errors.Is(err, agent.ErrNoProvider):
		return fail(exitUsage, "no model provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with OPENAI_BASE_URL for another OpenAI-compatible server), or run a script with --provider scripted --script FILE")
	case errors.Is(err, agent.ErrNoScript):
		return fail(exitUsage, "--provider scripted needs --script FILE")
	case err != nil:
		if errors.As(err, new(*iofs.PathError)) {
			return fail(exitUsage, "%s", fileProblem("--script", err))
		}
		return fail(exitUsage, "%s", fileProblem("--script "+*af.script, err))
	}
	if prov.Name() == "anthropic" && *af.thinking > 0 && *af.thinking < 1024 {
		return fail(exitUsage, "--thinking %d: Anthropic's extended thinking needs a budget of at least 1024 tokens", *af.thinking)
	}
	prices, err := agentPrices(af.ef.config)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if _, ok := prices.Lookup(modelName); af.hf.maxCost > 0 && !ok {
		return fail(exitUsage, "--max-cost: there is no price for the model %s; add one under prices: in your config file", modelName)
	}
	if prov.Name() != "scripted" {
		prov = agent.WithRetry(prov, agent.RetryPolicy{}, nil)
	}

	st := &agentSetup{log: newLogger(io), prices: prices}
	eng := af.ef.open(cmd, io)
	if eng == nil {
		return nil, exitUsage
	}
	st.eng = eng
	st.closers = append(st.closers, func() { eng.Close() })
	af.hf.sandbox = eng.Sandbox()
	tools := eng.Catalog().Tools()
	if *af.mcpConfig != "" {
		cfg, err := mcpclient.LoadConfig(*af.mcpConfig, mcpclient.Vars{Workspace: eng.Workspace().Dir()})
		if err != nil {
			st.close()
			return fail(exitUsage, "%v", err)
		}
		m := mcpclient.Connect(ctx, cfg, mcpclient.Options{Logger: st.log})
		st.closers = append(st.closers, func() { m.Close() })
		tools = append(tools, m.Tools()...)
		for _, s := range m.Servers() {
			st.servers = append(st.servers, agent.ClaudeMCPServer{Name: s.Name, Status: string(s.State)})
		}
	}
	tools, err = selectTools(tools, *af.toolsFlag)
	if err != nil {
		st.close()
		return fail(exitUsage, "%v", err)
	}
	cat, err := praxis.NewCatalog(tools...)
	if err != nil {
		st.close()
		return fail(exitToolError, "%v", err)
	}
	system, err := agentSystemPrompt(ctx, eng, cat, *af.systemFile, *af.systemAppend)
	if err != nil {
		st.close()
		return fail(exitUsage, "%s", fileProblem("", err))
	}
	st.cfg = agent.Config{
		Provider: prov, Model: modelName, Tools: cat, System: system,
		MaxSteps: *af.maxSteps, Timeout: *af.timeout, MaxTokens: *af.maxTokens, Thinking: *af.thinking, Prices: prices,
		Logger: st.log,
	}
	return st, -1
}

func levelFor(stop agent.StopReason) slog.Level {
	if stop == agent.StopError {
		return slog.LevelError
	}
	return slog.LevelInfo
}

// agentPrices returns the model prices: the built-in table, then the
// prices sections of the user's config file and of the --config file
// (configFile). The workspace's config file is not read for prices: it
// comes with the code, and a price it lowered would loosen --max-cost.
func agentPrices(configFile string) (agent.Prices, error) {
	p := agent.DefaultPrices()
	for _, f := range []string{userConfigPath(), configFile} {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		if errors.Is(err, iofs.ErrNotExist) && f != configFile {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := p.ApplyConfig(data); err != nil {
			return nil, fmt.Errorf("config %s: %w", f, err)
		}
	}
	return p, nil
}

// agentTask joins the task arguments, or reads standard input for "-".
func agentTask(args []string, in io.Reader) (string, error) {
	task := strings.Join(args, " ")
	if task == "-" {
		b, err := io.ReadAll(in)
		if err != nil {
			return "", fmt.Errorf("reading the task from standard input: %w", err)
		}
		task = string(b)
	}
	if strings.TrimSpace(task) == "" {
		return "", errors.New("the task is empty")
	}
	return task, nil
}

// selectTools keeps the tools whose names match one of the comma-separated
// names or globs of spec; an empty spec keeps all. A pattern that matches no
// tool is an error, as it is most likely a typo.
func selectTools(tools []praxis.Tool, spec string) ([]praxis.Tool, error) {
	if strings.TrimSpace(spec) == "" {
		return tools, nil
	}
	var pats []string
	for p := range strings.SplitSeq(spec, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("--tools: bad pattern %q: %v", p, err)
			}
			pats = append(pats, p)
		}
	}
	used := make(map[string]bool)
	var out []praxis.Tool
	for _, t := range tools {
		keep := false
		for _, p := range pats {
			if ok, _ := path.Match(p, t.Name); ok {
				keep, used[p] = true, true
			}
		}
		if keep {
			out = append(out, t)
		}
	}
	for _, p := range pats {
		if !used[p] {
			var names []string
			for _, t := range tools {
				names = append(names, t.Name)
			}
			return nil, fmt.Errorf("--tools: %q matches no tool; the tools are: %s", p, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// agentSystemPrompt builds the system prompt: the default one, or the
// replacement file, then the appended file.
func agentSystemPrompt(ctx context.Context, eng *praxis.Engine, cat *praxis.Catalog, replace, appendFile string) (string, error) {
	var system string
	if replace != "" {
		b, err := os.ReadFile(replace)
		if err != nil {
			return "", errors.New(fileProblem("--system", err))
		}
		system = string(b)
	} else {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		system = agent.SystemPrompt(agent.GatherPromptInfo(pctx, eng.Workspace().Dir(), cat))
	}
	if appendFile != "" {
		b, err := os.ReadFile(appendFile)
		if err != nil {
			return "", errors.New(fileProblem("--system-append", err))
		}
		system = strings.TrimRight(system, "\n") + "\n\n" + string(b)
	}
	return system, nil
}
