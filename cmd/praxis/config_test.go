package main

import (
	"github.com/praxis-tools/praxis/agent"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxWorkspace returns a workspace and points the user's config
// directory at a fresh one, so the real user's config is never read.
func sandboxWorkspace(t *testing.T) (ws, userConfig string) {
	t.Helper()
	ws = t.TempDir()
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	return ws, filepath.Join(cfgHome, "praxis", "config.yaml")
}

func writeConfig(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxConfigLayers(t *testing.T) {
	ws, user := sandboxWorkspace(t)
	bash := func(extra ...string) runResult {
		return runPraxis(t, ws, "", append(append([]string{"call"}, extra...), "bash", `{"command":"echo ran", "timeout_ms": 60000}`)...)
	}
	if r := bash(); r.code != 0 || !strings.Contains(r.stdout, "exit code 0") {
		t.Fatalf("default policy: %d %s %s", r.code, r.stdout, r.stderr)
	}
	writeConfig(t, user, "sandbox:\n  shell: false\n")
	if r := bash(); r.code != 1 || !strings.Contains(r.stderr, "E_POLICY: the shell is disabled") {
		t.Fatalf("user config shell: false: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The workspace's file may tighten the user's policy, never loosen it.
	wsConfig := filepath.Join(ws, ".praxis", "config.yaml")
	writeConfig(t, wsConfig, "sandbox:\n  shell: true\n")
	if r := bash(); r.code != 2 || !strings.Contains(r.stderr, "may only tighten the sandbox policy, but it loosens shell") {
		t.Fatalf("workspace config enabling the shell: %d %s %s", r.code, r.stdout, r.stderr)
	}
	writeConfig(t, user, "sandbox:\n  isolation: none\n")
	writeConfig(t, wsConfig, "sandbox:\n  max_timeout: 30s\n  timeout: 10s\n")
	if r := bash(); r.code != 1 || !strings.Contains(r.stderr, "E_POLICY: timeout_ms 60000 is over the policy maximum of 30000") {
		t.Fatalf("workspace config max_timeout: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// --config overrides both.
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	writeConfig(t, extra, "sandbox: {max_timeout: 2m}\n")
	if r := bash("--config", extra); r.code != 0 {
		t.Fatalf("--config max_timeout: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// --sandbox overrides the files; network off without bwrap fails closed.
	writeConfig(t, extra, "sandbox: {max_timeout: 2m, network: off}\n")
	if r := bash("--config", extra, "--sandbox", "none"); r.code != 2 || !strings.Contains(r.stderr, "network off needs isolation bwrap") {
		t.Fatalf("network off with --sandbox none: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestWorkspaceConfigMayOnlyTighten(t *testing.T) {
	ws, _ := sandboxWorkspace(t)
	for _, tc := range []struct{ config, loosens string }{
		{"sandbox: {writable: [/]}", "writable"},
		{"sandbox: {env: [PATH, AWS_SECRET_ACCESS_KEY]}", "env"},
		{"sandbox: {max_timeout: 2h, limits: {processes: unlimited}}", "max_timeout, limits.processes"},
	} {
		writeConfig(t, filepath.Join(ws, ".praxis", "config.yaml"), tc.config)
		r := runPraxis(t, ws, "", "call", "bash", `{"command":"touch ran"}`)
		if r.code != 2 || !strings.Contains(r.stderr, "it loosens "+tc.loosens+";") {
			t.Errorf("%s: exit %d\nstderr: %s", tc.config, r.code, r.stderr)
		}
		// The same settings from the user's own --config are accepted.
		own := filepath.Join(t.TempDir(), "own.yaml")
		writeConfig(t, own, tc.config)
		os.Remove(filepath.Join(ws, ".praxis", "config.yaml"))
		if r := runPraxis(t, ws, "", "call", "--config", own, "bash", `{"command":"true"}`); r.code != 0 {
			t.Errorf("%s from --config: exit %d\nstderr: %s", tc.config, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("a command ran under a loosened policy")
	}
}

func TestSandboxConfigErrors(t *testing.T) {
	ws, user := sandboxWorkspace(t)
	for _, tc := range []struct {
		name, userConfig string
		args             []string
		want             string
	}{
		{"bad --sandbox", "", []string{"--sandbox", "jail"}, `--sandbox jail: must be one of none, auto, bwrap, docker`},
		{"missing --config", "", []string{"--config", filepath.Join(ws, "nope.yaml")}, "nope.yaml does not exist"},
		{"unknown key", "sandbox:\n  shel: true\n", nil, "line 2: field shel not found"},
		{"bad isolation", "sandbox: {isolation: jail}\n", nil, `isolation "jail"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(user)
			if tc.userConfig != "" {
				writeConfig(t, user, tc.userConfig)
			}
			r := runPraxis(t, ws, "", append(append([]string{"call"}, tc.args...), "bash", `{"command":"touch ran"}`)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want 2 with %q\nstderr: %s", r.code, tc.want, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
				t.Error("the command ran")
			}
		})
	}
}

// The engine's file tools may not change the files that set its policy.
func TestConfigFilesProtected(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(ws, "cfg")) // a user config inside the workspace
	explicit := filepath.Join(ws, "my-praxis.yaml")
	writeConfig(t, explicit, "sandbox: {}\n")
	for _, path := range []string{".praxis/config.yaml", "./.praxis/../.praxis/config.yaml", "cfg/praxis/config.yaml", "my-praxis.yaml"} {
		r := runPraxis(t, ws, "", "call", "--config", explicit, "write_file", `{"path":"`+path+`","content":"sandbox: {shell: true}\n"}`)
		if r.code != 1 || !strings.Contains(r.stderr, "E_POLICY") {
			t.Errorf("write_file %s: exit %d\n%s%s", path, r.code, r.stdout, r.stderr)
		}
	}
	for _, path := range []string{"notes.yaml", ".praxis/skills/x/SKILL.md"} {
		if r := runPraxis(t, ws, "", "call", "write_file", `{"path":"`+path+`","content":"x\n"}`); r.code != 0 {
			t.Errorf("an ordinary file is refused: %s", r.stderr)
		}
	}
}

// A call that runs no command starts no process: isolation auto checks
// bubblewrap at the first command, once. The stand-in bwrap counts its
// runs and fails as bwrap does where user namespaces are disabled.
func TestCallProbesSandboxLazily(t *testing.T) {
	ws, _ := sandboxWorkspace(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(t.TempDir(), "runs")
	fake := "#!" + bash + "\necho run >>" + count + "\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	writeConfig(t, filepath.Join(ws, "a.txt"), "hello\n")
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}
	for _, tc := range []struct {
		args     []string
		runs     int
		fallback bool
	}{
		{[]string{"call", "read_file", `{"path":"a.txt"}`}, 0, false},
		{[]string{"call", "list_dir", `{}`}, 0, false},
		{[]string{"call", "bash", `{"command":"echo ran"}`}, 1, true},
	} {
		os.Remove(count)
		r := runPraxis(t, ws, "", tc.args...)
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s", tc.args[1], r.code, r.stderr)
		}
		if n := runs(); n != tc.runs {
			t.Errorf("%s ran bwrap %d times, want %d", tc.args[1], n, tc.runs)
		}
		if got := strings.Contains(r.stderr, "isolation none (policy auto)"); got != tc.fallback {
			t.Errorf("%s: fallback said %v, want %v\nstderr: %s", tc.args[1], got, tc.fallback, r.stderr)
		}
	}
}

// Asking for bwrap where there is none fails closed, naming what is missing.
func TestSandboxBwrapMissing(t *testing.T) {
	ws, _ := sandboxWorkspace(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	r := runPraxis(t, ws, "", "call", "--sandbox", "bwrap", "bash", `{"command":"touch ran"}`)
	if r.code != 2 || !strings.Contains(r.stderr, "bwrap") || !strings.Contains(r.stderr, "bubblewrap") {
		t.Errorf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the command ran unisolated")
	}
}

// The agent and the server say on stderr which sandbox mode is actually
// running: under the default auto, bwrap where it works, and none with the
// reason where it does not. A one-shot call says it only when auto fell
// back to none, so that a call's standard error stays its own.
func TestSandboxModePrinted(t *testing.T) {
	ws, _ := sandboxWorkspace(t)
	call := func() runResult {
		return runPraxis(t, ws, "", "call", "bash", `{"command":"echo ran"}`)
	}
	script := writeScript(t, []agent.ScriptTurn{st("done")})
	agentRun := func(args ...string) runResult {
		return runPraxis(t, ws, "", append([]string{"agent", "--provider", "scripted", "--script", script, "--workspace", ws}, append(args, "task")...)...)
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		if r := call(); r.code != 0 || strings.Contains(r.stderr, "sandbox") {
			t.Errorf("call with bwrap: exit %d\nstderr: %s", r.code, r.stderr)
		}
		if r := agentRun(); r.code != 0 || !strings.Contains(r.stderr, "praxis agent: sandbox: isolation bwrap (policy auto), network on, unix sockets refused") {
			t.Errorf("agent with bwrap: exit %d\nstderr: %s", r.code, r.stderr)
		}
		if r := agentRun("--sandbox", "bwrap"); !strings.Contains(r.stderr, "praxis agent: sandbox: isolation bwrap, network off, unix sockets refused") {
			t.Errorf("agent --sandbox bwrap: exit %d\nstderr: %s", r.code, r.stderr)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	r := call()
	if r.code != 0 || !strings.Contains(r.stderr, "sandbox: isolation none (policy auto), network on; bwrap unavailable:") ||
		strings.Count(r.stderr, "sandbox:") != 1 {
		t.Errorf("without bwrap: exit %d\nstderr: %s", r.code, r.stderr)
	}
}
