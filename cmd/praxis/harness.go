package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/checkpoint"
	"github.com/praxis-tools/praxis/agent/doomloop"
	"github.com/praxis-tools/praxis/agent/hooks"
	"github.com/praxis-tools/praxis/agent/journal"
	"github.com/praxis-tools/praxis/agent/permission"
)

// Exit statuses of "praxis agent" for the harness controls' stop reasons.
const (
	exitMaxTokens     = 5
	exitMaxToolCalls  = 6
	exitDoomLoop      = 7
	exitGateFailed    = 8
	exitStoppedByHook = 9
	exitMaxIterations = 10
	exitMaxCost       = 11
)

// harnessExit maps the harness controls' stop reasons to exit statuses.
func harnessExit(stop agent.StopReason) (int, bool) {
	switch stop {
	case agent.StopMaxTokens:
		return exitMaxTokens, true
	case agent.StopMaxToolCalls:
		return exitMaxToolCalls, true
	case agent.StopDoomLoop:
		return exitDoomLoop, true
	case agent.StopGateFailed:
		return exitGateFailed, true
	case agent.StopHook:
		return exitStoppedByHook, true
	case agent.StopMaxIterations:
		return exitMaxIterations, true
	case agent.StopMaxCost:
		return exitMaxCost, true
	}
	return 0, false
}

// sessionsDir is where a workspace's session journals live.
func sessionsDir(workspace string) string {
	return filepath.Join(workspace, ".praxis", "sessions")
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// harnessFlags are the flags of the harness controls of "praxis agent".
type harnessFlags struct {
	// sandbox describes how the engine runs commands (the isolation
	// actually in force), said when a session starts.
	sandbox                 string
	maxTokens, maxToolCalls int
	maxCost                 float64
	gates                   stringList
	maxGateAttempts         int
	hooksFile, permsFile    string
	settingsFile            string
	allow, ask, deny        stringList
	doomThreshold           int
	doomExempt              string
	contextWindow           int
	compactAt               float64
	keepRecent              int
	maxToolResult           int
	resume                  string
	cont                    bool
	noJournal               bool
	iterations              int
	progress                string
	git                     gitFlag
}

// gitFlag is --git: a boolean flag that may name a mode (stash,
// allow-dirty).
type gitFlag struct {
	set  bool
	mode checkpoint.Mode
}

func (f *gitFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return string(f.mode)
}

func (f *gitFlag) Set(v string) error {
	if v == "false" {
		f.set = false
		return nil
	}
	m, err := checkpoint.ParseMode(v)
	if err != nil {
		return err
	}
	f.set, f.mode = true, m
	return nil
}

func (f *gitFlag) IsBoolFlag() bool { return true }

func addHarnessFlags(fs *flag.FlagSet) *harnessFlags {
	hf := &harnessFlags{}
	fs.IntVar(&hf.maxTokens, "max-tokens", 0, "stop when input and output tokens summed over the run reach `N` (default none)")
	fs.IntVar(&hf.maxToolCalls, "max-tool-calls", 0, "stop when the model wants more than `N` tool calls (default none)")
	fs.Float64Var(&hf.maxCost, "max-cost", 0, "stop when the run's cost reaches `USD` dollars, at the model's price (default none)")
	fs.Var(&hf.gates, "gate", "a `command` that must pass before the run completes (repeatable; run in order under the sandbox)")
	fs.IntVar(&hf.maxGateAttempts, "max-gate-attempts", 3, "stop with gate_failed after the gates failed `N` times")
	fs.StringVar(&hf.hooksFile, "hooks", "", "a hooks config `file` (JSON or YAML, Claude Code format: a settings.json works)")
	fs.StringVar(&hf.settingsFile, "settings", "", "a Claude Code style settings `file` whose hooks and permissions apply (JSON or YAML); the workspace's .claude/settings.json and .claude/settings.local.json are read too")
	fs.StringVar(&hf.permsFile, "permissions", "", "a `file` with a permissions object of allow/ask/deny rules (JSON or YAML)")
	fs.Var(&hf.allow, "allow", "allow calls matching `RULE`, e.g. 'bash(go test*)' (repeatable)")
	fs.Var(&hf.ask, "ask", "ask before calls matching `RULE`; refused without a terminal (repeatable)")
	fs.Var(&hf.deny, "deny", "refuse calls matching `RULE`, e.g. 'edit_file(**/*.lock)'; deny wins (repeatable)")
	fs.IntVar(&hf.doomThreshold, "doom-loop", doomloop.DefaultThreshold, "warn, then stop, when the model repeats itself `N` times (0: off)")
	fs.StringVar(&hf.doomExempt, "doom-exempt", "job_output", "comma-separated `globs` of polling tools the loop detector ignores")
	fs.IntVar(&hf.contextWindow, "context-window", -1, "the model's context window in `tokens` (default: 200000 for anthropic, 128000 for openai, off for scripted; 0: no compaction)")
	fs.Float64Var(&hf.compactAt, "compact-at", 0.8, "compact the conversation before it exceeds this `fraction` of the context window")
	fs.IntVar(&hf.keepRecent, "keep-recent", 4, "keep the last `N` messages verbatim when compacting")
	fs.IntVar(&hf.maxToolResult, "max-tool-result", agent.DefaultMaxToolResult, "cut tool results longer than `N` bytes, saving the full text under .praxis/tool-results/")
	fs.StringVar(&hf.resume, "resume", "", "go on with session `ID` from its journal (TASK, if given, is the next prompt)")
	fs.BoolVar(&hf.cont, "continue", false, "go on with the latest session of the workspace")
	fs.BoolVar(&hf.noJournal, "no-journal", false, "do not write the session journal under .praxis/sessions/")
	fs.IntVar(&hf.iterations, "iterations", 0, "run up to `N` sessions with fresh contexts, each doing one unit of work (needs --progress)")
	fs.Var(&hf.git, "git", "work on branch praxis/<session> and commit after each step that changed files; refuses uncommitted changes unless --git=stash or --git=allow-dirty")
	fs.StringVar(&hf.progress, "progress", "", "the progress `file` the sessions of --iterations read and update")
	atLeast(fs, "max-gate-attempts", 1)
	check(fs, "compact-at", func(_ string, v any) error {
		if f, _ := v.(float64); f <= 0 || f > 1 {
			return errors.New("must be more than 0 and at most 1 (a fraction of the context window)")
		}
		return nil
	})
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(fs.Output(), "\nThe harness controls' exit statuses: 5 max_tokens, 6 max_tool_calls, 7 doom_loop,\n"+
			"8 gate_failed, 9 stopped_by_hook, 10 max_iterations, 11 max_cost. Sessions are journaled\n"+
			"under .praxis/sessions/ (see \"praxis sessions\").")
	}
	return hf
}

// resuming reports whether the run goes on with a stored session.
func (hf *harnessFlags) resuming() bool { return hf.resume != "" || hf.cont }

// check reports flag combinations that make no sense.
func (hf *harnessFlags) check() error {
	switch {
	case hf.resume != "" && hf.cont:
		return errors.New("--resume and --continue exclude each other")
	case hf.resuming() && hf.noJournal:
		return errors.New("--resume and --continue need the journal; drop --no-journal")
	case hf.resuming() && hf.iterations > 0:
		return errors.New("--iterations starts fresh sessions; it does not combine with --resume or --continue")
	case hf.iterations > 0 && hf.progress == "":
		return errors.New("--iterations needs --progress FILE")
	case hf.iterations < 0 || hf.maxTokens < 0 || hf.maxToolCalls < 0 || hf.maxCost < 0 || hf.doomThreshold < 0 || hf.keepRecent < 0 || hf.maxToolResult < 0:
		return errors.New("budgets and counts cannot be negative")
	case hf.maxGateAttempts < 1:
		return errors.New("--max-gate-attempts must be at least 1")
	case hf.compactAt <= 0 || hf.compactAt > 1:
		return errors.New("--compact-at must be in (0, 1]")
	}
	return nil
}

// harness builds the controls the flags describe.
// tools are the names of the session's tools: rules and hook matchers
// that name none of them are warned of.
func (hf *harnessFlags) harness(provider, workspace string, tools []string, interactive bool, io stdio, log *slog.Logger) (*agent.Harness, error) {
	if err := hf.check(); err != nil {
		return nil, err
	}
	h := &agent.Harness{
		MaxTokens: hf.maxTokens, MaxToolCalls: hf.maxToolCalls, MaxCost: hf.maxCost,
		Gates: hf.gates, MaxGateAttempts: hf.maxGateAttempts,
		MaxToolResult: hf.maxToolResult, Workspace: workspace,
	}
	if hf.doomThreshold > 0 {
		var exempt []string
		for g := range strings.SplitSeq(hf.doomExempt, ",") {
			if g = strings.TrimSpace(g); g != "" {
				exempt = append(exempt, g)
			}
		}
		h.DoomLoop = &doomloop.Config{Threshold: hf.doomThreshold, Exempt: exempt}
	}
	window := hf.contextWindow
	if window < 0 {
		switch provider {
		case "anthropic":
			window = 200000
		case "openai":
			window = 128000
		default:
			window = 0
		}
	}
	h.Compaction = agent.Compaction{ContextWindow: window, Threshold: hf.compactAt, KeepRecent: hf.keepRecent}

	var hookConfigs []*hooks.Config
	var rules permission.Rules
	for _, f := range hf.settingsFiles(workspace, io) {
		if f.hooks {
			cfg, err := hooks.Load(f.name)
			if err != nil {
				return nil, err
			}
			for _, what := range cfg.Skipped {
				log.Warn("hooks: not used", "file", f.name, "what", what)
			}
			hookConfigs = append(hookConfigs, cfg)
		}
		if f.perms {
			r, err := permission.Load(f.name)
			if err != nil {
				return nil, err
			}
			rules.Allow = append(rules.Allow, r.Allow...)
			rules.Ask = append(rules.Ask, r.Ask...)
			rules.Deny = append(rules.Deny, r.Deny...)
		}
	}
	if len(hookConfigs) > 0 {
		cfg := hooks.Merge(hookConfigs...)
		for _, what := range cfg.Unused(tools) {
			log.Warn("hooks: " + what)
		}
		h.Hooks = &hooks.Runner{Config: cfg, Dir: workspace, Logger: log,
			Env: []string{"PRAXIS_PROJECT_DIR=" + workspace, "CLAUDE_PROJECT_DIR=" + workspace}}
	}
	rules.Allow = append(rules.Allow, hf.allow...)
	rules.Ask = append(rules.Ask, hf.ask...)
	rules.Deny = append(rules.Deny, hf.deny...)
	if len(rules.Allow)+len(rules.Ask)+len(rules.Deny) > 0 {
		p, err := permission.New(rules, workspace)
		if err != nil {
			return nil, err
		}
		h.Permissions = p
		for _, what := range p.Unused(tools) {
			log.Warn("permissions: " + what)
		}
		if interactive {
			h.Prompter = &permission.Terminal{In: io.in, Out: io.err}
		}
	}
	return h, nil
}

// claudeSettings are the Claude Code settings files of a workspace, read
// when present, in the order Claude Code reads them.
var claudeSettings = []string{".claude/settings.json", ".claude/settings.local.json"}

// settingsFile is a file of hooks, permissions or both.
type settingsFile struct {
	name         string
	hooks, perms bool
}

// settingsFiles lists the files whose hooks and permissions apply: the
// workspace's Claude Code settings files that exist (each announced on
// stderr), then --settings, --hooks and --permissions.
func (hf *harnessFlags) settingsFiles(workspace string, io stdio) []settingsFile {
	var out []settingsFile
	for _, rel := range claudeSettings {
		name := filepath.Join(workspace, filepath.FromSlash(rel))
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
			fmt.Fprintf(io.err, "praxis agent: reading hooks and permissions from %s\n", rel)
			out = append(out, settingsFile{name, true, true})
		}
	}
	if hf.settingsFile != "" {
		out = append(out, settingsFile{hf.settingsFile, true, true})
	}
	if hf.hooksFile != "" {
		out = append(out, settingsFile{name: hf.hooksFile, hooks: true})
	}
	if hf.permsFile != "" {
		out = append(out, settingsFile{name: hf.permsFile, perms: true})
	}
	return out
}

// isTerminal reports whether r is a terminal (a character device).
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runHarnessed runs the agent under the harness controls: one session
// (new or resumed, journaled) or, with --iterations, a series of them,
// which with the events format (--json) ends with a summary object. It
// returns the outcome, or an exit status >= 0 when the run could not
// start (the reason already printed). format is the output format: text,
// json, stream-json or events.
func (hf *harnessFlags) runHarnessed(ctx context.Context, cfg agent.Config, task, workspace, format string, io stdio, log *slog.Logger) (agent.Outcome, int) {
	fail := func(code int, format string, a ...any) (agent.Outcome, int) {
		fmt.Fprintf(io.err, "praxis agent: "+format+"\n", a...)
		return agent.Outcome{}, code
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	h, err := hf.harness(cfg.Provider.Name(), ws, toolNames(cfg), format == "text" && isTerminal(io.in), io, log)
	if err != nil {
		return fail(exitUsage, "%s", fileProblem("the settings file", err))
	}
	if hf.iterations == 0 {
		return hf.session(ctx, cfg, h, task, io, log)
	}

	progress := hf.progress
	if !filepath.IsAbs(progress) {
		progress = filepath.Join(ws, progress)
	}
	if rel, err := filepath.Rel(ws, progress); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fail(exitUsage, "--progress %s is outside the workspace, where the model cannot update it", hf.progress)
	}
	var (
		code     = -1
		sessions []agent.Outcome
	)
	out, n := agent.Iterations(ctx, hf.iterations, task, hf.progress, func(ctx context.Context, i int, prompt string) (agent.Outcome, bool) {
		before, _ := os.ReadFile(progress)
		hi := *h
		if h.MaxCost > 0 { // --max-cost bounds the series: what is left of it
			var spent float64
			for _, o := range sessions {
				spent += o.CostUSD
			}
			if hi.MaxCost = h.MaxCost - spent; hi.MaxCost <= 0 {
				return agent.Outcome{StopReason: agent.StopMaxCost, Priced: true,
					Err: fmt.Errorf("the sessions so far cost $%.4f, reaching the budget of $%.4f (--max-cost)", spent, h.MaxCost)}, false
			}
		}
		hi.BeforeStop = func(context.Context) string {
			if now, _ := os.ReadFile(progress); bytes.Equal(now, before) {
				return fmt.Sprintf("Before you end this session, update the progress file %s: what this session did, what you learned and what comes next.", hf.progress)
			}
			return ""
		}
		fmt.Fprintf(io.err, "praxis agent: iteration %d of %d\n", i, hf.iterations)
		ci := cfg
		ci.RunID = ""
		o, c := hf.session(ctx, ci, &hi, prompt, io, log)
		if c >= 0 {
			code = c
			o.StopReason = agent.StopError
		}
		sessions = append(sessions, o)
		after, _ := os.ReadFile(progress)
		return o, agent.DeclaredComplete(string(after))
	})
	if code >= 0 {
		return out, code
	}
	fmt.Fprintf(io.err, "praxis agent: %d sessions, stop reason %s\n", n, out.StopReason)
	if format == "events" {
		enc := json.NewEncoder(io.out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(iterationsSummary(sessions, out))
	}
	return out, -1
}

// IterationsSummary is the last line of --iterations --json: the series
// of sessions as a whole.
type IterationsSummary struct {
	Type       string           `json:"type"` // "iterations_summary"
	StopReason agent.StopReason `json:"stop_reason"`
	Error      string           `json:"error,omitempty"`
	// Sessions are the sessions' IDs, in order.
	Sessions  []string    `json:"sessions"`
	Steps     int         `json:"steps"`
	ToolCalls int         `json:"tool_calls"`
	Usage     agent.Usage `json:"usage"`
	// CostUSD is the series' cost, when the model has a price.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	Final   string   `json:"final,omitempty"`
}

func iterationsSummary(sessions []agent.Outcome, last agent.Outcome) IterationsSummary {
	s := IterationsSummary{Type: "iterations_summary", StopReason: last.StopReason, Sessions: []string{}, Final: last.Final}
	if last.Err != nil {
		s.Error = last.Err.Error()
	}
	var cost float64
	priced := len(sessions) > 0
	for _, o := range sessions {
		if o.RunID != "" {
			s.Sessions = append(s.Sessions, o.RunID)
		}
		s.Steps += o.Steps
		s.ToolCalls += o.ToolCalls
		s.Usage = s.Usage.Add(o.Usage)
		cost += o.CostUSD
		priced = priced && o.Priced
	}
	if priced {
		s.CostUSD = &cost
	}
	return s
}

// session runs one session: a new one with its journal, or the one
// --resume or --continue names.
func (hf *harnessFlags) session(ctx context.Context, cfg agent.Config, h *agent.Harness, task string, io stdio, log *slog.Logger) (agent.Outcome, int) {
	fail := func(code int, format string, a ...any) (agent.Outcome, int) {
		fmt.Fprintf(io.err, "praxis agent: "+format+"\n", a...)
		return agent.Outcome{}, code
	}
	dir := sessionsDir(h.Workspace)
	if !hf.noJournal {
		if err := insideWorkspace(h.Workspace, dir); err != nil {
			return fail(exitToolError, "the sessions directory: %v (or run with --no-journal)", err)
		}
	}
	so := agent.SessionOptions{ID: cfg.RunID, Resume: hf.resuming(), Logger: log}
	if !hf.noJournal {
		so.Dir = dir
	}
	if hf.cont {
		latest, err := journal.Latest(dir)
		if err != nil {
			return fail(exitUsage, "--continue: %v", err)
		}
		so.ID = latest
	} else if hf.resume != "" {
		so.ID = hf.resume
	}
	if hf.git.set {
		if so.ID == "" {
			so.ID = agent.NewRunID()
		}
		var repo *checkpoint.Repo
		var err error
		if so.Resume {
			repo, err = checkpoint.Resume(ctx, h.Workspace, so.ID)
		} else {
			repo, err = checkpoint.Start(ctx, h.Workspace, so.ID, hf.git.mode, "")
		}
		switch {
		case errors.Is(err, checkpoint.ErrNotRepo) || errors.Is(err, checkpoint.ErrDirty):
			return fail(exitUsage, "--git: %v", err)
		case err != nil:
			return fail(exitToolError, "--git: %v", err)
		}
		hg := *h
		hg.Checkpoint, hg.Branch = repo.Commit, repo.Branch
		h = &hg
		fmt.Fprintf(io.err, "praxis agent: checkpoints on branch %s\n", repo.Branch)
	}
	so.Started = func(id, path string) {
		if path != "" {
			fmt.Fprintf(io.err, "praxis agent: session %s (journal %s; go on with: praxis agent --resume %s)\n", id, relTo(h.Workspace, path), id)
		} else {
			fmt.Fprintf(io.err, "praxis agent: session %s (not journaled)\n", id)
		}
		if hf.sandbox != "" {
			fmt.Fprintf(io.err, "praxis agent: sandbox: %s\n", hf.sandbox)
		}
	}
	out, err := agent.RunSession(ctx, cfg, h, task, so)
	switch {
	case err != nil && so.Resume && errors.Is(err, fs.ErrNotExist):
		return fail(exitUsage, "there is no session %s in this workspace; \"praxis sessions list\" lists them", so.ID)
	case err != nil:
		return fail(exitToolError, "%v", err)
	}
	return out, -1
}

// insideWorkspace creates dir, a directory of the workspace ws, refusing
// symbolic links that lead outside it.
func insideWorkspace(ws, dir string) error {
	rel, err := filepath.Rel(ws, dir)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.MkdirAll(filepath.ToSlash(rel), 0o755)
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// toolNames lists the names of the tools the session offers the model, for
// the warnings about rules and hook matchers that name none of them.
func toolNames(cfg agent.Config) []string {
	if cfg.Tools == nil {
		return nil
	}
	var names []string
	for _, t := range cfg.Tools.Tools() {
		names = append(names, t.Name)
	}
	return names
}
