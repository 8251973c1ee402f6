// Package filelock takes exclusive advisory locks on open files. A lock
// belongs to the open file (not to the process), so two opens of one file
// exclude each other within a process as between processes. The lock is
// released by Unlock or when the file is closed, and by the kernel when
// the process dies, so a killed holder never leaves a lock behind.
//
// The locks are advisory: they exclude only programs that take them too.
// They are flock(2) on Unix and LockFileEx on Windows; elsewhere TryLock
// and Lock fail with errors.ErrUnsupported.
package filelock

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrLocked is TryLock's error when another open file holds the lock.
var ErrLocked = errors.New("filelock: the file is locked by another open file")

// TryLock takes an exclusive lock on f without waiting. It fails with
// ErrLocked when another open file of the same file holds the lock.
func TryLock(f *os.File) error { return tryLock(f) }

// Unlock releases the lock f holds.
func Unlock(f *os.File) error { return unlock(f) }

// Lock takes an exclusive lock on f, waiting while another open file holds
// it, until ctx is done; it then returns ctx's error. A waiter polls, every
// few milliseconds at most, so that the wait can be cancelled.
func Lock(ctx context.Context, f *os.File) error {
	wait := 500 * time.Microsecond
	for {
		err := tryLock(f)
		if !errors.Is(err, ErrLocked) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 8*time.Millisecond)
	}
}
