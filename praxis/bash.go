package praxis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/praxis-tools/praxis/sandbox"
)

// maxRunningJobs bounds the background jobs running at once.
const maxRunningJobs = 16

// maxKeptJobs bounds the jobs remembered, running or finished; the oldest
// finished jobs are forgotten first.
const maxKeptJobs = 64

// shell runs the bash tool's commands and keeps its background jobs. Every
// command runs under the engine's lifetime context, so Close ends them all.
type shell struct {
	runner *sandbox.Runner // nil when the shell is disabled
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup // every started command, foreground or not
	jobs    map[string]*job
	nextID  int
}

// job is a command left running in the background.
type job struct {
	id      string
	command string
	proc    *sandbox.Process

	mu   sync.Mutex
	read int64 // the position job_output continues from
}

// newShell builds the shell for policy p in the workspace ws. A nil p
// disables the shell. protected paths stay read-only under bwrap.
func newShell(p *sandbox.Policy, ws *Workspace, protected []string) (*shell, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &shell{ctx: ctx, cancel: cancel, jobs: make(map[string]*job)}
	if p == nil || !p.Shell {
		return s, nil
	}
	pol := *p
	if pol.Workspace == "" {
		pol.Workspace = ws.real
	}
	for _, rel := range protected {
		pol.ReadOnly = append(pol.ReadOnly, strings.TrimSuffix(rel, "/"))
	}
	r, err := sandbox.New(pol)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.runner = r
	return s, nil
}

// close ends every command, foreground and background, waits until
// their processes are gone, and ends the runner's session.
func (s *shell) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.running.Wait()
	if s.runner != nil {
		s.runner.Close()
	}
}

// start starts c unless the shell is closed.
func (s *shell) start(c sandbox.Command) (*sandbox.Process, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, Errorf(EUnavailable, "the engine is closing; no command may start")
	}
	s.running.Add(1) // before close can Wait; a command started after close is killed at once
	s.mu.Unlock()
	p, err := s.runner.Start(s.ctx, c)
	if err != nil {
		s.running.Done()
		return nil, err
	}
	go func() { <-p.Done(); s.running.Done() }()
	return p, nil
}

// addJob registers p as a background job. The caller holds no lock.
func (s *shell) addJob(command string, p *sandbox.Process, read int64) (*job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	running := 0
	for _, j := range s.jobs {
		if !isDone(j.proc) {
			running++
		}
	}
	if running >= maxRunningJobs {
		return nil, Errorf(EBudgetExceeded, "%d background jobs are running, the most allowed", running).
			WithDetail("End one with job_kill, or wait for one to finish.")
	}
	s.nextID++
	j := &job{id: strconv.Itoa(s.nextID), command: command, proc: p, read: read}
	s.jobs[j.id] = j
	s.prune()
	return j, nil
}

// prune forgets the oldest finished jobs beyond maxKeptJobs. s.mu is held.
func (s *shell) prune() {
	if len(s.jobs) <= maxKeptJobs {
		return
	}
	var done []*job
	for _, j := range s.jobs {
		if isDone(j.proc) {
			done = append(done, j)
		}
	}
	slices.SortFunc(done, func(a, b *job) int { return a.proc.Started().Compare(b.proc.Started()) })
	for _, j := range done[:max(0, min(len(done), len(s.jobs)-maxKeptJobs))] {
		delete(s.jobs, j.id)
	}
}

func (s *shell) job(id string) (*job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[id]; ok {
		return j, nil
	}
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	known := "none"
	if len(ids) > 0 {
		known = strings.Join(ids, ", ")
	}
	return nil, Errorf(ENotFound, "no job %q", id).WithDetail("known jobs: " + known)
}

func isDone(p *sandbox.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

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

type jobArgs struct {
	Job   jobRef `json:"job" jsonschema:"The job id bash returned."`
	Since *int64 `json:"since,omitempty" minimum:"0" jsonschema:"Output position to read from, as returned by the previous call (next). Default: where the previous job_output call stopped; 0 reads everything kept."`
}

type jobKillArgs struct {
	Job jobRef `json:"job" jsonschema:"The job id bash returned."`
}

// jobInfo is the structured result of job_output and job_kill.
type jobInfo struct {
	jobState
	*jobExit

	text string
}

func (j jobInfo) Text() string { return j.text }

// jobExit is how a background job ended.
type jobExit struct {
	ExitCode   int    `json:"exit_code"`
	Signal     string `json:"signal,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// jobRef is a job id given as a string ("3") or a number (3).
type jobRef string

func (jobRef) jsonSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Types: []string{"string", "integer"}}
}

func (j *jobRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*j = jobRef(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*j = jobRef(n.String())
	return nil
}

func (e *Engine) jobOutput(ctx context.Context, a jobArgs) (jobInfo, error) {
	j, err := e.shell.job(string(a.Job))
	if err != nil {
		return jobInfo{}, err
	}
	return jobReport(j, a.Since, false), nil
}

func (e *Engine) jobKill(ctx context.Context, a jobKillArgs) (jobInfo, error) {
	j, err := e.shell.job(string(a.Job))
	if err != nil {
		return jobInfo{}, err
	}
	wasDone := isDone(j.proc)
	j.proc.Kill()
	select {
	case <-j.proc.Done():
	case <-ctx.Done():
		return jobInfo{}, Errorf(ECancelled, "job_kill cancelled while job %s was ending", j.id)
	}
	return jobReport(j, nil, !wasDone), nil
}

// jobReport renders a job's state and its output since the given position
// (default: where the last report stopped), and advances that position.
func jobReport(j *job, since *int64, killed bool) jobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	pos := j.read
	if since != nil {
		pos = *since
	}
	stdout, stderr, next := j.proc.Output(pos)
	j.read = next
	info := jobInfo{jobState: jobState{Job: j.id, Next: next}}
	var b strings.Builder
	if isDone(j.proc) {
		r := j.proc.Result()
		info.jobExit = &jobExit{ExitCode: r.ExitCode, Signal: r.Signal, DurationMS: r.Duration.Milliseconds()}
		switch {
		case killed:
			fmt.Fprintf(&b, "job %s killed: ", j.id)
		case r.TimedOut:
			fmt.Fprintf(&b, "job %s timed out and was killed: ", j.id)
		default:
			fmt.Fprintf(&b, "job %s finished: ", j.id)
		}
		appendStatus(&b, r)
	} else {
		info.Running = true
		fmt.Fprintf(&b, "job %s running for %v (time limit %v): %s\n", j.id,
			time.Since(j.proc.Started()).Round(time.Second), j.proc.Timeout(), clip(j.command, 80))
	}
	appendStreams(&b, stdout, stderr)
	fmt.Fprintf(&b, "next: %d\n", next)
	info.text = b.String()
	return info
}

// clip returns the first line of s, cut to at most n bytes (never inside
// a character), with "…" when anything was left out.
func clip(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	if len(line) > n {
		line, more = strings.ToValidUTF8(line[:n], ""), true
	}
	if more {
		line += "…"
	}
	return line
}
