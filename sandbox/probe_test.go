//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// probeEnv, when set, makes the test binary run one probe instead of the
// tests: commands under test start it to try what a hostile command would.
const probeEnv = "PRAXIS_SANDBOX_PROBE"

func TestMain(m *testing.M) {
	if probe := os.Getenv(probeEnv); probe != "" {
		os.Exit(runProbe(probe, os.Args[1:]))
	}
	// The secret must be in the test process's initial environment, the
	// one /proc/PID/environ shows: os.Setenv does not change that.
	if os.Getenv(probeEnvSecret) == "" {
		if self, err := os.Executable(); err == nil {
			err = syscall.Exec(self, os.Args, append(os.Environ(), probeEnvSecret+"=hunter2"))
			fmt.Fprintln(os.Stderr, "re-executing the tests with a secret in the environment:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// runProbe tries one thing and says whether it worked: exit 0 and "ok" on
// stdout when it did, exit 1 and the error on stderr when it did not.
func runProbe(probe string, args []string) int {
	var err error
	switch probe {
	case "unix-connect": // a Unix-domain socket of the host, by path or @abstract name
		var c net.Conn
		if c, err = net.Dial("unix", args[0]); err == nil {
			_, err = io.ReadAll(c)
			c.Close()
		}
	case "docker-ping":
		err = dockerPing(args[0])
	case "socketpair":
		var fds [2]int
		if fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	case "setid": // try each route to a file with the setuid or setgid bit
		for i, set := range []func(string) error{
			func(p string) error { return unix.Chmod(p, 0o4755) },
			func(p string) error { return unix.Chmod(p, 0o2755) },
			func(p string) error { return unix.Fchmodat(unix.AT_FDCWD, p, 0o4755, 0) },
			func(p string) error {
				fd, err := unix.Open(p+"-creat", unix.O_CREAT|unix.O_WRONLY, 0o4755)
				if err == nil {
					unix.Close(fd)
				}
				return err
			},
			func(p string) error { return unix.Mknod(p+"-mknod", unix.S_IFREG|0o6755, 0) },
			func(p string) error {
				fd, err := unix.Open(p, unix.O_RDONLY, 0)
				if err != nil {
					return err
				}
				defer unix.Close(fd)
				return unix.Fchmod(fd, 0o4755)
			},
		} {
			p := filepath.Join(args[0], "setid"+strconv.Itoa(i))
			if err = os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err == nil {
				err = set(p)
			}
			fmt.Fprintf(os.Stderr, "route %d: %v\n", i, err)
		}
		err = nil
	default:
		err = fmt.Errorf("unknown probe %q", probe)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// dockerPing asks the Docker engine listening at the Unix socket path for
// its ping, and fails unless the engine answers.
func dockerPing(path string) error {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n"); err != nil {
		return err
	}
	b, err := io.ReadAll(c)
	if err == nil && !strings.HasSuffix(string(b), "OK") {
		err = fmt.Errorf("the engine answered %q", firstLine(string(b)))
	}
	return err
}

// probeBinary copies the test binary into dir (the workspace: under bwrap
// the build directory in /tmp is not visible) and returns its path.
func probeBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe.bin")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// hostDir returns a fresh directory of the host that a sandbox sees (read
// only): not under /tmp, which bwrap replaces with its own.
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "praxis-test-")
	if err != nil {
		t.Skipf("no directory outside /tmp for a host socket: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// unixListener serves a Unix-domain socket of the host at path (a leading
// "@" names an abstract socket) and reports each connection on the
// returned channel.
func unixListener(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got <- struct{}{}
			c.Close()
		}
	}()
	return got
}

// probeMode is an isolation every probe runs under. policy sets it in the
// policy, or skips the test, with the reason, where this machine cannot
// run it. A new runner is one more entry.
type probeMode struct {
	name   string
	policy func(t *testing.T, p *Policy)
}

var probeModes = []probeMode{
	{"none", func(t *testing.T, p *Policy) { p.Isolation = IsolationNone }},
	{"bwrap", func(t *testing.T, p *Policy) {
		requireBwrap(t)
		if !bwrapWorks() {
			t.Skip("bwrap cannot build its sandbox on this machine")
		}
		p.Isolation = IsolationBwrap
	}},
	{"auto", func(t *testing.T, p *Policy) { p.Isolation = IsolationAuto }},
	{"docker", func(t *testing.T, p *Policy) {
		p.Isolation = IsolationDocker
		p.Image = needDocker(t)
	}},
}

// bwrapWorks reports whether bwrap can build a sandbox here.
func bwrapWorks() bool {
	r, err := New(Policy{Workspace: os.TempDir(), Shell: true, Isolation: IsolationBwrap})
	return err == nil && r.Ready() == nil
}

// probeEnvSecret is set in the test's environment; no command may see it.
const probeEnvSecret = "PRAXIS_PROBE_SECRET"

// probeSetup is what the probes need: the runner (one session per mode,
// as a model would have it), its workspace, and paths and endpoints of
// the host they aim at. The host paths are outside /tmp, which bwrap
// replaces with its own, so that what stops a probe is the sandbox's rule
// and not that accident.
type probeSetup struct {
	r                 *Runner
	ws, bin           string
	outside           string // a directory of the host, outside the workspace
	public            string // a file in it that no rule hides
	hidden            string // a file the policy hides
	protected         string // a config file the policy keeps read-only, in the workspace
	unixPath, abstr   string
	unixHit, abstrHit <-chan struct{}
	tcpPort           string
}

// verdict is what became of a probe.
type verdict int

const (
	stopped verdict = iota
	escaped
	notApplicable // the probe's target does not exist on this machine
)

// probe is one hostile thing a command tries. try runs it and says what
// became of it, with a few words on what happened. mustStop lists the
// modes that must stop it; the others show what they do.
type probe struct {
	name     string
	mustStop []string
	try      func(t *testing.T, s *probeSetup) (verdict, string)
}

func runProbeScript(t *testing.T, s *probeSetup, c Command) Result {
	t.Helper()
	if c.Timeout == 0 {
		c.Timeout = 20 * time.Second
	}
	res, err := s.r.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("%q: %v", c.Script, err)
	}
	return res
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// stoppedIf returns stopped when ok, escaped otherwise, with what.
func stoppedIf(ok bool, what string) (verdict, string) {
	if ok {
		return stopped, what
	}
	return escaped, what
}

var (
	allModes      = []string{"none", "bwrap", "auto", "docker"}
	isolatedModes = []string{"bwrap", "auto", "docker"}
)

// probes are run by TestProbes. The scripts use bash and the programs of
// the docker tests' image (internal/dockerimage) only.
var probes = []probe{
	{"read Praxis's environment (variables, /proc/PID/environ)", allModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: "env; cat /proc/$PRAXIS_PID/environ /proc/$PPID/environ",
			Env: map[string]string{"PRAXIS_PID": strconv.Itoa(os.Getpid())}})
		leaked := strings.Contains(res.Stdout.Text, "hunter2")
		return stoppedIf(!leaked, map[bool]string{true: "secret read", false: "not visible"}[leaked])
	}},
	{"write a file outside the workspace", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		target := filepath.Join(s.outside, "escaped")
		runProbeScript(t, s, Command{Script: "echo x > " + shellQuote(target)})
		_, err := os.Stat(target)
		return stoppedIf(err != nil, map[bool]string{true: "written", false: "refused"}[err == nil])
	}},
	{"read a file outside the workspace", []string{"docker"}, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: "cat " + shellQuote(s.public)})
		read := strings.Contains(res.Stdout.Text, "public")
		return stoppedIf(!read, map[bool]string{true: "read", false: "not there"}[read])
	}},
	{"read a hidden credential", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: "cat " + shellQuote(s.hidden)})
		leaked := strings.Contains(res.Stdout.Text, "hunter2")
		return stoppedIf(!leaked, map[bool]string{true: "read", false: "hidden"}[leaked])
	}},
	{"change a protected config file (write, move it or its directory)", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		runProbeScript(t, s, Command{Script: "echo changed >> .praxis/config.yaml; mv .praxis/config.yaml moved; mv .praxis p2 && mv p2/config.yaml c.yaml"})
		b, err := os.ReadFile(s.protected)
		ok := err == nil && string(b) == "sandbox: {}\n"
		return stoppedIf(ok, map[bool]string{true: "unchanged", false: "changed"}[ok])
	}},
	{"connect to a TCP port on the host's loopback", []string{"bwrap", "docker"}, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: "exec 3<>/dev/tcp/127.0.0.1/" + s.tcpPort + " && cat <&3"})
		reached := strings.Contains(res.Stdout.Text, "pong")
		return stoppedIf(!reached, map[bool]string{true: "connected", false: "refused"}[reached])
	}},
	{"connect to a Unix socket of the host", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: s.bin + " " + shellQuote(s.unixPath), Env: map[string]string{probeEnv: "unix-connect"}})
		return connected(res, s.unixHit)
	}},
	{"connect to an abstract Unix socket of the host", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: s.bin + " " + shellQuote(s.abstr), Env: map[string]string{probeEnv: "unix-connect"}})
		return connected(res, s.abstrHit)
	}},
	{"talk to the host's Docker engine through its socket", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		const sock = "/var/run/docker.sock"
		if dockerPing(sock) != nil {
			return notApplicable, "no engine answers at " + sock
		}
		res := runProbeScript(t, s, Command{Script: s.bin + " " + sock, Env: map[string]string{probeEnv: "docker-ping"}})
		return stoppedIf(res.ExitCode != 0, firstLine(res.Stdout.Text+res.Stderr.Text))
	}},
	{"leave a setuid or setgid file", isolatedModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: s.bin + " .", Env: map[string]string{probeEnv: "setid"}})
		left := setIDFiles(t, s.ws)
		if len(left) > 0 {
			return escaped, "left " + strings.Join(left, ", ")
		}
		return stopped, firstLine(res.Stderr.Text)
	}},
	{"outlive the command (setsid, double fork)", allModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		m := marker()
		runProbeScript(t, s, Command{Script: fmt.Sprintf("setsid sleep %[1]s & (setsid sleep %[1]s & sleep 0.5) & ( (sleep %[1]s & sleep 0.5) & sleep 0.5 )", m)})
		left := survivors(m)
		return stoppedIf(len(left) == 0, fmt.Sprintf("%d left", len(left)))
	}},
	{"outlive a timeout (setsid, double fork)", allModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		m := marker()
		res := runProbeScript(t, s, Command{Script: fmt.Sprintf("(setsid sleep %[1]s &); setsid sleep %[1]s & sleep %[1]s", m), Timeout: time.Second})
		left := survivors(m)
		return stoppedIf(res.TimedOut && len(left) == 0, fmt.Sprintf("timed out %v, %d left", res.TimedOut, len(left)))
	}},
	{"start more processes than the limit", allModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: "for i in {1..100}; do setsid sleep 5 & done; wait"})
		return stoppedIf(res.Limit == "processes", "limit: "+res.Limit)
	}},
	{"fork bomb", allModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		res := runProbeScript(t, s, Command{Script: "bomb() { bomb | bomb; }; bomb", Timeout: 30 * time.Second})
		return stoppedIf(res.Limit == "processes" && !res.TimedOut, fmt.Sprintf("limit: %s, timed out %v", res.Limit, res.TimedOut))
	}},
	{"run in a directory that is a symlink out", allModes, func(t *testing.T, s *probeSetup) (verdict, string) {
		link := filepath.Join(s.ws, "out")
		os.Symlink(s.outside, link)
		defer os.Remove(link)
		_, err := s.r.Run(context.Background(), Command{Script: "echo x > escaped-cwd", Dir: "out"})
		_, statErr := os.Stat(filepath.Join(s.outside, "escaped-cwd"))
		return stoppedIf(statErr != nil, firstLine(fmt.Sprint(err)))
	}},
}

// connected judges a connection probe by what the listener saw.
func connected(res Result, hit <-chan struct{}) (verdict, string) {
	select {
	case <-hit:
		return escaped, "connected"
	case <-time.After(100 * time.Millisecond):
		return stopped, firstLine(res.Stderr.Text)
	}
}

// setIDFiles lists the files under dir with the setuid or setgid bit.
func setIDFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			out = append(out, filepath.Base(p))
			os.Remove(p)
		}
		return nil
	})
	return out
}

// TestProbes runs every probe under every isolation and prints one table,
// a column per mode, of what each stops (go test ./sandbox -run TestProbes
// -v; docker runs where an engine answers, see internal/dockerimage). What
// a mode must stop is asserted; what it does not stop is shown.
func TestProbes(t *testing.T) {
	table := map[string]map[string]string{}
	for _, mode := range probeModes {
		t.Run(mode.name, func(t *testing.T) {
			s := newProbeSetup(t, mode)
			cells := map[string]string{}
			table[mode.name] = cells
			// Under auto without a working bwrap, commands run under none,
			// and only none's rules hold.
			judgedAs := mode.name
			if s.r.Isolation() == IsolationNone {
				judgedAs = "none"
			}
			for _, p := range probes {
				t.Run(p.name, func(t *testing.T) {
					v, what := p.try(t, s)
					cells[p.name] = [...]string{"stopped", "**not stopped**", "n/a"}[v]
					t.Logf("%s: %s", cells[p.name], what)
					if v != escaped {
						return
					}
					if p.name == probes[0].name && judgedAs == "none" && os.Geteuid() == 0 {
						return // root reads any process's environment, non-dumpable or not
					}
					if slices.Contains(p.mustStop, judgedAs) {
						t.Errorf("under %s: %s", mode.name, what)
					}
				})
			}
		})
	}
	var b strings.Builder
	b.WriteString("\n| probe |")
	for _, mode := range probeModes {
		fmt.Fprintf(&b, " %s |", mode.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(probeModes)) + "\n")
	for _, p := range probes {
		fmt.Fprintf(&b, "| %s |", p.name)
		for _, mode := range probeModes {
			cell := table[mode.name][p.name]
			if cell == "" {
				cell = "-"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

// newProbeSetup builds the runner of mode, with a fresh workspace holding
// the probe binary and a protected config file, and the host's targets.
func newProbeSetup(t *testing.T, mode probeMode) *probeSetup {
	t.Helper()
	ws, outside := t.TempDir(), hostDir(t)
	hidden := filepath.Join(hostDir(t), "credentials")
	if err := os.WriteFile(hidden, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(hostDir(t), "notes")
	if err := os.WriteFile(public, []byte("public\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	protected := filepath.Join(ws, ".praxis", "config.yaml")
	if err := os.Mkdir(filepath.Dir(protected), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(protected, []byte("sandbox: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := DefaultPolicy(ws)
	mode.policy(t, &p)
	p.KillGrace = 200 * time.Millisecond
	p.Hide = []string{hidden}
	p.ReadOnly = []string{".praxis/config.yaml"}
	p.Limits.Processes = 32
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	s := &probeSetup{r: r, ws: ws, outside: outside, public: public, hidden: hidden, protected: protected, tcpPort: listen(t)}
	s.bin = probeBinary(t, ws)
	s.unixPath = filepath.Join(hostDir(t), "host.sock")
	s.unixHit = unixListener(t, s.unixPath)
	s.abstr = "@praxis-probe-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s.abstrHit = unixListener(t, s.abstr)
	return s
}

// A command under bwrap can still make a socketpair, and unix_sockets: on
// lets it reach the host's Unix sockets again.
func TestUnixSocketsSetting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sockets bool
		probe   string
		want    bool
	}{
		{"socketpair with sockets off", false, "socketpair", true},
		{"connect with sockets off", false, "unix-connect", false},
		{"connect with sockets on", true, "unix-connect", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ws := newBwrapRunner(t, func(p *Policy) { p.UnixSockets = tc.sockets })
			bin := probeBinary(t, ws)
			path := filepath.Join(hostDir(t), "host.sock")
			hit := unixListener(t, path)
			res := run(t, r, Command{Script: bin + " " + path, Env: map[string]string{probeEnv: tc.probe}})
			if got := res.ExitCode == 0; got != tc.want {
				t.Errorf("probe %s: exit %d, want success %v; stderr: %s", tc.probe, res.ExitCode, tc.want, res.Stderr.Text)
			}
			if tc.probe == "unix-connect" {
				if v, _ := connected(res, hit); (v == escaped) != tc.want {
					t.Errorf("listener reached: %v, want %v", v == escaped, tc.want)
				}
			}
		})
	}
}

// Under none, Praxis is non-dumpable: a command running as the same,
// unprivileged user cannot read its environment. The test binary, as
// nobody, plays Praxis; the command reads its /proc/PID/environ. The same
// Praxis checks that a command's setsid children do not outlive it when
// Praxis is not root.
func TestNonDumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the check as another, unprivileged user")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(dir); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	bin := probeBinary(t, dir)
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o777)
	os.Chmod(ws, 0o777)
	cmd := execAsNobody(bin, ws)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(string(out), "hunter2") {
		t.Errorf("a command read Praxis's environment:\n%s", out)
	}
	if !strings.Contains(string(out), "environ:") {
		t.Errorf("the probe did not run:\n%s", out)
	}
	if !strings.Contains(string(out), "survivors: 0") {
		t.Errorf("processes of a command run by nobody survived it:\n%s", out)
	}
}

// TestDumpableChild is the body of TestNonDumpable, run as nobody.
func TestDumpableChild(t *testing.T) {
	ws := os.Getenv("PRAXIS_DUMPABLE_WS")
	if ws == "" {
		t.Skip("run by TestNonDumpable")
	}
	r, err := New(Policy{Workspace: ws, Shell: true, Isolation: IsolationNone})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), Command{Script: "echo environ:; cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(res.Stdout.Text, res.Stderr.Text)
	// As a user other than root, the subreaper keeps the command's
	// processes: those that left the session, and orphans whose parent
	// lived across one scan of /proc (see the README for the gap).
	m := marker()
	if _, err := r.Run(context.Background(), Command{Script: fmt.Sprintf("(setsid sleep %[1]s & sleep 0.5); setsid sleep %[1]s & sleep 0.3", m)}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pidns: %v, survivors: %d\n", r.pidns, len(survivors(m)))
}

// execAsNobody returns the command that runs TestDumpableChild of the test
// binary bin as the user nobody, with the secret in its environment.
func execAsNobody(bin, ws string) *exec.Cmd {
	cmd := exec.Command(bin, "-test.run=^TestDumpableChild$", "-test.v")
	cmd.Env = []string{"PRAXIS_DUMPABLE_WS=" + ws, probeEnvSecret + "=hunter2", "PATH=" + os.Getenv("PATH")}
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}
