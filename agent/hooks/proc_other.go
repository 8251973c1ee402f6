//go:build !unix

package hooks

import "os/exec"

// inGroup leaves cmd as it is: cancellation kills the command only.
func inGroup(*exec.Cmd) {}

// killGroup does nothing where there are no process groups.
func killGroup(*exec.Cmd) {}
