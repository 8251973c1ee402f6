//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newRunner returns a runner for a fresh workspace, with edit applied to
// the default policy.
func newRunner(t *testing.T, edit func(*Policy)) (*Runner, string) {
	t.Helper()
	ws := t.TempDir()
	p := DefaultPolicy(ws)
	p.KillGrace = 200 * time.Millisecond
	if edit != nil {
		edit(&p)
	}
	r, err := New(p)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, ws
}

func run(t *testing.T, r *Runner, c Command) Result {
	t.Helper()
	res, _ := runGroup(t, r, c)
	return res
}

// runGroup runs c and checks that its process group is empty afterwards.
func runGroup(t *testing.T, r *Runner, c Command) (Result, int) {
	t.Helper()
	p, err := r.Start(context.Background(), c)
	if err != nil {
		t.Fatalf("Start(%q): %v", c.Script, err)
	}
	res := p.Result()
	if n, err := groupSize(p.PID(), -1); err != nil || n != 0 {
		killGroup(p.PID())
		t.Errorf("%d processes of group %d outlived the command (%v)", n, p.PID(), err)
	}
	return res, p.PID()
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	state := strings.Fields(string(data[i+1:]))[0]
	return state != "Z" && state != "X"
}

// pids parses the process ids a script printed, one a line.
func pids(t *testing.T, out string) []int {
	t.Helper()
	var ps []int
	for _, f := range strings.Fields(out) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a pid: %q in %q", f, out)
		}
		ps = append(ps, n)
	}
	return ps
}

func TestExitCodeAndStreams(t *testing.T) {
	r, _ := newRunner(t, nil)
	res := run(t, r, Command{Script: "echo out; echo err >&2; exit 3"})
	if res.ExitCode != 3 || res.Stdout.Text != "out\n" || res.Stderr.Text != "err\n" {
		t.Fatalf("got exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	if res.TimedOut || res.Killed || res.Signal != "" || res.Leftovers != 0 {
		t.Fatalf("unexpected end: %+v", res)
	}
}

// A command printing far more than a pipe holds, on both streams at once,
// returns with the head, the tail and a marker, well before its timeout.
func TestLargeOutput(t *testing.T) {
	r, _ := newRunner(t, nil)
	const n = 1 << 20
	script := `printf START; head -c 1048576 /dev/zero | tr '\0' x; printf END;
		head -c 1048576 /dev/zero | tr '\0' y >&2`
	res := run(t, r, Command{Script: script, Timeout: 60 * time.Second})
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("command did not finish on its own: %+v", res)
	}
	out := res.Stdout
	if out.Total != n+8 {
		t.Errorf("stdout total = %d, want %d", out.Total, n+8)
	}
	if !strings.HasPrefix(out.Text, "STARTxxx") || !strings.HasSuffix(out.Text, "xxxEND") {
		t.Errorf("stdout lacks head or tail: %.20q ... %.20q", out.Text, out.Text[max(0, len(out.Text)-20):])
	}
	want := int64(n + 8 - DefaultOutputBytes)
	if out.Omitted != want || !strings.Contains(out.Text, "[praxis: "+strconv.FormatInt(want, 10)+" bytes omitted]") {
		t.Errorf("stdout omitted %d, want %d with a marker", out.Omitted, want)
	}
	if len(out.Text) > DefaultOutputBytes+100 {
		t.Errorf("stdout text is %d bytes, over the cap", len(out.Text))
	}
	if res.Stderr.Total != n || !res.Stderr.Truncated() || !strings.HasSuffix(res.Stderr.Text, "yyy") {
		t.Errorf("stderr: total %d, omitted %d", res.Stderr.Total, res.Stderr.Omitted)
	}
}

// On timeout the whole process group dies, not just the shell.
func TestTimeoutKillsGroup(t *testing.T) {
	r, _ := newRunner(t, nil)
	res := run(t, r, Command{Script: "sleep 300 & echo $!; sleep 300 & echo $!; wait", Timeout: time.Second})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	ps := pids(t, res.Stdout.Text)
	if len(ps) != 2 {
		t.Fatalf("want 2 pids, got %q", res.Stdout.Text)
	}
	for _, pid := range ps {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("sleep %d survived the timeout", pid)
		}
	}
}

// Cancelling the context kills the group too.
func TestCancelKillsGroup(t *testing.T) {
	r, _ := newRunner(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := r.Start(ctx, Command{Script: "sleep 300 & echo $!; wait"})
	if err != nil {
		t.Fatal(err)
	}
	for p.Written() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	res := p.Result()
	if !res.Killed || res.TimedOut {
		t.Fatalf("want killed, got %+v", res)
	}
	for _, pid := range pids(t, res.Stdout.Text) {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("sleep %d survived cancellation", pid)
		}
	}
}

// Background processes still running when the shell exits are killed.
func TestLeftoversKilled(t *testing.T) {
	r, _ := newRunner(t, nil)
	res := run(t, r, Command{Script: "sleep 300 >/dev/null & echo $!"})
	if res.ExitCode != 0 || res.Leftovers != 1 {
		t.Fatalf("want exit 0 and 1 leftover, got %+v", res)
	}
	for _, pid := range pids(t, res.Stdout.Text) {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("leftover %d survived", pid)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("PRAXIS_TEST_SECRET", "hunter2")
	t.Setenv("LC_PRAXIS_TEST", "kept")
	r, _ := newRunner(t, nil)
	res := run(t, r, Command{Script: "env", Env: map[string]string{"CALL_VAR": "given", "HOME": "/elsewhere"}})
	env := "\n" + res.Stdout.Text
	for _, want := range []string{"\nPATH=" + os.Getenv("PATH") + "\n", "\nCALL_VAR=given\n", "\nLC_PRAXIS_TEST=kept\n", "\nHOME=/elsewhere\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, res.Stdout.Text)
		}
	}
	if strings.Contains(env, "hunter2") || strings.Contains(env, "PRAXIS_TEST_SECRET") {
		t.Errorf("the secret leaked:\n%s", res.Stdout.Text)
	}
}

func TestStdin(t *testing.T) {
	r, _ := newRunner(t, nil)
	res := run(t, r, Command{Script: "cat", Stdin: strings.NewReader("hello\n"), Timeout: 10 * time.Second})
	if res.Stdout.Text != "hello\n" {
		t.Errorf("with stdin: %q", res.Stdout.Text)
	}
	// Without stdin, cat reads /dev/null and ends at once.
	res = run(t, r, Command{Script: "cat; echo done", Timeout: 10 * time.Second})
	if res.TimedOut || res.Stdout.Text != "done\n" {
		t.Errorf("without stdin: %+v", res)
	}
}

func TestWorkingDirectory(t *testing.T) {
	r, ws := newRunner(t, nil)
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(ws)
	for _, dir := range []string{"sub", filepath.Join(ws, "sub")} {
		res := run(t, r, Command{Script: "pwd", Dir: dir})
		if got := strings.TrimSpace(res.Stdout.Text); got != filepath.Join(real, "sub") {
			t.Errorf("Dir %q: pwd = %q", dir, got)
		}
	}
}

func TestRefusals(t *testing.T) {
	r, ws := newRunner(t, func(p *Policy) { p.MaxTimeout = 5 * time.Second; p.Timeout = time.Second })
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	off, err := New(Policy{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		r    *Runner
		c    Command
		want error
	}{
		{"dotdot", r, Command{Script: "true", Dir: ".."}, ErrOutside},
		{"absolute outside", r, Command{Script: "true", Dir: outside}, ErrOutside},
		{"symlink out", r, Command{Script: "true", Dir: "link"}, ErrOutside},
		{"timeout over max", r, Command{Script: "true", Timeout: 6 * time.Second}, ErrTimeoutTooLong},
		{"shell disabled", off, Command{Script: "true"}, ErrDisabled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(ws, "ran")
			tt.c.Script = "touch " + marker
			_, err := tt.r.Run(context.Background(), tt.c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

func TestInvalidPolicy(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name string
		p    Policy
		want error
	}{
		{"network off without isolation", Policy{Workspace: ws, Shell: true, Network: NetworkOff}, ErrUnavailable},
		{"unknown isolation", Policy{Workspace: ws, Shell: true, Isolation: "jail"}, ErrInvalid},
		{"unknown network", Policy{Workspace: ws, Shell: true, Network: "maybe"}, ErrInvalid},
		{"relative workspace", Policy{Workspace: "ws", Shell: true}, ErrInvalid},
		{"timeout over max", Policy{Workspace: ws, Shell: true, Timeout: time.Hour, MaxTimeout: time.Minute}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.p); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// A fork bomb is stopped by the process limit, and the test process can
// still start processes afterwards.
func TestForkBomb(t *testing.T) {
	r, _ := newRunner(t, func(p *Policy) { p.Limits.Processes = 64 })
	res := run(t, r, Command{Script: `bomb() { bomb | bomb; }; bomb`, Timeout: 10 * time.Second})
	if res.Limit != "processes" || res.TimedOut {
		t.Fatalf("the bomb was not stopped by the process limit: %+v", res)
	}
	if err := exec.Command("true").Run(); err != nil {
		t.Fatalf("the test process cannot start a process after the bomb: %v", err)
	}
}

// A memory hog is stopped by the address-space limit.
func TestMemoryHog(t *testing.T) {
	r, _ := newRunner(t, func(p *Policy) { p.Limits.AddressSpace = 128 << 20 })
	res := run(t, r, Command{Script: `x=$(head -c 300000000 /dev/zero | tr '\0' a); echo survived ${#x}`, Timeout: 30 * time.Second})
	if strings.Contains(res.Stdout.Text, "survived 300000000") {
		t.Fatalf("the hog got its memory: %+v", res)
	}
	if res.ExitCode == 0 && !strings.Contains(res.Stdout.Text, "survived") {
		t.Fatalf("unexpected result: %+v", res)
	}
}

func TestFileSizeLimit(t *testing.T) {
	r, ws := newRunner(t, func(p *Policy) { p.Limits.FileSize = 1 << 20 })
	res := run(t, r, Command{Script: "head -c 3000000 /dev/zero > big"})
	fi, err := os.Stat(filepath.Join(ws, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1<<20 || res.ExitCode == 0 {
		t.Fatalf("wrote %d bytes, exit %d", fi.Size(), res.ExitCode)
	}
}
