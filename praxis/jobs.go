package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	log    *slog.Logger
	wsDir  string
	said   sync.Once // the fallback of isolation auto, said at the first command

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
// disables the shell. protected paths stay read-only under bwrap. It
// starts no process: the runner checks its isolation at the first
// command.
func newShell(p *sandbox.Policy, ws *Workspace, protected []string, log *slog.Logger) (*shell, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &shell{ctx: ctx, cancel: cancel, jobs: make(map[string]*job), log: log, wsDir: ws.dir}
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
	s.said.Do(func() {
		if s.runner.Fallback() != "" {
			// Isolation auto found no working bwrap: commands run
			// unisolated, said once, with the reason.
			s.log.Warn("sandbox: "+s.runner.Describe(), "workspace", s.wsDir)
		}
	})
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
