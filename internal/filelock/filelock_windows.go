//go:build windows

package filelock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

func tryLock(f *os.File) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	switch {
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return ErrLocked
	case err != nil:
		return fmt.Errorf("filelock: %s: %w", f.Name(), err)
	}
	return nil
}

func unlock(f *os.File) error {
	var ol windows.Overlapped
	if err := windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol); err != nil {
		return fmt.Errorf("filelock: %s: %w", f.Name(), err)
	}
	return nil
}
