//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func tryLock(f *os.File) error {
	return flock(f, unix.LOCK_EX|unix.LOCK_NB)
}

func unlock(f *os.File) error {
	return flock(f, unix.LOCK_UN)
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("filelock: %w", err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("filelock: %w", err)
	}
	switch {
	case errors.Is(ferr, unix.EWOULDBLOCK):
		return ErrLocked
	case ferr != nil:
		return fmt.Errorf("filelock: %s: %w", f.Name(), ferr)
	}
	return nil
}
