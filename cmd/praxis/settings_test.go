package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/agent"
)

// TestAgentClaudeSettings runs the agent in a workspace holding a copy of
// a Claude Code settings file, with rules and hooks in Claude's names, and
// checks each does what it does in Claude Code; then the same file given
// with --settings.
func TestAgentClaudeSettings(t *testing.T) {
	settings, err := os.ReadFile("testdata/claude-settings.json")
	if err != nil {
		t.Fatal(err)
	}
	turns := []agent.ScriptTurn{
		st("", sc("bash", `{"command":"git  push origin main"}`)),
		st("", sc("bash", `{"command":"FOO=1 curl -s http://example.com"}`)),
		st("", sc("bash", `{"command":"echo hello"}`)),
		st("", sc("read_file", `{"path":".env"}`)),
		st("", sc("read_file", `{"path":"secrets/key.pem"}`)),
		st("", sc("edit_file", `{"path":"package.json","ops":[{"op":"append","new_text":"x"}]}`)),
		st("", sc("write_file", `{"path":"out.txt","content":"x\n"}`)),
		st("", sc("bash", `{"command":"git commit -m x"}`)),
		st("done"),
	}
	wantResults := []struct {
		isErr bool
		text  string
	}{
		{true, "deny(Bash(git push:*))"},
		{true, "deny(Bash(curl:*))"},
		{false, "hello"},
		{true, "deny(Read(./.env))"},
		{true, "deny(Read(./secrets/**))"},
		{true, "ask(Edit(package.json))"},
		{false, ""},
		{true, "ask(Bash(git commit:*))"},
	}
	for _, how := range []string{"workspace", "--settings"} {
		t.Run(how, func(t *testing.T) {
			ws := workspace(t)
			for name, content := range map[string]string{".env": "KEY=secret\n", "secrets/key.pem": "pem\n", "package.json": "{}\n"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(ws, name), content)
			}
			args := []string{"--provider", "scripted", "--script", writeScript(t, turns), "--workspace", ws, "--json", "--no-journal"}
			if how == "workspace" {
				if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(ws, ".claude", "settings.json"), string(settings))
			} else {
				args = append(args, "--settings", writeFile(t, filepath.Join(t.TempDir(), "settings.json"), string(settings)))
			}
			code, out, errb := runAgentTest(t, nil, append(args, "task")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errb)
			}
			announced := strings.Contains(errb, "reading hooks and permissions from .claude/settings.json")
			if announced != (how == "workspace") {
				t.Errorf("stderr announces the workspace's settings: %v\n%s", announced, errb)
			}
			for _, w := range []string{"WebFetch, a Claude Code tool Praxis does not have", "NotebookEdit, which Praxis does not have", "Notification hooks"} {
				if !strings.Contains(errb, w) {
					t.Errorf("stderr does not warn %q:\n%s", w, errb)
				}
			}
			res := toolResults(decodeEvents(t, out))
			if len(res) != len(wantResults) {
				t.Fatalf("%d results; want %d", len(res), len(wantResults))
			}
			for i, w := range wantResults {
				if res[i].IsError != w.isErr || !strings.Contains(res[i].Output, w.text) {
					t.Errorf("result %d: error %v %q; want error %v and %q", i, res[i].IsError, res[i].Output, w.isErr, w.text)
				}
			}
			// PreToolUse "Bash" saw the three bash calls it was asked about
			// before any rule; PostToolUse "Edit|MultiEdit|Write" only the
			// write that ran.
			bashLog, _ := os.ReadFile(filepath.Join(ws, "bash-hook.log"))
			if n := strings.Count(string(bashLog), `"tool_name":"bash"`); n != 4 {
				t.Errorf("the Bash hook ran %d times; want 4:\n%s", n, bashLog)
			}
			editLog, _ := os.ReadFile(filepath.Join(ws, "edit-hook.log"))
			if n := strings.Count(string(editLog), `"hook_event_name":"PostToolUse"`); n != 1 || !strings.Contains(string(editLog), `"tool_name":"write_file"`) {
				t.Errorf("the Edit|MultiEdit|Write PostToolUse hook saw:\n%s\nwant the one write that ran", editLog)
			}
		})
	}
}

// TestAgentClaudeLocalSettings: .claude/settings.local.json is read after
// .claude/settings.json, and its rules add to the shared file's.
func TestAgentClaudeLocalSettings(t *testing.T) {
	ws := workspace(t)
	if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, ".claude", "settings.json"), `{"permissions": {"deny": ["Bash(git push:*)"]}}`)
	writeFile(t, filepath.Join(ws, ".claude", "settings.local.json"), `{"permissions": {"deny": ["Bash(echo:*)"]}}`)
	script := writeScript(t, []agent.ScriptTurn{
		st("", sc("bash", `{"command":"git push"}`)),
		st("", sc("bash", `{"command":"echo hi"}`)),
		st("", sc("write_file", `{"path":".claude/settings.local.json","content":"{}"}`)),
		st("done"),
	})
	code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--no-journal", "task")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	if !strings.Contains(errb, "from .claude/settings.json") || !strings.Contains(errb, "from .claude/settings.local.json") {
		t.Errorf("stderr does not name both files:\n%s", errb)
	}
	res := toolResults(decodeEvents(t, out))
	for i, w := range []string{"deny(Bash(git push:*))", "deny(Bash(echo:*))", "E_POLICY"} {
		if !res[i].IsError || !strings.Contains(res[i].Output, w) {
			t.Errorf("result %d: %q; want an error with %q", i, res[i].Output, w)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".claude", "settings.local.json")); string(b) == "{}" {
		t.Error("the model rewrote its own settings")
	}
}
