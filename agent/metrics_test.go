package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis"
)

// TestRunMetrics runs a session whose every metric is known: a read, an
// edit within the lines read, one outside them that fails and is retried,
// a file written, a gate that fails once and then passes.
func TestRunMetrics(t *testing.T) {
	ws := t.TempDir()
	read, _ := argTool("read_file", true, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: "# a.go version=v1 lines=1-10 of 20 eol=lf\n1:aaaa|package a\n"}, nil
	})
	failed := false
	edit, _ := argTool("edit_file", false, func(args map[string]any) (praxis.Result, error) {
		ops, _ := args["ops"].([]any)
		tag := ops[0].(map[string]any)["tag"].(string)
		if strings.HasPrefix(tag, "15:") && !failed {
			failed = true
			return praxis.ErrorResult(praxis.Errorf(praxis.EInvalidArgs, "bad anchor")), nil
		}
		n := "1"
		if strings.HasPrefix(tag, "15:") {
			n = "2"
		}
		return praxis.Result{Text: "edited a.go: version v1 -> v2, +" + n + " -1 lines, 20 lines now\n"}, nil
	})
	write, _ := argTool("write_file", false, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: "created b.txt: version v9, 4 lines, 20 bytes"}, nil
	})
	flag, _ := argTool("flag", false, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: "ok"}, os.WriteFile(filepath.Join(ws, "passed"), nil, 0o644)
	})
	h := &Harness{Workspace: ws, Gates: []string{"true", "test -e passed"}}
	turns := []ScriptTurn{
		turn("", call("read_file", `{"path":"a.go"}`)),
		turn("", call("edit_file", `{"path":"a.go","ops":[{"op":"replace_line","tag":"3:ab","new_text":"x"}]}`)),
		turn("", call("edit_file", `{"path":"a.go","ops":[{"op":"replace_line","tag":"15:cd","new_text":"y"}]}`)),
		turn("", call("edit_file", `{"path":"a.go","ops":[{"op":"replace_line","tag":"15:cd","new_text":"y"}]}`)),
		turn("", call("write_file", `{"path":"b.txt","content":"..."}`)),
		turn("done"),
		turn("", call("flag", `{}`)),
		turn("done now"),
	}
	out, events := hrun(t, context.Background(), Config{}, h, turns, read, edit, write, flag)
	if out.StopReason != StopCompleted || out.Steps != 8 {
		t.Fatalf("outcome %s after %d steps: %v", out.StopReason, out.Steps, out.Err)
	}
	m := lastEvent(events).Metrics
	if m == nil {
		t.Fatal("run_complete has no metrics")
	}
	if m.StepsToFirstPass == nil || *m.StepsToFirstPass != 8 || *m.ToolCallsToFirstPass != 6 {
		t.Errorf("to the first pass: steps %v, tool calls %v", m.StepsToFirstPass, m.ToolCallsToFirstPass)
	}
	if m.GateAttempts != 2 || m.GatePasses != 1 || *m.GatePassRate != 0.5 {
		t.Errorf("gates: %d attempts, %d passes, rate %v", m.GateAttempts, m.GatePasses, m.GatePassRate)
	}
	if m.FilesChanged != 2 || m.LinesChanged != 2+3+4 || *m.LinesPerFile != 4.5 {
		t.Errorf("changes: %d files, %d lines, %v per file", m.FilesChanged, m.LinesChanged, m.LinesPerFile)
	}
	if m.Edits != 2 || m.EditsInRead != 1 || *m.EditsInReadShare != 0.5 {
		t.Errorf("edits: %d, %d in read lines", m.Edits, m.EditsInRead)
	}
	if e := m.Errors["E_INVALID_ARGS"]; e == nil || e.Count != 1 || e.Recovered != 1 || len(m.Errors) != 1 {
		t.Errorf("errors %+v", m.Errors)
	}
	var toolMS int64
	for _, ev := range ofType(events, EventToolResult) {
		toolMS += ev.DurationMS
	}
	if m.ToolMS != toolMS || m.ModelMS < 0 {
		t.Errorf("time: model %d ms, tools %d ms (the results say %d)", m.ModelMS, m.ToolMS, toolMS)
	}
}
