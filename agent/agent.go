// Package agent is Praxis's agent loop and its model providers. A run sends
// the conversation and the tool definitions to a model, streams its reply,
// runs the tools it calls through a praxis.Catalog, appends the results, and
// repeats until the model answers without calling a tool or a limit stops
// it. Everything that happens is reported as a typed stream of events.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/praxis"
)

// DefaultMaxSteps is the step limit of a run whose Config sets none.
const DefaultMaxSteps = 50

// Config configures an Agent.
type Config struct {
	// Provider is the model API. Required.
	Provider Provider
	// Model is the model name sent to the provider.
	Model string
	// Tools are the tools the model may call. Required.
	Tools *praxis.Catalog
	// System is the system prompt.
	System string
	// MaxSteps bounds the number of model replies. Default DefaultMaxSteps.
	MaxSteps int
	// Timeout, if positive, bounds the whole run.
	Timeout time.Duration
	// MaxTokens bounds the output tokens of each reply; 0 is the provider's
	// default.
	MaxTokens int
	// OnEvent receives every event, one at a time, in order. It must not
	// block for long: the run waits for it.
	OnEvent func(Event)
	// RunID names the run in its events; NewRunID when empty.
	RunID string
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
	// Harness holds the controls around the run (budgets, loop detection,
	// compaction, hooks, permissions, gates, resumption); nil for none.
	Harness *Harness
}

// Agent runs tasks. It holds no state between runs.
type Agent struct {
	cfg Config
}

// New returns an Agent for cfg.
func New(cfg Config) (*Agent, error) {
	if cfg.Provider == nil {
		return nil, errors.New("agent: no provider")
	}
	if cfg.Tools == nil {
		return nil, errors.New("agent: no tool catalog")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Agent{cfg: cfg}, nil
}

// Outcome is how a run ended.
type Outcome struct {
	RunID      string
	StopReason StopReason
	// Err is the failure behind StopError, StopTimeout or StopCancelled.
	Err error
	// Steps is the number of model replies.
	Steps     int
	ToolCalls int
	Usage     Usage
	// Final is the model's last text.
	Final string
	// Messages is the whole conversation, the task first.
	Messages []Message
}

// errRunTimeout is the cause of a run's context ending at Config.Timeout.
var errRunTimeout = errors.New("the run's time limit was reached")

// run is the state of one run.
type run struct {
	cfg   Config
	ev    *emitter
	tools []ToolDef
	start time.Time

	messages  []Message
	usage     Usage
	toolCalls int
	final     string

	hs *harnessState // nil without a Harness
}

// Run runs task to its end and returns how it ended. It emits run_start
// first and run_complete last. Cancelling ctx stops the model call and the
// running tools and ends the run with StopCancelled.
func (a *Agent) Run(ctx context.Context, task string) Outcome {
	r := &run{
		cfg:   a.cfg,
		start: time.Now(),
		ev:    &emitter{runID: a.cfg.RunID, now: time.Now, sink: a.cfg.OnEvent},
	}
	if r.ev.runID == "" {
		r.ev.runID = NewRunID()
	}
	r.initHarness()
	var names []string
	for _, t := range a.cfg.Tools.Tools() {
		r.tools = append(r.tools, ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		names = append(names, t.Name)
	}
	r.ev.emit(Event{Type: EventRunStart, Task: task, Provider: a.cfg.Provider.Name(), Model: a.cfg.Model, Tools: names})
	r.messages = []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: task}}}}

	if a.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, a.cfg.Timeout, errRunTimeout)
		defer cancel()
	}
	stop, steps, err := r.harnessStart(ctx, task)
	if stop == "" {
		stop, steps, err = r.loop(ctx)
	}
	out := Outcome{
		RunID: r.ev.runID, StopReason: stop, Err: err, Steps: steps, ToolCalls: r.toolCalls,
		Usage: r.usage, Final: r.final, Messages: r.messages,
	}
	done := Event{
		Type: EventRunComplete, Step: steps, StopReason: stop, Steps: steps, ToolCalls: r.toolCalls,
		Usage: &out.Usage, Final: r.final, ElapsedMS: time.Since(r.start).Milliseconds(),
	}
	if err != nil {
		done.Error = err.Error()
	}
	r.ev.emit(done)
	return out
}

// loop runs steps until one ends the run.
func (r *run) loop(ctx context.Context) (StopReason, int, error) {
	for step := 1; ; step++ {
		if step > r.cfg.MaxSteps {
			return StopMaxSteps, step - 1, fmt.Errorf("the model still called tools after %d steps, the most allowed", r.cfg.MaxSteps)
		}
		more, err := r.step(ctx, step)
		if err != nil {
			return stopReasonFor(ctx, err), step, err
		}
		var stop StopReason
		if more, stop, err = r.afterStep(ctx, step, more); stop != "" {
			return stop, step, err
		}
		if !more {
			return StopCompleted, step, nil
		}
	}
}

// stopReasonFor classifies the error that ended a step.
func stopReasonFor(ctx context.Context, err error) StopReason {
	switch {
	case errors.Is(context.Cause(ctx), errRunTimeout):
		return StopTimeout
	case ctx.Err() != nil:
		return StopCancelled
	default:
		return StopError
	}
}

// step is one model reply and the tool calls it makes. more reports whether
// the model called tools, so that another step follows.
func (r *run) step(ctx context.Context, step int) (more bool, err error) {
	ctx = withRetryObserver(ctx, func(ri RetryInfo) {
		r.ev.emit(Event{Type: EventRetry, Step: step, Attempt: ri.Attempt, Error: ri.Err.Error(), WaitMS: ri.Wait.Milliseconds()})
	})
	req := &Request{Model: r.cfg.Model, System: r.cfg.System, Messages: r.messages, Tools: r.tools, MaxTokens: r.cfg.MaxTokens}
	r.beforeModel(ctx, step, req)
	resp, err := r.cfg.Provider.Complete(ctx, req, func(s string) {
		r.ev.emit(Event{Type: EventTextDelta, Step: step, Text: s})
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		return false, err
	}
	r.usage = r.usage.Add(resp.Usage)
	msg := resp.Message
	msg.Role = RoleAssistant
	r.messages = append(r.messages, msg)
	if t := msg.Text(); t != "" {
		r.final = t
	}
	calls := msg.ToolCalls()
	var results []Block
	if len(calls) > 0 {
		results = r.runTools(ctx, step, calls)
		r.toolCalls += len(calls)
		r.messages = append(r.messages, Message{Role: RoleUser, Content: results})
	}
	usage := resp.Usage
	r.ev.emit(Event{Type: EventStepComplete, Step: step, Message: &msg, Usage: &usage, ToolCalls: len(calls)})
	if ctx.Err() != nil {
		return false, context.Cause(ctx)
	}
	return len(calls) > 0, nil
}

// runTools runs the calls of one reply and returns their results in the
// calls' order. When every call is to a read-only tool they run
// concurrently; otherwise one after the other.
func (r *run) runTools(ctx context.Context, step int, calls []Block) []Block {
	results := make([]Block, len(calls))
	concurrent := len(calls) > 1
	for _, c := range calls {
		t, ok := r.cfg.Tools.Lookup(c.Name)
		if !ok || !t.Annotations.ReadOnly {
			concurrent = false
		}
	}
	if concurrent {
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Go(func() { results[i] = r.runTool(ctx, step, c) })
		}
		wg.Wait()
	} else {
		for i, c := range calls {
			results[i] = r.runTool(ctx, step, c)
		}
	}
	return results
}

// runTool runs one call and returns its tool_result block. A call that
// cannot run (unknown tool, cancelled run) still gets a result, so that
// every tool_use is answered.
func (r *run) runTool(ctx context.Context, step int, c Block) Block {
	r.ev.emit(Event{Type: EventToolStart, Step: step, CallID: c.ID, Tool: c.Name, Input: c.Input})
	start := time.Now()
	var res praxis.Result
	switch {
	case ctx.Err() != nil:
		res = praxis.ErrorResult(praxis.Errorf(praxis.ECancelled, "%s was not run: the run is stopping", c.Name))
	case r.refuse(ctx, step, c, &res):
		// A budget, a hook or a permission rule refused the call.
	default:
		var err error
		res, err = r.cfg.Tools.Call(ctx, c.Name, objectOrEmpty(c.Input))
		if errors.Is(err, praxis.ErrUnknownTool) {
			res = praxis.ErrorResult(praxis.Errorf(praxis.ENotFound, "there is no tool called %q", c.Name).
				WithDetail("Call only the tools listed in the tool definitions."))
		} else if err != nil {
			res = praxis.ErrorResult(err)
		}
	}
	text := res.Text
	if text == "" && res.Structured != nil {
		if b, err := json.Marshal(res.Structured); err == nil {
			text = string(b)
		}
	}
	if text == "" {
		text = "(no output)"
	}
	text = r.afterTool(ctx, step, c, res, text)
	r.ev.emit(Event{
		Type: EventToolResult, Step: step, CallID: c.ID, Tool: c.Name, Output: text,
		IsError: res.IsError, Code: string(res.Code), DurationMS: time.Since(start).Milliseconds(),
	})
	return Block{Type: BlockToolResult, ID: c.ID, Text: text, IsError: res.IsError}
}
