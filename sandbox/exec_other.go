//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"
)

// seccompFilter refuses: bwrap and seccomp are Linux's.
func seccompFilter(bool) ([]byte, error) {
	return nil, fmt.Errorf("%w: isolation bwrap needs Linux; this is %s", ErrUnavailable, runtime.GOOS)
}

// probeOutput is never reached: seccompFilter refuses first.
func probeOutput() (*os.File, error) {
	return nil, fmt.Errorf("bwrap needs Linux; this is %s", runtime.GOOS)
}

// protectPraxis has nothing to do where commands cannot run.
func (r *Runner) protectPraxis() error { return nil }

// checkPlatform refuses isolation, which needs Linux namespaces.
func checkPlatform(p Policy) error {
	if p.Isolation == IsolationBwrap {
		return fmt.Errorf("%w: isolation bwrap needs Linux; this is %s", ErrUnavailable, runtime.GOOS)
	}
	return nil
}

// start refuses: the runner's guarantees (the whole process group killed,
// limits, leftovers found through /proc) are implemented for Linux only.
func (r *Runner) start(context.Context, Command, *os.File, time.Duration) (*Process, error) {
	return nil, fmt.Errorf("%w: running commands is implemented for Linux only; this is %s", ErrUnavailable, runtime.GOOS)
}
