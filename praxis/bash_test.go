//go:build linux

package praxis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/sandbox"
)

// withShell enables the shell with the default policy, edited by edit.
func withShell(edit func(*sandbox.Policy)) func(*Options) {
	return func(o *Options) {
		p := sandbox.DefaultPolicy("")
		p.KillGrace = 200 * time.Millisecond
		if edit != nil {
			edit(&p)
		}
		o.Sandbox = &p
	}
}

// sleepMarker returns a duration for sleep that no other process on the
// machine uses, so that the test can find its sleeps from outside
// whatever PID namespace they run in.
func sleepMarker() string {
	return fmt.Sprintf("3000.%d", time.Now().UnixNano()%1e9)
}

// mustLeaveNone fails the test if a process whose command line holds the
// argument marker is alive, and kills it.
func mustLeaveNone(t *testing.T, marker string) {
	t.Helper()
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + d.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); err != nil || i < 0 || strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		if strings.Contains(string(cmdline), "\x00"+marker+"\x00") {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d (sleep %s) is still alive", pid, marker)
		}
	}
}

func TestBashResult(t *testing.T) {
	e, _ := newTestEngine(t, map[string]string{"sub/a.txt": "x\n"}, withShell(nil))
	res := mustOK(t, call(t, e, "bash", map[string]any{"command": "ls; echo oops >&2; exit 3", "cwd": "sub"}))
	if !strings.HasPrefix(res.Text, "exit code 3 after ") {
		t.Errorf("first line: %q", res.Text)
	}
	for _, want := range []string{"--- stdout ---\na.txt\n", "--- stderr ---\noops\n"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("result lacks %q:\n%s", want, res.Text)
		}
	}
	info := res.Structured.(bashInfo)
	if info.commandInfo == nil || info.ExitCode != 3 || info.StdoutBytes != 6 || info.jobState != nil {
		t.Errorf("structured: %+v", info)
	}
	res = mustOK(t, call(t, e, "bash", map[string]any{"command": "cat; printenv GREETING", "stdin": "in\n", "env": map[string]string{"GREETING": "hi"}}))
	if !strings.Contains(res.Text, "--- stdout ---\nin\nhi\n") {
		t.Errorf("stdin and env:\n%s", res.Text)
	}
}

func TestBashLargeOutput(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(nil))
	res := mustOK(t, call(t, e, "bash", map[string]any{"command": "seq 1 200000", "timeout_ms": 60000}))
	if !strings.Contains(res.Text, "\n1\n2\n3\n") || !strings.HasSuffix(res.Text, "199999\n200000\n") {
		t.Errorf("head or tail missing: %.200q", res.Text)
	}
	if !regexp.MustCompile(`…\[praxis: \d+ bytes omitted\]…`).MatchString(res.Text) {
		t.Errorf("no omission marker")
	}
	if len(res.Text) > sandbox.DefaultOutputBytes+1000 {
		t.Errorf("result is %d bytes", len(res.Text))
	}
}

func TestBashRefusals(t *testing.T) {
	outside := t.TempDir()
	e, dir := newTestEngine(t, map[string]string{"f.txt": "x\n"}, withShell(func(p *sandbox.Policy) { p.Timeout, p.MaxTimeout = 5*time.Second, 10*time.Second }))
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	touch := "touch " + marker
	for _, tc := range []struct {
		args map[string]any
		code Code
	}{
		{map[string]any{"command": touch, "cwd": ".."}, EPathOutside},
		{map[string]any{"command": touch, "cwd": outside}, EPathOutside},
		{map[string]any{"command": touch, "cwd": "out"}, EPathOutside},
		{map[string]any{"command": touch, "cwd": "f.txt"}, ENotDir},
		{map[string]any{"command": touch, "cwd": "missing"}, ENotFound},
		{map[string]any{"command": touch, "timeout_ms": 10001}, EPolicy},
		{map[string]any{"command": touch, "env": map[string]string{"A=B": "x"}}, EInvalidArgs},
	} {
		mustFail(t, call(t, e, "bash", tc.args), tc.code)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%v: the command ran", tc.args)
		}
	}

	off, _ := newTestEngine(t, nil)
	mustFail(t, call(t, off, "bash", map[string]any{"command": "true"}), EPolicy, "disabled")
	disabled, _ := newTestEngine(t, nil, withShell(func(p *sandbox.Policy) { p.Shell = false }))
	mustFail(t, call(t, disabled, "bash", map[string]any{"command": "true"}), EPolicy, "disabled")
}

func TestBashTimeout(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(nil))
	m := sleepMarker()
	res := call(t, e, "bash", map[string]any{
		"command":    "echo before; sleep " + m + " & sleep " + m + " & wait",
		"timeout_ms": 1000,
	})
	mustFail(t, res, ETimeout, "ran past its time limit of 1s", "--- stdout ---\nbefore\n")
	mustLeaveNone(t, m)
}

func TestBashProcessLimit(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(func(p *sandbox.Policy) { p.Limits.Processes = 32 }))
	res := call(t, e, "bash", map[string]any{"command": "bomb() { bomb | bomb; }; bomb", "timeout_ms": 20000})
	mustFail(t, res, EBudgetExceeded, "more processes")
}

// Cancelling the call kills the command's whole process group.
func TestBashCancel(t *testing.T) {
	e, dir := newTestEngine(t, nil, withShell(nil))
	ctx, cancel := context.WithCancel(context.Background())
	pidFile := filepath.Join(dir, "pids")
	go func() {
		for {
			if b, _ := os.ReadFile(pidFile); strings.Count(string(b), "\n") == 2 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	m := sleepMarker()
	res, err := e.Catalog().Call(ctx, "bash", []byte(`{"command": "echo $$ > pids; sleep `+m+` & echo $! >> pids; wait"}`))
	if err != nil {
		t.Fatal(err)
	}
	mustFail(t, res, ECancelled)
	mustLeaveNone(t, m)
}

func TestBashProgress(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(nil))
	reports := make(chan string, 10)
	ctx := WithProgress(context.Background(), func(progress, total float64, msg string) {
		select {
		case reports <- msg:
		default:
		}
	})
	res, err := e.Catalog().Call(ctx, "bash", []byte(`{"command": "sleep 2.5"}`))
	if err != nil || res.IsError {
		t.Fatal(err, res.Text)
	}
	select {
	case msg := <-reports:
		if !strings.Contains(msg, "running for") {
			t.Errorf("progress message: %q", msg)
		}
	default:
		t.Error("no progress reported during a 2.5 s command")
	}
}

var jobID = regexp.MustCompile(`job (\d+)`)

func TestBackgroundJob(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(nil))
	m := sleepMarker()
	res := mustOK(t, call(t, e, "bash", map[string]any{
		// printf keeps the words it prints out of the command, which
		// job_output shows too.
		"command":    "printf 'fi%st\\n' rs; sleep 0.3; printf 'sec%sd\\n' on; sleep " + m + " & wait",
		"background": true,
	}))
	id := jobID.FindStringSubmatch(res.Text)
	if id == nil {
		t.Fatalf("no job id:\n%s", res.Text)
	}
	var seen strings.Builder
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(seen.String(), "second") && time.Now().Before(deadline) {
		out := mustOK(t, call(t, e, "job_output", map[string]any{"job": id[1]}))
		if !strings.Contains(out.Text, "running") {
			t.Fatalf("job not running:\n%s", out.Text)
		}
		seen.WriteString(out.Text)
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Count(seen.String(), "first") != 1 || strings.Count(seen.String(), "second") != 1 {
		t.Fatalf("each line should be read exactly once:\n%s", seen.String())
	}
	n, _ := strconv.Atoi(id[1])
	again := mustOK(t, call(t, e, "job_output", map[string]any{"job": n, "since": 0}))
	if !strings.Contains(again.Text, "first\nsecond\n") {
		t.Errorf("since 0 does not reread everything:\n%s", again.Text)
	}
	killed := mustOK(t, call(t, e, "job_kill", map[string]any{"job": id[1]}))
	if !strings.HasPrefix(killed.Text, "job "+id[1]+" killed") {
		t.Errorf("job_kill:\n%s", killed.Text)
	}
	mustLeaveNone(t, m)
	after := mustOK(t, call(t, e, "job_output", map[string]any{"job": id[1]}))
	if info := after.Structured.(jobInfo); info.Running || info.jobExit == nil {
		t.Errorf("killed job still running:\n%s", after.Text)
	}
	mustFail(t, call(t, e, "job_output", map[string]any{"job": "999"}), ENotFound, "known jobs: "+id[1])
}

// A foreground command that outlives the wait becomes a job.
func TestBashDetaches(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(func(p *sandbox.Policy) { p.BackgroundAfter = 300 * time.Millisecond }))
	res := mustOK(t, call(t, e, "bash", map[string]any{"command": "printf 'ear%s\\n' ly; sleep 300"}))
	id := jobID.FindStringSubmatch(res.Text)
	if id == nil || !strings.Contains(res.Text, "still running") {
		t.Fatalf("not detached:\n%s", res.Text)
	}
	// "early" is shown once: in the detached result, or (on a slow
	// machine) by the next job_output.
	seen := res.Text
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(seen, "early") && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		seen += mustOK(t, call(t, e, "job_output", map[string]any{"job": id[1]})).Text
	}
	seen += mustOK(t, call(t, e, "job_output", map[string]any{"job": id[1]})).Text
	if n := strings.Count(seen, "early"); n != 1 {
		t.Errorf("the output was shown %d times:\n%s", n, seen)
	}
	mustOK(t, call(t, e, "job_kill", map[string]any{"job": id[1]}))
}

// No job outlives the engine.
func TestCloseEndsJobs(t *testing.T) {
	dir := t.TempDir()
	o := Options{Workspace: dir, NoSync: true}
	withShell(nil)(&o)
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m := sleepMarker()
	for range 3 {
		mustOK(t, call(t, e, "bash", map[string]any{
			"command":    "echo $$ >> pids; trap '' TERM; sleep " + m + " & echo $! >> pids; wait",
			"background": true,
		}))
	}
	pidFile := filepath.Join(dir, "pids")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(pidFile); strings.Count(string(b), "\n") == 6 {
			break
		}
	}
	if b, _ := os.ReadFile(pidFile); strings.Count(string(b), "\n") != 6 {
		t.Fatalf("pids: %q", b)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	mustLeaveNone(t, m)
}

// Under bwrap, commands cannot change the protected files that set the
// policy.
func TestBashBwrapProtectsPolicy(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("PRAXIS_REQUIRE_BWRAP") == "1" {
			t.Fatal("bwrap is not installed, and PRAXIS_REQUIRE_BWRAP=1 requires it")
		}
		t.Skip("bwrap is not installed")
	}
	const policy = "sandbox: {isolation: bwrap}\n"
	e, dir := newTestEngine(t, map[string]string{".praxis/config.yaml": policy}, func(o *Options) {
		o.Protected = []string{".praxis/config.yaml"}
		withShell(func(p *sandbox.Policy) { p.Isolation = sandbox.IsolationBwrap })(o)
	})
	for _, cmd := range []string{
		"echo 'sandbox: {isolation: none}' > .praxis/config.yaml",
		"rm -f .praxis/config.yaml",
		"mv .praxis .praxis-old",
	} {
		res := mustOK(t, call(t, e, "bash", map[string]any{"command": cmd}))
		if strings.HasPrefix(res.Text, "exit code 0") {
			t.Errorf("%s: succeeded:\n%s", cmd, res.Text)
		}
	}
	if got := readTestFile(t, filepath.Join(dir, ".praxis", "config.yaml")); got != policy {
		t.Errorf("the policy file changed: %q", got)
	}
	mustOK(t, call(t, e, "bash", map[string]any{"command": "mkdir -p .praxis/skills && echo ok > .praxis/skills/note"}))
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"npm run dev", 80, "npm run dev"},
		{"make\nmake test", 80, "make…"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // never half a character
	} {
		if got := clip(tc.in, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// Concurrent calls each get their own output.
func TestBashConcurrent(t *testing.T) {
	e, _ := newTestEngine(t, nil, withShell(nil))
	const n = 8
	errs := make(chan string, n)
	for i := range n {
		go func() {
			want := "call " + strconv.Itoa(i) + "\n"
			res, err := e.Catalog().Call(context.Background(), "bash", []byte(`{"command": "sleep 0.1; echo call `+strconv.Itoa(i)+`"}`))
			switch {
			case err != nil:
				errs <- err.Error()
			case res.IsError || !strings.Contains(res.Text, "--- stdout ---\n"+want):
				errs <- res.Text
			default:
				errs <- ""
			}
		}()
	}
	for range n {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
}
