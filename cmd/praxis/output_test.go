package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/agent"
)

// jsonLines parses every line of out as a JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// field describes a documented field of Claude Code's output: its path
// from the line (dot-separated) and its JSON type.
type field struct{ path, kind string }

// checkFields checks that m has each field with its type.
func checkFields(t *testing.T, what string, m map[string]any, fields ...field) {
	t.Helper()
	for _, f := range fields {
		var v any = m
		for p := range strings.SplitSeq(f.path, ".") {
			o, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = o[p]
		}
		kind := "null"
		switch v.(type) {
		case string:
			kind = "string"
		case float64:
			kind = "number"
		case bool:
			kind = "boolean"
		case []any:
			kind = "array"
		case map[string]any:
			kind = "object"
		}
		if kind != f.kind {
			t.Errorf("%s: %s is %s (%v), want %s", what, f.path, kind, v, f.kind)
		}
	}
}

// The documented fields of claude -p --output-format stream-json.
var (
	initFields = []field{{"type", "string"}, {"subtype", "string"}, {"session_id", "string"}, {"cwd", "string"},
		{"model", "string"}, {"tools", "array"}, {"mcp_servers", "array"}, {"permissionMode", "string"}, {"uuid", "string"}}
	messageFields = []field{{"type", "string"}, {"session_id", "string"}, {"uuid", "string"}, {"parent_tool_use_id", "null"},
		{"message", "object"}, {"message.role", "string"}, {"message.content", "array"}}
	assistantFields = []field{{"message.id", "string"}, {"message.model", "string"}, {"message.type", "string"},
		{"message.usage.input_tokens", "number"}, {"message.usage.output_tokens", "number"}}
	resultFields = []field{{"type", "string"}, {"subtype", "string"}, {"is_error", "boolean"}, {"num_turns", "number"},
		{"total_cost_usd", "number"}, {"duration_ms", "number"}, {"result", "string"}, {"session_id", "string"},
		{"usage", "object"}, {"usage.input_tokens", "number"}, {"usage.output_tokens", "number"},
		{"usage.cache_creation_input_tokens", "number"}, {"usage.cache_read_input_tokens", "number"}, {"uuid", "string"}}
)

func TestAgentStreamJSON(t *testing.T) {
	dir := workspace(t)
	script := writeScript(t, editTurns(false))
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--script", script, "--output-format", "stream-json", "fix line 2")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := jsonLines(t, out)
	first, last := lines[0], lines[len(lines)-1]
	checkFields(t, "init", first, initFields...)
	if first["type"] != "system" || first["subtype"] != "init" || first["cwd"] != dir || first["model"] != "script" {
		t.Errorf("init line %v", first)
	}
	session := first["session_id"]
	var kinds []string
	toolUses := map[string]bool{}
	for i, l := range lines[1 : len(lines)-1] {
		kinds = append(kinds, l["type"].(string))
		checkFields(t, l["type"].(string), l, messageFields...)
		if l["session_id"] != session {
			t.Errorf("line %d: session %v, want %v", i+2, l["session_id"], session)
		}
		for _, b := range l["message"].(map[string]any)["content"].([]any) {
			b := b.(map[string]any)
			switch b["type"] {
			case "text":
				checkFields(t, "text block", b, field{"text", "string"})
			case "tool_use":
				checkFields(t, "tool_use block", b, field{"id", "string"}, field{"name", "string"}, field{"input", "object"})
				toolUses[b["id"].(string)] = true
			case "tool_result":
				checkFields(t, "tool_result block", b, field{"tool_use_id", "string"}, field{"content", "string"}, field{"is_error", "boolean"})
				if !toolUses[b["tool_use_id"].(string)] {
					t.Errorf("a tool_result for %v, which no tool_use before it has", b["tool_use_id"])
				}
			default:
				t.Errorf("unexpected block %v", b)
			}
		}
		if l["type"] == "assistant" {
			checkFields(t, "assistant", l, assistantFields...)
		}
	}
	if strings.Join(kinds, ",") != "assistant,user,assistant,user,assistant" {
		t.Errorf("lines %v", kinds)
	}
	checkFields(t, "result", last, resultFields...)
	if last["type"] != "result" || last["subtype"] != "success" || last["is_error"] != false || last["num_turns"] != float64(3) ||
		last["result"] != "Done: line 2 is now BETA." || last["session_id"] != session {
		t.Errorf("result line %v", last)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if !strings.Contains(string(b), "BETA") {
		t.Errorf("the edit did not land: %s", b)
	}
}

func TestAgentOutputFormatJSON(t *testing.T) {
	dir := workspace(t)
	loop := writeScript(t, []agent.ScriptTurn{st("again", sc("list_dir", `{}`)), st("again", sc("list_dir", `{"path":"."}`))})
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--script", loop, "--max-steps", "1", "--output-format", "json", "task")
	if code != exitMaxSteps {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := jsonLines(t, out)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want the result object alone:\n%s", len(lines), out)
	}
	checkFields(t, "result", lines[0], resultFields...)
	checkFields(t, "result", lines[0], field{"errors", "array"})
	if lines[0]["subtype"] != "error_max_turns" || lines[0]["is_error"] != true || lines[0]["num_turns"] != float64(1) {
		t.Errorf("result %v", lines[0])
	}
}

func TestAgentMaxCost(t *testing.T) {
	dir := workspace(t)
	turn := agent.ScriptTurn{ToolCalls: []agent.ScriptCall{sc("list_dir", `{}`)}, Usage: &agent.Usage{InputTokens: 1000000}}
	script := writeScript(t, []agent.ScriptTurn{turn, turn, turn, st("done")})
	config := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, config, "prices:\n  script: {input: 1, output: 5}\n")

	code, _, errOut := runAgentTest(t, nil, "--workspace", dir, "--script", script, "--max-cost", "1.5", "task")
	if code != exitUsage || !strings.Contains(errOut, "no price for the model script") {
		t.Errorf("without a price: exit %d, %s", code, errOut)
	}
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--config", config, "--script", script, "--max-cost", "1.5", "--output-format", "stream-json", "task")
	if code != exitMaxCost {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := jsonLines(t, out)
	last := lines[len(lines)-1]
	if last["subtype"] != "error_max_budget_usd" || last["total_cost_usd"] != float64(2) || last["num_turns"] != float64(2) {
		t.Errorf("result %v", last)
	}
}

func TestAgentOutputFlagErrors(t *testing.T) {
	dir := workspace(t)
	script := writeScript(t, []agent.ScriptTurn{st("done")})
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"--output-format", "yaml"}, `--output-format "yaml": want text, json or stream-json`},
		{[]string{"--json", "--output-format", "stream-json"}, "does not combine"},
		{[]string{"--thinking", "-1"}, "--thinking"},
		{[]string{"--max-cost", "-2"}, "--max-cost -2: must be at least 0"},
		{[]string{"--stream-idle-timeout", "0s"}, "--stream-idle-timeout must be positive"},
	}
	for _, tt := range tests {
		code, _, errOut := runAgentTest(t, nil, append(append([]string{"--workspace", dir, "--script", script}, tt.args...), "task")...)
		if code != exitUsage || !strings.Contains(errOut, tt.says) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, code, errOut, tt.says)
		}
	}
	code, _, errOut := runAgentTest(t, map[string]string{"ANTHROPIC_API_KEY": "k"}, "--workspace", dir, "--thinking", "500", "task")
	if code != exitUsage || !strings.Contains(errOut, "at least 1024") {
		t.Errorf("--thinking 500 with anthropic: exit %d, %q", code, errOut)
	}
}

// TestAgentMaxCostBoundsIterations checks that --max-cost bounds a series
// of --iterations sessions as a whole.
func TestAgentMaxCostBoundsIterations(t *testing.T) {
	dir := workspace(t)
	writeFile(t, filepath.Join(dir, "progress.md"), "# Progress\n")
	dollar := &agent.Usage{InputTokens: 1000000}
	script := writeScript(t, []agent.ScriptTurn{
		{ToolCalls: []agent.ScriptCall{sc("edit_file", `{"path":"progress.md","ops":[{"op":"append","new_text":"- a step"}]}`)}, Usage: dollar},
		{Text: "Not done yet.", Usage: dollar},
	})
	config := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, config, "prices:\n  script: {input: 1, output: 5}\n")
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--config", config, "--script", script, "--json",
		"--iterations", "5", "--progress", "progress.md", "--max-cost", "3", "task")
	if code != exitMaxCost {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	events := decodeEvents(t, out)
	sum := events[len(events)-1]
	if sum.Type != "iterations_summary" || sum.StopReason != agent.StopMaxCost {
		t.Fatalf("summary %+v", sum)
	}
	var sessions, steps int
	for _, e := range events {
		switch e.Type {
		case agent.EventRunStart:
			sessions++
		case agent.EventStepComplete:
			steps++
		}
	}
	if sessions != 2 || steps != 3 || sum.CostUSD == nil || *sum.CostUSD != 3 {
		t.Errorf("%d sessions, %d steps, cost %v; want 2 sessions, 3 steps, $3", sessions, steps, sum.CostUSD)
	}
}
