//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// checkPlatform reports whether this system can run commands.
func checkPlatform(Policy) error { return nil }

// protectPraxis prepares the Praxis process for commands under none,
// before the first one runs: it marks it non-dumpable, so that a command
// running as the same user cannot read /proc/PID/environ or mem of Praxis
// (root still can), and gives each
// command a PID namespace where that is permitted (the kernel kills every
// process in it when the shell ends), or else makes Praxis a child
// subreaper, so that orphans of a command come to Praxis, where the
// runner finds and kills them, instead of to init. Under bwrap the
// sandbox's own PID namespace does both.
//
// Praxis stays a subreaper for the rest of its life. It reaps only the
// orphans it attributes to a command, never a child os/exec waits for,
// so others' exit statuses are not taken; orphans of processes started by
// other parts of the program stay zombies until Praxis exits.
func (r *Runner) protectPraxis() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: cannot make Praxis non-dumpable: %v", ErrUnavailable, err)
	}
	r.pidns = r.probePIDNamespace()
	if r.pidns {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: cannot make Praxis a child subreaper: %v", ErrUnavailable, err)
	}
	return nil
}

// probePIDNamespace reports whether this process may give a child a PID
// namespace of its own, which needs CAP_SYS_ADMIN: in practice, whether
// Praxis runs as root. (A user namespace would let other users make one,
// but its ID maps must be written by Praxis into the child's /proc, which
// a non-dumpable Praxis cannot do.)
func (r *Runner) probePIDNamespace() bool {
	cmd := exec.Command(r.bash, "-c", ":")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	return cmd.Run() == nil
}

// probeOutput returns a file for the bwrap probe's output: in memory or,
// where memfd_create is refused (an old kernel, a container's seccomp
// filter), a temporary file already removed.
func probeOutput() (*os.File, error) {
	if fd, err := memfdCreate("praxis-probe", unix.MFD_CLOEXEC); err == nil {
		return os.NewFile(uintptr(fd), "bwrap-probe-output"), nil
	}
	f, err := os.CreateTemp("", "praxis-probe-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// memfdCreate is unix.MemfdCreate; a test refuses it.
var memfdCreate = unix.MemfdCreate

// start runs c, already checked, in the directory dir, opened inside the
// workspace, with the given time limit.
func (r *Runner) start(ctx context.Context, c Command, dir *os.File, timeout time.Duration) (*Process, error) {
	p := r.policy
	env := p.environ(os.Environ(), c.Env)
	script := limitPrefix(p.Limits) + c.Script
	// The child changes to the opened directory by its descriptor, which
	// it inherits across the fork: a path swapped for a symlink after the
	// check cannot move it.
	cwd := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd()))
	real, err := os.Readlink(cwd)
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	path, args := r.bash, []string{"bash", "-c", script}
	var extra []*os.File
	if r.Isolation() == IsolationBwrap {
		if _, err := os.Stat(r.bwrap); err != nil {
			return nil, fmt.Errorf("%w: bwrap at %s: %v", ErrUnavailable, r.bwrap, err)
		}
		// Inside, bwrap changes directory by path; before the script
		// runs, the shell checks with the kernel (not with bash's own
		// idea of its directory, which is a path string) that it landed
		// where the check said.
		script = "[ \"$(readlink /proc/self/cwd)\" = " + shellQuote(real) + " ] || { echo 'praxis: the working directory moved while the command started' >&2; exit 126; }; " + script
		path, args = r.bwrap, append(r.bwrapArgs(real), "bash", "-c", script)
		env = append(env, "TMPDIR=/tmp")
		filter, err := filterFile(r.filter)
		if err != nil {
			return nil, err
		}
		defer filter.Close()
		extra = []*os.File{filter}
	} else if r.pidns {
		attr.Cloneflags = syscall.CLONE_NEWPID
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:       path,
		Args:       args,
		Env:        env,
		Dir:        cwd,
		Stdin:      c.Stdin,
		Stdout:     outW,
		Stderr:     errW,
		ExtraFiles: extra,
		// A session of its own: a process group to kill as a whole, and no
		// controlling terminal to read or inject keystrokes into.
		// Pdeathsig ends the shell (and under bwrap, through
		// --die-with-parent, everything inside) if Praxis dies without
		// cleaning up. The kernel ties it to the thread that started the
		// command, and the Go runtime keeps its threads alive unless a
		// goroutine locked to one exits.
		SysProcAttr: attr,
		// Bounds the wait for the stdin copier when a process that left
		// the group keeps the pipe open.
		WaitDelay: p.KillGrace,
	}
	proc := &Process{
		r:       r,
		cmd:     cmd,
		timeout: timeout,
		cap:     newCapture(p.OutputBytes),
		pipes:   [2]*os.File{outR, errR},
		killc:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	proc.start = time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	proc.pid = cmd.Process.Pid
	for i, f := range proc.pipes {
		proc.readers.Add(1)
		go proc.drain(i, f)
	}
	go proc.supervise(ctx)
	return proc, nil
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// supervise waits for the shell to exit, enforcing the timeout, ctx, Kill
// and the process limit on the way, then clears the process group, reaps
// the shell and finishes the output.
func (p *Process) supervise(ctx context.Context) {
	defer close(p.done)
	pol := p.r.policy
	exited := make(chan struct{})
	go func() {
		// WNOWAIT leaves the shell a zombie, so its pid (the group id)
		// cannot be reused while leftovers of the group are killed.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	fam := newFamily(p.pid, p.r.Isolation() == IsolationNone && !p.r.pidns, int(pol.Limits.Processes))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-timer.C:
			p.res.TimedOut = true
			fam.terminate(pol.KillGrace)
			break wait
		case <-ctx.Done():
			p.res.Killed = true
			fam.terminate(pol.KillGrace)
			break wait
		case <-p.killc:
			p.res.Killed = true
			fam.terminate(pol.KillGrace)
			break wait
		case <-tick.C:
			// Scanning also keeps track of the family while it runs, so
			// that processes it orphans are known for its own.
			if fam.over() {
				p.res.Limit = "processes"
				fam.kill()
				break wait
			}
		}
	}
	<-exited
	p.res.Duration = time.Since(p.start)
	// The shell is gone; anything left of its family is a leftover (a
	// background job, a daemon). In a PID namespace (bwrap's, or the
	// shell's own) the kernel ends the rest with the namespace's init:
	// give it a moment to.
	if p.r.Isolation() == IsolationBwrap || p.r.pidns {
		for deadline := time.Now().Add(250 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if len(fam.live(false)) == 0 {
				break
			}
		}
	}
	if n := len(fam.live(false)); n > 0 {
		p.res.Leftovers = n
		fam.terminate(pol.KillGrace)
	}
	_ = p.cmd.Wait() // the exit status is in ProcessState; a stdin copy error changes nothing

	// Every writer in the group is gone; a process that left the group may
	// still hold the pipes, so do not wait for end of file forever.
	readersDone := make(chan struct{})
	go func() { p.readers.Wait(); close(readersDone) }()
	select {
	case <-readersDone:
	case <-time.After(pol.KillGrace):
		for _, f := range p.pipes {
			f.SetReadDeadline(time.Now())
		}
		<-readersDone
	}
	for _, f := range p.pipes {
		f.Close()
	}

	p.res.ExitCode = p.cmd.ProcessState.ExitCode()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.res.Signal = ws.Signal().String()
		switch ws.Signal() {
		case syscall.SIGXCPU:
			p.res.Limit = "cpu"
		case syscall.SIGXFSZ:
			p.res.Limit = "file size"
		}
	}
	out, _ := p.cap.since(0)
	p.res.Stdout, p.res.Stderr = out[0], out[1]
}
