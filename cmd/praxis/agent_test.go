package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/internal/npmservers"
	"github.com/praxis-tools/praxis/praxis"
)

const notes = "alpha\nbeta\ngamma\n"

// workspace returns a directory holding notes.txt.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hasTool reports whether the engine's catalog has the tool called name.
func hasTool(t *testing.T, dir, name string) bool {
	t.Helper()
	eng, err := praxis.New(praxis.Options{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	_, ok := eng.Catalog().Lookup(name)
	return ok
}

// runAgentTest runs "praxis agent" with args and the environment env, and
// returns the exit status, standard output and standard error.
func runAgentTest(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runAgentEnv(context.Background(), args, stdio{strings.NewReader(""), &out, &errb},
		func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

// parseEvents reads JSON Lines events and checks the stream's invariants.
func parseEvents(t *testing.T, out string) []agent.Event {
	t.Helper()
	var events []agent.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e agent.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	if len(events) < 2 || events[0].Type != agent.EventRunStart || events[len(events)-1].Type != agent.EventRunComplete {
		t.Fatalf("event stream does not run from run_start to run_complete:\n%s", out)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.RunID != events[0].RunID {
			t.Errorf("event %d has seq %d, run %q", i, e.Seq, e.RunID)
		}
	}
	return events
}

// toolResults returns the tool_result events by tool name, in order.
func toolResults(events []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range events {
		if e.Type == agent.EventToolResult {
			out = append(out, e)
		}
	}
	return out
}

func writeScript(t *testing.T, turns []agent.ScriptTurn) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"turns": turns}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// anchorOfLine2 is how a script names line 2 with the tag read_file gave.
const anchorOfLine2 = `{{match (?m)^(2:[0-9a-f]+)\|}}`

// editTurns is the end-to-end task: read notes.txt, edit line 2 with the
// anchor from the read, run a command if there is a bash tool, finish.
func editTurns(withBash bool) []agent.ScriptTurn {
	turns := []agent.ScriptTurn{
		{Text: "I will read the file first.", ToolCalls: []agent.ScriptCall{{Name: "read_file", Input: json.RawMessage(`{"path": "notes.txt"}`)}}},
		{Text: "Now the edit.", ToolCalls: []agent.ScriptCall{{Name: "edit_file", Input: json.RawMessage(
			`{"path": "notes.txt", "ops": [{"op": "replace_line", "tag": "` + strings.ReplaceAll(anchorOfLine2, `\`, `\\`) + `", "new_text": "BETA"}]}`)}}},
	}
	if withBash {
		turns = append(turns, agent.ScriptTurn{ToolCalls: []agent.ScriptCall{{Name: "bash", Input: json.RawMessage(`{"command": "cat notes.txt"}`)}}})
	}
	return append(turns, agent.ScriptTurn{Text: "Done: line 2 is now BETA."})
}

func TestAgentScriptedEndToEnd(t *testing.T) {
	dir := workspace(t)
	withBash := hasTool(t, dir, "bash")
	script := writeScript(t, editTurns(withBash))
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--provider", "scripted", "--script", script, "--json", "Capitalise line 2 of notes.txt")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if string(got) != "alpha\nBETA\ngamma\n" {
		t.Errorf("notes.txt = %q", got)
	}
	events := parseEvents(t, out)
	start := events[0]
	if start.Task != "Capitalise line 2 of notes.txt" || start.Provider != "scripted" || !contains(start.Tools, "read_file") {
		t.Errorf("run_start = %+v", start)
	}
	results := toolResults(events)
	wantTools := []string{"read_file", "edit_file"}
	if withBash {
		wantTools = append(wantTools, "bash")
	} else {
		t.Log("no bash tool in the catalog: the command step is skipped")
	}
	if len(results) != len(wantTools) {
		t.Fatalf("tool results: %+v", results)
	}
	for i, r := range results {
		if r.Tool != wantTools[i] || r.IsError {
			t.Errorf("tool result %d: %s error=%v %q", i, r.Tool, r.IsError, r.Output)
		}
	}
	if !strings.Contains(results[0].Output, "2:") || !strings.Contains(results[0].Output, "|beta") {
		t.Errorf("read_file output %q", results[0].Output)
	}
	if withBash && !strings.Contains(results[2].Output, "BETA") {
		t.Errorf("bash output %q", results[2].Output)
	}
	var text strings.Builder
	steps := 0
	for _, e := range events {
		switch e.Type {
		case agent.EventTextDelta:
			text.WriteString(e.Text)
		case agent.EventStepComplete:
			steps++
			if e.Usage == nil || e.Message == nil || e.Step != steps {
				t.Errorf("step_complete %+v", e)
			}
		}
	}
	if !strings.Contains(text.String(), "I will read the file first.") || !strings.HasSuffix(text.String(), "Done: line 2 is now BETA.") {
		t.Errorf("streamed text %q", text.String())
	}
	last := events[len(events)-1]
	if last.StopReason != agent.StopCompleted || last.Steps != len(wantTools)+1 || last.ToolCalls != len(wantTools) ||
		last.Final != "Done: line 2 is now BETA." || last.Usage == nil || last.Usage.OutputTokens == 0 {
		t.Errorf("run_complete = %+v", last)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestAgentTranscript(t *testing.T) {
	dir := workspace(t)
	script := writeScript(t, editTurns(false))
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--script", script, "--tools", "read_file,edit_*", "fix")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"praxis agent · run ", "· scripted script · 2 tools",
		"I will read the file first.\n  ✓ read_file {\"path\":\"notes.txt\"}",
		"  ✓ edit_file ",
		"Done: line 2 is now BETA.\n— completed after 3 steps, 2 tool calls",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
}

func TestAgentExitStatuses(t *testing.T) {
	dir := workspace(t)
	loop := writeScript(t, []agent.ScriptTurn{
		{ToolCalls: []agent.ScriptCall{{Name: "list_dir"}}},
		{ToolCalls: []agent.ScriptCall{{Name: "list_dir"}}},
		{Text: "done"},
	})
	failing := writeScript(t, []agent.ScriptTurn{{Error: &agent.ScriptError{Kind: agent.ErrUnknownModel, Status: 404, Message: "model: nope"}}})
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		err  string
	}{
		{"completed", nil, []string{"--script", loop, "task"}, exitOK, ""},
		{"max steps", nil, []string{"--script", loop, "--max-steps", "1", "task"}, exitMaxSteps, ""},
		{"provider error", nil, []string{"--script", failing, "task"}, exitToolError, "model: nope"},
		{"no provider", nil, []string{"task"}, exitUsage, "set ANTHROPIC_API_KEY"},
		{"no task", nil, []string{"--script", loop}, exitUsage, "needs a TASK"},
		{"bad tools pattern", nil, []string{"--script", loop, "--tools", "no_such_*", "task"}, exitUsage, `"no_such_*" matches no tool`},
		{"bad mcp config", nil, []string{"--script", loop, "--mcp-config", filepath.Join(dir, "missing.json"), "task"}, exitUsage, "MCP config"},
		{"missing system file", nil, []string{"--script", loop, "--system", filepath.Join(dir, "missing.md"), "task"}, exitUsage, "--system"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runAgentTest(t, tt.env, append([]string{"--workspace", dir}, tt.args...)...)
			if code != tt.code || !strings.Contains(out+errOut, tt.err) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tt.code, tt.err, out, errOut)
			}
		})
	}
}

// fakeModel is a model behind a fake API: it reads the conversation it is
// sent and answers the end-to-end task's next turn, taking the anchor for
// the edit from the read_file result it received, as a model would.
type fakeModel struct {
	t        *testing.T
	mu       sync.Mutex
	requests []map[string]any
}

var line2Anchor = regexp.MustCompile(`(2:[0-9a-f]+)\|beta`)

// next returns the text and tool call of the turn after the conversation
// body holds.
func (f *fakeModel) next(body []byte) (text, tool, input string) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("request is not JSON: %v", err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	n := len(f.requests)
	f.mu.Unlock()
	switch n {
	case 1:
		return "I will read the file first.", "read_file", `{"path": "notes.txt"}`
	case 2:
		m := line2Anchor.FindStringSubmatch(string(body))
		if m == nil {
			f.t.Errorf("the second request holds no read_file result with line 2: %s", body)
			return "", "", ""
		}
		return "Now the edit.", "edit_file", `{"path": "notes.txt", "ops": [{"op": "replace_line", "tag": "` + m[1] + `", "new_text": "BETA"}]}`
	default:
		return "Done: line 2 is now BETA.", "", ""
	}
}

// chunks splits s in pieces of at most n bytes, to stream it.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

// anthropicHandler speaks the Messages API's streaming format.
func (f *fakeModel) anthropicHandler(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "test-key" || r.Header.Get("anthropic-version") == "" {
		w.WriteHeader(401)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	text, tool, input := f.next(body)
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_x", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test",
		"usage": map[string]any{"input_tokens": len(body) / 4, "output_tokens": 1}}})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	for _, c := range chunks(text, 7) {
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": c}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	stop := "end_turn"
	if tool != "" {
		stop = "tool_use"
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", len(f.requests)), "name": tool, "input": map[string]any{}}})
		for _, c := range chunks(input, 10) {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 20}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// openaiHandler speaks the chat completions streaming format.
func (f *fakeModel) openaiHandler(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	text, tool, input := f.next(body)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "chatcmpl-x", "object": "chat.completion.chunk", "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, c := range chunks(text, 7) {
		chunk(map[string]any{"content": c}, nil)
	}
	finish := "stop"
	if tool != "" {
		finish = "tool_calls"
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", len(f.requests)), "type": "function",
			"function": map[string]any{"name": tool, "arguments": ""}}}}, nil)
		for _, c := range chunks(input, 10) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": c}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	sse(w, "", map[string]any{"id": "chatcmpl-x", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": len(body) / 4, "completion_tokens": 20, "total_tokens": len(body)/4 + 20}})
	io.WriteString(w, "data: [DONE]\n\n")
}

func TestAgentRealProvidersEndToEnd(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			dir := workspace(t)
			f := &fakeModel{t: t}
			handler, env := f.anthropicHandler, map[string]string{"ANTHROPIC_API_KEY": "test-key"}
			if provider == "openai" {
				handler, env = f.openaiHandler, map[string]string{"OPENAI_API_KEY": "test-key"}
			}
			srv := httptest.NewServer(http.HandlerFunc(handler))
			defer srv.Close()
			base := srv.URL
			if provider == "openai" {
				base += "/v1"
			}
			code, out, errOut := runAgentTest(t, env, "--workspace", dir, "--base-url", base, "--model", "test-model", "--json", "Capitalise line 2 of notes.txt")
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "alpha\nBETA\ngamma\n" {
				t.Errorf("notes.txt = %q", got)
			}
			events := parseEvents(t, out)
			if events[0].Provider != provider || events[0].Model != "test-model" {
				t.Errorf("run_start %+v", events[0])
			}
			results := toolResults(events)
			if len(results) != 2 || results[0].Tool != "read_file" || results[1].Tool != "edit_file" || results[0].IsError || results[1].IsError {
				t.Errorf("tool results %+v", results)
			}
			var deltas int
			for _, e := range events {
				if e.Type == agent.EventTextDelta {
					deltas++
				}
			}
			last := events[len(events)-1]
			if deltas < 6 || last.StopReason != agent.StopCompleted || last.Final != "Done: line 2 is now BETA." || last.Usage.OutputTokens != 60 {
				t.Errorf("%d text deltas, run_complete %+v", deltas, last)
			}
			// The model was sent the tools and the system prompt.
			req := f.requests[0]
			if provider == "anthropic" && (req["system"] == nil || !strings.Contains(fmt.Sprint(req["tools"]), "edit_file")) {
				t.Errorf("first request: %v", req)
			}
			if provider == "openai" && !strings.Contains(fmt.Sprint(req["messages"]), "system") {
				t.Errorf("first request: %v", req)
			}
		})
	}
}

func TestAgentBadKey(t *testing.T) {
	f := &fakeModel{t: t}
	srv := httptest.NewServer(http.HandlerFunc(f.anthropicHandler))
	defer srv.Close()
	code, out, errOut := runAgentTest(t, map[string]string{"ANTHROPIC_API_KEY": "wrong", "ANTHROPIC_BASE_URL": srv.URL}, "--workspace", workspace(t), "task")
	if code != exitToolError || !strings.Contains(out, "authentication_error: invalid x-api-key (check the API key)") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestAgentWithNPMServers runs the agent with two external MCP servers
// from npm, calling one of their tools and one of Praxis's in one run.
func TestAgentWithNPMServers(t *testing.T) {
	memBin := npmservers.Bin(t, npmservers.Memory)
	evBin := npmservers.Bin(t, npmservers.Everything)
	dir := workspace(t)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"memory":     map[string]any{"command": memBin, "env": map[string]any{"MEMORY_FILE_PATH": "${PRAXIS_TEST_MEMORY_FILE}"}},
		"everything": map[string]any{"command": evBin, "tools_allow": []string{"echo"}},
		"broken":     map[string]any{"command": "praxis-no-such-mcp-server"},
	}})
	cfgFile := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PRAXIS_TEST_MEMORY_FILE", memFile)
	script := writeScript(t, []agent.ScriptTurn{
		{ToolCalls: []agent.ScriptCall{
			{Name: "read_file", Input: json.RawMessage(`{"path": "notes.txt"}`)},
			{Name: "mcp__memory__create_entities", Input: json.RawMessage(`{"entities": [{"name": "notes.txt", "entityType": "file", "observations": ["has three lines"]}]}`)},
			{Name: "mcp__everything__echo", Input: json.RawMessage(`{"message": "hello from praxis"}`)},
		}},
		{Text: "Recorded."},
	})
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--script", script, "--mcp-config", cfgFile, "--json", "remember the file")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	events := parseEvents(t, out)
	results := toolResults(events)
	if len(results) != 3 {
		t.Fatalf("results %+v", results)
	}
	for _, r := range results {
		if r.IsError {
			t.Errorf("%s failed: %s", r.Tool, r.Output)
		}
	}
	if !strings.Contains(results[2].Output, "hello from praxis") {
		t.Errorf("echo: %q", results[2].Output)
	}
	if b, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(b), "has three lines") {
		t.Errorf("memory file %q, %v", b, err)
	}
	if !contains(events[0].Tools, "mcp__memory__read_graph") || contains(events[0].Tools, "mcp__everything__get-sum") {
		t.Errorf("tools offered: %v", events[0].Tools)
	}
	if !strings.Contains(errOut, "praxis-no-such-mcp-server") {
		t.Errorf("the broken server is not reported on stderr:\n%s", errOut)
	}
}

func TestMCPList(t *testing.T) {
	dir := t.TempDir()
	servers := map[string]any{
		"broken": map[string]any{"command": "praxis-no-such-mcp-server"},
		"off":    map[string]any{"command": "x", "enabled": false},
		"input":  map[string]any{"command": "x", "env": map[string]any{"KEY": "${input:key}"}},
	}
	if os.Getenv("PRAXIS_NPM_MCP_DIR") != "" || os.Getenv("PRAXIS_REQUIRE_NPM_SERVERS") == "1" {
		servers["memory"] = map[string]any{"command": npmservers.Bin(t, npmservers.Memory),
			"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")}, "tools_deny": []string{"delete_*"}}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfgFile := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"mcp", "list", "--config", cfgFile}, stdio{strings.NewReader(""), &out, &errb})
	if code != exitToolError {
		t.Errorf("exit %d with a broken server, want %d", code, exitToolError)
	}
	wants := []string{"broken  failed  stdio", "executable file not found", "off  disabled  stdio", "input  invalid", "${input:key} asks the user"}
	if servers["memory"] != nil {
		wants = append(wants, "memory  connected  stdio", "mcp__memory__read_graph", "skipped: excluded by tools_allow / tools_deny")
	}
	for _, want := range wants {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out.String(), errb.String())
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"mcp", "list", "--config", filepath.Join(dir, "none.json")}, stdio{strings.NewReader(""), &out, &errb}); code != exitUsage {
		t.Errorf("missing config: exit %d", code)
	}
}

// TestAgentInterrupted cancels a run while the model is answering, as
// Ctrl-C does: the HTTP request is abandoned and the run ends at once with
// the stop reason cancelled and exit status 130.
func TestAgentInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "", map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "Thinking"}}}})
		cancel() // the user presses Ctrl-C mid-stream
		<-r.Context().Done()
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	code := runAgentEnv(ctx, []string{"--workspace", workspace(t), "--json", "task"}, stdio{strings.NewReader(""), &out, &errb},
		func(k string) string { return map[string]string{"OPENAI_BASE_URL": srv.URL}[k] })
	if code != exitCancelled {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitCancelled, out.String(), errb.String())
	}
	events := parseEvents(t, out.String())
	if last := events[len(events)-1]; last.StopReason != agent.StopCancelled {
		t.Errorf("run_complete %+v", last)
	}
}

func TestAgentSystemPromptFlags(t *testing.T) {
	dir := workspace(t)
	extra := filepath.Join(t.TempDir(), "extra.md")
	if err := os.WriteFile(extra, []byte("Always answer in French."), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		args          []string
		want, notWant []string
	}{
		{"default", nil, []string{"workspace, " + dir, "LINE:TAG"}, []string{"French"}},
		{"appended", []string{"--system-append", extra}, []string{"LINE:TAG", "\n\nAlways answer in French."}, nil},
		{"replaced", []string{"--system", extra}, []string{"Always answer in French."}, []string{"LINE:TAG"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeModel{t: t}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f.mu.Lock()
				f.requests = append(f.requests, nil) // answer "done" at once
				f.requests = append(f.requests, nil)
				f.mu.Unlock()
				f.anthropicHandler(w, r)
			}))
			defer srv.Close()
			args := append([]string{"--workspace", dir, "--json"}, tt.args...)
			code, out, errOut := runAgentTest(t, map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}, append(args, "task")...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			// The system prompt goes as one text block with a cache breakpoint.
			blocks, _ := f.requests[len(f.requests)-1]["system"].([]any)
			var system string
			if len(blocks) == 1 {
				b, _ := blocks[0].(map[string]any)
				system, _ = b["text"].(string)
			}
			for _, w := range tt.want {
				if !strings.Contains(system, w) {
					t.Errorf("system prompt lacks %q:\n%s", w, system)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(system, w) {
					t.Errorf("system prompt has %q:\n%s", w, system)
				}
			}
		})
	}
}
