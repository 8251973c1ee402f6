//go:build unix

package filelock_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/filelock"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestTwoOpensExclude checks that two opens of one file exclude each other
// within one process, that Unlock and Close release the lock, and that a
// waiter gets it once it is released.
func TestTwoOpensExclude(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	a, b := open(t, name), open(t, name)
	if err := filelock.TryLock(a); err != nil {
		t.Fatal(err)
	}
	if err := filelock.TryLock(b); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("second TryLock: %v, want ErrLocked", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := filelock.Lock(ctx, b); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock while held: %v, want the context's deadline", err)
	}
	got := make(chan error, 1)
	go func() { got <- filelock.Lock(context.Background(), b) }()
	if err := filelock.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	b.Close()
	if err := filelock.TryLock(a); err != nil {
		t.Fatalf("TryLock after the holder closed: %v", err)
	}
}

// TestLockAcrossProcesses holds the lock in another process (flock(1) where
// installed) and checks that it excludes this one until that process dies.
func TestLockAcrossProcesses(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) is not installed")
	}
	name := filepath.Join(t.TempDir(), "lock")
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(flock, "-x", name, "sh", "-c", "touch "+ready+"; exec sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }
	defer kill()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
	}
	f := open(t, name)
	if err := filelock.TryLock(f); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("TryLock while another process holds it: %v", err)
	}
	kill() // the holder and the child that inherited its descriptor
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := filelock.Lock(ctx, f); err != nil {
		t.Fatalf("Lock after the holder died: %v", err)
	}
}
