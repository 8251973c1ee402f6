// Package agent is Praxis's agent loop and its model providers. A run sends
// the conversation and the tool definitions to a model, streams its reply,
// runs the tools it calls through a praxis.Catalog, appends the results, and
// repeats until the model answers without calling a tool or a limit stops
// it. Everything that happens is reported as a typed stream of events.
package agent

import (
	"context"
	"encoding/base64"
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
	// Thinking, if positive, is the budget in tokens of the model's
	// reasoning before each reply (see Request.Thinking).
	Thinking int
	// Prices give each step's cost and the run's in US dollars (cost_usd
	// in step_complete and run_complete); a model they do not price has
	// no cost. Nil uses DefaultPrices.
	Prices Prices
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
	if cfg.Prices == nil {
		cfg.Prices = DefaultPrices()
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
	// CostUSD is what the run cost in US dollars, when Priced.
	CostUSD float64
	Priced  bool
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
	price     Price
	priced    bool
	cost      float64
	toolCalls int
	final     string
	modelTime time.Duration // waiting for the model

	hs *harnessState // nil without a Harness

	// session is the run's session with the engines its tools belong to,
	// which tell of files changed on disk by someone else.
	session *praxis.Session
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
	r.price, r.priced = a.cfg.Prices.Lookup(a.cfg.Model)
	// The metrics see the events as the harness completes them.
	metrics := newMetricsCollector()
	next := r.ev.sink
	r.ev.sink = func(ev Event) {
		metrics.observe(ev)
		if next != nil {
			next(ev)
		}
	}
	r.initHarness()
	var names []string
	for _, t := range a.cfg.Tools.Tools() {
		r.tools = append(r.tools, ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		names = append(names, t.Name)
	}
	r.ev.emit(Event{Type: EventRunStart, Task: task, Provider: a.cfg.Provider.Name(), Model: a.cfg.Model, Tools: names})
	r.messages = []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: task}}}}

	if r.session = praxis.SessionFrom(ctx); r.session == nil {
		r.session = praxis.NewSession(r.ev.runID)
		defer r.session.Close()
		ctx = praxis.WithSession(ctx, r.session)
	}
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
		Usage: r.usage, CostUSD: r.cost, Priced: r.priced, Final: r.final, Messages: r.messages,
	}
	done := Event{
		Type: EventRunComplete, Step: steps, StopReason: stop, Steps: steps, ToolCalls: r.toolCalls,
		Usage: &out.Usage, CostUSD: r.costOf(out.CostUSD), Final: r.final, ElapsedMS: time.Since(r.start).Milliseconds(),
	}
	if err != nil {
		done.Error = err.Error()
	}
	done.Metrics = metrics.metrics(r.modelTime.Milliseconds(), done.CostUSD)
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

// spend counts the usage of a model call and returns its cost (nil when
// the model has no price).
func (r *run) spend(u Usage) *float64 {
	r.usage = r.usage.Add(u)
	if !r.priced {
		return nil
	}
	c := r.price.Cost(r.cfg.Provider.Name(), u)
	r.cost += c
	return &c
}

// costOf returns &c when the run's model has a price, else nil.
func (r *run) costOf(c float64) *float64 {
	if !r.priced {
		return nil
	}
	return &c
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
	r.notices(step)
	req := &Request{Model: r.cfg.Model, System: r.cfg.System, Messages: r.messages, Tools: r.tools, MaxTokens: r.cfg.MaxTokens, Thinking: r.cfg.Thinking}
	r.beforeModel(ctx, step, req)
	mctx := WithReasoningStream(ctx, func(s string) {
		r.ev.emit(Event{Type: EventThinking, Step: step, Text: s})
	})
	mctx = WithToolInputStream(mctx, func(id, tool, s string) {
		r.ev.emit(Event{Type: EventToolInput, Step: step, CallID: id, Tool: tool, Text: s})
	})
	asked := time.Now()
	resp, err := r.cfg.Provider.Complete(mctx, req, func(s string) {
		r.ev.emit(Event{Type: EventTextDelta, Step: step, Text: s})
	})
	r.modelTime += time.Since(asked)
	if err != nil {
		// A failed call may have cost tokens too.
		if ae := (*APIError)(nil); errors.As(err, &ae) && ae.Usage != (Usage{}) {
			usage := ae.Usage
			r.ev.emit(Event{Type: EventUsage, Step: step, Usage: &usage, CostUSD: r.spend(usage)})
		}
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		return false, err
	}
	cost := r.spend(resp.Usage)
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
	r.ev.emit(Event{Type: EventStepComplete, Step: step, Message: &msg, Usage: &usage, CostUSD: cost, ToolCalls: len(calls)})
	if ctx.Err() != nil {
		return false, context.Cause(ctx)
	}
	return len(calls) > 0, nil
}

// notices puts the notices of files changed on disk since the run's
// tools last showed them into the conversation, before the model is asked
// again. Those a tool result carried already are not repeated.
func (r *run) notices(step int) {
	if ns := r.session.Notices(); len(ns) > 0 {
		r.inject(step, MessageNotice, praxis.NoticeText(ns))
	}
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
	if res, bad := r.malformed(c); bad {
		return r.answer(step, c, res, start, res.Text)
	}
	var res praxis.Result
	switch {
	case ctx.Err() != nil:
		res = praxis.ErrorResult(praxis.Errorf(praxis.ECancelled, "%s was not run: the run is stopping", c.Name))
	case r.refuse(ctx, step, c, &res):
		// A budget, a hook or a permission rule refused the call.
	default:
		var err error
		res, err = r.cfg.Tools.Call(ctx, c.Name, objectOrEmpty(c.Input))
		if errors.Is(err, praxis.ErrUnknownTool) { // removed while the run went on
			res = unknownTool(c.Name)
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
	return r.answer(step, c, res, start, text)
}

// answer reports the result of call c and returns its tool_result block.
func (r *run) answer(step int, c Block, res praxis.Result, start time.Time, text string) Block {
	var images []Image
	for _, img := range res.Images {
		if why := unsendable(img); why != "" {
			text += fmt.Sprintf("\n(an image of type %q was not passed on to the model: %s)", img.MIMEType, why)
			continue
		}
		images = append(images, Image{MIMEType: img.MIMEType, Data: img.Data})
	}
	r.ev.emit(Event{
		Type: EventToolResult, Step: step, CallID: c.ID, Tool: c.Name, Output: text, Images: images,
		IsError: res.IsError, Code: string(res.Code), DurationMS: time.Since(start).Milliseconds(),
	})
	return Block{Type: BlockToolResult, ID: c.ID, Text: text, IsError: res.IsError, Images: images}
}

// maxImageBytes bounds an image passed on to the model, decoded (the
// Anthropic API's limit).
const maxImageBytes = 5 << 20

// unsendable says why img cannot go to a model as an image, or "".
func unsendable(img praxis.Image) string {
	switch img.MIMEType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return "models take PNG, JPEG, GIF and WebP images only"
	}
	if base64.StdEncoding.DecodedLen(len(img.Data)) > maxImageBytes+2 {
		return fmt.Sprintf("it is larger than %d MB", maxImageBytes>>20)
	}
	if _, err := base64.StdEncoding.DecodeString(img.Data); err != nil {
		return "its data is not valid base64"
	}
	return ""
}

// malformed answers a call the model got wrong before any tool could see
// it: arguments that are not JSON, or a tool that does not exist. The
// answer is a result the model reads, not a failure of the run; the loop
// detector counts it like any failed call, so that a model that keeps
// sending the same bad call is stopped.
func (r *run) malformed(c Block) (praxis.Result, bool) {
	var res praxis.Result
	input := objectOrEmpty(c.Input)
	switch _, known := r.cfg.Tools.Lookup(c.Name); {
	case c.InvalidInput != "":
		res = praxis.ErrorResult(praxis.Errorf(praxis.EInvalidArgs, "the arguments of this %s call are not valid JSON: %s", c.Name, jsonProblem(c.InvalidInput)).
			WithDetail("The call was not run. Send the arguments again as one JSON object that matches the tool's input schema."))
		input, _ = json.Marshal(c.InvalidInput)
	case !known:
		res = unknownTool(c.Name)
	default:
		return res, false
	}
	if hs := r.hs; hs != nil && hs.doom != nil {
		hs.mu.Lock()
		hs.doom.Call(c.Name, input, true, string(res.Code), res.Text)
		hs.mu.Unlock()
	}
	return res, true
}

// unknownTool is the answer to a call of a tool that does not exist.
func unknownTool(name string) praxis.Result {
	return praxis.ErrorResult(praxis.Errorf(praxis.EUnknownTool, "there is no tool called %q", name).
		WithDetail("The call was not run. Call only the tools listed in the tool definitions."))
}

// jsonProblem says where and why raw is not valid JSON.
func jsonProblem(raw string) string {
	var v any
	err := json.Unmarshal([]byte(raw), &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d of %q", se.Error(), se.Offset, clip(raw, 200))
	}
	if err != nil {
		return fmt.Sprintf("%v in %q", err, clip(raw, 200))
	}
	return fmt.Sprintf("%q", clip(raw, 200))
}
