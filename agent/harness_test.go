package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/agent/doomloop"
	"github.com/praxis-tools/praxis/agent/hooks"
	"github.com/praxis-tools/praxis/agent/permission"
	"github.com/praxis-tools/praxis/praxis"
)

// argTool is a tool that passes its arguments to fn and counts its calls.
func argTool(name string, readOnly bool, fn func(args map[string]any) (praxis.Result, error)) (praxis.Tool, *atomic.Int64) {
	n := new(atomic.Int64)
	return praxis.Tool{
		Name:        name,
		Description: "test tool " + name,
		InputSchema: json.RawMessage(`{"type": "object"}`),
		Annotations: praxis.Annotations{ReadOnly: readOnly, Destructive: !readOnly},
		Handler: func(ctx context.Context, raw json.RawMessage) (praxis.Result, error) {
			n.Add(1)
			var args map[string]any
			_ = json.Unmarshal(raw, &args)
			return fn(args)
		},
	}, n
}

func okTool(name string) (praxis.Tool, *atomic.Int64) {
	return argTool(name, false, func(map[string]any) (praxis.Result, error) { return praxis.Result{Text: name + " ok"}, nil })
}

func call(name, input string) ScriptCall {
	return ScriptCall{Name: name, Input: json.RawMessage(input)}
}

func turn(text string, cs ...ScriptCall) ScriptTurn { return ScriptTurn{Text: text, ToolCalls: cs} }

// hrun runs turns with the harness h and checks what holds for every run:
// the event stream's shape, and that folding the events gives the
// conversation the run ended with.
func hrun(t *testing.T, ctx context.Context, cfg Config, h *Harness, turns []ScriptTurn, tools ...praxis.Tool) (Outcome, []Event) {
	t.Helper()
	cfg.Harness = h
	out, events := runScript(t, ctx, cfg, turns, tools...)
	checkFold(t, events, out.Messages)
	return out, events
}

func checkFold(t *testing.T, events []Event, want []Message) {
	t.Helper()
	// Through JSON, as a journal would hold them.
	b, _ := json.Marshal(events)
	var back []Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	st, err := Fold(back)
	if err != nil {
		t.Fatalf("Fold: %v", err)
	}
	got, _ := json.Marshal(st.Messages)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("the fold of the events differs from the run's conversation:\nfold %s\nrun  %s", got, exp)
	}
}

func ofType(events []Event, typ EventType) []Event {
	var out []Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func lastEvent(events []Event) Event { return events[len(events)-1] }

func TestBudgets(t *testing.T) {
	ok, _ := okTool("ok")
	use := func(n int) *Usage { return &Usage{InputTokens: n, OutputTokens: 10} }
	t.Run("max_tokens", func(t *testing.T) {
		turns := []ScriptTurn{
			{ToolCalls: []ScriptCall{call("ok", `{"i":1}`)}, Usage: use(90)},
			{ToolCalls: []ScriptCall{call("ok", `{"i":2}`)}, Usage: use(90)},
			{ToolCalls: []ScriptCall{call("ok", `{"i":3}`)}, Usage: use(90)},
			{Text: "done"},
		}
		out, events := hrun(t, context.Background(), Config{}, &Harness{MaxTokens: 250}, turns, ok)
		last := lastEvent(events)
		if out.StopReason != StopMaxTokens || out.Steps != 3 || last.StopReason != StopMaxTokens || !strings.Contains(last.Error, "budget of 250") {
			t.Fatalf("outcome %+v; last %+v", out, last)
		}
	})
	t.Run("max_tokens spares a finished run", func(t *testing.T) {
		out, _ := hrun(t, context.Background(), Config{}, &Harness{MaxTokens: 5}, []ScriptTurn{{Text: "done", Usage: use(100)}})
		if out.StopReason != StopCompleted {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("max_tool_calls", func(t *testing.T) {
		ok, n := okTool("ok")
		turns := []ScriptTurn{
			turn("", call("ok", `{"i":1}`)),
			turn("", call("ok", `{"i":2}`), call("ok", `{"i":3}`)),
			turn("done"),
		}
		out, events := hrun(t, context.Background(), Config{}, &Harness{MaxToolCalls: 2}, turns, ok)
		if out.StopReason != StopMaxToolCalls || out.Steps != 2 || n.Load() != 2 {
			t.Fatalf("outcome %+v, %d calls ran", out, n.Load())
		}
		res := ofType(events, EventToolResult)
		if len(res) != 3 || res[2].Code != string(praxis.EBudgetExceeded) || !strings.Contains(res[2].Output, "budget of 2 tool calls") {
			t.Fatalf("results %+v", res)
		}
	})
	t.Run("every run states its reason", func(t *testing.T) {
		for _, h := range []*Harness{{MaxTokens: 1}, {MaxToolCalls: 1}, {DoomLoop: &doomloop.Config{}}, {Gates: []string{"false"}, MaxGateAttempts: 1}} {
			out, events := hrun(t, context.Background(), Config{MaxSteps: 8}, h,
				[]ScriptTurn{turn("a", call("ok", `{}`)), turn("a", call("ok", `{}`)), turn("a", call("ok", `{}`)), turn("a", call("ok", `{}`)), turn("a")}, ok)
			if out.StopReason == "" || lastEvent(events).StopReason != out.StopReason || out.StopReason == StopCompleted {
				t.Errorf("harness %+v: stop %q", h, out.StopReason)
			}
		}
	})
}

func TestDoomLoopKinds(t *testing.T) {
	noop, _ := argTool("edit_file", false, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{}, praxis.Errorf(praxis.ENoop, "the edit changes nothing")
	})
	failing, _ := argTool("build", false, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{}, praxis.Errorf(praxis.EInvalidArgs, "no such target")
	})
	ok, _ := okTool("ok")
	poll, _ := okTool("job_output")
	same := call("ok", `{"a":1,"b":2}`)
	sameReordered := call("ok", `{"b":2,"a":1}`)
	cases := []struct {
		name  string
		turns []ScriptTurn
		kind  doomloop.Kind
		steps int
		warn  int // the step of the warning
	}{
		{"repeated call", []ScriptTurn{turn("", same), turn("", sameReordered), turn("", same), turn("", same), turn("done")}, doomloop.RepeatedCall, 4, 3},
		{"repeated failure", []ScriptTurn{
			turn("", call("build", `{"t":"x"}`)), turn("", call("ok", `{"i":1}`)),
			turn("", call("build", `{"t":"x"}`)), turn("", call("ok", `{"i":2}`)),
			turn("", call("build", `{"t":"x"}`)), turn("", call("ok", `{"i":3}`)),
			turn("", call("build", `{"t":"x"}`)), turn("done"),
		}, doomloop.RepeatedFailure, 7, 5},
		{"noop edits", []ScriptTurn{
			turn("", call("edit_file", `{"v":1}`)), turn("", call("edit_file", `{"v":2}`)),
			turn("", call("edit_file", `{"v":3}`)), turn("", call("edit_file", `{"v":4}`)), turn("done"),
		}, doomloop.NoopEdit, 4, 3},
		{"repeated text", []ScriptTurn{
			turn("Let me try once more.", call("ok", `{"i":1}`)), turn("Let me try once more.", call("ok", `{"i":2}`)),
			turn("Let me try once more.", call("ok", `{"i":3}`)), turn("Let me try once more.", call("ok", `{"i":4}`)), turn("done"),
		}, doomloop.RepeatedText, 4, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, events := hrun(t, context.Background(), Config{}, &Harness{DoomLoop: &doomloop.Config{}}, tc.turns, noop, failing, ok)
			if out.StopReason != StopDoomLoop || out.Steps != tc.steps {
				t.Fatalf("outcome %s after %d steps: %v", out.StopReason, out.Steps, out.Err)
			}
			warn := ofType(events, EventMessage)
			if len(warn) != 1 || warn[0].Kind != MessageDoomWarning || warn[0].Step != tc.warn || !strings.Contains(warn[0].Text, "different approach") {
				t.Fatalf("warnings %+v", warn)
			}
			// The model saw the warning: it follows the tool results of the
			// step that triggered it.
			found := false
			for _, m := range out.Messages {
				for _, b := range m.Content {
					found = found || (m.Role == RoleUser && b.Type == BlockText && b.Text == warn[0].Text)
				}
			}
			if !found {
				t.Error("the warning is not in the conversation")
			}
			last := lastEvent(events)
			kinds := ""
			for _, f := range last.Findings {
				kinds += string(f.Kind) + " "
			}
			if !strings.Contains(kinds, string(tc.kind)) || !strings.Contains(last.Error, string(tc.kind)) {
				t.Fatalf("run_complete findings %q, error %q", kinds, last.Error)
			}
		})
	}
	t.Run("exempt polling tool", func(t *testing.T) {
		p := call("job_output", `{"job":"1"}`)
		out, _ := hrun(t, context.Background(), Config{}, &Harness{DoomLoop: &doomloop.Config{Exempt: []string{"job_output"}}},
			[]ScriptTurn{turn("", p), turn("", p), turn("", p), turn("", p), turn("", p), turn("done")}, poll)
		if out.StopReason != StopCompleted {
			t.Fatalf("outcome %s: %v", out.StopReason, out.Err)
		}
	})
	t.Run("a changed approach after the warning completes", func(t *testing.T) {
		out, events := hrun(t, context.Background(), Config{}, &Harness{DoomLoop: &doomloop.Config{}},
			[]ScriptTurn{turn("", same), turn("", same), turn("", same), turn("", call("ok", `{"other":true}`)), turn("done")}, ok)
		if out.StopReason != StopCompleted || len(ofType(events, EventMessage)) != 1 {
			t.Fatalf("outcome %s: %v", out.StopReason, out.Err)
		}
	})
}

func TestCompactionKeepsRecentTurnsVerbatim(t *testing.T) {
	skill, _ := argTool("load_skill", true, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: "SKILL BODY: always run gofmt"}, nil
	})
	read, _ := argTool("read", true, func(a map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: fmt.Sprintf("contents of %v: %s", a["f"], strings.Repeat("x", 400))}, nil
	})
	u := func(in int) *Usage { return &Usage{InputTokens: in, OutputTokens: 20} }
	turns := []ScriptTurn{
		{Text: "Loading the skill.", ToolCalls: []ScriptCall{call("load_skill", `{"name":"go"}`)}, Usage: u(300)},
		{Text: "Reading a.", ToolCalls: []ScriptCall{call("read", `{"f":"a"}`)}, Usage: u(450)},
		{Text: "Reading b.", ToolCalls: []ScriptCall{call("read", `{"f":"b"}`)}, Usage: u(600)},
		{Text: "Reading c.", ToolCalls: []ScriptCall{call("read", `{"f":"c"}`)}, Usage: u(790)},
		{Text: "All read; done.", Usage: u(500)},
	}
	plain, _ := hrun(t, context.Background(), Config{}, &Harness{}, turns, skill, read)
	h := &Harness{Compaction: Compaction{ContextWindow: 1000, KeepRecent: 2}}
	out, events := hrun(t, context.Background(), Config{}, h, turns, skill, read)
	if out.StopReason != StopCompleted || plain.StopReason != StopCompleted {
		t.Fatalf("outcomes %s / %s: %v", out.StopReason, plain.StopReason, out.Err)
	}
	comp := ofType(events, EventCompacted)
	if len(comp) != 1 {
		t.Fatalf("%d compacted events", len(comp))
	}
	c := comp[0]
	// Before step 5 the conversation holds the task and 4 exchanges (9
	// messages); the last reply and its results are kept.
	if c.Step != 5 || c.Kept != 2 || c.Folded != 3 || c.BeforeTokens <= 800 || c.AfterTokens >= c.BeforeTokens || c.Error != "" {
		t.Fatalf("compacted event %+v", c)
	}
	if len(out.Messages) != 4 || len(plain.Messages) != 10 {
		t.Fatalf("%d messages compacted, %d plain", len(out.Messages), len(plain.Messages))
	}
	// The kept turns and the reply after them are exactly those of the
	// uncompacted run.
	if !reflect.DeepEqual(out.Messages[1:], plain.Messages[7:]) {
		t.Fatalf("kept turns differ:\n%+v\n%+v", out.Messages[1:], plain.Messages[7:])
	}
	first := out.Messages[0].Text()
	for _, want := range []string{
		"the task",                                                        // the task, verbatim
		"3 earlier model replies", "3 tool calls: load_skill, read, read", // the summary
		"SKILL BODY: always run gofmt", // the skill text, verbatim
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the first message lacks %q:\n%s", want, first)
		}
	}
	if !strings.HasPrefix(first, "the task\n") {
		t.Errorf("the first message does not start with the task: %q", first)
	}
	if strings.Contains(first, "contents of a") {
		t.Error("a summarised tool result is still in the conversation")
	}
}

func TestHugeToolResultIsCut(t *testing.T) {
	ws := t.TempDir()
	big := strings.Repeat("line of output ✓\n", 20000) // ~380 KB, multi-byte runes
	tool, _ := argTool("dump", true, func(map[string]any) (praxis.Result, error) { return praxis.Result{Text: big}, nil })
	out, events := hrun(t, context.Background(), Config{RunID: "run-1"}, &Harness{Workspace: ws, MaxToolResult: 10000},
		[]ScriptTurn{turn("", ScriptCall{ID: "c1", Name: "dump"}), turn("done")}, tool)
	if out.StopReason != StopCompleted {
		t.Fatal(out.Err)
	}
	res := ofType(events, EventToolResult)[0].Output
	if len(res) > 10500 || !strings.Contains(res, ".praxis/tool-results/run-1-c1.txt") || !strings.Contains(res, fmt.Sprint(len(big))) {
		t.Fatalf("cut result of %d bytes:\n%s", len(res), res[len(res)-3000:])
	}
	if !strings.HasPrefix(res, "line of output ✓\n") || !strings.HasSuffix(res, "line of output ✓\n") || !utf8Valid(res) {
		t.Error("the cut result does not keep the beginning and end on rune boundaries")
	}
	saved, err := os.ReadFile(filepath.Join(ws, ".praxis", "tool-results", "run-1-c1.txt"))
	if err != nil || string(saved) != big {
		t.Fatalf("saved %d bytes, %v", len(saved), err)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// hookHarness returns a harness running the given hooks config (JSON).
func hookHarness(t *testing.T, config string) *Harness {
	t.Helper()
	cfg, err := hooks.Parse([]byte(config), false)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	return &Harness{Hooks: &hooks.Runner{Config: cfg, Dir: ws}, Workspace: ws}
}

func TestHooksInTheLoop(t *testing.T) {
	t.Run("PreToolUse exit 2 blocks with the reason", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PreToolUse":[{"matcher":"danger","hooks":[{"command":"echo 'not on a Friday' >&2; exit 2"}]}]}}`)
		danger, n := okTool("danger")
		safe, m := okTool("safe")
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("", call("danger", `{}`), call("safe", `{}`)), turn("done")}, danger, safe)
		res := ofType(events, EventToolResult)
		if out.StopReason != StopCompleted || n.Load() != 0 || m.Load() != 1 {
			t.Fatalf("stop %s, danger ran %d, safe %d", out.StopReason, n.Load(), m.Load())
		}
		if res[0].Code != string(praxis.EPolicy) || !strings.Contains(res[0].Output, "not on a Friday") || res[1].IsError {
			t.Fatalf("results %+v", res)
		}
		if c := events[0].Controls; c == nil || !reflect.DeepEqual(c.Hooks, []string{"PreToolUse[danger]: echo 'not on a Friday' >&2; exit 2"}) {
			t.Fatalf("run_start controls %+v", c)
		}
	})
	t.Run("PreToolUse JSON deny and the hook input", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PreToolUse":[{"hooks":[{"command":"cat > pre.json; echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"read-only day\"}}'"}]}]}}`)
		tool, n := okTool("write")
		_, events := hrun(t, context.Background(), Config{RunID: "sess-1"}, h, []ScriptTurn{turn("", ScriptCall{ID: "c9", Name: "write", Input: json.RawMessage(`{"path":"a.go"}`)}), turn("done")}, tool)
		if n.Load() != 0 || !strings.Contains(ofType(events, EventToolResult)[0].Output, "read-only day") {
			t.Fatal("the deny was not obeyed")
		}
		var in hooks.Input
		b, _ := os.ReadFile(filepath.Join(h.Workspace, "pre.json"))
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if in.SessionID != "sess-1" || in.ToolName != "write" || in.ToolUseID != "c9" || string(in.ToolInput) != `{"path":"a.go"}` || in.HookEventName != hooks.PreToolUse {
			t.Fatalf("hook input %+v", in)
		}
	})
	t.Run("a hanging hook is killed and reported; the run goes on", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PreToolUse":[{"hooks":[{"command":"sleep 60","timeout":0.3}]}]}}`)
		tool, n := okTool("ok")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, events := hrun(t, ctx, Config{}, h, []ScriptTurn{turn("", call("ok", `{}`)), turn("done")}, tool)
		if out.StopReason != StopCompleted || n.Load() != 1 {
			t.Fatalf("stop %s, ran %d", out.StopReason, n.Load())
		}
		he := ofType(events, EventHook)
		if len(he) != 1 || he[0].Kind != "PreToolUse" || he[0].Hook != "sleep 60" || !strings.Contains(he[0].Error, "timed out") {
			t.Fatalf("hook events %+v", he)
		}
	})
	t.Run("a failing hook is reported; the run goes on", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PostToolUse":[{"hooks":[{"command":"echo broken >&2; exit 3"}]}]}}`)
		tool, _ := okTool("ok")
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("", call("ok", `{}`)), turn("done")}, tool)
		he := ofType(events, EventHook)
		if out.StopReason != StopCompleted || len(he) != 1 || !strings.Contains(he[0].Error, "status 3: broken") {
			t.Fatalf("stop %s, hook events %+v", out.StopReason, he)
		}
	})
	t.Run("PostToolUse context and block reach the model", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PostToolUse":[{"matcher":"ok","hooks":[
			{"command":"echo '{\"additionalContext\":\"remember the changelog\"}'"},
			{"command":"echo 'lint failed: x.go:3' >&2; exit 2"}]}]}}`)
		tool, _ := okTool("ok")
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("", call("ok", `{}`)), turn("done")}, tool)
		res := ofType(events, EventToolResult)[0]
		if !strings.HasPrefix(res.Output, "ok ok") || !strings.Contains(res.Output, "lint failed: x.go:3") {
			t.Fatalf("result %q", res.Output)
		}
		msgs := ofType(events, EventMessage)
		if len(msgs) != 1 || msgs[0].Kind != MessageHookContext || msgs[0].Text != "remember the changelog" {
			t.Fatalf("messages %+v", msgs)
		}
		if got := out.Messages[2].Content; len(got) != 2 || got[1].Text != "remember the changelog" {
			t.Fatalf("the context is not after the tool results: %+v", got)
		}
	})
	t.Run("SessionStart and UserPromptSubmit context", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{
			"SessionStart":[{"matcher":"startup","hooks":[{"command":"echo on branch main"}]}],
			"UserPromptSubmit":[{"hooks":[{"command":"echo '{\"hookSpecificOutput\":{\"additionalContext\":\"tests: go test ./...\"}}'"}]}]}}`)
		out, _ := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("done")})
		first := out.Messages[0].Content
		if len(first) != 3 || first[0].Text != "the task" || first[1].Text != "on branch main" || first[2].Text != "tests: go test ./..." {
			t.Fatalf("first message %+v", first)
		}
	})
	t.Run("UserPromptSubmit exit 2 stops the run before the model", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"UserPromptSubmit":[{"hooks":[{"command":"echo 'no secrets in prompts' >&2; exit 2"}]}]}}`)
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("never")})
		if out.StopReason != StopHook || out.Steps != 0 || !strings.Contains(lastEvent(events).Error, "no secrets in prompts") {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("Stop hook blocks once, then lets the run complete", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"Stop":[{"hooks":[{"command":"if [ -e seen ]; then exit 0; fi; touch seen; echo '{\"decision\":\"block\",\"reason\":\"run the tests first\"}'"}]}]}}`)
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("done"), turn("tests run; done")})
		msgs := ofType(events, EventMessage)
		if out.StopReason != StopCompleted || out.Steps != 2 || len(msgs) != 1 || msgs[0].Kind != MessageStopHook || !strings.Contains(msgs[0].Text, "run the tests first") {
			t.Fatalf("outcome %+v, messages %+v", out, msgs)
		}
	})
	t.Run("PreToolUse continue false refuses the call and stops the run", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PreToolUse":[{"hooks":[{"command":"echo '{\"continue\":false,\"stopReason\":\"maintenance\"}'"}]}]}}`)
		tool, n := okTool("ok")
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("", call("ok", `{}`)), turn("never")}, tool)
		if out.StopReason != StopHook || n.Load() != 0 || ofType(events, EventToolResult)[0].Code != string(praxis.ECancelled) {
			t.Fatalf("outcome %+v, ran %d", out, n.Load())
		}
	})
	t.Run("PostToolUse fires only for calls that ran", func(t *testing.T) {
		// A call blocked by a PreToolUse hook, one denied by a rule, one
		// over the call budget, and one that runs: only the last is seen
		// by PostToolUse.
		h := hookHarness(t, `{"hooks":{
			"PreToolUse":[{"matcher":"blocked","hooks":[{"command":"echo no >&2; exit 2"}]}],
			"PostToolUse":[{"hooks":[{"command":"cat >> post.log; echo >> post.log"}]}]}}`)
		policy, err := permission.New(permission.Rules{Deny: []string{"denied"}}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.Permissions, h.MaxToolCalls = policy, 3
		ok, n := okTool("ok")
		blocked, nb := okTool("blocked")
		denied, nd := okTool("denied")
		out, _ := hrun(t, context.Background(), Config{}, h, []ScriptTurn{
			turn("", call("blocked", `{}`), call("denied", `{}`), call("ok", `{}`), call("ok", `{"over":"budget"}`)),
			turn("done"),
		}, ok, blocked, denied)
		if out.StopReason != StopMaxToolCalls && out.StopReason != StopCompleted {
			t.Fatalf("stop %s", out.StopReason)
		}
		if n.Load() != 1 || nb.Load() != 0 || nd.Load() != 0 {
			t.Fatalf("ran ok %d, blocked %d, denied %d", n.Load(), nb.Load(), nd.Load())
		}
		log, _ := os.ReadFile(filepath.Join(h.Workspace, "post.log"))
		lines := strings.Split(strings.TrimSpace(string(log)), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], `"tool_name":"ok"`) || strings.Contains(lines[0], "budget") {
			t.Fatalf("PostToolUse saw %q; want the one call that ran", log)
		}
	})
	t.Run("continue false stops the run", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PostToolUse":[{"hooks":[{"command":"echo '{\"continue\":false,\"stopReason\":\"quota reached\"}'"}]}]}}`)
		tool, _ := okTool("ok")
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("", call("ok", `{}`)), turn("never")}, tool)
		if out.StopReason != StopHook || out.Steps != 1 || !strings.Contains(lastEvent(events).Error, "quota reached") {
			t.Fatalf("outcome %+v", out)
		}
	})
}

type answer struct {
	yes   bool
	asked int
}

func (a *answer) Confirm(context.Context, permission.Question) (bool, error) {
	a.asked++
	return a.yes, nil
}

func TestPermissionsInTheLoop(t *testing.T) {
	policy, err := permission.New(permission.Rules{
		Deny: []string{"bash(rm -rf*)", "edit_file(**/*.lock)", "mcp__github__*"},
		Ask:  []string{"bash(git push*)"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	bash, nb := okTool("bash")
	edit, ne := okTool("edit_file")
	gh, ng := okTool("mcp__github__create_issue")
	cases := []struct {
		name     string
		call     ScriptCall
		prompter permission.Prompter
		ran      *atomic.Int64
		allowed  bool
		reason   string
	}{
		{"command pattern denied", call("bash", `{"command":"rm -rf /"}`), nil, nb, false, "deny(bash(rm -rf*))"},
		{"command pattern allowed by default", call("bash", `{"command":"ls"}`), nil, nb, true, ""},
		{"path pattern denied", call("edit_file", `{"path":"web/package.lock"}`), nil, ne, false, "deny(edit_file(**/*.lock))"},
		{"path pattern not matching", call("edit_file", `{"path":"main.go"}`), nil, ne, true, ""},
		{"tool glob denied", call("mcp__github__create_issue", `{"title":"x"}`), nil, ng, false, "deny(mcp__github__*)"},
		{"ask without a terminal", call("bash", `{"command":"git push origin main"}`), nil, nb, false, "no terminal"},
		{"ask answered yes", call("bash", `{"command":"git push"}`), &answer{yes: true}, nb, true, ""},
		{"ask answered no", call("bash", `{"command":"git push"}`), &answer{}, nb, false, "refused by the user"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.ran.Load()
			_, events := hrun(t, context.Background(), Config{}, &Harness{Permissions: policy, Prompter: tc.prompter},
				[]ScriptTurn{turn("", tc.call), turn("done")}, bash, edit, gh)
			res := ofType(events, EventToolResult)[0]
			ran := tc.ran.Load() - before
			if tc.allowed != (ran == 1) || tc.allowed == res.IsError {
				t.Fatalf("ran %d times, result %+v", ran, res)
			}
			if !tc.allowed && (res.Code != string(praxis.EPolicy) || !strings.Contains(res.Output, tc.reason)) {
				t.Fatalf("refusal %q lacks %q", res.Output, tc.reason)
			}
		})
	}
	t.Run("a hook's allow answers an ask rule, not a deny rule", func(t *testing.T) {
		h := hookHarness(t, `{"hooks":{"PreToolUse":[{"hooks":[{"command":"echo '{\"permissionDecision\":\"allow\"}'"}]}]}}`)
		h.Permissions = policy
		before := nb.Load()
		_, events := hrun(t, context.Background(), Config{}, h,
			[]ScriptTurn{turn("", call("bash", `{"command":"git push"}`), call("bash", `{"command":"rm -rf x"}`)), turn("done")}, bash)
		res := ofType(events, EventToolResult)
		if nb.Load()-before != 1 || res[0].IsError || !res[1].IsError {
			t.Fatalf("results %+v", res)
		}
	})
}

func TestGateLoop(t *testing.T) {
	t.Run("fails, gets fixed, passes", func(t *testing.T) {
		ws := t.TempDir()
		fix, _ := argTool("fix", false, func(map[string]any) (praxis.Result, error) {
			return praxis.Result{Text: "fixed"}, os.WriteFile(filepath.Join(ws, "fixed"), nil, 0o644)
		})
		h := &Harness{Workspace: ws, Gates: []string{"echo checking; test -e fixed || { echo 'FAIL: not fixed'; exit 1; }", "true"}}
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("done"), turn("", call("fix", `{}`)), turn("done now")}, fix)
		if out.StopReason != StopCompleted || out.Steps != 3 {
			t.Fatalf("outcome %s after %d: %v", out.StopReason, out.Steps, out.Err)
		}
		gates := ofType(events, EventGate)
		if len(gates) != 3 || gates[0].Gate.Passed || gates[0].Gate.ExitCode != 1 || !gates[1].Gate.Passed || !gates[2].Gate.Passed || gates[2].Gate.Attempt != 2 {
			t.Fatalf("gate events %+v", gates)
		}
		msgs := ofType(events, EventMessage)
		if len(msgs) != 1 || msgs[0].Kind != MessageGateFailed || !strings.Contains(msgs[0].Text, "FAIL: not fixed") || !strings.Contains(msgs[0].Text, "attempt 1 of 3") {
			t.Fatalf("messages %+v", msgs)
		}
		if g := lastEvent(events).Gates; len(g) != 2 || !g[0].Passed || !g[1].Passed {
			t.Fatalf("run_complete gates %+v", g)
		}
	})
	t.Run("never passes: gate_failed with the evidence", func(t *testing.T) {
		h := &Harness{Workspace: t.TempDir(), Gates: []string{"echo 'FAIL: TestParse' >&2; exit 1"}, MaxGateAttempts: 2}
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("done"), turn("done"), turn("done")})
		last := lastEvent(events)
		if out.StopReason != StopGateFailed || out.Steps != 2 || !strings.Contains(last.Error, "FAIL: TestParse") || len(last.Gates) != 1 || last.Gates[0].Passed {
			t.Fatalf("outcome %+v, last %+v", out, last)
		}
	})
	t.Run("max_steps, never completed, with a failing gate", func(t *testing.T) {
		h := &Harness{Workspace: t.TempDir(), Gates: []string{"false"}, MaxGateAttempts: 10}
		out, _ := hrun(t, context.Background(), Config{MaxSteps: 2}, h, []ScriptTurn{turn("done"), turn("done"), turn("done")})
		if out.StopReason != StopMaxSteps {
			t.Fatalf("outcome %s", out.StopReason)
		}
	})
	t.Run("runs under the catalog's bash tool", func(t *testing.T) {
		var commands []string
		bash, _ := argTool("bash", false, func(a map[string]any) (praxis.Result, error) {
			commands = append(commands, fmt.Sprint(a["command"]))
			code := 0
			if len(commands) == 1 {
				code = 2
			}
			return praxis.Result{Text: fmt.Sprintf("exit code %d", code), Structured: map[string]any{"exit_code": code}}, nil
		})
		h := &Harness{Gates: []string{"go test ./..."}}
		out, events := hrun(t, context.Background(), Config{}, h, []ScriptTurn{turn("done"), turn("done")}, bash)
		gates := ofType(events, EventGate)
		if out.StopReason != StopCompleted || !reflect.DeepEqual(commands, []string{"go test ./...", "go test ./..."}) || gates[0].Gate.ExitCode != 2 || !gates[1].Gate.Passed {
			t.Fatalf("stop %s, commands %v, gates %+v", out.StopReason, commands, gates)
		}
	})
	t.Run("a hanging gate ends with the run's timeout", func(t *testing.T) {
		h := &Harness{Workspace: t.TempDir(), Gates: []string{"sleep 60"}}
		out, _ := hrun(t, context.Background(), Config{Timeout: 300 * time.Millisecond}, h, []ScriptTurn{turn("done")})
		if out.StopReason != StopTimeout {
			t.Fatalf("outcome %s: %v", out.StopReason, out.Err)
		}
	})
}

func TestResumeFromEvents(t *testing.T) {
	ok, _ := okTool("ok")
	turns := []ScriptTurn{
		turn("one", call("ok", `{"i":1}`)), turn("two", call("ok", `{"i":2}`)),
		turn("three", call("ok", `{"i":3}`)), turn("finished"), turn("and the follow-up"),
	}
	var events []Event
	sink := func(e Event) { events = append(events, e) }
	cat, _ := praxis.NewCatalog(ok)
	runOnce := func(h *Harness, maxSteps int, task string) Outcome {
		a, err := New(Config{Provider: &Scripted{Turns: turns}, Tools: cat, OnEvent: sink, RunID: "s1", MaxSteps: maxSteps, Harness: h})
		if err != nil {
			t.Fatal(err)
		}
		return a.Run(context.Background(), task)
	}
	first := runOnce(&Harness{}, 2, "the task")
	if first.StopReason != StopMaxSteps {
		t.Fatal(first.StopReason)
	}
	// Resuming without a prompt goes on where the run stopped.
	second := runOnce(&Harness{Resume: append([]Event(nil), events...)}, 10, "")
	if second.StopReason != StopCompleted || second.Steps != 2 || second.Final != "finished" {
		t.Fatalf("resumed: %+v", second)
	}
	// A finished session needs a prompt to go on.
	third := runOnce(&Harness{Resume: append([]Event(nil), events...)}, 10, "")
	if third.StopReason != StopError || !strings.Contains(third.Err.Error(), "give a prompt") {
		t.Fatalf("resumed without a prompt: %+v", third)
	}
	fourth := runOnce(&Harness{Resume: append([]Event(nil), events...)}, 10, "one more thing")
	if fourth.StopReason != StopCompleted || fourth.Final != "and the follow-up" {
		t.Fatalf("follow-up: %+v", fourth)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.RunID != "s1" {
			t.Fatalf("event %d: seq %d run %s", i, e.Seq, e.RunID)
		}
	}
	st, err := Fold(events)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 4 || st.Steps != 5 || st.Stop != StopCompleted || st.Final != "and the follow-up" {
		t.Fatalf("state %+v", st)
	}
	checkFold(t, events, fourth.Messages)
	if c := events[0].Controls; c == nil || c.MaxTokens != 0 || len(c.Rules) != 0 {
		t.Fatalf("controls of a plain harness: %+v", c)
	}
	if n := len(ofType(events, EventRunStart)); n != 4 || !ofType(events, EventRunStart)[1].Resumed || ofType(events, EventRunStart)[0].Resumed {
		t.Fatal("run_start events do not mark the resumed runs")
	}
}

func TestFoldRebuildsAnInterruptedStep(t *testing.T) {
	in := json.RawMessage(`{"i":1}`)
	ev := func(seq int64, e Event) Event { e.Seq, e.RunID = seq, "s"; return e }
	events := []Event{
		ev(1, Event{Type: EventRunStart, Task: "task"}),
		ev(2, Event{Type: EventTextDelta, Text: "Working "}),
		ev(3, Event{Type: EventRetry}),
		ev(4, Event{Type: EventTextDelta, Text: "Doing "}),
		ev(5, Event{Type: EventTextDelta, Text: "it."}),
		ev(6, Event{Type: EventToolStart, CallID: "a", Tool: "ok", Input: in}),
		ev(7, Event{Type: EventToolStart, CallID: "b", Tool: "slow", Input: in}),
		ev(8, Event{Type: EventToolResult, CallID: "a", Tool: "ok", Output: "fine"}),
		// The process died here.
	}
	st, err := Fold(events)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Partial || len(st.Messages) != 3 || st.Stop != "" {
		t.Fatalf("state %+v", st)
	}
	reply, results := st.Messages[1], st.Messages[2].Content
	if reply.Role != RoleAssistant || reply.Text() != "Doing it." || len(reply.ToolCalls()) != 2 {
		t.Fatalf("rebuilt reply %+v", reply)
	}
	if results[0].Text != "fine" || results[0].IsError || !results[1].IsError || !strings.HasPrefix(results[1].Text, "E_CANCELLED") {
		t.Fatalf("rebuilt results %+v", results)
	}

	bad := []struct {
		name   string
		events []Event
		want   string
	}{
		{"no run_start", events[1:], "not the run_start"},
		{"second session", append(append([]Event(nil), events...), ev(9, Event{Type: EventRunStart})), "new session inside"},
		{"foreign event", append(append([]Event(nil), events...), Event{Type: EventMessage, Seq: 9, RunID: "other"}), "belongs to session"},
		{"sequence back", append(append([]Event(nil), events...), ev(3, Event{Type: EventMessage})), "goes back"},
		{"step without message", append(append([]Event(nil), events...), ev(9, Event{Type: EventStepComplete})), "without the model's message"},
	}
	for _, tc := range bad {
		if _, err := Fold(tc.events); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := Fold(nil); err != nil {
		t.Errorf("Fold(nil): %v", err)
	}
}

// TestCompactionWithTheSameProvider compacts a run of the OpenAI provider
// against a fake API: the summary is asked of the same API and model, and
// the next request carries it in place of the older turns.
func TestCompactionWithTheSameProvider(t *testing.T) {
	api, srv := newFakeAPI(t,
		reply{fixture: "openai_tool_calls.sse"}, reply{fixture: "openai_tool_calls.sse"},
		reply{fixture: "openai_summary.sse"}, reply{fixture: "openai_done.sse"})
	read, _ := okTool("read_file")
	list, _ := okTool("list_dir")
	cat, err := praxis.NewCatalog(read, list)
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	a, err := New(Config{
		Provider: &OpenAI{APIKey: "sk-test", BaseURL: srv.URL + "/v1"}, Model: "gpt-4.1", System: "You are a test.", Tools: cat,
		OnEvent: func(e Event) { events = append(events, e) },
		Harness: &Harness{Compaction: Compaction{ContextWindow: 700, KeepRecent: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := a.Run(context.Background(), "Fix notes.txt")
	if out.StopReason != StopCompleted || out.Final != "Done." || len(api.got) != 4 {
		t.Fatalf("outcome %+v after %d requests", out, len(api.got))
	}
	checkFold(t, events, out.Messages)
	comp := ofType(events, EventCompacted)
	if len(comp) != 1 || comp[0].Step != 3 || comp[0].Folded != 1 || comp[0].Kept != 2 || comp[0].BeforeTokens < 560 || comp[0].BeforeTokens > 600 {
		t.Fatalf("compacted events %+v", comp)
	}
	// The summary's call counts in the totals and its cost, and the journal
	// adds up to the same totals.
	if comp[0].Usage == nil || comp[0].Usage.InputTokens == 0 || comp[0].CostUSD == nil || *comp[0].CostUSD <= 0 {
		t.Errorf("the compacted event lacks the summary's usage and cost: %+v", comp[0])
	}
	if st, _ := Fold(events); st.Usage != out.Usage {
		t.Errorf("folded usage %+v, the run's %+v", st.Usage, out.Usage)
	}

	// The summary request: same endpoint and model, the summariser's
	// system prompt, the older turns rendered as one user message, no tools.
	sum := api.got[2]
	msgs, _ := sum.body["messages"].([]any)
	if sum.path != "/v1/chat/completions" || sum.body["model"] != "gpt-4.1" || sum.body["tools"] != nil || len(msgs) != 2 {
		t.Fatalf("summary request %s %s", sum.path, jsonOf(sum.body))
	}
	system, _ := msgs[0].(map[string]any)["content"].(string)
	transcript, _ := msgs[1].(map[string]any)["content"].(string)
	if !strings.HasPrefix(system, "You compact the history") || !strings.Contains(transcript, "ASSISTANT called read_file") || !strings.Contains(transcript, "USER: Fix notes.txt") {
		t.Fatalf("summary request messages %s", jsonOf(msgs))
	}

	// The next request: the original system prompt, the task and summary
	// first, then the kept turns as they were.
	next := api.got[3]
	msgs, _ = next.body["messages"].([]any)
	first, _ := msgs[1].(map[string]any)["content"].(string)
	if len(msgs) != 5 || msgs[0].(map[string]any)["content"] != "You are a test." ||
		!strings.HasPrefix(first, "Fix notes.txt\n") || !strings.Contains(first, "SUMMARY: notes.txt does not exist yet.") {
		t.Fatalf("request after compaction %s", jsonOf(msgs))
	}
	before, _ := api.got[1].body["messages"].([]any) // [system, task, a1, r1a, r1b]
	after := jsonOf(msgs[2:])
	if kept := jsonOf(before[2:]); after != kept {
		t.Fatalf("kept turns differ:\n got %s\nwant %s", after, kept)
	}
	// The summary's tokens count toward the run's.
	if out.Usage.InputTokens != 472*2+300+200 || out.Usage.OutputTokens != 89*2+12+2 {
		t.Fatalf("usage %+v", out.Usage)
	}
}

// TestResumeAfterCompaction resumes a session that was compacted: the
// conversation comes back compacted, and the scripted provider goes on
// with the right turn.
func TestResumeAfterCompaction(t *testing.T) {
	read, _ := argTool("read", true, func(a map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: fmt.Sprintf("contents of %v", a["f"])}, nil
	})
	u := func(in int) *Usage { return &Usage{InputTokens: in, OutputTokens: 20} }
	turns := []ScriptTurn{
		{Text: "a", ToolCalls: []ScriptCall{call("read", `{"f":"a"}`)}, Usage: u(300)},
		{Text: "b", ToolCalls: []ScriptCall{call("read", `{"f":"b"}`)}, Usage: u(500)},
		{Text: "c", ToolCalls: []ScriptCall{call("read", `{"f":"c"}`)}, Usage: u(900)},
		{Text: "d", ToolCalls: []ScriptCall{call("read", `{"f":"d"}`)}, Usage: u(300)},
		{Text: "finished", Usage: u(300)},
	}
	cat, _ := praxis.NewCatalog(read)
	var events []Event
	runOnce := func(h *Harness, maxSteps int) Outcome {
		h.Compaction = Compaction{ContextWindow: 1000, KeepRecent: 2}
		a, err := New(Config{Provider: &Scripted{Turns: turns}, Tools: cat, RunID: "s", MaxSteps: maxSteps, Harness: h,
			OnEvent: func(e Event) { events = append(events, e) }})
		if err != nil {
			t.Fatal(err)
		}
		return a.Run(context.Background(), "the task")
	}
	first := runOnce(&Harness{}, 4)
	if first.StopReason != StopMaxSteps || len(ofType(events, EventCompacted)) != 1 {
		t.Fatalf("first run %s, %d compactions", first.StopReason, len(ofType(events, EventCompacted)))
	}
	second := runOnce(&Harness{Resume: append([]Event(nil), events...)}, 5)
	if second.StopReason != StopCompleted || second.Final != "finished" || second.Steps != 1 {
		t.Fatalf("resumed run %+v", second)
	}
	checkFold(t, events, second.Messages)
	if !strings.Contains(second.Messages[0].Text(), "compacted") {
		t.Fatalf("the resumed conversation is not the compacted one: %+v", second.Messages[0])
	}
}

// TestConcurrentCallsUnderTheHarness runs read-only calls concurrently
// through hooks, loop detection and the tool-call budget (run with -race).
func TestConcurrentCallsUnderTheHarness(t *testing.T) {
	h := hookHarness(t, `{"hooks":{"PostToolUse":[{"hooks":[{"command":"echo '{\"additionalContext\":\"seen\"}'"}]}],
		"PreToolUse":[{"hooks":[{"command":"cat >/dev/null"}]}]}}`)
	h.DoomLoop = &doomloop.Config{}
	h.MaxToolCalls = 10
	look, n := argTool("look", true, func(a map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: fmt.Sprint("looked at ", a["i"])}, nil
	})
	out, events := hrun(t, context.Background(), Config{}, h,
		[]ScriptTurn{turn("", call("look", `{"i":1}`), call("look", `{"i":2}`), call("look", `{"i":3}`)), turn("done")}, look)
	if out.StopReason != StopCompleted || n.Load() != 3 || len(ofType(events, EventMessage)) != 3 {
		t.Fatalf("outcome %s, %d calls, %d messages", out.StopReason, n.Load(), len(ofType(events, EventMessage)))
	}
}

func TestCutResultStaysInTheWorkspace(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".praxis")); err != nil {
		t.Fatal(err)
	}
	tool, _ := argTool("dump", true, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: strings.Repeat("y", 5000)}, nil
	})
	_, events := hrun(t, context.Background(), Config{}, &Harness{Workspace: ws, MaxToolResult: 1000},
		[]ScriptTurn{turn("", call("dump", `{}`)), turn("done")}, tool)
	if res := ofType(events, EventToolResult)[0].Output; len(res) > 1200 || !strings.Contains(res, "could not be saved") {
		t.Fatalf("result %q", res)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the workspace: %v", ents)
	}
}

func TestSessionStartOnResume(t *testing.T) {
	h := hookHarness(t, `{"hooks":{"SessionStart":[
		{"matcher":"startup","hooks":[{"command":"echo fresh start"}]},
		{"matcher":"resume","hooks":[{"command":"echo welcome back"}]}]}}`)
	ok, _ := okTool("ok")
	turns := []ScriptTurn{turn("", call("ok", `{"i":1}`)), turn("", call("ok", `{"i":2}`)), turn("done")}
	cat, _ := praxis.NewCatalog(ok)
	var events []Event
	runOnce := func(resume []Event, maxSteps int) Outcome {
		hh := *h
		hh.Resume = resume
		a, _ := New(Config{Provider: &Scripted{Turns: turns}, Tools: cat, RunID: "s", MaxSteps: maxSteps, Harness: &hh,
			OnEvent: func(e Event) { events = append(events, e) }})
		return a.Run(context.Background(), "")
	}
	a, _ := New(Config{Provider: &Scripted{Turns: turns}, Tools: cat, RunID: "s", MaxSteps: 1, Harness: h,
		OnEvent: func(e Event) { events = append(events, e) }})
	if out := a.Run(context.Background(), "the task"); out.StopReason != StopMaxSteps {
		t.Fatal(out.StopReason)
	}
	out := runOnce(append([]Event(nil), events...), 5)
	if out.StopReason != StopCompleted {
		t.Fatalf("%s: %v", out.StopReason, out.Err)
	}
	var ctxs []string
	for _, e := range ofType(events, EventMessage) {
		ctxs = append(ctxs, e.Text)
	}
	if !reflect.DeepEqual(ctxs, []string{"fresh start", "welcome back"}) {
		t.Fatalf("contexts %q", ctxs)
	}
	checkFold(t, events, out.Messages)
}

// TestResumeSettlesInterruptedCalls resumes sessions whose run died during
// a tool call: a destructive tool is not run again and the model is told
// the call was interrupted; a read-only or idempotent one is run again
// once. Either way the journal records the call's result, so that folding
// the events, or resuming again, decides nothing twice.
func TestResumeSettlesInterruptedCalls(t *testing.T) {
	tests := []struct {
		name    string
		ann     praxis.Annotations
		runs    int64 // how often the resume runs the tool
		want    string
		wantErr bool
	}{
		{"destructive", praxis.Annotations{Destructive: true}, 0, "E_CANCELLED: change did not return: the run was interrupted during the call\nIt was not run again", true},
		{"not annotated", praxis.Annotations{}, 0, "E_CANCELLED: change did not return", true},
		{"idempotent", praxis.Annotations{Destructive: true, Idempotent: true}, 1, "change ran", false},
		{"read-only", praxis.Annotations{ReadOnly: true}, 1, "change ran", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			tool := praxis.Tool{Name: "change", Description: "test tool", InputSchema: json.RawMessage(`{"type": "object"}`), Annotations: tc.ann,
				Handler: func(context.Context, json.RawMessage) (praxis.Result, error) {
					n.Add(1)
					return praxis.Result{Text: "change ran"}, nil
				}}
			cat, err := praxis.NewCatalog(tool)
			if err != nil {
				t.Fatal(err)
			}
			in := json.RawMessage(`{"x":1}`)
			ev := func(seq int64, e Event) Event { e.Seq, e.RunID = seq, "s"; return e }
			events := []Event{
				ev(1, Event{Type: EventRunStart, Task: "task"}),
				ev(2, Event{Type: EventTextDelta, Text: "Changing."}),
				ev(3, Event{Type: EventToolStart, CallID: "c1", Tool: "change", Input: in}),
				// The process died here, during the call.
			}
			turns := []ScriptTurn{turn("Changing.", call("change", `{"x":1}`)), turn("Done.")}
			resume := func(events []Event) (Outcome, []Event) {
				var got []Event
				a, err := New(Config{Provider: &Scripted{Turns: turns}, Tools: cat, RunID: "s",
					OnEvent: func(e Event) { got = append(got, e) }, Harness: &Harness{Resume: events}})
				if err != nil {
					t.Fatal(err)
				}
				return a.Run(context.Background(), ""), got
			}
			out, more := resume(events)
			if out.StopReason != StopCompleted || out.Final != "Done." {
				t.Fatalf("resumed run: %+v", out)
			}
			if got := n.Load(); got != tc.runs {
				t.Fatalf("the interrupted call ran %d times on resume, want %d", got, tc.runs)
			}
			res := out.Messages[2].Content[0]
			if res.ID != "c1" || res.IsError != tc.wantErr || !strings.HasPrefix(res.Text, tc.want) {
				t.Fatalf("the model got %+v", res)
			}
			results := ofType(more, EventToolResult)
			if len(results) != 1 || results[0].CallID != "c1" || results[0].Output != res.Text {
				t.Fatalf("the resumed run journaled %+v", results)
			}
			all := append(append([]Event(nil), events...), more...)
			checkFold(t, all, out.Messages)
			st, err := Fold(all)
			if err != nil || len(st.Interrupted) != 0 {
				t.Fatalf("after the resume: %v, still interrupted %+v", err, st.Interrupted)
			}
			// Resuming again (a new prompt) runs nothing of the old step.
			turns = append(turns, turn("Again."))
			again, _ := func() (Outcome, []Event) {
				var got []Event
				a, _ := New(Config{Provider: &Scripted{Turns: turns}, Tools: cat, RunID: "s",
					OnEvent: func(e Event) { got = append(got, e) }, Harness: &Harness{Resume: all}})
				return a.Run(context.Background(), "more"), got
			}()
			if again.StopReason != StopCompleted || n.Load() != tc.runs {
				t.Fatalf("second resume: %+v, tool ran %d times in all", again, n.Load())
			}
		})
	}
}
