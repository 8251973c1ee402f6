//go:build !unix

package procgroup

import (
	"os"
	"os/exec"
)

// Own leaves cmd as it is where there are no process groups.
func Own(cmd *exec.Cmd) {}

// KillOnCancel leaves cmd as it is: cancellation kills the command only.
func KillOnCancel(cmd *exec.Cmd) {}

// Kill kills cmd's own process. It does nothing for a command never
// started.
func Kill(cmd *exec.Cmd) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// Terminate asks cmd's own process to end; where that cannot be asked, it
// is killed. It does nothing for a command never started.
func Terminate(cmd *exec.Cmd) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}
