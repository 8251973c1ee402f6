package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-tools/praxis/agent/doomloop"
	"github.com/praxis-tools/praxis/agent/hooks"
	"github.com/praxis-tools/praxis/agent/permission"
	"github.com/praxis-tools/praxis/praxis"
)

// The stop reasons of the harness controls, beyond those of the loop.
const (
	StopMaxTokens     StopReason = "max_tokens"      // --max-tokens: input and output tokens of the run reached the budget
	StopMaxToolCalls  StopReason = "max_tool_calls"  // --max-tool-calls: the model wanted more tool calls than the budget
	StopDoomLoop      StopReason = "doom_loop"       // the model kept repeating itself after a warning
	StopGateFailed    StopReason = "gate_failed"     // an evaluation gate still failed after --max-gate-attempts
	StopHook          StopReason = "stopped_by_hook" // a hook ended the run ("continue": false, or a blocked prompt)
	StopMaxIterations StopReason = "max_iterations"  // --iterations sessions ran and the task was not declared complete
)

// The events of the harness controls.
const (
	// EventMessage is text the harness put into the conversation as the
	// user: Kind says why (doom_warning, gate_failed, hook_context,
	// stop_hook, reminder, notice) and Text is the text.
	EventMessage EventType = "message"
	// EventCompacted reports that older turns were summarised: the before
	// and after sizes in tokens, how many messages were kept verbatim, and
	// the new first message (Text) that replaces the others.
	EventCompacted EventType = "compacted"
	// EventHook reports a hook that failed, timed out, blocked or ended the
	// run: Kind is the hook event, Hook the command.
	EventHook EventType = "hook"
	// EventGate reports one run of one evaluation gate.
	EventGate EventType = "gate"
	// EventCheckpoint reports the commit (Commit) of a step's changes, with
	// the step's summary (Text); Error when the commit failed.
	EventCheckpoint EventType = "checkpoint"
)

// Kinds of message event.
const (
	MessageDoomWarning = "doom_warning"
	MessageGateFailed  = "gate_failed"
	MessageHookContext = "hook_context"
	MessageStopHook    = "stop_hook"
	MessageReminder    = "reminder"
	// MessageNotice tells the model that files it was shown changed on
	// disk by someone else since (praxis.Notice, one line each).
	MessageNotice = "notice"
)

// HarnessFields are the event fields of the harness controls; Event embeds
// them.
type HarnessFields struct {
	// Kind: the kind of a message event, the hook event of a hook event.
	Kind string `json:"kind,omitempty"`
	// Hook is the command of a hook event.
	Hook string `json:"hook,omitempty"`
	// compacted: sizes in tokens (estimated where the provider did not
	// say), messages kept verbatim after the new first one, model replies
	// folded into the summary, and the skill texts kept verbatim.
	BeforeTokens int      `json:"before_tokens,omitempty"`
	AfterTokens  int      `json:"after_tokens,omitempty"`
	Kept         int      `json:"kept,omitempty"`
	Folded       int      `json:"folded,omitempty"`
	Pinned       []string `json:"pinned,omitempty"`
	// Gate is the result of a gate event; Gates, on run_complete, the
	// results of the last gate run.
	Gate  *GateResult  `json:"gate,omitempty"`
	Gates []GateResult `json:"gates,omitempty"`
	// Findings, on run_complete with doom_loop, are the repeating patterns.
	Findings []doomloop.Finding `json:"findings,omitempty"`
	// Resumed marks the run_start of a run that continues a session.
	Resumed bool `json:"resumed,omitempty"`
	// Controls, on run_start, are the harness controls the run has, for
	// the audit.
	Controls *Controls `json:"controls,omitempty"`
	// Commit is a checkpoint's commit; Branch, on run_start, the branch
	// the checkpoints go to.
	Commit string `json:"commit,omitempty"`
	Branch string `json:"branch,omitempty"`
}

// Controls summarises a run's harness controls.
type Controls struct {
	MaxTokens       int      `json:"max_tokens,omitempty"`
	MaxToolCalls    int      `json:"max_tool_calls,omitempty"`
	MaxCostUSD      float64  `json:"max_cost_usd,omitempty"`
	DoomThreshold   int      `json:"doom_threshold,omitempty"`
	ContextWindow   int      `json:"context_window,omitempty"`
	Gates           []string `json:"gates,omitempty"`
	MaxGateAttempts int      `json:"max_gate_attempts,omitempty"`
	// Rules are the permission rules, as "deny(bash(rm -rf*))".
	Rules []string `json:"rules,omitempty"`
	// Hooks are the hook commands, as "PreToolUse[bash]: ./check.sh".
	Hooks []string `json:"hooks,omitempty"`
}

// controls summarises h.
func (h *Harness) controls() *Controls {
	c := &Controls{MaxTokens: h.MaxTokens, MaxToolCalls: h.MaxToolCalls, MaxCostUSD: h.MaxCost, ContextWindow: h.Compaction.ContextWindow, Gates: h.Gates}
	if len(h.Gates) > 0 {
		c.MaxGateAttempts = h.MaxGateAttempts
		if c.MaxGateAttempts <= 0 {
			c.MaxGateAttempts = 3
		}
	}
	if h.DoomLoop != nil {
		c.DoomThreshold = doomloop.New(*h.DoomLoop).Threshold()
	}
	if h.Permissions != nil {
		for _, r := range h.Permissions.Rules() {
			c.Rules = append(c.Rules, r.String())
		}
	}
	if h.Hooks != nil && h.Hooks.Config != nil {
		for _, ev := range []hooks.Event{hooks.SessionStart, hooks.UserPromptSubmit, hooks.PreToolUse, hooks.PostToolUse, hooks.Stop} {
			for _, g := range h.Hooks.Config.Hooks[ev] {
				for _, cmd := range g.Hooks {
					c.Hooks = append(c.Hooks, fmt.Sprintf("%s[%s]: %s", ev, g.Matcher, cmd.Command))
				}
			}
		}
	}
	return c
}

// Harness holds the controls around a run: budgets, loop detection,
// context compaction, hooks, permissions, evaluation gates and resumption.
// A nil Harness (Config.Harness) leaves the loop as it is.
type Harness struct {
	// MaxTokens, if positive, bounds the input and output tokens summed
	// over the run (model calls for compaction included).
	MaxTokens int
	// MaxToolCalls, if positive, bounds the tool calls of the run. A call
	// beyond it is refused and the run stops with StopMaxToolCalls.
	MaxToolCalls int
	// MaxCost, if positive, bounds the run's cost in US dollars at the
	// prices of Config.Prices: once reached, the run stops with
	// StopMaxCost after the step that reached it. The model must have a
	// price.
	MaxCost float64

	// DoomLoop configures loop detection; nil turns it off.
	DoomLoop *doomloop.Config

	// Compaction configures context management.
	Compaction Compaction
	// MaxToolResult bounds a tool result's text in bytes (default 50000);
	// a longer one is cut, and its full text saved under
	// Workspace/.praxis/tool-results/ for the model to read.
	MaxToolResult int

	// Hooks runs the configured hook commands; nil runs none.
	Hooks *hooks.Runner
	// Permissions decides which calls may run; nil allows all.
	Permissions *permission.Policy
	// Prompter asks about calls an ask rule (or hook) covers; nil refuses
	// them, as when there is no terminal.
	Prompter permission.Prompter

	// Gates are commands that must pass before the run completes: run in
	// order when the model says it is done, through the catalog's bash tool
	// when it has one (so under the sandbox), else with sh in Workspace.
	Gates []string
	// MaxGateAttempts bounds how often the gates may fail before the run
	// stops with StopGateFailed (default 3).
	MaxGateAttempts int
	// GateTimeout bounds one gate run without the bash tool (default 10m).
	GateTimeout time.Duration
	// GateOutput bounds the gate output given back to the model, in bytes
	// (default 8000).
	GateOutput int

	// BeforeStop, if set, is asked when the model says it is done (after
	// the gates pass): a non-empty reminder goes back to the model once,
	// and the run goes on.
	BeforeStop func(ctx context.Context) string

	// Checkpoint, if set, is called after every step with the step's
	// summary (the first line of the model's text, or the tools it
	// called): a commit it returns is journaled as a checkpoint event; ""
	// means the step changed nothing. An error is journaled too, and the
	// run goes on. Branch names where the commits go, for run_start.
	Checkpoint func(ctx context.Context, step int, summary string) (commit string, err error)
	Branch     string

	// Resume holds the events of the session so far: the run rebuilds the
	// conversation from them (see Fold) and goes on, with the task, if not
	// empty, as the next prompt. Config.RunID must be the session's ID.
	// A tool call the session started and never saw end (State.Interrupted)
	// is settled first, exactly once: a read-only or idempotent tool runs
	// again; any other does not, and the model is told that the call was
	// interrupted and its effect is unknown.
	Resume []Event

	// Workspace is the workspace directory: the hooks' working directory,
	// where gates run without a bash tool and where cut tool results go.
	Workspace string
	// TranscriptPath is the session's journal, given to hooks.
	TranscriptPath string
}

// Compaction configures context management. With a ContextWindow, the
// conversation's size in tokens is tracked (the provider's usage where
// given, an estimate of a token per four bytes otherwise); before a model
// call that would exceed Threshold of the window, the older turns are
// summarised by the same provider into the first message, which keeps the
// task and any loaded skill text verbatim, and the KeepRecent most recent
// messages are kept as they are.
type Compaction struct {
	// ContextWindow is the model's context window in tokens; 0 turns
	// compaction off.
	ContextWindow int
	// Threshold is the fraction of the window that triggers compaction
	// (default 0.8).
	Threshold float64
	// KeepRecent is how many of the latest messages are always kept
	// verbatim (default 4).
	KeepRecent int
	// PinTools are globs of tools whose results are loaded skill text, kept
	// verbatim through compaction (default load_skill, read_skill_file).
	PinTools []string
}

// GateResult is one run of one gate.
type GateResult struct {
	Command  string `json:"command"`
	Passed   bool   `json:"passed"`
	ExitCode int    `json:"exit_code"`
	// Output is the gate's output, bounded.
	Output     string `json:"output,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Attempt    int    `json:"attempt"`
}

// harnessState is a run's state of the harness controls.
type harnessState struct {
	h *Harness

	started   atomic.Int64 // tool calls started
	overCalls atomic.Bool  // a call was refused by MaxToolCalls

	mu      sync.Mutex
	doom    *doomloop.Detector
	pending []pendingText // text to add to the conversation at the step's end
	// refused holds the calls of the current step that a budget, a hook
	// or a rule refused: they did not run, and PostToolUse skips them.
	refused map[refusedCall]bool

	// compaction
	compacted   int // model replies folded into summaries
	preamble    string
	pinned      []string
	base        int // tokens of messages[:baseLen], from the provider's usage
	baseLen     int
	usageBefore Usage // the run's usage before the step's model call

	gateAttempts   int
	gates          []GateResult
	findings       []doomloop.Finding
	stopHookActive bool
	reminded       bool
	resumed        bool
}

type pendingText struct{ kind, text string }

type refusedCall struct {
	step int
	id   string
}

// initHarness sets up the harness state of r. It runs before run_start.
func (r *run) initHarness() {
	h := r.cfg.Harness
	if h == nil {
		return
	}
	hs := &harnessState{h: h}
	if h.DoomLoop != nil {
		hs.doom = doomloop.New(*h.DoomLoop)
	}
	if len(h.Resume) > 0 {
		hs.resumed = true
		r.ev.seq = h.Resume[len(h.Resume)-1].Seq
	}
	r.hs = hs
	next := r.ev.sink
	r.ev.sink = func(ev Event) {
		switch ev.Type {
		case EventRunStart:
			ev.Resumed = hs.resumed
			ev.Controls = h.controls()
			ev.Branch = h.Branch
		case EventRunComplete:
			ev.Gates = hs.gates
			if ev.StopReason == StopDoomLoop {
				ev.Findings = hs.findings
			}
		}
		if next != nil {
			next(ev)
		}
	}
}

// harnessStart prepares the conversation: it rebuilds a resumed session's,
// runs the SessionStart and UserPromptSubmit hooks. A non-empty stop reason
// ends the run before the first step.
func (r *run) harnessStart(ctx context.Context, task string) (StopReason, int, error) {
	hs := r.hs
	if hs == nil {
		return "", 0, nil
	}
	h := hs.h
	source := "startup"
	if hs.resumed {
		source = "resume"
		st, err := Fold(h.Resume)
		if err != nil {
			return StopError, 0, fmt.Errorf("resuming session %s: %w", r.ev.runID, err)
		}
		if st.SessionID != r.ev.runID {
			return StopError, 0, fmt.Errorf("resuming session %s: the journal is of session %s", r.ev.runID, st.SessionID)
		}
		r.messages = st.Messages
		hs.compacted, hs.preamble, hs.pinned = st.Compacted, st.Preamble, st.Pinned
		for _, c := range st.Interrupted {
			r.settleInterrupted(ctx, c)
		}
		if strings.TrimSpace(task) != "" {
			r.messages = appendUserText(r.messages, task)
		} else if n := len(r.messages); n == 0 || r.messages[n-1].Role == RoleAssistant {
			return StopError, 0, errors.New("the session ended with the model's answer; give a prompt to go on with")
		}
	}
	if h.Hooks.Has(hooks.SessionStart) {
		o := h.Hooks.Run(ctx, r.hookInput(hooks.SessionStart, func(in *hooks.Input) { in.Source = source }))
		if stop, err := r.hookOutcome(hooks.SessionStart, 0, o); stop != "" {
			return stop, 0, err
		}
		r.addContext(0, o.Context)
	}
	if h.Hooks.Has(hooks.UserPromptSubmit) && strings.TrimSpace(task) != "" {
		o := h.Hooks.Run(ctx, r.hookInput(hooks.UserPromptSubmit, func(in *hooks.Input) { in.Prompt = task }))
		if stop, err := r.hookOutcome(hooks.UserPromptSubmit, 0, o); stop != "" {
			return stop, 0, err
		}
		if o.Block {
			return StopHook, 0, fmt.Errorf("a UserPromptSubmit hook blocked the prompt: %s", o.Reason)
		}
		r.addContext(0, o.Context)
	}
	return "", 0, nil
}

// settleInterrupted answers call c, which the killed run before this one
// started and did not see end: a read-only or idempotent tool is run
// again; any other is not, and the model is told that the call was
// interrupted and its effect is unknown. Either way the result goes to the
// journal, so that no later resume decides again.
func (r *run) settleInterrupted(ctx context.Context, c Block) {
	var res Block
	if t, ok := r.cfg.Tools.Lookup(c.Name); ok && (t.Annotations.ReadOnly || t.Annotations.Idempotent) {
		res = r.runTool(ctx, 0, c)
	} else {
		res = interruptedResult(c)
		r.ev.emit(Event{Type: EventToolResult, CallID: c.ID, Tool: c.Name, Output: res.Text, IsError: true, Code: string(praxis.ECancelled)})
	}
	replaceResult(r.messages, res)
}

// hookInput returns the input of a hook for this run.
func (r *run) hookInput(ev hooks.Event, set func(*hooks.Input)) hooks.Input {
	in := hooks.Input{SessionID: r.ev.runID, TranscriptPath: r.hs.h.TranscriptPath, Cwd: r.hs.h.Workspace, HookEventName: ev}
	if set != nil {
		set(&in)
	}
	return in
}

// hookOutcome reports the failed, blocking and halting hooks of an event
// as hook events, and returns StopHook when a hook ended the run.
func (r *run) hookOutcome(ev hooks.Event, step int, o hooks.Outcome) (StopReason, error) {
	r.reportHooks(ev, step, o)
	if o.Block {
		r.ev.emit(Event{Type: EventHook, Step: step, HarnessFields: HarnessFields{Kind: string(ev)}, Text: "blocked: " + o.Reason})
	}
	if o.Halt {
		return StopHook, fmt.Errorf("a %s hook stopped the run: %s", ev, haltReason(o))
	}
	return "", nil
}

// reportHooks reports failed and halting hooks as hook events.
func (r *run) reportHooks(ev hooks.Event, step int, o hooks.Outcome) {
	for _, rep := range o.Failures() {
		r.ev.emit(Event{Type: EventHook, Step: step, HarnessFields: HarnessFields{Kind: string(ev), Hook: rep.Command}, Error: rep.Failure, DurationMS: rep.Duration.Milliseconds()})
	}
	if o.Halt {
		r.ev.emit(Event{Type: EventHook, Step: step, HarnessFields: HarnessFields{Kind: string(ev)}, Text: "stopped the run: " + haltReason(o)})
	}
}

func haltReason(o hooks.Outcome) string {
	if o.HaltReason == "" {
		return "no reason given"
	}
	return o.HaltReason
}

// addContext puts hook context into the conversation now (before the
// first step) and reports it.
func (r *run) addContext(step int, texts []string) {
	for _, t := range texts {
		r.inject(step, MessageHookContext, t)
	}
}

// inject adds text to the conversation as the user and reports it with a
// message event.
func (r *run) inject(step int, kind, text string) {
	r.messages = appendUserText(r.messages, text)
	r.ev.emit(Event{Type: EventMessage, Step: step, Text: text, HarnessFields: HarnessFields{Kind: kind}})
}

// queue keeps text to inject at the step's end (tool calls run
// concurrently; the conversation changes only between steps).
func (hs *harnessState) queue(kind, text string) {
	hs.mu.Lock()
	hs.pending = append(hs.pending, pendingText{kind, text})
	hs.mu.Unlock()
}

// appendUserText adds text to the conversation as the user: to the last
// message when it is the user's (tool results, say), else as a new one, so
// that the roles keep alternating.
func appendUserText(msgs []Message, text string) []Message {
	b := Block{Type: BlockText, Text: text}
	if n := len(msgs); n > 0 && msgs[n-1].Role == RoleUser {
		last := msgs[n-1]
		content := make([]Block, 0, len(last.Content)+1)
		content = append(append(content, last.Content...), b)
		out := append([]Message(nil), msgs[:n-1]...)
		return append(out, Message{Role: RoleUser, Content: content})
	}
	return append(msgs, Message{Role: RoleUser, Content: []Block{b}})
}

// refuse decides whether call c may run: the tool-call budget, the
// PreToolUse hooks and the permission rules. When it may not, it sets res
// to the refusal and returns true.
func (r *run) refuse(ctx context.Context, step int, c Block, res *praxis.Result) bool {
	hs := r.hs
	if hs == nil {
		return false
	}
	if !r.refuseCall(ctx, step, c, res) {
		return false
	}
	hs.mu.Lock()
	if hs.refused == nil {
		hs.refused = make(map[refusedCall]bool)
	}
	hs.refused[refusedCall{step, c.ID}] = true
	hs.mu.Unlock()
	return true
}

// refuseCall is refuse without the bookkeeping.
func (r *run) refuseCall(ctx context.Context, step int, c Block, res *praxis.Result) bool {
	hs := r.hs
	h := hs.h
	if h.MaxToolCalls > 0 && hs.started.Add(1) > int64(h.MaxToolCalls) {
		hs.overCalls.Store(true)
		*res = praxis.ErrorResult(praxis.Errorf(praxis.EBudgetExceeded, "%s was not run: the run's budget of %d tool calls is spent", c.Name, h.MaxToolCalls))
		return true
	}
	input := objectOrEmpty(c.Input)
	hookAllowed := false
	if h.Hooks.Has(hooks.PreToolUse) {
		o := h.Hooks.Run(ctx, r.hookInput(hooks.PreToolUse, func(in *hooks.Input) {
			in.ToolName, in.ToolInput, in.ToolUseID = c.Name, input, c.ID
		}))
		r.reportHookFailures(hooks.PreToolUse, step, o)
		for _, t := range o.Context {
			hs.queue(MessageHookContext, t)
		}
		switch {
		case o.Halt:
			*res = praxis.ErrorResult(praxis.Errorf(praxis.ECancelled, "%s was not run: a PreToolUse hook is stopping the run", c.Name))
			return true
		case o.Block:
			*res = praxis.ErrorResult(praxis.Errorf(praxis.EPolicy, "%s was blocked by a PreToolUse hook: %s", c.Name, o.Reason))
			return true
		case o.Permission == hooks.PermAsk:
			q := permission.Question{Tool: c.Name, Args: input, Rule: permission.Rule{Effect: permission.Ask, Tool: c.Name}}
			ok := false
			var err error
			if h.Prompter != nil {
				ok, err = h.Prompter.Confirm(ctx, q)
			}
			if !ok {
				why := "there is no terminal to ask on"
				if h.Prompter != nil {
					why = "it was refused"
					if err != nil {
						why = "asking failed: " + err.Error()
					}
				}
				*res = praxis.ErrorResult(praxis.Errorf(praxis.EPolicy, "%s needs confirmation by a PreToolUse hook (%s), and %s", c.Name, o.PermissionReason, why))
				return true
			}
			hookAllowed = true
		case o.Permission == hooks.PermAllow:
			hookAllowed = true
		}
	}
	if h.Permissions != nil {
		d := h.Permissions.Decide(c.Name, input)
		if d.Effect == permission.Ask && hookAllowed {
			return false // a hook's allow answers the question; deny still wins
		}
		if v := h.Permissions.Check(ctx, h.Prompter, c.Name, input); !v.Allowed {
			*res = praxis.ErrorResult(praxis.Errorf(praxis.EPolicy, "%s", v.Reason).
				WithDetail("The permission rules of this session refuse the call; do not retry it as it is."))
			return true
		}
	}
	return false
}

// reportHookFailures reports the failed and halting hooks run during a
// step; a halt ends the run at the step's end.
func (r *run) reportHookFailures(ev hooks.Event, step int, o hooks.Outcome) {
	r.reportHooks(ev, step, o)
	if o.Halt {
		r.hs.queue("halt", fmt.Sprintf("a %s hook stopped the run: %s", ev, haltReason(o)))
	}
}

// afterTool runs after a call: PostToolUse hooks (for a call that ran, not
// one that was refused), loop detection, and the cut of a huge result. It
// returns the text the model receives.
func (r *run) afterTool(ctx context.Context, step int, c Block, res praxis.Result, text string) string {
	hs := r.hs
	if hs == nil {
		return text
	}
	h := hs.h
	if hs.doom != nil {
		hs.mu.Lock()
		hs.doom.Call(c.Name, objectOrEmpty(c.Input), res.IsError, string(res.Code), text)
		hs.mu.Unlock()
	}
	text = r.cutResult(c, text)
	hs.mu.Lock()
	refused := hs.refused[refusedCall{step, c.ID}]
	delete(hs.refused, refusedCall{step, c.ID})
	hs.mu.Unlock()
	if h.Hooks.Has(hooks.PostToolUse) && !refused {
		o := h.Hooks.Run(ctx, r.hookInput(hooks.PostToolUse, func(in *hooks.Input) {
			in.ToolName, in.ToolInput, in.ToolUseID = c.Name, objectOrEmpty(c.Input), c.ID
			in.ToolResponse = &hooks.ToolResponse{Output: text, IsError: res.IsError, Code: string(res.Code)}
		}))
		r.reportHookFailures(hooks.PostToolUse, step, o)
		if o.Block {
			text += "\n\nA PostToolUse hook objected: " + o.Reason
		}
		for _, t := range o.Context {
			hs.queue(MessageHookContext, t)
		}
	}
	return text
}

// afterStep runs at the end of every step: it flushes queued text, checks
// the budgets and the loop detector, and, when the model is done (more is
// false), runs the Stop hooks and the gates. A non-empty stop reason ends
// the run; otherwise next says whether another step follows.
func (r *run) afterStep(ctx context.Context, step int, more bool) (next bool, stop StopReason, err error) {
	hs := r.hs
	if hs == nil {
		return more, "", nil
	}
	h := hs.h
	r.trackUsage()
	if h.Checkpoint != nil {
		r.checkpoint(ctx, step)
	}

	hs.mu.Lock()
	pending := hs.pending
	hs.pending = nil
	hs.mu.Unlock()
	for _, p := range pending {
		if p.kind == "halt" {
			return false, StopHook, errors.New(p.text)
		}
		r.inject(step, p.kind, p.text)
	}

	if hs.overCalls.Load() {
		return false, StopMaxToolCalls, fmt.Errorf("the model wanted more than %d tool calls, the run's budget", h.MaxToolCalls)
	}
	if hs.doom != nil {
		if n := len(r.messages); n > 0 {
			for i := n - 1; i >= 0; i-- {
				if r.messages[i].Role == RoleAssistant {
					hs.doom.Text(r.messages[i].Text())
					break
				}
			}
		}
		switch v := hs.doom.Check(); v.Action {
		case doomloop.Stop:
			hs.findings = v.Findings
			return false, StopDoomLoop, errors.New(v.Message)
		case doomloop.Warn:
			if more {
				r.inject(step, MessageDoomWarning, v.Message)
			}
		}
	}
	if more {
		if used := r.promptTokens(r.usage) + r.usage.OutputTokens; h.MaxTokens > 0 && used >= h.MaxTokens {
			return false, StopMaxTokens, fmt.Errorf("the run used %d tokens, reaching the budget of %d", used, h.MaxTokens)
		}
		if h.MaxCost > 0 && r.cost >= h.MaxCost {
			return false, StopMaxCost, fmt.Errorf("the run cost $%.4f, reaching the budget of $%.4f", r.cost, h.MaxCost)
		}
		return true, "", nil
	}

	// The model says it is done.
	if h.Hooks.Has(hooks.Stop) {
		o := h.Hooks.Run(ctx, r.hookInput(hooks.Stop, func(in *hooks.Input) { in.StopHookActive = hs.stopHookActive }))
		if stop, err := r.hookOutcome(hooks.Stop, step, o); stop != "" {
			return false, stop, err
		}
		if o.Block {
			hs.stopHookActive = true
			r.inject(step, MessageStopHook, "A Stop hook says the work is not done yet:\n"+o.Reason)
			return true, "", nil
		}
		hs.stopHookActive = false
	}
	if len(h.Gates) > 0 {
		failed := r.runGates(ctx, step)
		if ctx.Err() != nil {
			return false, stopReasonFor(ctx, context.Cause(ctx)), context.Cause(ctx)
		}
		if failed != nil {
			max := h.MaxGateAttempts
			if max <= 0 {
				max = 3
			}
			if hs.gateAttempts >= max {
				return false, StopGateFailed, fmt.Errorf("the gate %q still failed after %d attempts, the most allowed: exit code %d: %s",
					failed.Command, hs.gateAttempts, failed.ExitCode, clip(oneLine(failed.Output), 300))
			}
			r.inject(step, MessageGateFailed, gateMessage(failed, hs.gateAttempts, max))
			return true, "", nil
		}
	}
	if h.BeforeStop != nil && !hs.reminded {
		if msg := h.BeforeStop(ctx); msg != "" {
			hs.reminded = true
			r.inject(step, MessageReminder, msg)
			return true, "", nil
		}
	}
	return false, "", nil
}

// checkpointTimeout bounds the commit of a step's changes.
const checkpointTimeout = 2 * time.Minute

// checkpoint commits the step's changes, even when the run is stopping
// (what the step changed is kept either way).
func (r *run) checkpoint(ctx context.Context, step int) {
	summary := ""
	for i := len(r.messages) - 1; i >= 0; i-- {
		m := r.messages[i]
		if m.Role != RoleAssistant {
			continue
		}
		summary, _, _ = strings.Cut(strings.TrimSpace(m.Text()), "\n")
		if summary == "" {
			var names []string
			for _, c := range m.ToolCalls() {
				names = append(names, c.Name)
			}
			summary = fmt.Sprintf("step %d: %s", step, strings.Join(names, ", "))
		}
		break
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
	defer cancel()
	commit, err := r.hs.h.Checkpoint(cctx, step, summary)
	switch {
	case err != nil:
		r.ev.emit(Event{Type: EventCheckpoint, Step: step, Text: summary, Error: err.Error()})
	case commit != "":
		r.ev.emit(Event{Type: EventCheckpoint, Step: step, Text: summary, HarnessFields: HarnessFields{Commit: commit}})
	}
}

// trackUsage notes the conversation size the provider reported for the
// step just done: its input and output tokens cover the conversation up to
// and including the reply.
func (r *run) trackUsage() {
	hs := r.hs
	d := r.usage
	d.InputTokens -= hs.usageBefore.InputTokens
	d.OutputTokens -= hs.usageBefore.OutputTokens
	d.CacheReadTokens -= hs.usageBefore.CacheReadTokens
	d.CacheWriteTokens -= hs.usageBefore.CacheWriteTokens
	hs.base, hs.baseLen = 0, 0
	if tokens := r.promptTokens(d) + d.OutputTokens; tokens > 0 {
		for i := len(r.messages) - 1; i >= 0; i-- {
			if r.messages[i].Role == RoleAssistant {
				hs.base, hs.baseLen = tokens, i+1
				break
			}
		}
	}
}

// promptTokens returns the prompt tokens of u, cached ones included. The
// OpenAI API counts cached tokens within its prompt tokens; the Anthropic
// API counts cache reads and writes apart from its input tokens.
func (r *run) promptTokens(u Usage) int {
	if r.cfg.Provider.Name() == "openai" {
		return u.InputTokens
	}
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
