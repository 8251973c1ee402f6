//go:build !unix

package agent

import "os/exec"

// gateGroup leaves cmd as it is where there are no process groups.
func gateGroup(*exec.Cmd) {}
