package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/praxis-tools/praxis/internal/procgroup"
	"github.com/praxis-tools/praxis/praxis"
)

// runGates runs the gates in order, stopping at the first that fails, and
// reports each as a gate event. It returns the failed gate, or nil when all
// passed.
func (r *run) runGates(ctx context.Context, step int) *GateResult {
	hs := r.hs
	hs.gateAttempts++
	hs.gates = nil
	for _, g := range hs.h.Gates {
		res := r.runGate(ctx, g)
		res.Attempt = hs.gateAttempts
		hs.gates = append(hs.gates, res)
		r.ev.emit(Event{Type: EventGate, Step: step, HarnessFields: HarnessFields{Gate: &res}})
		if !res.Passed {
			return &hs.gates[len(hs.gates)-1]
		}
	}
	return nil
}

// runGate runs one gate: through the catalog's bash tool when there is
// one, so that the sandbox policy applies, else with sh in the workspace.
func (r *run) runGate(ctx context.Context, command string) GateResult {
	h := r.hs.h
	max := h.GateOutput
	if max <= 0 {
		max = 8000
	}
	res := GateResult{Command: command, ExitCode: -1}
	start := time.Now()
	defer func() { res.DurationMS = time.Since(start).Milliseconds() }()
	if _, ok := r.cfg.Tools.Lookup("bash"); ok {
		args, _ := json.Marshal(map[string]string{"command": command})
		out, err := r.cfg.Tools.Call(ctx, "bash", args)
		if err != nil {
			out = praxis.ErrorResult(err)
		}
		res.Output = boundOutput(out.Text, max)
		res.ExitCode = exitCodeOf(out)
		res.Passed = !out.IsError && res.ExitCode == 0
		res.DurationMS = time.Since(start).Milliseconds()
		return res
	}
	timeout := h.GateTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	gctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(gctx, "sh", "-c", command)
	cmd.Dir = h.Workspace
	cmd.Stdout, cmd.Stderr = &out, &out
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	text := out.String()
	var exit *exec.ExitError
	switch {
	case gctx.Err() == context.DeadlineExceeded:
		text += fmt.Sprintf("\n[the gate timed out after %s and was killed]", timeout)
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		text += "\n[" + err.Error() + "]"
	}
	res.Output = boundOutput(text, max)
	res.Passed = res.ExitCode == 0
	return res
}

// exitCodeOf reads the exit code of a bash tool result: its structured
// exit_code, else 0 for a success and 1 for a failure.
func exitCodeOf(res praxis.Result) int {
	if res.Structured != nil {
		if b, err := json.Marshal(res.Structured); err == nil {
			var s struct {
				ExitCode *int `json:"exit_code"`
			}
			if json.Unmarshal(b, &s) == nil && s.ExitCode != nil {
				if res.IsError && *s.ExitCode == 0 {
					return -1
				}
				return *s.ExitCode
			}
		}
	}
	if res.IsError {
		return -1
	}
	return 0
}

// boundOutput keeps the end of a gate's output, where test runners put
// their verdict, within max bytes.
func boundOutput(s string, max int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= max {
		return s
	}
	return cutMiddle(s, max, fmt.Sprintf("\n[… %d bytes of output left out …]\n", len(s)-max))
}

// gateMessage tells the model that a gate failed.
func gateMessage(g *GateResult, attempt, max int) string {
	return fmt.Sprintf("You said the work is done, but the evaluation gate failed (attempt %d of %d):\n$ %s\nexit code %d\n%s\n\nFix the cause and say when you are done again; the gates run again then.",
		attempt, max, g.Command, g.ExitCode, g.Output)
}
