package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/praxis-tools/praxis/praxis"
)

// testTool is a tool whose handler is fn.
func testTool(name string, readOnly bool, fn func(ctx context.Context) (string, error)) praxis.Tool {
	return praxis.Tool{
		Name:        name,
		Description: "test tool " + name,
		InputSchema: json.RawMessage(`{"type": "object"}`),
		Annotations: praxis.Annotations{ReadOnly: readOnly, Destructive: !readOnly},
		Handler: func(ctx context.Context, _ json.RawMessage) (praxis.Result, error) {
			s, err := fn(ctx)
			return praxis.Result{Text: s}, err
		},
	}
}

func calls(names ...string) []ScriptCall {
	var out []ScriptCall
	for _, n := range names {
		out = append(out, ScriptCall{Name: n})
	}
	return out
}

// runScript runs turns against tools and returns the outcome and events.
func runScript(t *testing.T, ctx context.Context, cfg Config, turns []ScriptTurn, tools ...praxis.Tool) (Outcome, []Event) {
	t.Helper()
	cat, err := praxis.NewCatalog(tools...)
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	cfg.Provider = &Scripted{Turns: turns}
	cfg.Tools = cat
	cfg.OnEvent = func(e Event) { events = append(events, e) }
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := a.Run(ctx, "the task")
	checkEventStream(t, events)
	return out, events
}

// checkEventStream checks what holds for every run: one run ID, sequence
// numbers from 1 without gaps, run_start first and run_complete last.
func checkEventStream(t *testing.T, events []Event) {
	t.Helper()
	if len(events) < 2 || events[0].Type != EventRunStart || events[len(events)-1].Type != EventRunComplete {
		t.Fatalf("events do not start with run_start and end with run_complete: %+v", events)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.RunID != events[0].RunID || e.RunID == "" || e.Time.IsZero() {
			t.Errorf("event %d: seq %d run %q time %v", i, e.Seq, e.RunID, e.Time)
		}
	}
}

func TestReadOnlyCallsRunConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	both := make(chan struct{})
	go func() { wg.Wait(); close(both) }()
	// Each waits until both have started: only concurrent calls finish
	// early.
	meet := func(ctx context.Context) (string, error) {
		wg.Done()
		select {
		case <-both:
			return "met", nil
		case <-time.After(5 * time.Second):
			return "ran alone", nil
		}
	}
	out, events := runScript(t, context.Background(), Config{}, []ScriptTurn{
		{ToolCalls: calls("look_a", "look_b")},
		{Text: "done"},
	}, testTool("look_a", true, meet), testTool("look_b", true, meet))
	if out.StopReason != StopCompleted || out.ToolCalls != 2 {
		t.Fatalf("outcome %+v", out)
	}
	for _, e := range events {
		if e.Type == EventToolResult && e.Output != "met" {
			t.Errorf("%s: %q: the read-only calls did not run concurrently", e.Tool, e.Output)
		}
	}
}

func TestWritingCallsRunInOrder(t *testing.T) {
	var mu sync.Mutex
	var log []string
	running := 0
	step := func(name string) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			mu.Lock()
			running++
			if running > 1 {
				log = append(log, "overlap")
			}
			log = append(log, name)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return "ok " + name, nil
		}
	}
	out, events := runScript(t, context.Background(), Config{}, []ScriptTurn{
		{ToolCalls: calls("look", "write_b", "write_a")},
		{Text: "done"},
	}, testTool("look", true, step("look")), testTool("write_a", false, step("write_a")), testTool("write_b", false, step("write_b")))
	if out.StopReason != StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if strings.Join(log, " ") != "look write_b write_a" {
		t.Errorf("order %v, want look write_b write_a one at a time", log)
	}
	// Results reach the model in the calls' order.
	res := out.Messages[2].Content
	if len(res) != 3 || res[0].Text != "ok look" || res[1].Text != "ok write_b" || res[2].Text != "ok write_a" {
		t.Errorf("results %+v", res)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, string(e.Type))
	}
	// Each call's arguments ({}) stream in one piece before the tools run.
	want := "run_start tool_input_delta tool_input_delta tool_input_delta tool_start tool_result tool_start tool_result tool_start tool_result step_complete text_delta step_complete run_complete"
	if strings.Join(kinds, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(kinds, " "), want)
	}
}

func TestStopReasons(t *testing.T) {
	block := func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	ok := func(context.Context) (string, error) { return "ok", nil }
	loop := []ScriptTurn{{ToolCalls: calls("ok")}, {ToolCalls: calls("ok")}, {ToolCalls: calls("ok")}, {Text: "done"}}

	t.Run("completed", func(t *testing.T) {
		out, events := runScript(t, context.Background(), Config{}, loop, testTool("ok", true, ok))
		last := events[len(events)-1]
		if out.StopReason != StopCompleted || out.Steps != 4 || out.ToolCalls != 3 || out.Final != "done" ||
			last.StopReason != StopCompleted || last.Steps != 4 || last.Final != "done" || last.Usage == nil || last.Usage.InputTokens == 0 {
			t.Errorf("outcome %+v, last event %+v", out, last)
		}
	})
	t.Run("max_steps", func(t *testing.T) {
		out, events := runScript(t, context.Background(), Config{MaxSteps: 2}, loop, testTool("ok", true, ok))
		if out.StopReason != StopMaxSteps || out.Steps != 2 || events[len(events)-1].StopReason != StopMaxSteps {
			t.Errorf("outcome %+v", out)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		out, _ := runScript(t, context.Background(), Config{Timeout: 100 * time.Millisecond},
			[]ScriptTurn{{ToolCalls: calls("block")}, {Text: "never"}}, testTool("block", false, block))
		if out.StopReason != StopTimeout || out.Err == nil {
			t.Errorf("outcome %+v", out)
		}
		if r := out.Messages[len(out.Messages)-1].Content[0]; !r.IsError || !strings.HasPrefix(r.Text, "E_CANCELLED") {
			t.Errorf("the interrupted call's result = %+v", r)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		started := func(ctx context.Context) (string, error) {
			cancel()
			return block(ctx)
		}
		out, _ := runScript(t, ctx, Config{},
			[]ScriptTurn{{ToolCalls: calls("start", "later")}, {Text: "never"}},
			testTool("start", false, started), testTool("later", false, ok))
		if out.StopReason != StopCancelled {
			t.Errorf("outcome %+v", out)
		}
		// The call after the cancellation is answered without running.
		res := out.Messages[len(out.Messages)-1].Content
		if len(res) != 2 || !strings.Contains(res[1].Text, "was not run") {
			t.Errorf("results %+v", res)
		}
	})
	t.Run("provider error", func(t *testing.T) {
		out, events := runScript(t, context.Background(), Config{},
			[]ScriptTurn{{Error: &ScriptError{Kind: ErrAuth, Status: 401, Message: "invalid x-api-key"}}})
		last := events[len(events)-1]
		if out.StopReason != StopError || !strings.Contains(last.Error, "invalid x-api-key") {
			t.Errorf("outcome %+v, last %+v", out, last)
		}
	})
}

func TestUnknownToolIsAToolError(t *testing.T) {
	out, events := runScript(t, context.Background(), Config{},
		[]ScriptTurn{{ToolCalls: calls("no_such_tool")}, {Text: "ok then"}})
	if out.StopReason != StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
	for _, e := range events {
		if e.Type == EventToolResult && (!e.IsError || e.Code != "E_UNKNOWN_TOOL" || !strings.HasPrefix(e.Output, "E_UNKNOWN_TOOL: ") || !strings.Contains(e.Output, `"no_such_tool"`)) {
			t.Errorf("result %+v", e)
		}
	}
}

func TestRetriesAreEvents(t *testing.T) {
	p := &failTwice{}
	cat, _ := praxis.NewCatalog()
	var events []Event
	a, err := New(Config{
		Provider: WithRetry(p, RetryPolicy{BaseDelay: time.Millisecond}, nil),
		Tools:    cat,
		OnEvent:  func(e Event) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	out := a.Run(context.Background(), "task")
	checkEventStream(t, events)
	var retries int
	for _, e := range events {
		if e.Type == EventRetry && e.Step == 1 && strings.Contains(e.Error, "overloaded") {
			retries++
		}
	}
	if out.StopReason != StopCompleted || retries != 2 {
		t.Errorf("outcome %+v, %d retry events", out, retries)
	}
}

type failTwice struct{ n int }

func (f *failTwice) Name() string { return "fail-twice" }

func (f *failTwice) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	if f.n++; f.n <= 2 {
		return nil, &APIError{Provider: "fail-twice", Kind: ErrOverloaded, Status: 529, Message: "overloaded"}
	}
	return &Response{Message: Message{Role: RoleAssistant, Content: []Block{{Type: BlockText, Text: "fine"}}}}, nil
}

func TestScriptedMatch(t *testing.T) {
	s := &Scripted{Turns: []ScriptTurn{{}, {ToolCalls: []ScriptCall{{Name: "edit", Input: json.RawMessage(
		`{"ops": [{"tag": "{{match (?m)^(2:[0-9a-f]{8})\\|}}", "n": 3}], "keep": "{{ not a placeholder"}`)}}}}}
	req := &Request{Messages: []Message{
		{Role: RoleUser, Content: []Block{{Type: BlockText, Text: "task"}}},
		{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: "1", Name: "read"}}},
		{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ID: "1", Text: "# a.txt\n1:0123abcd|one\n2:89abcdef|two\n"}}},
	}}
	resp, err := s.Complete(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Message.Content[0].Input); got != `{"ops": [{"tag": "2:89abcdef", "n": 3}], "keep": "{{ not a placeholder"}` {
		t.Errorf("input = %s", got)
	}
	// A match with quotes and backslashes stays valid JSON.
	s.Turns[1].ToolCalls[0].Input = json.RawMessage(`{"v": "{{match name: (.*)}}"}`)
	req.Messages[2].Content[0].Text = `name: a "b" \c`
	resp, err = s.Complete(context.Background(), req, nil)
	if err != nil || string(resp.Message.Content[0].Input) != `{"v": "a \"b\" \\c"}` {
		t.Errorf("escaped match: %s, %v", resp.Message.Content[0].Input, err)
	}
	req.Messages[2].Content[0].Text = "nothing here"
	if _, err := s.Complete(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "found nothing") {
		t.Errorf("err = %v", err)
	}
	req.Messages = append(req.Messages, Message{Role: RoleAssistant}, Message{Role: RoleUser})
	if _, err := s.Complete(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "asks for turn 3") {
		t.Errorf("past the script: err = %v", err)
	}
}

func TestSystemPrompt(t *testing.T) {
	skills := testTool("list_skills", true, func(context.Context) (string, error) { return "- go-style: how we write Go", nil })
	memory := testTool("list_memory", true, func(context.Context) (string, error) { return "project/plan (1 KB): the plan", nil })
	read := testTool("read_file", true, func(context.Context) (string, error) { return "", nil })
	edit := testTool("edit_file", false, func(context.Context) (string, error) { return "", nil })
	full, _ := praxis.NewCatalog(skills, memory, read, edit)
	p := SystemPrompt(GatherPromptInfo(context.Background(), "/src/proj", full))
	for _, want := range []string{"/src/proj", "LINE:TAG", "E_ANCHOR_STALE", "- go-style: how we write Go", "project/plan (1 KB): the plan"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	bare, _ := praxis.NewCatalog()
	p = SystemPrompt(GatherPromptInfo(context.Background(), "/src/proj", bare))
	for _, absent := range []string{"hashline", "Skills", "Memory"} {
		if strings.Contains(p, absent) {
			t.Errorf("prompt without those tools mentions %q:\n%s", absent, p)
		}
	}
}

// TestSystemPromptTemplate holds render to text/template on the embedded
// prompt, with every field set and not, and on templates that use each
// thing render does, nested, trimmed or not; a template that needs more
// than render does must panic.
func TestSystemPromptTemplate(t *testing.T) {
	infos := []PromptInfo{}
	for mask := range 16 {
		info := PromptInfo{Workspace: "/src/proj {{.x}} <&>", Hashline: mask&1 != 0}
		if mask&2 != 0 {
			info.Skills = "- go-style: how we write Go\n"
		}
		if mask&4 != 0 {
			info.Memory = "  project/plan (1 KB): the plan  "
		}
		if mask&8 != 0 {
			info.Workspace = ""
		}
		infos = append(infos, info)
	}
	templates := []string{
		systemTemplate,
		"a {{.Workspace}} b",
		"a  {{- .Workspace -}}  b\n\n{{- if .Skills -}}\n\n[{{.Skills}}]\n  {{- end }}  c",
		"{{if .Hashline}}h{{if .Skills}}s{{if .Memory}}m{{end}}S{{end}}H{{end}}.{{.Hashline}}",
		"{{- if .Memory}}\n{{ .Memory }}\n{{- end}}\n",
		"",
		"no actions at all\n",
	}
	for _, tmpl := range templates {
		ref := template.Must(template.New("ref").Parse(tmpl))
		for _, info := range infos {
			var want strings.Builder
			if err := ref.Execute(&want, info); err != nil {
				t.Fatal(err)
			}
			if got := render(tmpl, info.field); got != want.String() {
				t.Errorf("template %q, %+v:\n got %q\nwant %q", tmpl, info, got, want.String())
			}
		}
	}
	for _, bad := range []string{"{{range .Skills}}x{{end}}", "{{if .Skills}}x", "x{{end}}", "{{.Nope}}", "{{.Skills | printf}}", "{{.Skills"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("render(%q) did not panic", bad)
				}
			}()
			render(bad, PromptInfo{Skills: "s"}.field)
		}()
	}
}
