// Package doomloop detects an agent going round in circles: the same tool
// call again and again, the same failing call, an edit that keeps changing
// nothing, the same reply text. A Detector is fed what happens during a run
// and, at each step's end, says whether to carry on, warn the model, or
// stop the run with the evidence.
//
// The first time a pattern reaches the threshold the verdict is Warn, with a
// message for the model that names what repeats and asks for a different
// approach. If the same pattern repeats Grace more times after the warning,
// the verdict is Stop.
package doomloop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Kind names a kind of loop.
type Kind string

// The kinds of loop.
const (
	RepeatedCall    Kind = "repeated_call"    // the same tool with the same arguments, N times in a row
	RepeatedFailure Kind = "repeated_failure" // the same call failing the same way N times in the run
	NoopEdit        Kind = "noop_edit"        // a tool returning E_NOOP N times in a row
	RepeatedText    Kind = "repeated_text"    // the same assistant text in N replies in a row
)

// Defaults for a Config left zero.
const (
	DefaultThreshold = 3
	DefaultGrace     = 1
)

// Config configures a Detector.
type Config struct {
	// Threshold is how many repeats make a pattern; default 3.
	Threshold int
	// Grace is how many more repeats after the warning stop the run;
	// default 1.
	Grace int
	// Exempt are globs (path.Match syntax) of tools that are not watched:
	// polling tools whose repeated identical calls are the point.
	Exempt []string
	// NoopCode is the error code of an edit that changed nothing; default
	// "E_NOOP".
	NoopCode string
}

// Detector watches one run. It is not safe for concurrent use.
type Detector struct {
	cfg Config

	lastCall   string // tool + canonical args of the last watched call
	callStreak int
	callTool   string
	callArgs   string

	failures map[string]*failure // by call key + output

	noopTool   string
	noopStreak int

	lastText   string
	textStreak int

	warned map[string]int // finding key -> count when warned
}

type failure struct {
	tool, args, code, output string
	count                    int
}

// New returns a detector for cfg.
func New(cfg Config) *Detector {
	if cfg.Threshold <= 0 {
		cfg.Threshold = DefaultThreshold
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.NoopCode == "" {
		cfg.NoopCode = "E_NOOP"
	}
	return &Detector{cfg: cfg, failures: map[string]*failure{}, warned: map[string]int{}}
}

// Threshold returns the number of repeats that make a pattern.
func (d *Detector) Threshold() int { return d.cfg.Threshold }

// Exempt reports whether tool is not watched.
func (d *Detector) Exempt(tool string) bool {
	for _, g := range d.cfg.Exempt {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	return false
}

// Canonical returns args as compact JSON with object keys sorted, so that
// two spellings of the same arguments compare equal. Input that is not JSON
// is returned as it is.
func Canonical(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}"
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(args)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(args)
	}
	return string(b)
}

// Call records a tool call and its outcome. Calls of exempt tools are
// ignored: they neither count nor break a streak.
func (d *Detector) Call(tool string, args json.RawMessage, isError bool, code, output string) {
	if d.Exempt(tool) {
		return
	}
	ca := Canonical(args)
	key := tool + "\x00" + ca
	if key == d.lastCall {
		d.callStreak++
	} else {
		d.lastCall, d.callStreak, d.callTool, d.callArgs = key, 1, tool, ca
	}

	if isError {
		fk := key + "\x00" + code + "\x00" + output
		f := d.failures[fk]
		if f == nil {
			f = &failure{tool: tool, args: ca, code: code, output: output}
			d.failures[fk] = f
		}
		f.count++
	} else {
		// A success of the call clears its failures.
		for k := range d.failures {
			if strings.HasPrefix(k, key+"\x00") {
				delete(d.failures, k)
			}
		}
	}

	switch {
	case isError && code == d.cfg.NoopCode:
		if tool == d.noopTool {
			d.noopStreak++
		} else {
			d.noopTool, d.noopStreak = tool, 1
		}
	case tool == d.noopTool:
		d.noopTool, d.noopStreak = "", 0
	}
}

// Text records the text of an assistant reply. Empty text (a reply of tool
// calls only) is ignored.
func (d *Detector) Text(text string) {
	t := strings.Join(strings.Fields(text), " ")
	if t == "" {
		return
	}
	if t == d.lastText {
		d.textStreak++
	} else {
		d.lastText, d.textStreak = t, 1
	}
}

// Action is what a verdict asks of the loop.
type Action int

// The actions.
const (
	Continue Action = iota
	Warn
	Stop
)

func (a Action) String() string {
	return [...]string{"continue", "warn", "stop"}[a]
}

// Finding is one pattern that repeats.
type Finding struct {
	Kind  Kind   `json:"kind"`
	Tool  string `json:"tool,omitempty"`
	Args  string `json:"args,omitempty"` // canonical JSON
	Code  string `json:"code,omitempty"`
	Text  string `json:"text,omitempty"` // the repeated text, or the failure's output
	Count int    `json:"count"`
}

// key identifies the pattern across checks.
func (f Finding) key() string {
	return string(f.Kind) + "\x00" + f.Tool + "\x00" + f.Args + "\x00" + f.Code + "\x00" + f.Text
}

// Evidence describes the finding in one line.
func (f Finding) Evidence() string {
	switch f.Kind {
	case RepeatedCall:
		return fmt.Sprintf("%s was called with the same arguments %d times in a row: %s", f.Tool, f.Count, clip(f.Args, 300))
	case RepeatedFailure:
		return fmt.Sprintf("%s failed the same way %d times with the same arguments %s: %s", f.Tool, f.Count, clip(f.Args, 300), clip(oneLine(f.Text), 300))
	case NoopEdit:
		return fmt.Sprintf("%s returned %s (the edit changes nothing) %d times in a row", f.Tool, f.Code, f.Count)
	case RepeatedText:
		return fmt.Sprintf("the same reply was given %d times in a row: %q", f.Count, clip(f.Text, 300))
	}
	return string(f.Kind)
}

// Verdict is the detector's answer at a step's end.
type Verdict struct {
	Action Action
	// Findings are the patterns behind the action (for Stop, those that
	// went on after their warning).
	Findings []Finding
	// Message is the text for the model (Warn) or the evidence (Stop).
	Message string
}

// Check returns the verdict on what has been recorded so far. Call it once
// per step, after the step's text and calls.
func (d *Detector) Check() Verdict {
	n := d.cfg.Threshold
	var active []Finding
	if d.callStreak >= n {
		active = append(active, Finding{Kind: RepeatedCall, Tool: d.callTool, Args: d.callArgs, Count: d.callStreak})
	}
	var fails []*failure
	for _, f := range d.failures {
		if f.count >= n {
			fails = append(fails, f)
		}
	}
	sort.Slice(fails, func(i, j int) bool { return fails[i].tool+fails[i].args < fails[j].tool+fails[j].args })
	for _, f := range fails {
		active = append(active, Finding{Kind: RepeatedFailure, Tool: f.tool, Args: f.args, Code: f.code, Text: f.output, Count: f.count})
	}
	if d.noopStreak >= n {
		active = append(active, Finding{Kind: NoopEdit, Tool: d.noopTool, Code: d.cfg.NoopCode, Count: d.noopStreak})
	}
	if d.textStreak >= n {
		active = append(active, Finding{Kind: RepeatedText, Text: d.lastText, Count: d.textStreak})
	}

	// Forget warnings of patterns that stopped, so a recurrence is warned
	// about afresh.
	live := map[string]bool{}
	for _, f := range active {
		live[f.key()] = true
	}
	for k := range d.warned {
		if !live[k] {
			delete(d.warned, k)
		}
	}

	var stop, warn []Finding
	for _, f := range active {
		at, ok := d.warned[f.key()]
		switch {
		case !ok:
			d.warned[f.key()] = f.Count
			warn = append(warn, f)
		case f.Count >= at+d.cfg.Grace:
			stop = append(stop, f)
		}
	}
	switch {
	case len(stop) > 0:
		return Verdict{Action: Stop, Findings: stop, Message: stopMessage(stop)}
	case len(warn) > 0:
		return Verdict{Action: Warn, Findings: warn, Message: warnMessage(warn)}
	}
	return Verdict{Action: Continue}
}

func warnMessage(fs []Finding) string {
	var b strings.Builder
	b.WriteString("You are repeating yourself:\n")
	for _, f := range fs {
		b.WriteString("- " + f.Evidence() + "\n")
	}
	b.WriteString("Doing the same thing again will give the same result. Stop and take a different approach: " +
		"read the error or the file again, question your assumptions, or try another tool. " +
		"If this goes on, the run will be stopped.")
	return b.String()
}

func stopMessage(fs []Finding) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, string(f.Kind)+": "+f.Evidence())
	}
	return "the model kept repeating itself after a warning: " + strings.Join(parts, "; ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// oneLine joins the non-empty lines of s with " / ".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " / ")
}
