//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a new process group, so that
// killProcessGroup reaches the processes it starts (npx, uvx and shell
// wrappers start the real server as a child) and a terminal's Ctrl-C does
// not reach the server before Praxis closes it.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killProcessGroup kills what is left of cmd's process group after the
// server was closed.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
