//go:build unix

package journal

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f, failing at once with
// ErrInUse if another process (or another open file) holds it. The lock goes
// with the file's close.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrInUse
	}
	if err != nil {
		return fmt.Errorf("journal: lock: %w", err)
	}
	return nil
}
