//go:build linux

package sandbox

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/praxis-tools/praxis/internal/dockerimage"
)

// needDocker returns the docker tests' image (see internal/dockerimage).
func needDocker(t testing.TB) string {
	t.Helper()
	return dockerimage.Image(t)
}

// dockerRunner returns a docker Runner on a fresh workspace, closed at the
// end of the test.
func dockerRunner(t *testing.T, edit func(*Policy)) *Runner {
	t.Helper()
	img := needDocker(t)
	p := DefaultPolicy(t.TempDir())
	p.Isolation = IsolationDocker
	p.Image = img
	p.KillGrace = 500 * time.Millisecond
	if edit != nil {
		edit(&p)
	}
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func drun(t *testing.T, r *Runner, c Command) Result {
	t.Helper()
	res, err := r.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDockerRun(t *testing.T) {
	t.Setenv("PRAXIS_TEST_SECRET", "hunter2")
	t.Setenv("PRAXIS_TEST_ALLOWED", "yes")
	r := dockerRunner(t, func(p *Policy) { p.Env = append(DefaultEnv, "PRAXIS_TEST_ALLOWED") })
	ws := realPath(r.Policy().Workspace)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	tests := []struct {
		name       string
		cmd        Command
		stdout     string
		stderr     string
		exit       int
		limitMatch string
	}{
		{name: "echo", cmd: Command{Script: "echo hello; echo oops >&2"}, stdout: "hello\n", stderr: "oops\n"},
		{name: "exit code", cmd: Command{Script: "exit 7"}, exit: 7},
		{name: "cwd is the host path", cmd: Command{Script: "pwd"}, stdout: ws + "\n"},
		{name: "relative dir", cmd: Command{Script: "pwd", Dir: "sub"}, stdout: ws + "/sub\n"},
		{name: "stdin", cmd: Command{Script: "cat", Stdin: strings.NewReader("in put")}, stdout: "in put"},
		{name: "no stdin", cmd: Command{Script: "cat"}, stdout: ""},
		{name: "env allowlist", cmd: Command{Script: `echo "${PRAXIS_TEST_SECRET-unset} $PRAXIS_TEST_ALLOWED"`}, stdout: "unset yes\n"},
		{name: "call env", cmd: Command{Script: `echo "$FOO"`, Env: map[string]string{"FOO": "bar"}}, stdout: "bar\n"},
		{name: "host PATH not passed", cmd: Command{Script: `echo "$TMPDIR"; [ "$PATH" != "` + os.Getenv("PATH") + `" ] && echo image-path`}, stdout: "/tmp\nimage-path\n"},
		{name: "marker not overridable", cmd: Command{Script: `[ "$PRAXIS_COMMAND" != x ] && echo kept`, Env: map[string]string{"PRAXIS_COMMAND": "x"}}, stdout: "kept\n"},
		{name: "per-process limits", cmd: Command{Script: "ulimit -t; ulimit -f"}, stdout: "600\n1048576\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := drun(t, r, tt.cmd)
			if res.Stdout.Text != tt.stdout || res.Stderr.Text != tt.stderr || res.ExitCode != tt.exit {
				t.Errorf("got exit %d stdout %q stderr %q; want %d %q %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text, tt.exit, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestDockerOutputCap(t *testing.T) {
	r := dockerRunner(t, func(p *Policy) { p.OutputBytes = 1000 })
	res := drun(t, r, Command{Script: "head -c 1000000 /dev/zero; echo; echo end"})
	if res.Stdout.Total != 1000005 || !res.Stdout.Truncated() || !strings.HasSuffix(res.Stdout.Text, "end\n") ||
		!strings.Contains(res.Stdout.Text, "bytes omitted]") {
		t.Errorf("total %d omitted %d, tail %q", res.Stdout.Total, res.Stdout.Omitted, res.Stdout.Text[max(0, len(res.Stdout.Text)-80):])
	}
}

func TestDockerOwner(t *testing.T) {
	for _, user := range []string{"", "65534:65534"} {
		t.Run("user="+user, func(t *testing.T) {
			r := dockerRunner(t, nil)
			ws := r.Policy().Workspace
			uid, gid := os.Getuid(), os.Getgid()
			if user != "" {
				r.docker.user = user
				uid, gid = 65534, 65534
				os.Chmod(ws, 0o777)
			}
			res := drun(t, r, Command{Script: "mkdir -p d && echo hi > d/f && id -u"})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
			}
			for _, name := range []string{"d", "d/f"} {
				fi, err := os.Stat(filepath.Join(ws, name))
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				if int(st.Uid) != uid || int(st.Gid) != gid {
					t.Errorf("%s is owned by %d:%d, want %d:%d", name, st.Uid, st.Gid, uid, gid)
				}
			}
		})
	}
}

// hostAddr returns an address of this host other than loopback, one a
// container on the engine's default network could reach.
func hostAddr(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Skip("this host has no IPv4 address besides loopback")
	return ""
}

func TestDockerNetwork(t *testing.T) {
	// A listener on all of the host's addresses, loopback included.
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	addr := hostAddr(t)
	probe := func(ip string) string {
		return fmt.Sprintf(`exec 3<>/dev/tcp/%s/%d && cat <&3`, ip, port)
	}
	for _, tt := range []struct {
		network Network
		ip      string
		reach   bool
	}{
		{NetworkDefault, "127.0.0.1", false},
		{NetworkDefault, addr, false},
		{NetworkOff, addr, false},
		// The test can fail: with the network on the host is reachable.
		{NetworkOn, addr, true},
	} {
		t.Run(fmt.Sprintf("%s/%s", tt.network, tt.ip), func(t *testing.T) {
			r := dockerRunner(t, func(p *Policy) { p.Network = tt.network })
			res := drun(t, r, Command{Script: probe(tt.ip), Timeout: 20 * time.Second})
			got := strings.Contains(res.Stdout.Text, "hello from the host")
			if got != tt.reach {
				t.Errorf("reached the host's listener: %v, want %v (exit %d, stderr %q)", got, tt.reach, res.ExitCode, res.Stderr.Text)
			}
		})
	}
}

func TestDockerForkBomb(t *testing.T) {
	r := dockerRunner(t, func(p *Policy) { p.Limits.Processes = 64 })
	// The bomb's processes run in the background, and the command waits
	// on after starting it: with "wait", which returns once the first
	// pipeline's two shells have forked theirs, the command could end
	// before the bomb reached the limit, and the limit go unreported.
	res := drun(t, r, Command{Script: `f() { f | f & }; f; sleep 50`, Timeout: 60 * time.Second})
	t.Logf("bomb: %v limit %q exit %d", res.Duration, res.Limit, res.ExitCode)
	if res.Limit != "processes" || res.TimedOut {
		t.Fatalf("limit %q timed out %v exit %d", res.Limit, res.TimedOut, res.ExitCode)
	}
	// The container survives, and nothing of the bomb is left in it.
	res = drun(t, r, Command{Script: `n=0; for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = bash ] && n=$((n+1)); done; echo $n`})
	// The agent, the wrapper and this shell (and its $(...) subshells at most).
	if res.ExitCode != 0 || res.Stdout.Text == "" || atoi(res.Stdout.Text) > 4 {
		t.Errorf("after the bomb: exit %d, bash processes %q, stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func TestDockerMemory(t *testing.T) {
	r := dockerRunner(t, func(p *Policy) {
		p.Limits.Memory = 64 << 20
		p.Limits.AddressSpace = -1
	})
	res := drun(t, r, Command{Script: "tail /dev/zero", Timeout: 60 * time.Second})
	if res.Limit != "memory" || res.ExitCode == 0 {
		t.Fatalf("limit %q exit %d stderr %q", res.Limit, res.ExitCode, res.Stderr.Text)
	}
	if res := drun(t, r, Command{Script: "echo alive"}); res.Stdout.Text != "alive\n" {
		t.Errorf("after the OOM kill: %+v", res)
	}
}

// countSleeps is a script that prints how many sleep processes run in the
// container.
const countSleeps = `n=0; for d in /proc/[0-9]*; do c=$(cat $d/comm 2>/dev/null); [ "$c" = sleep ] && n=$((n+1)); done; echo $n`

func TestDockerTimeoutKillsTree(t *testing.T) {
	r := dockerRunner(t, nil)
	first := drun(t, r, Command{Script: "echo ready"})
	if first.Stdout.Text != "ready\n" {
		t.Fatal(first)
	}
	id := r.docker.box.id
	// A child, a double fork and a new session: all of them go.
	res := drun(t, r, Command{Script: "sleep 300 & (sleep 301 &) ; setsid sleep 302 & echo started; sleep 303", Timeout: time.Second})
	if !res.TimedOut || res.Stdout.Text != "started\n" {
		t.Fatalf("timed out %v, stdout %q", res.TimedOut, res.Stdout.Text)
	}
	res = drun(t, r, Command{Script: countSleeps})
	if res.Stdout.Text != "0\n" {
		t.Errorf("sleep processes left: %q", res.Stdout.Text)
	}
	if r.docker.box == nil || r.docker.box.id != id {
		t.Errorf("the container was replaced; want it kept")
	}
}

func TestDockerLeftovers(t *testing.T) {
	r := dockerRunner(t, nil)
	start := time.Now()
	res := drun(t, r, Command{Script: "sleep 300 & (setsid sleep 301 &); echo done"})
	if res.Stdout.Text != "done\n" || res.ExitCode != 0 || res.Leftovers != 2 {
		left := drun(t, r, Command{Script: countSleeps})
		t.Fatalf("%+v; sleep processes still running: %s", res, left.Stdout.Text)
	}
	if res := drun(t, r, Command{Script: "true"}); res.Leftovers != 0 {
		t.Errorf("a command that left nothing: %+v", res)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the command took %v: its leftovers held its output open", el)
	}
	if res := drun(t, r, Command{Script: countSleeps}); res.Stdout.Text != "0\n" {
		t.Errorf("sleep processes left: %q", res.Stdout.Text)
	}
}

// A leftover is found even when the command's shell exits while it is
// still being exec'd, when its environment, which carries the command's
// marker, reads empty for a moment. One run in about fifteen hit that
// moment on a loaded machine before the sweep looked again.
func TestDockerLeftoverInExec(t *testing.T) {
	r := dockerRunner(t, nil)
	for i := range 25 {
		res := drun(t, r, Command{Script: "sleep 300 & echo started"})
		if res.Leftovers != 1 {
			left := drun(t, r, Command{Script: countSleeps})
			t.Fatalf("run %d: %d leftovers counted, want 1; sleep processes still running: %s", i, res.Leftovers, left.Stdout.Text)
		}
	}
}

// A process of the container that runs with no environment, as after
// env -i, is not taken for one caught in an exec: a sweep does not wait
// for it to show one. Without telling the two apart, every command
// would wait the sweep's two seconds while it runs.
func TestDockerEnvlessProcess(t *testing.T) {
	r := dockerRunner(t, nil)
	p, err := r.Start(context.Background(), Command{Script: "exec env -i sleep 300"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Kill(); <-p.Done() }()
	for deadline := time.Now().Add(10 * time.Second); drun(t, r, Command{Script: countSleeps}).Stdout.Text != "1\n"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command's sleep did not start")
		}
	}
	fastest := time.Hour
	for range 3 {
		start := time.Now()
		if res := drun(t, r, Command{Script: "echo hi"}); res.Stdout.Text != "hi\n" || res.Leftovers != 0 {
			t.Fatalf("%+v", res)
		}
		fastest = min(fastest, time.Since(start))
	}
	if fastest >= 1500*time.Millisecond {
		t.Errorf("the fastest of three commands took %v: the sweep waited for the process without an environment", fastest)
	}
}

func TestDockerKillOneOfMany(t *testing.T) {
	r := dockerRunner(t, nil)
	ctx := context.Background()
	a, err := r.Start(ctx, Command{Script: "echo a; sleep 300"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Start(ctx, Command{Script: "echo b; sleep 2; echo b done"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	a.Kill()
	<-a.Done()
	if res := a.Result(); !res.Killed {
		t.Errorf("a: %+v", res)
	}
	if res := b.Result(); res.ExitCode != 0 || res.Stdout.Text != "b\nb done\n" {
		t.Errorf("b was disturbed: %+v", res)
	}
}

func TestDockerClose(t *testing.T) {
	r := dockerRunner(t, nil)
	p, err := r.Start(context.Background(), Command{Script: "sleep 300"})
	if err != nil {
		t.Fatal(err)
	}
	id := r.docker.box.id
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the command outlived Close")
	}
	if exists(t, id) {
		t.Errorf("container %.12s still exists after Close", id)
	}
	if _, err := r.Start(context.Background(), Command{Script: "true"}); err == nil {
		t.Error("Start after Close succeeded")
	}
}

// exists reports whether the engine still has container id.
func exists(t *testing.T, id string) bool {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	return err == nil
}

func TestDockerPolicyErrors(t *testing.T) {
	img := needDocker(t)
	ws := t.TempDir()
	for _, tt := range []struct {
		name string
		edit func(*Policy)
		want error
		msg  string
	}{
		{"no image", func(p *Policy) { p.Image = "" }, ErrInvalid, "needs image"},
		{"image not present", func(p *Policy) { p.Image = "praxis-no-such-image:0" }, ErrUnavailable, `image "praxis-no-such-image:0" (setting image:) is not in the store`},
		{"no engine", func(p *Policy) { p.Engine = "unix://" + filepath.Join(ws, "none.sock") }, ErrUnavailable, "no Docker engine answers"},
		{"memory without docker", func(p *Policy) { p.Isolation = IsolationNone; p.Limits.Memory = 1 << 30 }, ErrUnavailable, "only isolation docker enforces"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy(ws)
			p.Isolation = IsolationDocker
			p.Image = img
			tt.edit(&p)
			r, err := New(p)
			if err == nil {
				r.Close()
				t.Fatal("New succeeded")
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %v; want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}

// TestDockerOrphanHelper is the Praxis the orphan test kills: it starts a
// command in a container of the workspace the environment names, prints
// the container's id and waits to be killed.
func TestDockerOrphanHelper(t *testing.T) {
	ws := os.Getenv("PRAXIS_TEST_ORPHAN_WS")
	if ws == "" {
		t.Skip("run by TestDockerOrphans")
	}
	p := DefaultPolicy(ws)
	p.Isolation = IsolationDocker
	p.Image = os.Getenv("PRAXIS_TEST_ORPHAN_IMAGE")
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start(context.Background(), Command{Script: "sleep 600"}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("container %s\n", r.docker.box.id)
	time.Sleep(10 * time.Minute)
}

func TestDockerOrphans(t *testing.T) {
	img := needDocker(t)
	ws := t.TempDir()
	newRunner := func() {
		t.Helper()
		p := DefaultPolicy(ws)
		p.Isolation = IsolationDocker
		p.Image = img
		r, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}

	t.Run("kill -9", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDockerOrphanHelper$", "-test.timeout=15m")
		cmd.Env = append(os.Environ(), "PRAXIS_TEST_ORPHAN_WS="+ws, "PRAXIS_TEST_ORPHAN_IMAGE="+img)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		var id string
		if _, err := fmt.Fscanf(out, "container %s\n", &id); err != nil {
			t.Fatalf("the helper printed no container: %v", err)
		}
		if !exists(t, id) {
			t.Fatal("the helper's container does not exist")
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		newRunner()
		if exists(t, id) {
			t.Errorf("container %.12s of the killed Praxis survived a new start", id)
		}
	})

	t.Run("owner gone", func(t *testing.T) {
		// A container of this workspace whose owner is a process that has
		// ended, kept running (its input is open and never closed): only
		// the sweep at start can remove it.
		gone := exec.Command("true")
		if err := gone.Start(); err != nil {
			t.Fatal(err)
		}
		owner := ownerID() // this process, with the pid swapped below
		start := procStart(gone.Process.Pid)
		gone.Wait()
		f := strings.Split(owner, "/")
		f[2], f[3] = fmt.Sprint(gone.Process.Pid), start
		cli, err := client.New(client.FromEnv)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx := context.Background()
		created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config: &container.Config{
				Image: img, Entrypoint: []string{"bash", "-c", "read -r x"}, OpenStdin: true,
				Labels: map[string]string{labelWorkspace: realPath(ws), labelOwner: strings.Join(f, "/"), labelSession: "test"},
			},
			HostConfig: &container.HostConfig{AutoRemove: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.ContainerRemove(ctx, created.ID, client.ContainerRemoveOptions{Force: true})
		if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
			t.Fatal(err)
		}
		// A live owner's container (this process's) is left alone.
		alive, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config: &container.Config{
				Image: img, Entrypoint: []string{"bash", "-c", "read -r x"}, OpenStdin: true,
				Labels: map[string]string{labelWorkspace: realPath(ws), labelOwner: owner, labelSession: "test2"},
			},
			HostConfig: &container.HostConfig{AutoRemove: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.ContainerRemove(ctx, alive.ID, client.ContainerRemoveOptions{Force: true})
		if _, err := cli.ContainerStart(ctx, alive.ID, client.ContainerStartOptions{}); err != nil {
			t.Fatal(err)
		}
		newRunner()
		if exists(t, created.ID) {
			t.Errorf("the orphan %.12s survived a new start", created.ID)
		}
		if !exists(t, alive.ID) {
			t.Errorf("the container of a live owner was removed")
		}
	})
}

// TestDockerSSHEngine reaches the engine through an ssh:// address. The ssh
// program here is a stand-in that runs the remote command locally, so the
// test covers everything but ssh itself: the dial-stdio connection, the
// hijacked streams of the agent and of each command over it.
func TestDockerSSHEngine(t *testing.T) {
	img := needDocker(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("the docker command, which an ssh:// engine runs on its host, is not installed")
	}
	bin := t.TempDir()
	fake := "#!/bin/sh\n# ssh [options] -- host command...\nwhile [ \"$1\" != -- ]; do shift; done\nshift 2\nexec \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	p := DefaultPolicy(t.TempDir())
	p.Isolation = IsolationDocker
	p.Image = img
	p.Engine = "ssh://someone@build-host:2222"
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := drun(t, r, Command{Script: "echo over ssh; cat", Stdin: strings.NewReader("input\n")})
	if res.Stdout.Text != "over ssh\ninput\n" || res.ExitCode != 0 {
		t.Errorf("%+v", res)
	}
	res = drun(t, r, Command{Script: "sleep 60", Timeout: time.Second})
	if !res.TimedOut {
		t.Errorf("timeout over ssh: %+v", res)
	}
}

// TestDockerStreaming reads a command's output while it runs, as the bash
// tool's background jobs do.
func TestDockerStreaming(t *testing.T) {
	r := dockerRunner(t, nil)
	p, err := r.Start(context.Background(), Command{Script: "echo first; sleep 300"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for p.Written() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	out, _, next := p.Output(0)
	if out.Text != "first\n" || next != 6 {
		t.Errorf("while running: %q next %d", out.Text, next)
	}
	p.Kill()
	if res := p.Result(); !res.Killed || res.Stdout.Text != "first\n" {
		t.Errorf("after Kill: %+v", res)
	}
}

// An image without bash is refused at the first command, saying so.
func TestDockerImageWithoutBash(t *testing.T) {
	needDocker(t)
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	const name = "praxis-sandbox-test-nobash:1"
	var buf strings.Builder
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "hello", Mode: 0o644, Size: 3})
	tw.Write([]byte("hi\n"))
	tw.Close()
	res, err := cli.ImageImport(context.Background(), client.ImageImportSource{Source: strings.NewReader(buf.String()), SourceName: "-"}, name, client.ImageImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res)
	res.Close()
	r := dockerRunner(t, func(p *Policy) { p.Image = name })
	_, err = r.Run(context.Background(), Command{Script: "true"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "must provide bash") {
		t.Errorf("got %v", err)
	}
	if ids := workspaceContainers(t, r.docker.ws); len(ids) != 0 {
		t.Errorf("the failed container was left: %v", ids)
	}
}

// workspaceContainers returns the engine's containers labelled with ws.
func workspaceContainers(t *testing.T, ws string) []string {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{
		All: true, Filters: make(client.Filters).Add("label", labelWorkspace+"="+ws),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

// The container's seccomp profile refuses the setuid and setgid bits, and
// only them: files are still created, copied and made executable.
func TestDockerSetID(t *testing.T) {
	r := dockerRunner(t, nil)
	ws := r.Policy().Workspace
	for _, tc := range []struct {
		script string
		ok     bool
		file   string
		mode   os.FileMode
	}{
		{"echo x > f && chmod 755 f", true, "f", 0o755},
		{"cp f g && chmod 700 g", true, "g", 0o700},
		{"chmod u+s f", false, "f", 0o755},
		{"chmod g+s f", false, "f", 0o755},
		{"chmod 4755 g", false, "g", 0o700},
		{"mkdir d && chmod 2775 d", false, "d", os.ModeDir | 0o755},
	} {
		t.Run(tc.script, func(t *testing.T) {
			res := drun(t, r, Command{Script: tc.script})
			if (res.ExitCode == 0) != tc.ok {
				t.Errorf("exit %d, want success %v: %s", res.ExitCode, tc.ok, res.Stderr.Text)
			}
			if !tc.ok && !strings.Contains(res.Stderr.Text, "not permitted") {
				t.Errorf("stderr %q, want the refusal", res.Stderr.Text)
			}
			fi, err := os.Stat(filepath.Join(ws, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (os.ModeDir | os.ModePerm | os.ModeSetuid | os.ModeSetgid); got != tc.mode {
				t.Errorf("%s: mode %v, want %v", tc.file, got, tc.mode)
			}
		})
	}
}
