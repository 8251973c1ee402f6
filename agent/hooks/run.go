package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/internal/procgroup"
)

// Input is the JSON object a hook reads on stdin. Which fields are set
// depends on the event.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	Cwd            string `json:"cwd"`
	HookEventName  Event  `json:"hook_event_name"`

	// SessionStart: "startup" or "resume".
	Source string `json:"source,omitempty"`
	// UserPromptSubmit: the prompt.
	Prompt string `json:"prompt,omitempty"`
	// PreToolUse and PostToolUse.
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// PostToolUse: the result.
	ToolResponse *ToolResponse `json:"tool_response,omitempty"`
	// Stop: true when the model is answering a Stop hook's earlier block.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
}

// ToolResponse is a tool call's outcome as PostToolUse hooks see it.
type ToolResponse struct {
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
	Code    string `json:"code,omitempty"`
}

// Output is the JSON object a hook may print on stdout when it exits 0.
type Output struct {
	// Continue false ends the run, StopReason saying why.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// Decision "block" blocks with Reason; "approve" allows a tool call.
	Decision       string          `json:"decision,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	SystemMessage  string          `json:"systemMessage,omitempty"`
	HookSpecific   *SpecificOutput `json:"hookSpecificOutput,omitempty"`
	SpecificOutput                 // the same fields, accepted at the top level too
}

// SpecificOutput are the event-specific fields of Output.
type SpecificOutput struct {
	HookEventName string `json:"hookEventName,omitempty"`
	// PermissionDecision ("allow", "deny", "ask") decides a PreToolUse call.
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// AdditionalContext is given to the model.
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Permission is a hook's say on a tool call, strongest last.
type Permission string

// The permission decisions.
const (
	PermNone  Permission = ""
	PermAllow Permission = "allow"
	PermAsk   Permission = "ask"
	PermDeny  Permission = "deny"
)

func (p Permission) rank() int {
	switch p {
	case PermAllow:
		return 1
	case PermAsk:
		return 2
	case PermDeny:
		return 3
	}
	return 0
}

// Report is what one command did.
type Report struct {
	Command  string
	ExitCode int // -1 when it did not exit by itself
	Stdout   string
	Stderr   string
	Duration time.Duration
	TimedOut bool
	// Failure says why the command failed without blocking (a status other
	// than 0 and 2, a timeout, a start failure, unreadable JSON); empty when
	// it did not.
	Failure string
}

// Outcome is the combined result of the commands run for one event.
type Outcome struct {
	// Block is set when a command exited 2, said "decision": "block", or
	// denied a tool call; Reason is what goes back to the model.
	Block  bool
	Reason string
	// Permission is the strongest permission decision of the commands
	// (deny over ask over allow), with its reason.
	Permission       Permission
	PermissionReason string
	// Context holds text for the model: additionalContext, and the plain
	// stdout of SessionStart and UserPromptSubmit commands.
	Context []string
	// Halt is set when a command said "continue": false; HaltReason is its
	// stopReason.
	Halt       bool
	HaltReason string
	// Messages are systemMessage texts for the user.
	Messages []string
	Reports  []Report
}

// Failures returns the reports of the commands that failed.
func (o *Outcome) Failures() []Report {
	var out []Report
	for _, r := range o.Reports {
		if r.Failure != "" {
			out = append(out, r)
		}
	}
	return out
}

// Runner runs the hooks of a configuration.
type Runner struct {
	Config *Config
	// Dir is the working directory of the commands (the workspace).
	Dir string
	// Env is added to the commands' environment (os.Environ), as KEY=VALUE.
	Env []string
	// MaxOutput bounds what is kept of each of a command's stdout and
	// stderr; default 64 KiB.
	MaxOutput int
	// Logger receives a warning for every failing command. Default: discard.
	Logger *slog.Logger
}

// Has reports whether any hook is configured for ev.
func (r *Runner) Has(ev Event) bool { return r != nil && r.Config.Has(ev) }

// Run runs the commands configured for in.HookEventName that match it,
// concurrently, and combines what they said. It returns when every command
// has ended or been killed at its timeout; cancelling ctx kills them too.
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	var out Outcome
	if r == nil {
		return out
	}
	subject := in.ToolName
	if in.HookEventName == SessionStart {
		subject = in.Source
	}
	cmds := r.Config.commands(in.HookEventName, subject)
	if len(cmds) == 0 {
		return out
	}
	if in.Cwd == "" {
		in.Cwd = r.Dir
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		out.Reports = []Report{{Failure: "encoding the hook input: " + err.Error(), ExitCode: -1}}
		return out
	}
	out.Reports = make([]Report, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() { out.Reports[i] = r.exec(ctx, c, stdin) })
	}
	wg.Wait()

	var reasons []string
	for i := range out.Reports {
		rep := &out.Reports[i]
		switch {
		case rep.Failure != "":
			r.logger().Warn("hook failed", "event", in.HookEventName, "command", rep.Command, "failure", rep.Failure)
		case rep.ExitCode == 2:
			out.Block = true
			reason := strings.TrimSpace(rep.Stderr)
			if reason == "" {
				reason = fmt.Sprintf("blocked by hook %q", rep.Command)
			}
			reasons = append(reasons, reason)
		case rep.ExitCode == 0:
			r.interpret(in.HookEventName, rep, &out, &reasons)
		}
	}
	out.Reason = strings.Join(reasons, "\n")
	return out
}

// interpret folds the stdout of a command that exited 0 into out.
func (r *Runner) interpret(ev Event, rep *Report, out *Outcome, reasons *[]string) {
	text := strings.TrimSpace(rep.Stdout)
	if !strings.HasPrefix(text, "{") {
		if text != "" && (ev == SessionStart || ev == UserPromptSubmit) {
			out.Context = append(out.Context, text)
		}
		return
	}
	var o Output
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		rep.Failure = "stdout looks like JSON but does not parse: " + err.Error()
		r.logger().Warn("hook failed", "event", ev, "command", rep.Command, "failure", rep.Failure)
		return
	}
	spec := o.SpecificOutput
	if h := o.HookSpecific; h != nil {
		if h.PermissionDecision != "" {
			spec.PermissionDecision, spec.PermissionDecisionReason = h.PermissionDecision, h.PermissionDecisionReason
		}
		if h.AdditionalContext != "" {
			spec.AdditionalContext = h.AdditionalContext
		}
	}
	if o.Continue != nil && !*o.Continue {
		out.Halt = true
		if out.HaltReason == "" {
			out.HaltReason = o.StopReason
		}
	}
	if o.SystemMessage != "" {
		out.Messages = append(out.Messages, o.SystemMessage)
	}
	if spec.AdditionalContext != "" {
		out.Context = append(out.Context, spec.AdditionalContext)
	}
	perm, why := Permission(spec.PermissionDecision), spec.PermissionDecisionReason
	switch o.Decision {
	case "block":
		out.Block = true
		reason := o.Reason
		if reason == "" {
			reason = fmt.Sprintf("blocked by hook %q", rep.Command)
		}
		*reasons = append(*reasons, reason)
	case "approve":
		if perm == PermNone {
			perm, why = PermAllow, o.Reason
		}
	}
	switch perm {
	case PermNone, PermAllow, PermAsk, PermDeny:
	default:
		rep.Failure = fmt.Sprintf("unknown permissionDecision %q", perm)
		r.logger().Warn("hook failed", "event", ev, "command", rep.Command, "failure", rep.Failure)
		return
	}
	if perm.rank() > out.Permission.rank() {
		out.Permission, out.PermissionReason = perm, why
	}
	if perm == PermDeny {
		out.Block = true
		if why == "" {
			why = fmt.Sprintf("denied by hook %q", rep.Command)
		}
		*reasons = append(*reasons, why)
	}
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// exec runs one command to its end or its timeout.
func (r *Runner) exec(ctx context.Context, c Command, stdin []byte) Report {
	rep := Report{Command: c.Command, ExitCode: -1}
	timeout := DefaultTimeout
	if c.Timeout > 0 {
		timeout = time.Duration(c.Timeout * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	max := r.MaxOutput
	if max <= 0 {
		max = 64 << 10
	}
	stdout, stderr := &capped{max: max}, &capped{max: max}
	cmd := exec.CommandContext(ctx, "sh", "-c", c.Command)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	procgroup.KillOnCancel(cmd)
	// Pipes held open by a stray grandchild must not hold the run.
	cmd.WaitDelay = time.Second

	start := time.Now()
	err := cmd.Run()
	rep.Duration = time.Since(start)
	if cmd.Process != nil {
		// Whatever the command left running in its group goes with it.
		procgroup.Kill(cmd)
	}
	rep.Stdout, rep.Stderr = stdout.String(), stderr.String()
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		rep.TimedOut = true
		rep.Failure = fmt.Sprintf("timed out after %s and was killed", timeout)
	case ctx.Err() != nil:
		rep.Failure = "cancelled: " + ctx.Err().Error()
	case errors.As(err, &exit) && exit.Exited():
		rep.ExitCode = exit.ExitCode()
		if rep.ExitCode != 2 {
			rep.Failure = fmt.Sprintf("exited with status %d", rep.ExitCode)
			if s := strings.TrimSpace(rep.Stderr); s != "" {
				rep.Failure += ": " + firstLine(s)
			}
		}
	case errors.Is(err, exec.ErrWaitDelay):
		rep.ExitCode = 0
		if cmd.ProcessState != nil {
			rep.ExitCode = cmd.ProcessState.ExitCode()
		}
		if rep.ExitCode != 0 && rep.ExitCode != 2 {
			rep.Failure = fmt.Sprintf("exited with status %d", rep.ExitCode)
		}
	case err != nil:
		rep.Failure = err.Error()
	default:
		rep.ExitCode = 0
	}
	return rep
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
	} else {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		return c.buf.String() + fmt.Sprintf("\n[%d more bytes not kept]", c.dropped)
	}
	return c.buf.String()
}
