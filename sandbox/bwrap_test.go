//go:build linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// requireBwrap skips the test when bwrap is not installed, unless
// PRAXIS_REQUIRE_BWRAP=1 (set by CI after installing bubblewrap) makes that
// a failure.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("PRAXIS_REQUIRE_BWRAP") == "1" {
			t.Fatal("bwrap is not installed, and PRAXIS_REQUIRE_BWRAP=1 requires it")
		}
		t.Skip("bwrap is not installed (set PRAXIS_REQUIRE_BWRAP=1 to make this a failure)")
	}
}

func newBwrapRunner(t *testing.T, edit func(*Policy)) (*Runner, string) {
	t.Helper()
	requireBwrap(t)
	return newRunner(t, func(p *Policy) {
		p.Isolation = IsolationBwrap
		if edit != nil {
			edit(p)
		}
	})
}

// listen starts a TCP listener on the host's loopback that answers "pong".
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("pong\n"))
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func TestBwrapNetwork(t *testing.T) {
	port := listen(t)
	script := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && cat <&3`
	tests := []struct {
		network Network
		reach   bool
	}{
		{NetworkOff, false},
		{NetworkDefault, false}, // bwrap's default is off
		{NetworkOn, true},
	}
	for _, tt := range tests {
		t.Run("network="+string(tt.network), func(t *testing.T) {
			r, _ := newBwrapRunner(t, func(p *Policy) { p.Network = tt.network })
			res := run(t, r, Command{Script: script, Timeout: 20 * time.Second})
			reached := res.ExitCode == 0 && res.Stdout.Text == "pong\n"
			if reached != tt.reach {
				t.Fatalf("reached the host listener: %v, want %v (%+v)", reached, tt.reach, res)
			}
		})
	}
}

func TestBwrapFileSystem(t *testing.T) {
	r, ws := newBwrapRunner(t, nil)
	wd, err := os.Getwd() // the package directory: outside the workspace and outside /tmp
	if err != nil {
		t.Fatal(err)
	}
	outsideFile := filepath.Join(wd, "praxis-bwrap-escape")
	hostTmp := filepath.Join(os.TempDir(), "praxis-bwrap-tmp-"+filepath.Base(ws))
	t.Cleanup(func() { os.Remove(outsideFile); os.Remove(hostTmp) })

	res := run(t, r, Command{Script: "echo inside > in.txt && echo ok"})
	if res.Stdout.Text != "ok\n" {
		t.Fatalf("writing inside the workspace failed: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "in.txt")); err != nil || string(b) != "inside\n" {
		t.Fatalf("the write inside did not reach the host: %q, %v", b, err)
	}

	res = run(t, r, Command{Script: "echo escaped > " + outsideFile})
	// (A checkout under /tmp lands in the sandbox's private /tmp instead.)
	if !within(realPath(os.TempDir()), realPath(wd)) && (res.ExitCode == 0 || !strings.Contains(res.Stderr.Text, "Read-only file system")) {
		t.Errorf("writing outside the workspace: %+v", res)
	}
	if _, err := os.Stat(outsideFile); err == nil {
		t.Errorf("a file outside the workspace was written")
	}

	res = run(t, r, Command{Script: "echo private > " + hostTmp + " && cat " + hostTmp})
	if res.Stdout.Text != "private\n" {
		t.Errorf("/tmp is not writable inside: %+v", res)
	}
	if _, err := os.Stat(hostTmp); err == nil {
		t.Errorf("/tmp inside is the host's /tmp")
	}
}

func TestBwrapReadOnlyInsideWorkspace(t *testing.T) {
	r, ws := newBwrapRunner(t, func(p *Policy) { p.ReadOnly = []string{".praxis/config.yaml", "missing.yaml"} })
	if err := os.MkdirAll(filepath.Join(ws, ".praxis"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ws, ".praxis", "config.yaml")
	if err := os.WriteFile(cfg, []byte("sandbox: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The runner was built before the file existed: ReadOnly is applied
	// per command.
	for _, script := range []string{
		"echo 'sandbox: {isolation: none}' > .praxis/config.yaml",
		"rm -f .praxis/config.yaml",
		"mv .praxis/config.yaml .praxis/old.yaml",
		"mv .praxis .praxis-old",
		"rm -rf .praxis",
	} {
		if res := run(t, r, Command{Script: script}); res.ExitCode == 0 {
			t.Errorf("%s: succeeded inside the sandbox", script)
		}
	}
	if b, _ := os.ReadFile(cfg); string(b) != "sandbox: {}\n" {
		t.Errorf("the policy file changed: %q", b)
	}
	// The rest of the directory stays writable.
	if res := run(t, r, Command{Script: "mkdir .praxis/skills && echo ok > .praxis/skills/a"}); res.ExitCode != 0 {
		t.Errorf("the directory around a read-only file is not writable: %+v", res)
	}
}

// Credentials in the home directory are hidden by default, and so are
// hidden paths inside the workspace.
func TestBwrapHide(t *testing.T) {
	requireBwrap(t)
	for _, tt := range []struct {
		name   string
		hide   []string
		hidden bool
	}{
		{"default", nil, true},
		{"nothing hidden", []string{}, false},
		{"listed", []string{"~/.ssh", "~/.netrc"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ws string
			r, ws := newBwrapRunner(t, func(p *Policy) { p.Hide = tt.hide })
			// A home inside the workspace: outside it, the private /tmp
			// would hide a test directory anyway.
			home := filepath.Join(ws, "home")
			t.Setenv("HOME", home)
			for name, content := range map[string]string{".ssh/id_ed25519": "PRIVATE KEY", ".netrc": "password hunter2", "notes.txt": "visible"} {
				path := filepath.Join(home, name)
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			res := run(t, r, Command{Script: `cat ~/.ssh/id_ed25519 ~/.netrc ~/notes.txt 2>/dev/null; echo; ls -A ~/.ssh | sed 's/^/entry: /'`})
			out := res.Stdout.Text
			leaked := strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "hunter2") || strings.Contains(out, "entry: id_ed25519")
			if leaked == tt.hidden || !strings.Contains(out, "visible") {
				t.Errorf("hidden %v, want %v:\n%s", !leaked, tt.hidden, out)
			}
			if b, _ := os.ReadFile(filepath.Join(home, ".netrc")); string(b) != "password hunter2" {
				t.Errorf("hiding changed the file on the host: %q", b)
			}
		})
	}
}

// Hiding a directory that holds the workspace leaves the workspace usable.
func TestBwrapHideAroundWorkspace(t *testing.T) {
	requireBwrap(t)
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "secret"), []byte("hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := DefaultPolicy(ws)
	p.Isolation = IsolationBwrap
	p.Hide = []string{parent}
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, r, Command{Script: "echo ok > f && cat f; cat ../secret"})
	if res.Stdout.Text != "ok\n" {
		t.Errorf("got %+v", res)
	}
}

func TestBwrapPIDNamespaceAndKill(t *testing.T) {
	r, _ := newBwrapRunner(t, nil)
	res := run(t, r, Command{Script: "ls /proc | grep -c '^[0-9]'"})
	if n := strings.TrimSpace(res.Stdout.Text); n == "" || len(n) > 1 {
		t.Errorf("the sandbox sees %s processes: no PID namespace?", n)
	}
	res = run(t, r, Command{Script: "sleep 300 & sleep 300 & wait", Timeout: time.Second})
	if !res.TimedOut {
		t.Errorf("not timed out: %+v", res)
	}
}

func TestBwrapEnvironment(t *testing.T) {
	t.Setenv("PRAXIS_TEST_SECRET", "hunter2")
	r, _ := newBwrapRunner(t, nil)
	res := run(t, r, Command{Script: "env"})
	if strings.Contains(res.Stdout.Text, "hunter2") || !strings.Contains(res.Stdout.Text, "PATH=") ||
		!strings.Contains(res.Stdout.Text, "TMPDIR=/tmp\n") {
		t.Errorf("environment inside bwrap:\n%s", res.Stdout.Text)
	}
}

func TestBwrapLimits(t *testing.T) {
	r, _ := newBwrapRunner(t, func(p *Policy) { p.Limits.Processes = 64 })
	res := run(t, r, Command{Script: `bomb() { bomb | bomb; }; bomb`, Timeout: 10 * time.Second})
	if res.Limit != "processes" || res.TimedOut {
		t.Fatalf("the bomb was not stopped by the process limit: %+v", res)
	}
}

// Without bwrap, asking for it is an error that names what is missing, and
// nothing runs.
func TestBwrapMissing(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	_, err = New(Policy{Workspace: t.TempDir(), Shell: true, Isolation: IsolationBwrap})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bwrap") || !strings.Contains(err.Error(), "bubblewrap") {
		t.Fatalf("got %v, want ErrUnavailable naming bwrap and its package", err)
	}
}

// New runs no process: bubblewrap is checked once, at the first call that
// needs to know, however many ask at once. A bwrap that cannot build the
// sandbox then refuses every command under isolation bwrap, with its
// reason and without running it, and sends isolation auto to none, saying
// why.
func TestBwrapProbeLazy(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		name      string
		isolation Isolation
		first     func(r *Runner) // the first call that needs the probe
		wantStart bool
		describe  string
	}{
		{"bwrap, first Start", IsolationBwrap, func(r *Runner) { r.Run(context.Background(), Command{Script: "true"}) }, false, "isolation bwrap unavailable, commands refused"},
		{"bwrap, first Ready", IsolationBwrap, func(r *Runner) { r.Ready() }, false, "isolation bwrap unavailable, commands refused"},
		{"auto, first Describe", IsolationAuto, func(r *Runner) { r.Describe() }, true, "isolation none (policy auto), network on; bwrap unavailable: "},
		{"auto, first Isolation", IsolationAuto, func(r *Runner) { r.Isolation() }, true, "isolation none (policy auto)"},
		{"auto, first Fallback", IsolationAuto, func(r *Runner) { r.Fallback() }, true, "isolation none (policy auto)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, ws := t.TempDir(), t.TempDir()
			if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
				t.Fatal(err)
			}
			count := filepath.Join(bin, "runs")
			fake := "#!" + bash + "\necho run >>" + count + "\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
			if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			runs := func() int {
				b, _ := os.ReadFile(count)
				return strings.Count(string(b), "run")
			}
			t.Setenv("PATH", bin)
			r, err := New(Policy{Workspace: ws, Shell: true, Isolation: tc.isolation})
			if err != nil {
				t.Fatal(err)
			}
			if n := runs(); n != 0 {
				t.Fatalf("New ran bwrap %d times", n)
			}
			// Known says what it knows without the probe.
			want := "isolation " + string(tc.isolation) + ", network "
			if k := r.Known(); !strings.HasPrefix(k, want) || !strings.HasSuffix(k, " (bwrap is tried at the first command)") {
				t.Errorf("Known before the probe: %q, want %q and that bwrap is tried later", k, want)
			}
			if n := runs(); n != 0 {
				t.Fatalf("Known ran bwrap %d times", n)
			}
			tc.first(r)
			if n := runs(); n != 1 {
				t.Fatalf("the first call ran bwrap %d times, want 1", n)
			}
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = r.Run(context.Background(), Command{Script: ": >ran" + strconv.Itoa(i)})
				}()
			}
			wg.Wait()
			if n := runs(); n != 1 {
				t.Errorf("bwrap ran %d times in all, want 1", n)
			}
			for i, err := range errs {
				_, statErr := os.Stat(filepath.Join(ws, "ran"+strconv.Itoa(i)))
				if tc.wantStart {
					if err != nil || statErr != nil {
						t.Errorf("command %d: %v, %v", i, err, statErr)
					}
					continue
				}
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "setting up uid map: Permission denied") {
					t.Errorf("command %d: got %v, want ErrUnavailable with bwrap's reason", i, err)
				}
				if statErr == nil {
					t.Errorf("command %d ran unisolated", i)
				}
			}
			if d := r.Describe(); !strings.Contains(d, tc.describe) || !strings.Contains(d, "setting up uid map") {
				t.Errorf("describe %q, want %q and the reason", d, tc.describe)
			}
			if k, d := r.Known(), r.Describe(); k != d {
				t.Errorf("Known after the probe: %q, want Describe's %q", k, d)
			}
			if err := r.Ready(); (err == nil) != tc.wantStart {
				t.Errorf("Ready: %v", err)
			}
		})
	}
}

// Where memfd_create is refused, the probe gathers bwrap's output in a
// temporary file instead, removed at once: its reason still reaches the
// error, and nothing is left behind.
func TestBwrapProbeWithoutMemfd(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	saved := memfdCreate
	t.Cleanup(func() { memfdCreate = saved })
	memfdCreate = func(string, int) (int, error) { return -1, syscall.ENOSYS }
	bin, ws, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	fake := "#!" + bash + "\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("TMPDIR", tmp)
	r, err := New(Policy{Workspace: ws, Shell: true, Isolation: IsolationBwrap})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Ready(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "setting up uid map: Permission denied") {
		t.Errorf("Ready: %v, want ErrUnavailable with bwrap's reason", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the probe left %v in the temporary directory", left)
	}
}
