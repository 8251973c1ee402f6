package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/agent"
)

// TestSessionsStats runs two sessions of the real binary with the real
// tools and a gate, then sums their metrics with praxis sessions stats.
func TestSessionsStats(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "a.txt"), "alpha\nbeta\n")
	script := writeFile(t, filepath.Join(t.TempDir(), "s.json"), `{"turns": [
		{"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}]},
		{"tool_calls": [{"name": "edit_file", "input": {"path": "a.txt", "ops": [{"op": "replace_line", "tag": "{{match (?m)^(2:[0-9a-f]+)\\|}}", "new_text": "BETA"}]}}]},
		{"tool_calls": [{"name": "read_file", "input": {"path": "missing.txt"}}]},
		{"tool_calls": [{"name": "write_file", "input": {"path": "c.txt", "content": "one\ntwo\nthree\n"}}]},
		{"text": "done"}]}`)
	for range 2 {
		// Each session starts from the same files.
		writeFile(t, filepath.Join(ws, "a.txt"), "alpha\nbeta\n")
		if err := os.RemoveAll(filepath.Join(ws, "c.txt")); err != nil {
			t.Fatal(err)
		}
		r := runPraxis(t, ws, "", "agent", "--provider", "scripted", "--script", script, "--gate", "true", "--sandbox", "none", "work")
		if r.code != 0 {
			t.Fatalf("agent: exit %d\n%s", r.code, r.stderr)
		}
	}
	r := runPraxis(t, ws, "", "sessions", "stats", "--json")
	if r.code != 0 {
		t.Fatalf("stats: exit %d\n%s", r.code, r.stderr)
	}
	var s agent.Stats
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if s.Sessions != 2 || s.Runs != 2 || s.StopReasons[agent.StopCompleted] != 2 || s.Steps != 10 || s.ToolCalls != 8 {
		t.Errorf("runs: %+v", s)
	}
	if s.RunsPassed != 2 || *s.MeanStepsToFirstPass != 5 || *s.MeanToolCallsToFirstPass != 4 || s.GateAttempts != 2 || *s.GatePassRate != 1 {
		t.Errorf("gates: %+v", s)
	}
	// Each session: a.txt +1 -1, c.txt 3 lines.
	if s.FilesChanged != 4 || s.LinesChanged != 10 || *s.LinesPerFile != 2.5 || s.Edits != 2 || s.EditsInRead != 2 {
		t.Errorf("changes: %+v", s)
	}
	if e := s.Errors["E_NOT_FOUND"]; e == nil || e.Count != 2 || e.Recovered != 0 {
		t.Errorf("errors: %+v", s.Errors)
	}
	text := runPraxis(t, ws, "", "sessions", "stats")
	for _, w := range []string{"sessions              2 (2 runs with metrics)", "2 of 2 attempts passed (100%)", "10 lines in 4 files", "error E_NOT_FOUND"} {
		if !strings.Contains(text.stdout, w) {
			t.Errorf("the table lacks %q:\n%s", w, text.stdout)
		}
	}
}
