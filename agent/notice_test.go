package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/praxis-tools/praxis/praxis"
)

// recorder is a provider that keeps a copy of every request's messages.
type recorder struct {
	Provider
	mu   sync.Mutex
	reqs [][]Message
}

func (r *recorder) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	r.mu.Lock()
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = Message{Role: m.Role, Content: append([]Block(nil), m.Content...)}
	}
	r.reqs = append(r.reqs, msgs)
	r.mu.Unlock()
	return r.Provider.Complete(ctx, req, onText)
}

// newEngineTools returns the tools of a real engine on a workspace holding
// files.
func newEngineTools(t *testing.T, files map[string]string) ([]praxis.Tool, string) {
	t.Helper()
	ws := t.TempDir()
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng.Catalog().Tools(), ws
}

// A file the model read changes on disk by someone else: the next request
// tells the model so, in a notice after the last tool result.
func TestNoticeReachesTheModel(t *testing.T) {
	tools, ws := newEngineTools(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	// outside_edit stands for an editor: it changes a.txt behind the
	// engine's back.
	outside, _ := argTool("outside_edit", false, func(map[string]any) (praxis.Result, error) {
		return praxis.Result{Text: "done"}, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\nTWO\nthree\n"), 0o644)
	})
	cat, err := praxis.NewCatalog(append(tools, outside)...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Provider: &Scripted{Turns: []ScriptTurn{
		turn("", call("read_file", `{"path":"a.txt"}`)),
		turn("", call("outside_edit", `{}`)),
		turn("noted"),
	}}}
	var events []Event
	a, err := New(Config{Provider: rec, Tools: cat, OnEvent: func(ev Event) { events = append(events, ev) }})
	if err != nil {
		t.Fatal(err)
	}
	out := a.Run(context.Background(), "the task")
	if out.StopReason != StopCompleted {
		t.Fatalf("stopped: %s %v", out.StopReason, out.Err)
	}
	checkEventStream(t, events)
	checkFold(t, events, out.Messages)
	if len(rec.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(rec.reqs))
	}
	for i, msgs := range rec.reqs[:2] {
		if strings.Contains(dump(msgs), "notice:") {
			t.Errorf("request %d has a notice before any change:\n%s", i+1, dump(msgs))
		}
	}
	last := rec.reqs[2][len(rec.reqs[2])-1]
	blocks := last.Content
	if last.Role != RoleUser || len(blocks) != 2 || blocks[0].Type != BlockToolResult || blocks[1].Type != BlockText {
		t.Fatalf("the last message of request 3 is %s with %d blocks, want the tool result and a text", last.Role, len(blocks))
	}
	if !strings.HasPrefix(blocks[1].Text, "notice: a.txt changed on disk (") {
		t.Errorf("the text after the tool result is %q, want the notice", blocks[1].Text)
	}
	var seen bool
	for _, ev := range events {
		if ev.Type == EventMessage && ev.Kind == MessageNotice && ev.Text == blocks[1].Text {
			seen = true
		}
	}
	if !seen {
		t.Error("no message event of kind notice reports it")
	}
}

func dump(msgs []Message) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

// patch_file counts like edit_file: files and lines changed, edits, and
// edits within lines read. The results come from a real engine, so a
// change of patch_file's wording fails this test.
func TestRunMetricsCountPatches(t *testing.T) {
	tools, _ := newEngineTools(t, map[string]string{"a.txt": "one\ntwo\nthree\nfour\nfive\n"})
	unified := `--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
`
	envelope := "*** Begin Patch\n*** Add File: b.txt\n+b1\n+b2\n*** End Patch\n"
	patch := func(p string, dry bool) ScriptCall {
		in, _ := json.Marshal(map[string]any{"patch": p, "dry_run": dry})
		return call("patch_file", string(in))
	}
	turns := []ScriptTurn{
		turn("", call("read_file", `{"path":"a.txt","limit":3}`)),
		turn("", patch(unified, true)),
		turn("", patch(unified, false)),
		turn("", patch(envelope, false)),
		turn("done"),
	}
	out, events := runScript(t, context.Background(), Config{}, turns, tools...)
	if out.StopReason != StopCompleted {
		t.Fatalf("stopped: %s %v", out.StopReason, out.Err)
	}
	for _, ev := range events {
		if ev.Type == EventToolResult && ev.IsError {
			t.Fatalf("%s failed: %s", ev.Tool, ev.Output)
		}
	}
	m := lastEvent(events).Metrics
	if m.FilesChanged != 2 || m.LinesChanged != 4 || m.Edits != 2 || m.EditsInRead != 1 {
		t.Errorf("files %d, lines %d, edits %d, in read %d; want 2, 4, 2, 1", m.FilesChanged, m.LinesChanged, m.Edits, m.EditsInRead)
	}
}
