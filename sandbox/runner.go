package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Runner runs commands under one Policy. It is safe for concurrent use.
type Runner struct {
	policy Policy
	bash   string // the bash that runs the limits and, without isolation, the command
	bwrap  string // the bwrap program on PATH, under IsolationBwrap and IsolationAuto
	why    string // set by New: why IsolationAuto runs without bwrap, known without a probe
	// untried is set by New where bubblewrap is to be probed: what Known
	// says until then.
	untried string
	docker  *docker // the engine and the session's container, under IsolationDocker

	// probe checks bubblewrap once, at the first call that needs to know
	// (see New), and decides the mode; ready adds what commands under
	// none need from the Praxis process. What they set below is read only
	// after them.
	probe  func() probed
	probed atomic.Bool // set when probe returns
	ready  func() error
	pidns  bool   // under none, each command gets a PID namespace of its own
	filter []byte // the seccomp program given to bwrap
}

// probed is what the bubblewrap probe found: the isolation commands run
// under, why IsolationAuto fell back to none, or why the policy cannot
// run at all.
type probed struct {
	mode Isolation
	why  string
	err  error
}

// New returns a Runner for p, with p's zero fields set to their defaults.
// It fails with ErrInvalid for a malformed policy and with ErrUnavailable,
// naming what is missing, when p asks for isolation this machine cannot
// provide: under IsolationBwrap it never falls back to running unisolated.
// With the shell disabled, New succeeds and every Start fails with
// ErrDisabled.
//
// New starts no process. Whether bubblewrap can build its sandbox is
// checked once, by running true in it, at the first call of Start, Ready,
// Isolation, Fallback or Describe (Known never runs it). Under
// IsolationAuto the runner then uses bwrap where that works and none where
// it does not; Isolation and Fallback say which and why. Under IsolationBwrap, New already fails
// when bwrap is not on PATH; a bwrap that is there but cannot build the
// sandbox makes Ready and every Start fail with ErrUnavailable, without
// running the command.
//
// A Runner with the shell enabled that runs commands under none marks the
// whole Praxis process non-dumpable (PR_SET_DUMPABLE 0), so that commands
// running as the same user cannot read its environment or memory through
// /proc, and makes it a child subreaper, so that no process a command
// starts can leave its reach; both are done before the first command,
// are process-wide and stay set.
func New(p Policy) (*Runner, error) {
	p = p.withDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	r := &Runner{policy: p}
	r.probe = sync.OnceValue(func() probed { return probed{mode: p.Isolation} })
	r.ready = sync.OnceValue(func() error { return nil })
	if !p.Shell {
		return r, nil
	}
	if p.Isolation == IsolationDocker {
		var err error
		r.docker, err = newDocker(p)
		return r, err
	}
	if err := checkPlatform(p); err != nil {
		return nil, err
	}
	var err error
	if r.bash, err = exec.LookPath("bash"); err != nil {
		return nil, fmt.Errorf("%w: the shell needs bash, which is not on PATH", ErrUnavailable)
	}
	if p.Isolation == IsolationBwrap || p.Isolation == IsolationAuto {
		if fi, err := os.Stat(realPath(p.Workspace)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: workspace %s is not a directory", ErrInvalid, p.Workspace)
		}
		if r.bwrap, err = exec.LookPath("bwrap"); err != nil {
			err = fmt.Errorf("%w: isolation bwrap needs the bwrap program (Debian and Ubuntu package bubblewrap), which is not on PATH", ErrUnavailable)
			if p.Isolation == IsolationBwrap {
				return nil, err
			}
			if p.Network == NetworkOff {
				return nil, fmt.Errorf("%w: network off needs bwrap, which does not work here: %v", ErrUnavailable, err)
			}
			r.why = err.Error()
		}
	}
	if r.bwrap != "" {
		r.untried = r.describe(probed{mode: p.Isolation}) + " (bwrap is tried at the first command)"
	}
	r.probe = sync.OnceValue(func() probed {
		pr := r.probeMode()
		r.probed.Store(true)
		return pr
	})
	r.ready = sync.OnceValue(func() error {
		pr := r.probe()
		if pr.err != nil {
			return pr.err
		}
		if pr.mode == IsolationNone {
			return r.protectPraxis()
		}
		return nil
	})
	return r, nil
}

// probeMode decides the isolation commands run under, probing bubblewrap
// where the policy may use it.
func (r *Runner) probeMode() probed {
	p := r.policy
	switch {
	case p.Isolation == IsolationAuto && r.bwrap == "":
		return probed{mode: IsolationNone, why: r.why}
	case p.Isolation != IsolationAuto && p.Isolation != IsolationBwrap:
		return probed{mode: p.Isolation}
	}
	err := r.probeBwrap()
	switch {
	case err == nil:
		return probed{mode: IsolationBwrap}
	case p.Isolation == IsolationBwrap:
		return probed{mode: IsolationBwrap, err: err}
	case p.Network == NetworkOff:
		return probed{mode: IsolationAuto, err: fmt.Errorf("%w: network off needs bwrap, which does not work here: %v", ErrUnavailable, err)}
	}
	return probed{mode: IsolationNone, why: err.Error()}
}

// Ready checks, once, that the runner can run commands as its policy
// asks (under IsolationBwrap and IsolationAuto, by running true under
// bwrap) and prepares the Praxis process for them. It returns the error
// every Start would fail with, or nil. Start calls it; a caller that
// wants to refuse a policy that cannot work before the first command
// calls it first.
func (r *Runner) Ready() error { return r.ready() }

// Isolation returns the isolation commands run under: the policy's, or,
// under IsolationAuto, bwrap or none as the probe found.
func (r *Runner) Isolation() Isolation { return r.probe().mode }

// Fallback returns why IsolationAuto runs commands without isolation, or
// "" when it does not.
func (r *Runner) Fallback() string { return r.probe().why }

// Describe returns one line saying how commands run: the isolation
// actually in force, the network, Unix sockets, and, after a fallback,
// why; or why commands cannot run.
func (r *Runner) Describe() string {
	if !r.policy.Shell {
		return "shell disabled"
	}
	return r.describe(r.probe())
}

// Known describes the runner as Describe does, without running anything:
// before bubblewrap has been probed, it gives the policy's isolation and
// says that bwrap is tried at the first command. Under IsolationNone and
// IsolationDocker, and under IsolationAuto with no bwrap on PATH, there
// is nothing to probe, and Known is Describe.
func (r *Runner) Known() string {
	if !r.policy.Shell {
		return "shell disabled"
	}
	if r.untried == "" || r.probed.Load() {
		return r.describe(r.probe())
	}
	return r.untried
}

// describe is Describe's line for what the probe found.
func (r *Runner) describe(pr probed) string {
	p := r.policy
	if pr.err != nil {
		return fmt.Sprintf("isolation %s unavailable, commands refused: %v", p.Isolation, pr.err)
	}
	net := "on"
	if p.networkOff() {
		net = "off"
	}
	s := fmt.Sprintf("isolation %s", pr.mode)
	if p.Isolation != pr.mode {
		s += fmt.Sprintf(" (policy %s)", p.Isolation)
	}
	s += ", network " + net
	if pr.mode == IsolationBwrap {
		sockets := "refused"
		if p.UnixSockets {
			sockets = "allowed"
		}
		s += ", unix sockets " + sockets
	}
	if pr.why != "" {
		s += "; bwrap unavailable: " + pr.why
	}
	return s
}

// Policy returns the runner's policy, defaults filled in.
func (r *Runner) Policy() Policy { return r.policy }

// Command is one command to run.
type Command struct {
	// Script is run by bash -c.
	Script string
	// Dir is the working directory: absolute, or relative to the
	// workspace. It must resolve inside the workspace. Default: the
	// workspace.
	Dir string
	// Stdin is the command's standard input. Nil means /dev/null.
	Stdin io.Reader
	// Env holds variables set for this command, over the allowlisted ones.
	Env map[string]string
	// Timeout bounds the command's run time. Zero means the policy's
	// Timeout; more than its MaxTimeout is ErrTimeoutTooLong.
	Timeout time.Duration
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the shell's exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended the shell ("killed", "terminated"),
	// if one did.
	Signal string
	// TimedOut is set when the command ran out of time and was killed.
	TimedOut bool
	// Killed is set when Kill was called or the context was cancelled.
	Killed bool
	// Limit names the resource limit that stopped the command, when one
	// evidently did: "processes", "cpu" or "file size".
	Limit string
	// Leftovers is the number of the command's processes still running
	// when its shell exited; they were killed. In a PID namespace the
	// kernel ends them with the shell, and they are not counted.
	Leftovers int
	// Duration is how long the command ran.
	Duration time.Duration
	Stdout   Output
	Stderr   Output
}

// Process is a started command. Its output can be read while it runs.
type Process struct {
	r       *Runner
	cmd     *exec.Cmd
	pid     int
	start   time.Time
	timeout time.Duration
	cap     *capture
	readers sync.WaitGroup
	pipes   [2]*os.File // read ends

	killOnce sync.Once
	killc    chan struct{}

	done chan struct{}
	res  Result
}

// Start starts c. The command runs until it exits, its timeout passes, ctx
// is cancelled or Kill is called; in every case every process it started,
// in its process group or not, is gone when Done is closed. Start fails
// with ErrDisabled, ErrOutside, ErrNoDir, ErrTimeoutTooLong or
// ErrUnavailable without running anything; the first Start checks the
// isolation first, as Ready does.
func (r *Runner) Start(ctx context.Context, c Command) (*Process, error) {
	p := r.policy
	if !p.Shell {
		return nil, ErrDisabled
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = p.Timeout
	}
	if timeout > p.MaxTimeout {
		return nil, fmt.Errorf("%w: %v asked, %v allowed", ErrTimeoutTooLong, timeout, p.MaxTimeout)
	}
	if err := r.ready(); err != nil {
		return nil, err
	}
	dir, err := p.openDir(c.Dir)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	if r.docker != nil {
		// The container holds the workspace at its resolved host path,
		// which is where the opened directory is.
		return r.docker.start(ctx, c, filepath.Clean(dir.Name()), timeout)
	}
	return r.start(ctx, c, dir, timeout)
}

// Close ends the runner's session. Under IsolationDocker it removes the
// session's container, ending every command still running in it, and
// Start fails afterwards; the other isolations hold nothing between
// commands.
func (r *Runner) Close() error {
	if r.docker != nil {
		return r.docker.close()
	}
	return nil
}

// Run runs c to its end and returns its result.
func (r *Runner) Run(ctx context.Context, c Command) (Result, error) {
	p, err := r.Start(ctx, c)
	if err != nil {
		return Result{}, err
	}
	<-p.Done()
	return p.Result(), nil
}

// PID returns the process id of the command's shell, which is also its
// process group id.
func (p *Process) PID() int { return p.pid }

// Started returns when the command started.
func (p *Process) Started() time.Time { return p.start }

// Timeout returns the command's time limit.
func (p *Process) Timeout() time.Duration { return p.timeout }

// Done is closed when the command and every process it started have ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Result returns how the command ended. It is valid once Done is closed.
func (p *Process) Result() Result {
	<-p.done
	return p.res
}

// Kill ends the command: SIGTERM to every process of it, then SIGKILL after
// the policy's grace. It returns at once; Done is closed when all is gone.
func (p *Process) Kill() {
	p.killOnce.Do(func() { close(p.killc) })
}

// Output returns what the command wrote at merged positions from since on
// (0 for everything kept), and the position to pass next time.
func (p *Process) Output(since int64) (stdout, stderr Output, next int64) {
	out, next := p.cap.since(since)
	return out[0], out[1], next
}

// Written returns the number of bytes the command has written to both
// streams so far.
func (p *Process) Written() int64 { return p.cap.position() }

func (p *Process) drain(i int, f *os.File) {
	defer p.readers.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			p.cap.write(i, buf[:n])
		}
		if err != nil {
			return
		}
	}
}
