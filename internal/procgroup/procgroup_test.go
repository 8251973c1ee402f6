//go:build unix

package procgroup_test

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/procgroup"
)

// startTree starts a shell that leaves a grandchild running in the
// background and returns the grandchild's pid.
func startTree(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// gone waits until pid no longer runs (a zombie counts as gone) and
// reports whether it went within a generous bound.
func gone(pid int) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) || zombie(pid) {
			return true
		}
	}
	return false
}

func zombie(pid int) bool {
	b, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "Z")
}

const tree = "sleep 300 & echo $!; wait"

func TestKillEndsTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*exec.Cmd) error
	}{
		{"Kill", procgroup.Kill},
		{"Terminate", procgroup.Terminate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tree)
			procgroup.Own(cmd)
			grandchild := startTree(t, cmd)
			if err := tc.end(cmd); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if !gone(grandchild) {
				t.Errorf("the grandchild %d outlived %s of its group", grandchild, tc.name)
			}
		})
	}
}

func TestKillOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", tree)
	procgroup.KillOnCancel(cmd)
	grandchild := startTree(t, cmd)
	cancel()
	cmd.Wait()
	if !gone(grandchild) {
		t.Errorf("the grandchild %d outlived the cancellation", grandchild)
	}
}

// Without a group of its own, killing the command leaves the grandchild:
// the check above can fail.
func TestWithoutGroupTheGrandchildStays(t *testing.T) {
	cmd := exec.Command("sh", "-c", tree)
	grandchild := startTree(t, cmd)
	cmd.Process.Kill()
	cmd.Wait()
	if err := syscall.Kill(grandchild, 0); err != nil {
		t.Errorf("the grandchild %d went with its parent: %v", grandchild, err)
	}
}

func TestNeverStarted(t *testing.T) {
	if err := procgroup.Kill(exec.Command("true")); err != nil {
		t.Error(err)
	}
	if err := procgroup.Kill(nil); err != nil {
		t.Error(err)
	}
}
