package praxis

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-tools/praxis/sandbox"
)

type bashArgs struct {
	Command    string            `json:"command" minLength:"1" jsonschema:"The command, run by bash -c."`
	Cwd        string            `json:"cwd,omitempty" jsonschema:"Working directory, relative to the workspace root or absolute inside it. Default: the workspace root."`
	TimeoutMS  int64             `json:"timeout_ms,omitempty" minimum:"1" jsonschema:"Time limit in milliseconds; the command's whole process group is killed when it passes. Default and maximum are set by the policy."`
	Stdin      *string           `json:"stdin,omitempty" jsonschema:"Standard input. Default: none (/dev/null)."`
	Env        map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables for this command."`
	Background bool              `json:"background,omitempty" jsonschema:"Start the command as a background job and return its id at once. Read its output with job_output, end it with job_kill."`
}

// bashInfo is bash's structured result: the status of a command that
// finished, or the state of the background job it became.
type bashInfo struct {
	*commandInfo
	*jobState

	text string
}

func (b bashInfo) Text() string { return b.text }

// commandInfo is the status of a finished command.
type commandInfo struct {
	ExitCode        int    `json:"exit_code"`
	Signal          string `json:"signal,omitempty"`
	DurationMS      int64  `json:"duration_ms"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StderrBytes     int64  `json:"stderr_bytes"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	LeftoversKilled int    `json:"leftovers_killed,omitempty"`
}

// jobState is where a background job stands.
type jobState struct {
	Job     string `json:"job"`
	Running bool   `json:"running"`
	Next    int64  `json:"next"`
}

func (e *Engine) bash(ctx context.Context, a bashArgs) (bashInfo, error) {
	s := e.shell
	if s.runner == nil {
		return bashInfo{}, Errorf(EPolicy, "the shell is disabled by policy: bash runs no commands").
			WithDetail("A person enables it in the Praxis config (sandbox: shell: true).")
	}
	pol := s.runner.Policy()
	dir, err := e.commandDir(a.Cwd)
	if err != nil {
		return bashInfo{}, err
	}
	timeout := time.Duration(a.TimeoutMS) * time.Millisecond
	if timeout > pol.MaxTimeout {
		return bashInfo{}, Errorf(EPolicy, "timeout_ms %d is over the policy maximum of %d", a.TimeoutMS, pol.MaxTimeout.Milliseconds()).
			WithDetail("Ask for at most " + strconv.FormatInt(pol.MaxTimeout.Milliseconds(), 10) + " ms, or run the command with background: true and poll it with job_output.")
	}
	for k := range a.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bashInfo{}, Errorf(EInvalidArgs, "field env: %q is not a variable name", k)
		}
	}
	c := sandbox.Command{Script: a.Command, Dir: dir, Env: a.Env, Timeout: timeout}
	if a.Stdin != nil {
		c.Stdin = strings.NewReader(*a.Stdin)
	}
	p, err := s.start(c)
	if err != nil {
		return bashInfo{}, sandboxError(err, e.ws)
	}
	if a.Background {
		j, err := s.addJob(a.Command, p, 0)
		if err != nil {
			p.Kill()
			return bashInfo{}, err
		}
		return bashInfo{
			text: fmt.Sprintf("started background job %s (pid %d, time limit %v)\n"+
				"Read its output with job_output {\"job\": %q}; end it with job_kill.", j.id, p.PID(), p.Timeout(), j.id),
			jobState: &jobState{Job: j.id, Running: true, Next: 0},
		}, nil
	}
	var detach <-chan time.Time
	if pol.BackgroundAfter > 0 {
		t := time.NewTimer(pol.BackgroundAfter)
		defer t.Stop()
		detach = t.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-p.Done():
			return commandResult(p.Result(), p.Timeout())
		case <-ctx.Done():
			p.Kill()
			<-p.Done()
			return bashInfo{}, Errorf(ECancelled, "bash cancelled; the command and every process it started were killed")
		case <-tick.C:
			el := time.Since(p.Started())
			ReportProgress(ctx, el.Seconds(), p.Timeout().Seconds(),
				fmt.Sprintf("running for %s, %d bytes of output", el.Round(time.Second), p.Written()))
		case <-detach:
			stdout, stderr, next := p.Output(0)
			j, err := s.addJob(a.Command, p, next)
			if err != nil {
				continue // no room for a job: keep waiting in the foreground
			}
			var b strings.Builder
			fmt.Fprintf(&b, "still running after %s: now background job %s (pid %d, time limit %v)\n",
				pol.BackgroundAfter, j.id, p.PID(), p.Timeout())
			fmt.Fprintf(&b, "Read more with job_output {\"job\": %q}; end it with job_kill.\n", j.id)
			appendStreams(&b, stdout, stderr)
			return bashInfo{text: b.String(), jobState: &jobState{Job: j.id, Running: true, Next: next}}, nil
		}
	}
}

// commandDir resolves the caller's cwd to an absolute directory inside the
// workspace, following symlinks only while they stay inside.
func (e *Engine) commandDir(cwd string) (string, error) {
	rel, err := e.ws.Rel(cwd)
	if err != nil {
		return "", err
	}
	fi, err := e.ws.root.Stat(rel)
	if err != nil {
		return "", e.ws.fail(rel, err)
	}
	if !fi.IsDir() {
		return "", Errorf(ENotDir, "cwd %s is not a directory", rel)
	}
	return filepath.Join(e.ws.real, filepath.FromSlash(rel)), nil
}

// sandboxError maps the sandbox's refusals to codes.
func sandboxError(err error, ws *Workspace) error {
	var pe *Error
	switch {
	case errors.As(err, &pe):
		return err
	case errors.Is(err, sandbox.ErrDisabled):
		return Errorf(EPolicy, "%v", err)
	case errors.Is(err, sandbox.ErrTimeoutTooLong):
		return Errorf(EPolicy, "%v", err)
	case errors.Is(err, sandbox.ErrOutside):
		return Errorf(EPathOutside, "%v", err).WithDetail("workspace root: " + ws.dir)
	case errors.Is(err, sandbox.ErrNoDir):
		return Errorf(ENotDir, "%v", err).WithDetail("cwd must name an existing directory inside the workspace root: " + ws.dir)
	case errors.Is(err, sandbox.ErrUnavailable):
		return Errorf(EUnavailable, "%v", err)
	}
	return Errorf(EIO, "running the command: %v", err)
}

// commandResult renders a finished foreground command. A non-zero exit is
// a normal result; a timeout and a limit that stopped the command are
// errors carrying the output.
func commandResult(r sandbox.Result, limit time.Duration) (bashInfo, error) {
	var b strings.Builder
	appendStatus(&b, r)
	appendStreams(&b, r.Stdout, r.Stderr)
	switch {
	case r.TimedOut:
		return bashInfo{}, Errorf(ETimeout, "the command ran past its time limit of %v; it and every process it started were killed", limit).
			WithDetail(b.String() + "Ask for a longer timeout_ms (up to the policy maximum), or run it with background: true.")
	case r.Limit == "processes":
		return bashInfo{}, Errorf(EBudgetExceeded, "the command started more processes than the policy allows (limits.processes, counted wherever they went); all of them were killed").
			WithDetail(b.String())
	case r.Killed:
		return bashInfo{}, Errorf(ECancelled, "the command was killed (the engine is closing)").WithDetail(b.String())
	}
	return bashInfo{text: b.String(), commandInfo: &commandInfo{
		ExitCode:        r.ExitCode,
		Signal:          r.Signal,
		DurationMS:      r.Duration.Milliseconds(),
		StdoutBytes:     r.Stdout.Total,
		StderrBytes:     r.Stderr.Total,
		StdoutTruncated: r.Stdout.Truncated(),
		StderrTruncated: r.Stderr.Truncated(),
		LeftoversKilled: r.Leftovers,
	}}, nil
}

// appendStatus writes the first line: the exit code, how it ended and how
// long it took, then a note on leftovers.
func appendStatus(b *strings.Builder, r sandbox.Result) {
	fmt.Fprintf(b, "exit code %d", r.ExitCode)
	if r.Signal != "" {
		fmt.Fprintf(b, " (signal: %s)", r.Signal)
	}
	if r.Limit != "" {
		fmt.Fprintf(b, " (stopped by the %s limit)", r.Limit)
	}
	fmt.Fprintf(b, " after %v\n", r.Duration.Round(time.Millisecond))
	if r.Leftovers > 0 {
		fmt.Fprintf(b, "note: %d background process(es) were still running when the shell exited and were killed; "+
			"use background: true to keep a command running\n", r.Leftovers)
	}
}

// appendStreams writes each stream under a label, or says there was none.
func appendStreams(b *strings.Builder, stdout, stderr sandbox.Output) {
	wrote := false
	for _, s := range []struct {
		name string
		out  sandbox.Output
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if s.out.Text == "" {
			continue
		}
		wrote = true
		fmt.Fprintf(b, "--- %s", s.name)
		if s.out.Truncated() {
			fmt.Fprintf(b, " (%d bytes, %d omitted in the middle)", s.out.Total, s.out.Omitted)
		}
		b.WriteString(" ---\n")
		text := strings.ToValidUTF8(s.out.Text, "\uFFFD")
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
	}
	if !wrote {
		b.WriteString("(no output)\n")
	}
}
