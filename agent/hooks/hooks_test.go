package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLoadJSONAndYAMLAgree(t *testing.T) {
	j, err := Load("testdata/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	y, err := Load("testdata/hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{j, y} {
		for _, tc := range []struct {
			ev      Event
			subject string
			want    []string
		}{
			{PreToolUse, "bash", []string{"echo pre-bash"}},
			{PreToolUse, "write_file", []string{"echo pre-bash"}},
			{PreToolUse, "bash2", nil}, // the matcher is anchored
			{PreToolUse, "xbash", nil},
			{PreToolUse, "mcp__github__create_issue", []string{"echo pre-mcp"}},
			{PostToolUse, "anything", []string{"echo post-any"}},
			{SessionStart, "resume", []string{"echo resumed"}},
			{SessionStart, "startup", nil},
			{Stop, "", []string{"echo stop"}}, // Stop ignores the matcher
		} {
			var got []string
			for _, cmd := range c.commands(tc.ev, tc.subject) {
				got = append(got, cmd.Command)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s(%s): %v, want %v", tc.ev, tc.subject, got, tc.want)
			}
		}
	}
	if !j.Has(PreToolUse) || j.Has(UserPromptSubmit) || (*Config)(nil).Has(Stop) {
		t.Error("Has")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"hooks": {"PreToolUsed": []}}`, "unknown hook event"},
		{`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "x"}]}]}}`, "matcher"},
		{`{"hooks": {"Stop": [{"hooks": [{"command": "  "}]}]}}`, "no command"},
		{`{"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": -1}]}]}}`, "negative timeout"},
		{`{"hooks": [1]}`, `"hooks" should be an object, not array`},
	} {
		if _, err := Parse([]byte(tc.in), false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
	if _, err := Load("testdata/missing.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v", err)
	}
}

// runner returns a runner with one command for ev, matching every tool.
func runner(t *testing.T, ev Event, timeout float64, commands ...string) *Runner {
	t.Helper()
	g := Group{}
	for _, c := range commands {
		g.Hooks = append(g.Hooks, Command{Type: "command", Command: c, Timeout: timeout})
	}
	return &Runner{Config: &Config{Hooks: map[Event][]Group{ev: {g}}}, Dir: t.TempDir()}
}

func TestOutcomes(t *testing.T) {
	pre := Input{SessionID: "s1", HookEventName: PreToolUse, ToolName: "bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	cases := []struct {
		name     string
		in       Input
		commands []string
		check    func(t *testing.T, o Outcome)
	}{
		{"exit 0 continues", pre, []string{"exit 0"}, func(t *testing.T, o Outcome) {
			if o.Block || o.Halt || len(o.Failures()) > 0 || o.Permission != PermNone {
				t.Errorf("%+v", o)
			}
		}},
		{"exit 2 blocks with stderr", pre, []string{"echo 'no ls here' >&2; exit 2"}, func(t *testing.T, o Outcome) {
			if !o.Block || o.Reason != "no ls here" || len(o.Failures()) > 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"exit 2 without stderr still blocks", pre, []string{"exit 2"}, func(t *testing.T, o Outcome) {
			if !o.Block || !strings.Contains(o.Reason, "blocked by hook") {
				t.Errorf("%+v", o)
			}
		}},
		{"other status is a reported failure", pre, []string{"echo oops >&2; exit 1"}, func(t *testing.T, o Outcome) {
			f := o.Failures()
			if o.Block || len(f) != 1 || f[0].ExitCode != 1 || !strings.Contains(f[0].Failure, "status 1: oops") {
				t.Errorf("%+v", o)
			}
		}},
		{"missing program", pre, []string{"/nonexistent/hook"}, func(t *testing.T, o Outcome) {
			if o.Block || len(o.Failures()) != 1 || o.Reports[0].ExitCode != 127 {
				t.Errorf("%+v", o)
			}
		}},
		{"decision block", pre, []string{`echo '{"decision":"block","reason":"use the edit tool"}'`}, func(t *testing.T, o Outcome) {
			if !o.Block || o.Reason != "use the edit tool" {
				t.Errorf("%+v", o)
			}
		}},
		{"permissionDecision deny", pre, []string{`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}'`}, func(t *testing.T, o Outcome) {
			if !o.Block || o.Permission != PermDeny || o.Reason != "not on main" || o.PermissionReason != "not on main" {
				t.Errorf("%+v", o)
			}
		}},
		{"permissionDecision allow at top level", pre, []string{`echo '{"permissionDecision":"allow"}'`}, func(t *testing.T, o Outcome) {
			if o.Block || o.Permission != PermAllow {
				t.Errorf("%+v", o)
			}
		}},
		{"approve is allow", pre, []string{`echo '{"decision":"approve","reason":"fine"}'`}, func(t *testing.T, o Outcome) {
			if o.Block || o.Permission != PermAllow || o.PermissionReason != "fine" {
				t.Errorf("%+v", o)
			}
		}},
		{"deny wins over allow and ask", pre, []string{
			`echo '{"permissionDecision":"allow"}'`,
			`echo '{"permissionDecision":"deny","permissionDecisionReason":"no"}'`,
			`echo '{"permissionDecision":"ask"}'`,
		}, func(t *testing.T, o Outcome) {
			if !o.Block || o.Permission != PermDeny || o.Reason != "no" {
				t.Errorf("%+v", o)
			}
		}},
		{"unknown permission is a failure", pre, []string{`echo '{"permissionDecision":"maybe"}'`}, func(t *testing.T, o Outcome) {
			if o.Block || o.Permission != PermNone || len(o.Failures()) != 1 {
				t.Errorf("%+v", o)
			}
		}},
		{"additionalContext", pre, []string{`echo '{"hookSpecificOutput":{"additionalContext":"tests live in t/"}}'`, `echo '{"additionalContext":"two"}'`}, func(t *testing.T, o Outcome) {
			if o.Block || !reflect.DeepEqual(o.Context, []string{"tests live in t/", "two"}) {
				t.Errorf("%+v", o)
			}
		}},
		{"plain stdout is context for SessionStart", Input{HookEventName: SessionStart, Source: "startup"}, []string{"echo branch: main"}, func(t *testing.T, o Outcome) {
			if !reflect.DeepEqual(o.Context, []string{"branch: main"}) {
				t.Errorf("%+v", o)
			}
		}},
		{"plain stdout is not context for PreToolUse", pre, []string{"echo chatter"}, func(t *testing.T, o Outcome) {
			if len(o.Context) != 0 || o.Block {
				t.Errorf("%+v", o)
			}
		}},
		{"bad JSON is a failure", pre, []string{`echo '{"decision":'`}, func(t *testing.T, o Outcome) {
			if o.Block || len(o.Failures()) != 1 || !strings.Contains(o.Reports[0].Failure, "does not parse") {
				t.Errorf("%+v", o)
			}
		}},
		{"continue false halts", Input{HookEventName: Stop}, []string{`echo '{"continue":false,"stopReason":"budget spent","systemMessage":"bye"}'`}, func(t *testing.T, o Outcome) {
			if !o.Halt || o.HaltReason != "budget spent" || !reflect.DeepEqual(o.Messages, []string{"bye"}) {
				t.Errorf("%+v", o)
			}
		}},
		{"huge output is capped", pre, []string{"head -c 1000000 /dev/zero | tr '\\0' x; exit 2"}, func(t *testing.T, o Outcome) {
			if len(o.Reports[0].Stdout) > 70<<10 || !strings.Contains(o.Reports[0].Stdout, "more bytes not kept") {
				t.Errorf("stdout of %d bytes", len(o.Reports[0].Stdout))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, tc.in.HookEventName, 10, tc.commands...)
			o := r.Run(context.Background(), tc.in)
			if len(o.Reports) != len(tc.commands) {
				t.Fatalf("%d reports for %d commands", len(o.Reports), len(tc.commands))
			}
			tc.check(t, o)
		})
	}
}

func TestStdinAndEnvironment(t *testing.T) {
	r := runner(t, PostToolUse, 10, `cat > in.json; echo "$PRAXIS_SESSION_ID" > env.txt; pwd > pwd.txt`)
	r.Env = []string{"PRAXIS_SESSION_ID=s42"}
	in := Input{
		SessionID: "s42", HookEventName: PostToolUse, ToolName: "edit_file", ToolUseID: "call_1",
		ToolInput: json.RawMessage(`{"path":"a.go"}`), ToolResponse: &ToolResponse{Output: "E_NOOP: nothing changed", IsError: true, Code: "E_NOOP"},
	}
	if o := r.Run(context.Background(), in); len(o.Failures()) > 0 {
		t.Fatal(o.Failures())
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "in.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"session_id": "s42", "hook_event_name": "PostToolUse", "tool_name": "edit_file", "tool_use_id": "call_1",
		"cwd": r.Dir, "tool_input": map[string]any{"path": "a.go"},
		"tool_response": map[string]any{"output": "E_NOOP: nothing changed", "is_error": true, "code": "E_NOOP"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stdin:\n%v\nwant\n%v", got, want)
	}
	env, _ := os.ReadFile(filepath.Join(r.Dir, "env.txt"))
	pwd, _ := os.ReadFile(filepath.Join(r.Dir, "pwd.txt"))
	if strings.TrimSpace(string(env)) != "s42" || strings.TrimSpace(string(pwd)) != r.Dir {
		t.Errorf("env %q pwd %q", env, pwd)
	}
}

// alive reports whether the process pid in file exists.
func alive(t *testing.T, file string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The process may linger as a zombie of its reparented parent for a
	// moment; poll briefly.
	for range 50 {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return false
		}
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func TestHangingHookIsKilledWithItsChildren(t *testing.T) {
	r := runner(t, PreToolUse, 0.3, `sleep 300 & echo $! > child.pid; echo started; wait`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := r.Run(ctx, Input{HookEventName: PreToolUse, ToolName: "bash"})
	if ctx.Err() != nil {
		t.Fatal("Run outlived the hook timeout by far")
	}
	rep := o.Reports[0]
	if !rep.TimedOut || !strings.Contains(rep.Failure, "timed out") || o.Block || rep.Stdout != "started\n" {
		t.Fatalf("%+v", rep)
	}
	if alive(t, filepath.Join(r.Dir, "child.pid")) {
		t.Error("the hook's child outlived the hook")
	}
}

func TestStrayChildOfFinishedHookIsKilled(t *testing.T) {
	// The hook exits at once but leaves a child holding its stdout.
	r := runner(t, PreToolUse, 30, `sleep 300 & echo $! > child.pid; exit 2`)
	o := r.Run(context.Background(), Input{HookEventName: PreToolUse, ToolName: "bash"})
	if !o.Block || o.Reports[0].TimedOut {
		t.Fatalf("%+v", o.Reports[0])
	}
	if alive(t, filepath.Join(r.Dir, "child.pid")) {
		t.Error("the hook's child outlived the hook")
	}
}

func TestCancelKillsHooks(t *testing.T) {
	r := runner(t, Stop, 60, `sleep 300`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	o := r.Run(ctx, Input{HookEventName: Stop})
	if !strings.Contains(o.Reports[0].Failure, "cancelled") {
		t.Fatalf("%+v", o.Reports[0])
	}
}

func TestNoHooks(t *testing.T) {
	var r *Runner
	if o := r.Run(context.Background(), Input{HookEventName: Stop}); o.Block || len(o.Reports) != 0 {
		t.Errorf("%+v", o)
	}
	r = runner(t, PreToolUse, 1, "exit 2")
	if o := r.Run(context.Background(), Input{HookEventName: PostToolUse, ToolName: "bash"}); o.Block || len(o.Reports) != 0 {
		t.Errorf("a PreToolUse hook ran for PostToolUse: %+v", o)
	}
}

func TestSkipped(t *testing.T) {
	c, err := Parse([]byte(`{"hooks": {
		"Notification": [{"hooks": [{"command": "notify-send hi"}]}],
		"SessionEnd": [{"hooks": [{"command": "x"}]}],
		"Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}, {"command": "true"}]}]}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Notification hooks (Praxis does not fire Notification)",
		"SessionEnd hooks (Praxis does not fire SessionEnd)",
		`Stop[0].hooks[0]: type "prompt" (only "command" hooks run)`,
	}
	if !reflect.DeepEqual(c.Skipped, want) {
		t.Errorf("Skipped = %q", c.Skipped)
	}
	if got := c.commands(Stop, ""); len(got) != 1 || got[0].Command != "true" {
		t.Errorf("Stop commands %+v", got)
	}
	if c.Has("Notification") {
		t.Error("an ignored event is kept")
	}
}

// TestClaudeMatchers: matchers written with Claude Code's tool names match
// the Praxis tools they stand for, and only those.
func TestClaudeMatchers(t *testing.T) {
	c, err := Parse([]byte(`{"hooks":{
		"PreToolUse":[
			{"matcher":"Bash","hooks":[{"command":"bash-hook"}]},
			{"matcher":"Edit|Write","hooks":[{"command":"edit-hook"}]},
			{"matcher":"MultiEdit","hooks":[{"command":"multi-hook"}]},
			{"matcher":"WebFetch|WebSearch","hooks":[{"command":"web-hook"}]},
			{"matcher":"Notebook.*","hooks":[{"command":"nb-hook"}]},
			{"matcher":"mcp__github__.*","hooks":[{"command":"gh-hook"}]}],
		"PostToolUse":[{"matcher":"Raed","hooks":[{"command":"typo-hook"}]}]}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		want []string
	}{
		{"bash", []string{"bash-hook"}},
		{"edit_file", []string{"edit-hook", "multi-hook"}},
		{"write_file", []string{"edit-hook"}},
		{"read_file", nil},
		{"bashful", nil},
		{"mcp__github__create_issue", []string{"gh-hook"}},
	} {
		var got []string
		for _, cmd := range c.commands(PreToolUse, tc.tool) {
			got = append(got, cmd.Command)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.tool, got, tc.want)
		}
	}
	unused := c.Unused([]string{"bash", "edit_file", "write_file", "read_file", "mcp__github__create_issue"})
	want := []string{"WebFetch, WebSearch", "NotebookEdit, NotebookRead", `"Raed" matches no tool`}
	if len(unused) != len(want) {
		t.Fatalf("Unused: %q", unused)
	}
	for i, w := range want {
		if !strings.Contains(unused[i], w) {
			t.Errorf("Unused[%d] = %q; want it to name %s", i, unused[i], w)
		}
	}
	m := Merge(c, nil, c)
	if len(m.Hooks[PreToolUse]) != 12 || len(m.Hooks[PostToolUse]) != 2 {
		t.Errorf("Merge: %d PreToolUse groups, %d PostToolUse", len(m.Hooks[PreToolUse]), len(m.Hooks[PostToolUse]))
	}
}
