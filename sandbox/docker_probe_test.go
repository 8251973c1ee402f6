//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dockerProbe is one attempt to get out of the sandbox. run runs the attack with
// the runner and reports whether it got through. The dockerProbes are written
// against a Runner alone, so that the same set can run under every
// isolation.
type dockerProbe struct {
	name string
	run  func(t *testing.T, r *Runner, env dockerProbeEnv) (escaped bool, how string)
}

// dockerProbeEnv is what the dockerProbes need from the host.
type dockerProbeEnv struct {
	outside  string // a directory of the host outside the workspace
	secret   string // a file in it with a secret
	port     int    // a listener on all of the host's addresses
	envValue string // the value of a variable of Praxis's own, not allowlisted
}

const probeSecret = "praxis-probe-secret"

var dockerProbes = []dockerProbe{
	{"write a host file outside the workspace", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		target := filepath.Join(e.outside, "written")
		drun(t, r, Command{Script: "echo pwned > " + target})
		_, err := os.Stat(target)
		return err == nil, "file " + target
	}},
	{"read a host file outside the workspace", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		res := drun(t, r, Command{Script: "cat " + e.secret})
		return strings.Contains(res.Stdout.Text, probeSecret), "cat " + e.secret
	}},
	{"reach a listener on the host's loopback", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		res := drun(t, r, Command{Script: fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", e.port), Timeout: 20 * time.Second})
		return strings.Contains(res.Stdout.Text, "host"), "/dev/tcp/127.0.0.1"
	}},
	{"read a variable of Praxis's environment", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		res := drun(t, r, Command{Script: "env"})
		return strings.Contains(res.Stdout.Text, e.envValue), "env"
	}},
	{"read Praxis's /proc/PID/environ", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		res := drun(t, r, Command{Script: fmt.Sprintf("cat /proc/%d/environ /proc/$PPID/environ", os.Getpid())})
		return strings.Contains(res.Stdout.Text, e.envValue), "cat /proc/PID/environ"
	}},
	{"find the Docker socket", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		res := drun(t, r, Command{Script: "[ -S /var/run/docker.sock ] || [ -S /run/docker.sock ]"})
		return res.ExitCode == 0, "test -S /var/run/docker.sock"
	}},
	{"change a protected config file", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		cfg := filepath.Join(r.Policy().Workspace, ".praxis", "config.yaml")
		drun(t, r, Command{Script: "echo 'sandbox: {isolation: none}' >> .praxis/config.yaml; mv .praxis .p2; mv .p2/config.yaml c.yaml"})
		b, _ := os.ReadFile(cfg)
		return string(b) != "sandbox: {}\n", ".praxis/config.yaml"
	}},
	{"leave a process running after the command", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		drun(t, r, Command{Script: "(setsid sleep 1000 &); sleep 1000 & echo"})
		res := drun(t, r, Command{Script: countSleeps})
		return strings.TrimSpace(res.Stdout.Text) != "0", "setsid, double fork"
	}},
	{"outlive a timeout", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		drun(t, r, Command{Script: "(setsid sleep 1000 &); sleep 1000", Timeout: time.Second})
		res := drun(t, r, Command{Script: countSleeps})
		return strings.TrimSpace(res.Stdout.Text) != "0", "setsid, double fork, then time out"
	}},
	{"fork bomb past the process limit", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		res := drun(t, r, Command{Script: "f() { f | f & }; f; wait", Timeout: 30 * time.Second})
		return res.Limit != "processes", "limit " + res.Limit
	}},
	{"leave a setuid file in the workspace", func(t *testing.T, r *Runner, e dockerProbeEnv) (bool, string) {
		drun(t, r, Command{Script: "cp $(command -v id) suid; chmod u+s,g+s suid"})
		fi, err := os.Stat(filepath.Join(r.Policy().Workspace, "suid"))
		if err != nil {
			t.Fatalf("the probe could not copy a program: %v", err)
		}
		return fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0, "chmod u+s"
	}},
}

// TestDockerProbes runs the probe set under isolation docker and prints
// what it stops. Every probe but the setuid one must be stopped.
func TestDockerProbes(t *testing.T) {
	img := needDocker(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte(probeSecret), 0o644)
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
			c.Write([]byte("host\n"))
			c.Close()
		}
	}()
	env := dockerProbeEnv{outside: outside, secret: secret, port: ln.Addr().(*net.TCPAddr).Port, envValue: "praxis-probe-env-" + randomID()}
	t.Setenv("PRAXIS_PROBE_SECRET", env.envValue)
	known := map[string]bool{"leave a setuid file in the workspace": true} // see the README
	// One session for all dockerProbes, as a model would have it.
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, ".praxis"), 0o755)
	os.WriteFile(filepath.Join(ws, ".praxis", "config.yaml"), []byte("sandbox: {}\n"), 0o644)
	p := DefaultPolicy(ws)
	p.Isolation = IsolationDocker
	p.Image = img
	p.Limits.Processes = 64
	p.ReadOnly = []string{".praxis/config.yaml"}
	p.KillGrace = 500 * time.Millisecond
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var table strings.Builder
	fmt.Fprintf(&table, "\n| probe | docker |\n| --- | --- |\n")
	for _, pr := range dockerProbes {
		t.Run(pr.name, func(t *testing.T) {
			escaped, how := pr.run(t, r, env)
			verdict := "stopped"
			if escaped {
				verdict = "**not stopped**"
				if !known[pr.name] {
					t.Errorf("escaped: %s", how)
				}
			}
			fmt.Fprintf(&table, "| %s | %s |\n", pr.name, verdict)
		})
	}
	t.Log(table.String())
}
