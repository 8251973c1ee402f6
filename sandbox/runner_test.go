//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newRunner returns a runner with isolation none for a fresh workspace,
// with edit applied to the default policy.
func newRunner(t *testing.T, edit func(*Policy)) (*Runner, string) {
	t.Helper()
	ws := t.TempDir()
	p := DefaultPolicy(ws)
	p.Isolation = IsolationNone
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

// variant is a runner under test, by name.
type variant struct {
	name string
	r    *Runner
}

// noneVariants are the two ways isolation none keeps a command's processes:
// a PID namespace where Praxis may make one (as root), and Praxis as the
// subreaper that finds them otherwise. Tests of process handling run both.
func noneVariants(t *testing.T, edit func(*Policy)) []variant {
	t.Helper()
	ns, _ := newRunner(t, edit)
	reaper, _ := newRunner(t, edit)
	if reaper.pidns {
		reaper.pidns = false
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	out := []variant{{"subreaper", reaper}}
	if ns.pidns {
		out = append(out, variant{"pidns", ns})
	}
	return out
}

func run(t *testing.T, r *Runner, c Command) Result {
	t.Helper()
	p, err := r.Start(context.Background(), c)
	if err != nil {
		t.Fatalf("Start(%q): %v", c.Script, err)
	}
	res := p.Result()
	if n := groupSize(p.PID()); n != 0 {
		t.Errorf("%d processes of group %d outlived the command", n, p.PID())
	}
	return res
}

// groupSize returns the number of live processes in process group pgid.
func groupSize(pgid int) int {
	n := 0
	eachProc(func(e procEntry) {
		if e.pgrp == pgid && !e.zombie {
			n++
		}
	})
	return n
}

// marker returns an argument for sleep that no other process on the
// machine uses: a long duration with a unique fraction.
func marker() string {
	return fmt.Sprintf("3000.%d", time.Now().UnixNano()%1e9)
}

// survivors returns the live processes whose command line holds arg,
// and kills them.
func survivors(arg string) []int {
	var out []int
	eachProc(func(e procEntry) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(e.pid) + "/cmdline")
		if err == nil && !e.zombie && strings.Contains(string(b), "\x00"+arg+"\x00") {
			out = append(out, e.pid)
			syscall.Kill(e.pid, syscall.SIGKILL)
		}
	})
	return out
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

// On timeout, cancellation and exit, every process of the command dies:
// those in its group, and those that left it for a session of their own,
// double-forked or not.
func TestNothingOutlivesTheCommand(t *testing.T) {
	for _, v := range noneVariants(t, nil) {
		for _, end := range []string{"timeout", "cancel", "exit"} {
			t.Run(v.name+"/"+end, func(t *testing.T) {
				m := marker()
				script := fmt.Sprintf("sleep %[1]s & setsid sleep %[1]s & (setsid sleep %[1]s &); ( (sleep %[1]s &) & ); echo started", m)
				if v.name == "subreaper" {
					// Without a PID namespace an orphan is found by a scan
					// of /proc: each intermediate lives across one.
					script = fmt.Sprintf("sleep %[1]s & setsid sleep %[1]s & (setsid sleep %[1]s & sleep 0.5); ( (sleep %[1]s & sleep 0.5) & sleep 0.5); echo started", m)
				}
				if end != "exit" {
					script += "; wait"
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := Command{Script: script}
				if end == "timeout" {
					c.Timeout = time.Second
				}
				p, err := v.r.Start(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if end == "cancel" {
					for p.Written() == 0 {
						time.Sleep(10 * time.Millisecond)
					}
					time.Sleep(100 * time.Millisecond)
					cancel()
				}
				res := p.Result()
				switch {
				case end == "timeout" && !res.TimedOut, end == "cancel" && !res.Killed:
					t.Errorf("want %s, got %+v", end, res)
				}
				if s := survivors(m); len(s) > 0 {
					t.Errorf("%d processes survived the %s: %v", len(s), end, s)
				}
			})
		}
	}
}

// A leftover is reported, where it can be seen, and killed.
func TestLeftoversKilled(t *testing.T) {
	for _, v := range noneVariants(t, nil) {
		t.Run(v.name, func(t *testing.T) {
			m := marker()
			res := run(t, v.r, Command{Script: "sleep " + m + " >/dev/null &"})
			if res.ExitCode != 0 {
				t.Fatalf("want exit 0, got %+v", res)
			}
			if !v.r.pidns && res.Leftovers != 1 {
				t.Errorf("want 1 leftover, got %+v", res)
			}
			if s := survivors(m); len(s) > 0 {
				t.Errorf("leftovers survived: %v", s)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("PRAXIS_TEST_SECRET", "hunter2")
	t.Setenv("LC_LEAK", "hunter3")
	t.Setenv("LC_CTYPE", "C.UTF-8")
	t.Setenv("GOFLAGS", "-count=1")
	tests := []struct {
		name      string
		env       []string
		want, not []string
	}{
		{"default", nil,
			[]string{"PATH=" + os.Getenv("PATH"), "CALL_VAR=given", "LC_CTYPE=C.UTF-8", "HOME=/elsewhere"},
			[]string{"hunter2", "PRAXIS_TEST_SECRET", "LC_LEAK", "GOFLAGS"}},
		{"empty", []string{},
			[]string{"CALL_VAR=given", "HOME=/elsewhere"},
			[]string{"hunter2", "PRAXIS_TEST_SECRET", "LC_LEAK", "LC_CTYPE", "GOFLAGS", "PATH=" + os.Getenv("PATH")}},
		{"prefix pattern", []string{"GO*"},
			[]string{"GOFLAGS=-count=1", "CALL_VAR=given"},
			[]string{"hunter2", "LC_LEAK", "LC_CTYPE", "PATH=" + os.Getenv("PATH")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRunner(t, func(p *Policy) { p.Env = tt.env })
			res := run(t, r, Command{Script: "/usr/bin/env", Env: map[string]string{"CALL_VAR": "given", "HOME": "/elsewhere"}})
			env := "\n" + res.Stdout.Text
			for _, want := range tt.want {
				if !strings.Contains(env, "\n"+want+"\n") {
					t.Errorf("environment lacks %q:\n%s", want, res.Stdout.Text)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(env, not) {
					t.Errorf("environment holds %q:\n%s", not, res.Stdout.Text)
				}
			}
		})
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
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o644); err != nil {
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
		{"missing", r, Command{Script: "true", Dir: "missing"}, ErrNoDir},
		{"a file", r, Command{Script: "true", Dir: "file"}, ErrNoDir},
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
		{"network off without isolation", Policy{Workspace: ws, Shell: true, Isolation: IsolationNone, Network: NetworkOff}, ErrUnavailable},
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

// A working directory swapped for a symlink out of the workspace while
// commands start never runs one of them outside: the runner opens the
// directory through the workspace root and starts the command in what it
// opened.
func TestWorkingDirectoryRace(t *testing.T) {
	modes := []struct {
		name string
		edit func(*Policy)
	}{{"none", nil}}
	if bwrapWorks() {
		modes = append(modes, struct {
			name string
			edit func(*Policy)
		}{"bwrap", func(p *Policy) { p.Isolation = IsolationBwrap }})
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r, ws := newRunner(t, m.edit)
			outside := hostDir(t)
			sub, parked := filepath.Join(ws, "sub"), filepath.Join(ws, "parked")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			swapped := make(chan struct{})
			go func() {
				defer close(swapped)
				for {
					select {
					case <-stop:
						return
					default:
					}
					// sub is a directory, then a symlink leading out.
					os.Rename(sub, parked)
					os.Symlink(outside, sub)
					time.Sleep(100 * time.Microsecond)
					os.Remove(sub)
					os.Rename(parked, sub)
					time.Sleep(time.Millisecond)
				}
			}()
			ran, refused := 0, 0
			for range 60 {
				res, err := r.Run(context.Background(), Command{Script: "readlink /proc/self/cwd; touch escaped", Dir: "sub"})
				if err != nil {
					if refused == 0 {
						t.Logf("first refusal: %v", err)
					}
					refused++
					continue
				}
				ran++
				// The kernel's idea of the directory, not bash's, which
				// is a path string and resolves the swapped symlink.
				if cwd := firstLine(res.Stdout.Text); res.ExitCode == 0 && !strings.HasPrefix(cwd, ws) {
					t.Errorf("a command ran in %q, outside the workspace: %+v", cwd, res)
				}
			}
			close(stop)
			<-swapped
			if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
				t.Error("a command wrote outside the workspace")
			}
			t.Logf("%d commands ran in the workspace, %d were refused", ran, refused)
		})
	}
}

// Under isolation auto without a working bwrap, commands run under none
// and the runner says so and why; asking for the network off then fails,
// since nothing would enforce it.
func TestAutoFallsBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	r, err := New(Policy{Workspace: t.TempDir(), Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Isolation() != IsolationNone || !strings.Contains(r.Fallback(), "bubblewrap") ||
		!strings.Contains(r.Describe(), "isolation none (policy auto)") {
		t.Errorf("isolation %s, fallback %q, describe %q", r.Isolation(), r.Fallback(), r.Describe())
	}
	_, err = New(Policy{Workspace: t.TempDir(), Shell: true, Network: NetworkOff})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "network off needs bwrap") {
		t.Errorf("network off under auto without bwrap: %v", err)
	}
}
