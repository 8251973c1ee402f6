package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/agent"
)

// goInternals are words that betray Go's internals in a message meant for
// a user.
var goInternals = []string{"openat", "open /", "unmarshal", "Go struct", "Go value", "parse error",
	"strconv", "flag provided", "invalid value", "*", "panic", "goroutine", "json: cannot", "syscall"}

// TestBadInvocations runs the real binary with command lines a user gets
// wrong and checks that each is refused with one line in the user's terms:
// the exit status, the words that say what is wrong, and nothing of Go.
func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "hello\n")
	writeFile(t, filepath.Join(dir, "bad.json"), `{"hooks": 3}`)
	writeFile(t, filepath.Join(dir, "badperm.json"), `{"permissions": {"deny": "x"}}`)
	writeFile(t, filepath.Join(dir, "script.json"), `{"turns": [{"text": "done"}]}`)
	for _, tc := range []struct {
		args  []string
		code  int
		words []string
	}{
		{[]string{"nosuch"}, exitUsage, []string{`unknown command "nosuch"`}},
		{[]string{"serve", "--max-sessions", "0"}, exitUsage, []string{"--max-sessions 0", "at least 1"}},
		{[]string{"serve", "--max-sessions", "-3"}, exitUsage, []string{"--max-sessions -3", "at least 1"}},
		{[]string{"serve", "--allow-origin", "foo"}, exitUsage, []string{"--allow-origin foo", "scheme://host"}},
		{[]string{"serve", "--allow-origin", "https://x.example/path"}, exitUsage, []string{"--allow-origin", "scheme://host"}},
		{[]string{"serve", "--http=nonsense"}, exitUsage, []string{"--http nonsense", "HOST:PORT"}},
		{[]string{"serve", "--http", "127.0.0.1:1"}, exitUsage, []string{`given "127.0.0.1:1"`, "--http=ADDR"}},
		{[]string{"serve", "--session-idle", "0s"}, exitUsage, []string{"--session-idle 0s", "more than zero"}},
		{[]string{"serve", "--session-idle", "soon"}, exitUsage, []string{"--session-idle soon", "a duration such as"}},
		{[]string{"serve", "--max-body", "0"}, exitUsage, []string{"--max-body 0", "more than zero"}},
		{[]string{"serve", "--http=0.0.0.0:0"}, exitUsage, []string{"requires a bearer token", "--token"}},
		{[]string{"serve", "extra"}, exitUsage, []string{"takes no arguments", "extra"}},
		{[]string{"call", "--max-changed-lines", "-5", "read_file"}, exitUsage, []string{"--max-changed-lines -5", "at least 0"}},
		{[]string{"call", "read_file", "--max-changed-lines=x"}, exitUsage, []string{"--max-changed-lines x", "a whole number"}},
		{[]string{"call", "--workspace", "/nonexistent-praxis", "read_file"}, exitUsage, []string{"--workspace /nonexistent-praxis", "no such directory"}},
		{[]string{"call", "--workspace", "a.txt", "read_file"}, exitUsage, []string{"--workspace a.txt", "not a directory"}},
		{[]string{"call", "--sandbox", "jail", "read_file"}, exitUsage, []string{"--sandbox jail", "one of none, auto, bwrap, docker"}},
		{[]string{"call", "--config", "none.yaml", "read_file"}, exitUsage, []string{"config file none.yaml does not exist"}},
		{[]string{"call"}, exitUsage, []string{"needs the name of a tool"}},
		{[]string{"call", "read_file", "{bad"}, exitUsage, []string{"one JSON object"}},
		{[]string{"call", "nosuch", "{}"}, exitUsage, []string{`unknown tool "nosuch"`}},
		{[]string{"call", "--bogus", "read_file"}, exitUsage, []string{"there is no flag --bogus", `"praxis call --help"`}},
		{[]string{"call", "read_file", "--workspace"}, exitUsage, []string{"--workspace needs a value"}},
		{[]string{"tools", "extra"}, exitUsage, []string{"takes no arguments"}},
		{[]string{"tools", "--json=maybe"}, exitUsage, []string{"--json maybe", "true or false"}},
		{[]string{"connect"}, exitUsage, []string{"needs one URL"}},
		{[]string{"connect", "ftp://x", "--token", "T"}, exitUsage, []string{`"ftp://x" is not an http(s) URL`}},
		{[]string{"sessions"}, exitUsage, []string{"needs list, show ID, replay ID or stats"}},
		{[]string{"sessions", "drop", "x"}, exitUsage, []string{`no subcommand "drop"`}},
		{[]string{"sessions", "show"}, exitUsage, []string{"show needs one session ID"}},
		{[]string{"sessions", "show", "../x", "--json"}, exitUsage, []string{`"../x" is not a session ID`}},
		{[]string{"sessions", "show", "20990101-000000-aaaaaaaa", "--json"}, exitToolError, []string{"no sessions in this workspace"}},
		{[]string{"skills", "check", "/nonexistent-praxis"}, exitToolError, []string{"/nonexistent-praxis does not exist"}},
		{[]string{"skills", "check", "a.txt"}, exitToolError, []string{"a.txt is not a directory"}},
		{[]string{"skills", "show"}, exitUsage, []string{"show needs one skill name"}},
		{[]string{"skills", "remove"}, exitUsage, []string{`no subcommand "remove"`}},
		{[]string{"mcp"}, exitUsage, []string{"needs the subcommand list"}},
		{[]string{"mcp", "lst"}, exitUsage, []string{`no subcommand "lst"`}},
		{[]string{"mcp", "list", "--config", "none.json"}, exitUsage, []string{"none.json does not exist"}},
		{[]string{"mcp", "list", "--config", "a.txt"}, exitUsage, []string{"a.txt: is not valid JSON (at byte 1"}},
		{[]string{"agent"}, exitUsage, []string{"needs a TASK"}},
		{[]string{"agent", "--max-steps", "0", "x"}, exitUsage, []string{"--max-steps 0", "more than zero"}},
		{[]string{"agent", "x", "--max-steps", "abc"}, exitUsage, []string{"--max-steps abc", "a whole number"}},
		{[]string{"agent", "--timeout", "-1s", "x"}, exitUsage, []string{"--timeout -1s", "at least 0"}},
		{[]string{"agent", "--max-tokens", "-1", "x"}, exitUsage, []string{"--max-tokens -1"}},
		{[]string{"agent", "--max-tool-calls", "-1", "x"}, exitUsage, []string{"--max-tool-calls -1"}},
		{[]string{"agent", "--doom-loop", "-1", "x"}, exitUsage, []string{"--doom-loop -1"}},
		{[]string{"agent", "--context-window", "-1", "x"}, exitUsage, []string{"--context-window -1"}},
		{[]string{"agent", "--keep-recent", "-1", "x"}, exitUsage, []string{"--keep-recent -1"}},
		{[]string{"agent", "--max-tool-result", "-1", "x"}, exitUsage, []string{"--max-tool-result -1"}},
		{[]string{"agent", "--iterations", "-1", "x"}, exitUsage, []string{"--iterations -1"}},
		{[]string{"agent", "--max-output-tokens", "-1", "x"}, exitUsage, []string{"--max-output-tokens -1"}},
		{[]string{"agent", "--max-gate-attempts", "0", "x"}, exitUsage, []string{"--max-gate-attempts 0", "at least 1"}},
		{[]string{"agent", "--compact-at", "1.5", "x"}, exitUsage, []string{"--compact-at 1.5", "at most 1"}},
		{[]string{"agent", "--compact-at", "0", "x"}, exitUsage, []string{"--compact-at 0", "more than 0"}},
		{[]string{"agent", "--provider", "foo", "x"}, exitUsage, []string{`unknown provider "foo"`}},
		{[]string{"agent", "--provider", "scripted", "x"}, exitUsage, []string{"--provider scripted needs --script FILE"}},
		{[]string{"agent", "--provider", "scripted", "--script", "none.json", "x"}, exitUsage, []string{"--script none.json does not exist"}},
		{[]string{"agent", "--provider", "scripted", "--script", "script.json", "--system", "none.md", "x"}, exitUsage, []string{"--system none.md does not exist"}},
		{[]string{"agent", "--provider", "scripted", "--script", "script.json", "--hooks", "bad.json", "x"}, exitUsage, []string{`"hooks" should be an object`}},
		{[]string{"agent", "--provider", "scripted", "--script", "script.json", "--settings", "badperm.json", "x"}, exitUsage, []string{`"permissions.deny" should be a list`}},
		{[]string{"agent", "--provider", "scripted", "--script", "script.json", "--permissions", "none.json", "x"}, exitUsage, []string{"none.json does not exist"}},
		{[]string{"agent", "--provider", "scripted", "--script", "a.txt", "x"}, exitUsage, []string{"--script a.txt is not valid JSON: at byte 1"}},
		{[]string{"agent", "--provider", "scripted", "--script", "script.json", "--resume", "20990101-000000-aaaaaaaa"}, exitUsage, []string{"no session 20990101-000000-aaaaaaaa"}},
		{[]string{"agent", "serve", "extra"}, exitUsage, []string{"takes no arguments"}},
		{[]string{"agent", "serve", "--http=nonsense"}, exitUsage, []string{"--http nonsense", "HOST:PORT"}},
		{[]string{"agent", "serve", "--provider", "scripted", "--script", "script.json", "--http=0.0.0.0:0"}, exitUsage, []string{"off loopback, requires a bearer token", "--token"}},
		{[]string{"agent", "serve", "--provider", "scripted", "--script", "script.json", "--continue"}, exitUsage, []string{"--continue", "continued over HTTP"}},
		{[]string{"agent", "serve", "--provider", "scripted", "--script", "script.json", "--ask", "bash"}, exitUsage, []string{"--ask needs a terminal"}},
		{[]string{"agent", "serve", "--provider", "scripted"}, exitUsage, []string{"--provider scripted needs --script FILE"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runPraxis(t, dir, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d; want %d\n%s", r.code, tc.code, r.stderr)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Count(msg, "\n") > 0 && !strings.HasPrefix(msg, "praxis: unknown command") {
				t.Errorf("more than one line:\n%s", msg)
			}
			for _, w := range tc.words {
				if !strings.Contains(msg, w) {
					t.Errorf("the message lacks %q:\n%s", w, msg)
				}
			}
			for _, g := range goInternals {
				if strings.Contains(msg, g) {
					t.Errorf("the message shows %q:\n%s", g, msg)
				}
			}
		})
	}
}

// TestHelpOnce: --help prints the usage once, on standard output, and
// exits 0, for every command.
func TestHelpOnce(t *testing.T) {
	for _, args := range [][]string{
		{"agent", "--help"}, {"call", "-h"}, {"serve", "--help"}, {"connect", "--help"}, {"mcp", "--help"},
		{"sessions", "--help"}, {"tools", "--help"}, {"skills", "--help"}, {"skills", "check", "--help"}, {"version", "--help"},
		{"agent", "some task", "--help"},
	} {
		r := runPraxis(t, t.TempDir(), "", args...)
		if r.code != 0 || strings.Count(r.stdout, "Usage: praxis") != 1 || r.stderr != "" {
			t.Errorf("%v: exit %d, %d usages on stdout, stderr %q", args, r.code, strings.Count(r.stdout, "Usage: praxis"), r.stderr)
		}
	}
}

// TestFlagsAfterArguments: flags are accepted after positional arguments,
// as the README writes them.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "hello\n")
	r := runPraxis(t, t.TempDir(), "", "call", "read_file", `{"path":"a.txt"}`, "--json", "--workspace", dir)
	var res map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || !strings.Contains(res["text"].(string), "hello") {
		t.Fatalf("call with flags after the arguments: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// "--" ends the flags: what follows is an argument even if it looks like one.
	r = runPraxis(t, dir, "", "skills", "--json", "list", "--workspace", dir)
	if r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), "[") {
		t.Errorf("skills --json list --workspace DIR: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runPraxis(t, dir, "", "call", "--", "--json")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown tool "--json"`) {
		t.Errorf("after --: exit %d\n%s", r.code, r.stderr)
	}
	script := writeScript(t, []agent.ScriptTurn{st("done")})
	r = runPraxis(t, dir, "", "agent", "say", "done", "--provider", "scripted", "--script", script, "--json")
	if r.code != 0 {
		t.Fatalf("agent with flags after the task: exit %d\n%s", r.code, r.stderr)
	}
	ids := sessionIDs(r.stderr)
	if len(ids) != 1 {
		t.Fatalf("no session in %s", r.stderr)
	}
	r = runPraxis(t, dir, "", "sessions", "show", ids[0], "--json")
	var s map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil || s["task"] != "say done" {
		t.Errorf("sessions show ID --json: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "hello\n" {
		t.Error("a.txt changed")
	}
}
