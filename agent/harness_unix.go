//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// gateGroup runs a gate command in its own process group, killed whole
// when the gate is cancelled or times out.
func gateGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
