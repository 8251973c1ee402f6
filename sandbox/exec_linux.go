//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// checkPlatform reports whether this system can run commands.
func checkPlatform(Policy) error { return nil }

// start runs c, already checked, in dir with the given time limit.
func (r *Runner) start(ctx context.Context, c Command, dir string, timeout time.Duration) (*Process, error) {
	p := r.policy
	env := p.environ(os.Environ(), c.Env)
	path, args := r.bash, []string{"bash", "-c", limitPrefix(p.Limits) + c.Script}
	if p.Isolation == IsolationBwrap {
		if _, err := os.Stat(r.bwrap); err != nil {
			return nil, fmt.Errorf("%w: bwrap at %s: %v", ErrUnavailable, r.bwrap, err)
		}
		path, args = r.bwrap, append(r.bwrapArgs(dir), args...)
		env = append(env, "TMPDIR=/tmp")
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
		Path:   path,
		Args:   args,
		Env:    env,
		Dir:    dir,
		Stdin:  c.Stdin,
		Stdout: outW,
		Stderr: errW,
		// A session of its own: a process group to kill as a whole, and no
		// controlling terminal to read or inject keystrokes into.
		// Pdeathsig ends the shell (and under bwrap, through
		// --die-with-parent, everything inside) if Praxis dies without
		// cleaning up. The kernel ties it to the thread that started the
		// command, and the Go runtime keeps its threads alive unless a
		// goroutine locked to one exits.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
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
	var tick <-chan time.Time
	watch := &groupWatch{pgid: p.pid, limit: int(pol.Limits.Processes)}
	if pol.Limits.Processes > 0 {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	stop := func(graceful bool) {
		if graceful {
			terminate(p.pid, pol.KillGrace)
		} else {
			killGroup(p.pid)
		}
	}
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-timer.C:
			p.res.TimedOut = true
			stop(true)
			break wait
		case <-ctx.Done():
			p.res.Killed = true
			stop(true)
			break wait
		case <-p.killc:
			p.res.Killed = true
			stop(true)
			break wait
		case <-tick:
			if watch.over() {
				p.res.Limit = "processes"
				stop(false)
				break wait
			}
		}
	}
	<-exited
	p.res.Duration = time.Since(p.start)
	// The shell is gone; anything left in its group is a leftover (a
	// background job, a daemon that did not leave the group). Under bwrap
	// the shell is bwrap itself, and its PID namespace ends with it: give
	// the namespace's init a moment to go, taking the rest with it.
	if pol.Isolation == IsolationBwrap {
		for deadline := time.Now().Add(250 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if n, err := groupSize(p.pid, p.pid); err != nil || n == 0 {
				break
			}
		}
	}
	if n, _ := groupSize(p.pid, p.pid); n > 0 {
		p.res.Leftovers = n
		terminate(p.pid, pol.KillGrace)
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
