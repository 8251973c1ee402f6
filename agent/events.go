package agent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// EventType names an event of a run.
type EventType string

// The events of a run, in the order they can occur. Every run starts with
// run_start and ends with run_complete.
const (
	EventRunStart     EventType = "run_start"        // the task, provider, model and tools
	EventTextDelta    EventType = "text_delta"       // a piece of the model's text, as it streams
	EventThinking     EventType = "thinking_delta"   // a piece of the model's reasoning, as it streams
	EventUsage        EventType = "usage"            // a model call that failed still cost tokens
	EventRetry        EventType = "retry"            // a model call failed and is tried again
	EventToolInput    EventType = "tool_input_delta" // a piece of a tool call's arguments, as it streams
	EventToolStart    EventType = "tool_start"       // a tool call begins
	EventToolResult   EventType = "tool_result"      // a tool call ended
	EventStepComplete EventType = "step_complete"    // one model reply and its tool calls are done
	EventRunComplete  EventType = "run_complete"     // the run ended: the stop reason and totals
)

// StopReason says why a run ended.
type StopReason string

// The stop reasons.
const (
	StopCompleted StopReason = "completed" // the model answered without calling a tool
	StopMaxSteps  StopReason = "max_steps" // the step limit was reached
	StopTimeout   StopReason = "timeout"   // the run's time limit was reached
	StopCancelled StopReason = "cancelled" // the caller cancelled the run (Ctrl-C)
	StopError     StopReason = "error"     // the model API failed, or the run could not go on
	StopMaxCost   StopReason = "max_cost"  // the run's cost reached its budget in dollars
)

// Event is one thing that happened in a run. Which fields are set depends
// on Type; RunID, Seq and Time always are. The events of a run, in Seq
// order, hold the whole conversation: the task, every assistant message (in
// step_complete) and every tool result.
type Event struct {
	Type  EventType `json:"type"`
	RunID string    `json:"run_id"`
	// Seq numbers the run's events from 1, without gaps.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Step is the step the event belongs to, from 1 (0 for run_start).
	Step int `json:"step,omitempty"`

	// run_start
	Task     string   `json:"task,omitempty"`
	Provider string   `json:"provider,omitempty"`
	Model    string   `json:"model,omitempty"`
	Tools    []string `json:"tools,omitempty"`

	// text_delta and thinking_delta: the piece of text.
	Text string `json:"text,omitempty"`

	// tool_input_delta, tool_start and tool_result (tool_input_delta's
	// piece of the arguments is in Text).
	CallID string          `json:"call_id,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
	// tool_result: the text the model receives, whether it is an error and
	// its code, and how long the call took.
	Output string `json:"output,omitempty"`
	// Images are the result's images, which go to the model with Output.
	Images     []Image `json:"images,omitempty"`
	IsError    bool    `json:"is_error,omitempty"`
	Code       string  `json:"code,omitempty"`
	DurationMS int64   `json:"duration_ms,omitempty"`

	// step_complete: the assistant message of the step and the call's
	// token usage. run_complete: the run's total usage. usage: the usage of
	// a failed call.
	Message *Message `json:"message,omitempty"`
	Usage   *Usage   `json:"usage,omitempty"`
	// CostUSD is the cost in US dollars of the usage beside it, when the
	// model has a price.
	CostUSD *float64 `json:"cost_usd,omitempty"`

	// retry: the failed attempt, the error and the wait before the next.
	Attempt int   `json:"attempt,omitempty"`
	WaitMS  int64 `json:"wait_ms,omitempty"`

	// run_complete
	StopReason StopReason `json:"stop_reason,omitempty"`
	Steps      int        `json:"steps,omitempty"`
	ToolCalls  int        `json:"tool_calls,omitempty"`
	// Final is the model's last text.
	Final string `json:"final,omitempty"`
	// Error says what went wrong (run_complete with stop reason error, retry).
	Error string `json:"error,omitempty"`
	// ElapsedMS is the run's duration.
	ElapsedMS int64 `json:"elapsed_ms,omitempty"`
	// Metrics, on run_complete, measure how the run went.
	Metrics *Metrics `json:"metrics,omitempty"`

	// The fields of the harness controls' events (harness.go).
	HarnessFields
}

// NewRunID returns a new run ID: the UTC time to the second, then random
// hex, so that IDs sort by start time.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// emitter numbers events and passes them to a sink, one at a time.
type emitter struct {
	mu    sync.Mutex
	runID string
	seq   int64
	now   func() time.Time
	sink  func(Event)
}

func (e *emitter) emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev.RunID, ev.Seq, ev.Time = e.runID, e.seq, e.now().UTC()
	if e.sink != nil {
		e.sink(ev)
	}
}

// JSONLines returns an event sink that writes each event to w as one line
// of JSON.
func JSONLines(w io.Writer) func(Event) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return func(ev Event) { _ = enc.Encode(ev) }
}
