//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Own makes cmd, when started, the leader of a new process group, keeping
// the rest of cmd.SysProcAttr. A terminal's Ctrl-C then no longer reaches
// it: the caller ends it. Call before cmd.Start.
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillOnCancel is Own, and has the cancellation of cmd's context kill the
// whole group instead of the command alone. Call before cmd.Start.
func KillOnCancel(cmd *exec.Cmd) {
	Own(cmd)
	cmd.Cancel = func() error { return Kill(cmd) }
}

// Kill sends SIGKILL to every process of the group cmd leads. It does
// nothing for a command never started.
func Kill(cmd *exec.Cmd) error {
	return signal(cmd, syscall.SIGKILL)
}

// Terminate sends SIGTERM to every process of the group cmd leads, asking
// them to end. It does nothing for a command never started.
func Terminate(cmd *exec.Cmd) error {
	return signal(cmd, syscall.SIGTERM)
}

func signal(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
