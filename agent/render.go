package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Transcript renders events as a readable transcript: the model's text as
// it streams, one line per tool call with its outcome, and a closing line
// with the stop reason and totals.
type Transcript struct {
	w        io.Writer
	midLine  bool                       // the last text written did not end a line
	thinking bool                       // the last text written was reasoning
	inputs   map[string]json.RawMessage // the inputs of calls in flight, by call ID
}

// NewTranscript returns a Transcript writing to w.
func NewTranscript(w io.Writer) *Transcript {
	return &Transcript{w: w, inputs: make(map[string]json.RawMessage)}
}

// Handle renders one event.
func (t *Transcript) Handle(ev Event) {
	switch ev.Type {
	case EventRunStart:
		t.line(fmt.Sprintf("praxis agent · run %s · %s %s · %d tools", ev.RunID, ev.Provider, ev.Model, len(ev.Tools)))
	case EventThinking:
		if !t.thinking {
			t.line("")
			fmt.Fprint(t.w, "  ∴ ")
			t.thinking, t.midLine = true, true
		}
		text := strings.ReplaceAll(ev.Text, "\n", "\n    ")
		fmt.Fprint(t.w, text)
		t.midLine = !strings.HasSuffix(text, "\n    ")
	case EventTextDelta:
		if t.thinking {
			t.line("")
			t.thinking = false
		}
		fmt.Fprint(t.w, ev.Text)
		t.midLine = !strings.HasSuffix(ev.Text, "\n")
	case EventRetry:
		t.line(fmt.Sprintf("  ↻ model call failed (%s); retry %d in %s", ev.Error, ev.Attempt, time.Duration(ev.WaitMS)*time.Millisecond))
	case EventToolStart:
		t.inputs[ev.CallID] = ev.Input
	case EventToolResult:
		input := t.inputs[ev.CallID]
		delete(t.inputs, ev.CallID)
		mark, outcome := "✓", firstLine(ev.Output)
		if ev.IsError {
			mark = "✗"
		}
		t.line(fmt.Sprintf("  %s %s %s (%s) %s", mark, ev.Tool, brief(input, 60), millis(ev.DurationMS), clip(outcome, 100)))
	case EventRunComplete:
		u := Usage{}
		if ev.Usage != nil {
			u = *ev.Usage
		}
		s := fmt.Sprintf("— %s after %d steps, %d tool calls · %d tokens in, %d out", ev.StopReason, ev.Steps, ev.ToolCalls, u.InputTokens, u.OutputTokens)
		if u.CacheReadTokens+u.CacheWriteTokens > 0 {
			s += fmt.Sprintf(" (cache: %d read, %d written)", u.CacheReadTokens, u.CacheWriteTokens)
		}
		if ev.CostUSD != nil {
			s += fmt.Sprintf(" · $%.4f", *ev.CostUSD)
		}
		s += " · " + millis(ev.ElapsedMS)
		if ev.Error != "" {
			s += "\n  " + ev.Error
		}
		t.line(s)
	}
}

// line writes s on a line of its own; "" only ends the current line.
func (t *Transcript) line(s string) {
	if t.midLine {
		fmt.Fprintln(t.w)
		t.midLine = false
	}
	t.thinking = false
	if s != "" {
		fmt.Fprintln(t.w, s)
	}
}

func millis(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// brief renders a tool call's input compactly on one line.
func brief(input json.RawMessage, n int) string {
	var b bytes.Buffer
	if err := json.Compact(&b, input); err != nil {
		return clip(string(input), n)
	}
	return clip(b.String(), n)
}

func firstLine(s string) string {
	first, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if rest != "" {
		first += " …"
	}
	return first
}

// clip shortens s to about n characters, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
