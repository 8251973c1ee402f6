package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/checkpoint"
	"github.com/praxis-tools/praxis/internal/gittest"
	"github.com/praxis-tools/praxis/praxis"
)

// TestGitCheckpointsAndFork runs sessions with checkpoints in a real
// repository: a step that writes a file is a commit on the session's
// branch, journaled; a fork at an event before it starts its branch from
// the commit before that step.
func TestGitCheckpointsAndFork(t *testing.T) {
	repo := gittest.New(t, map[string]string{"a.txt": "a\n"})
	ws, git := repo.Dir, repo.Git
	base := git("rev-parse", "HEAD")

	write := praxis.Tool{
		Name: "write_file", Description: "writes", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, in json.RawMessage) (praxis.Result, error) {
			var a struct{ Path, Content string }
			_ = json.Unmarshal(in, &a)
			return praxis.Result{Text: "ok"}, os.WriteFile(filepath.Join(ws, a.Path), []byte(a.Content), 0o644)
		},
	}
	cat, err := praxis.NewCatalog(write, readFile())
	if err != nil {
		t.Fatal(err)
	}
	turns := []agent.ScriptTurn{
		{Text: "Reading.", ToolCalls: []agent.ScriptCall{{Name: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Text: "Writing b.", ToolCalls: []agent.ScriptCall{{Name: "write_file", Input: json.RawMessage(`{"path":"b.txt","content":"b\n"}`)}}},
		{Text: "Done."},
		{Text: "Fork done."},
	}
	_, srv := newTestService(t, filepath.Join(ws, ".praxis", "sessions"), turns, func(o *Options) {
		o.Git, o.Workspace = checkpoint.Clean, ws
		o.Setup = func(SessionOptions) (agent.Config, *agent.Harness, error) {
			return agent.Config{Provider: &agent.Scripted{Turns: turns}, Model: "script", Tools: cat}, &agent.Harness{}, nil
		}
	})
	id := create(t, srv, `{"task":"write b"}`)
	evs := nativeUntil(t, events(t, srv, id, "").Body, agent.EventRunComplete, 1)
	var cp agent.Event
	var readDone int64
	for _, ev := range evs {
		switch {
		case ev.Type == agent.EventCheckpoint:
			cp = ev
		case ev.Type == agent.EventStepComplete && ev.Step == 1:
			readDone = ev.Seq
		}
	}
	if cp.Commit == "" || cp.Step != 2 || cp.Text != "Writing b." {
		t.Fatalf("checkpoint event %+v", cp)
	}
	if tip := git("rev-parse", "praxis/"+id); tip != cp.Commit {
		t.Errorf("branch tip %s, checkpoint %s", tip, cp.Commit)
	}
	if msg := git("log", "-1", "--format=%B", cp.Commit); !strings.Contains(msg, "Praxis-Session: "+id) || !strings.Contains(msg, "Praxis-Step: 2") {
		t.Errorf("commit message %q", msg)
	}

	// Fork after the read, before the write.
	code, out := do(t, "POST", srv.URL+"/v1/sessions/"+id+"/fork", fmt.Sprintf(`{"event":%d}`, readDone))
	var f struct{ ID string }
	if err := json.Unmarshal([]byte(out), &f); code != http.StatusCreated || err != nil {
		t.Fatalf("fork: %d %s", code, out)
	}
	if code, out = do(t, "POST", srv.URL+"/v1/sessions/"+f.ID+"/messages", `{"text":"go on"}`); code != http.StatusAccepted {
		t.Fatalf("message: %d %s", code, out)
	}
	nativeUntil(t, events(t, srv, f.ID, fmt.Sprintf("?after=%d", readDone)).Body, agent.EventRunComplete, 1)
	if cur := git("branch", "--show-current"); cur != "praxis/"+f.ID {
		t.Errorf("the fork runs on %q", cur)
	}
	// The fork's second reply writes b.txt again: one commit on top of
	// the base, not on top of the first session's checkpoint.
	if parent := git("rev-parse", "praxis/"+f.ID+"^"); parent != base {
		t.Errorf("the fork's branch starts at %s, want the base %s", parent, base)
	}
}
