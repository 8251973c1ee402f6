package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/praxis/hashline"
	"github.com/praxis-tools/praxis/sandbox"
)

// sessionCall runs a tool as a call of s.
func sessionCall(t *testing.T, e *Engine, s *Session, tool string, args any) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Catalog().Call(WithSession(context.Background(), s), tool, raw)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// waitNotices calls list_dir as s until a result carries notices, and
// returns them: the watcher reports a change a moment after it happens.
func waitNotices(t *testing.T, e *Engine, s *Session) Result {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := mustOK(t, sessionCall(t, e, s, "list_dir", map[string]any{}))
		if len(res.Notices) > 0 {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatal("no notice came within 10s of the change")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var noticeLine = regexp.MustCompile(`^notice: \S+ (changed on disk \([0-9a-f]{16} → [0-9a-f]{16}\): .+|was deleted on disk \(was [0-9a-f]{16}\)|was replaced on disk by .+ \(was [0-9a-f]{16}\)|was created on disk \([0-9a-f]{16}\))$`)

// checkNoticeText checks that the result's text ends with one line per
// notice (there are fewer than 20), each the notice's own text in the
// documented format.
func checkNoticeText(t *testing.T, res Result) {
	t.Helper()
	lines := strings.Split(res.Text, "\n")
	tail := lines[len(lines)-len(res.Notices):]
	for i, n := range res.Notices {
		if tail[i] != n.Text {
			t.Errorf("line %d of the result's tail is %q, want the notice %q", i, tail[i], n.Text)
		}
		if !noticeLine.MatchString(n.Text) {
			t.Errorf("notice %q is not in the documented format", n.Text)
		}
	}
}

func TestNoticeOnChangeBySomeoneElse(t *testing.T) {
	const text = "one\ntwo\nthree\nfour\nfive\n"
	tests := []struct {
		name   string
		change func(t *testing.T, dir string) // what someone else does to f.txt
		kind   NoticeKind
		want   *regexp.Regexp // the notice's text
	}{
		{"written in place", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "f.txt"), "one\ntwo\nTHREE\nfour\nfive\n")
		}, NoticeChanged, regexp.MustCompile(`^notice: f\.txt changed on disk \(\w+ → \w+\): lines 3 changed$`)},
		{"renamed over", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "tmp"), "zero\n"+text)
			if err := os.Rename(filepath.Join(dir, "tmp"), filepath.Join(dir, "f.txt")); err != nil {
				t.Fatal(err)
			}
		}, NoticeChanged, regexp.MustCompile(`^notice: f\.txt changed on disk \(\w+ → \w+\): lines 1 changed$`)},
		{"deleted", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
				t.Fatal(err)
			}
		}, NoticeDeleted, regexp.MustCompile(`^notice: f\.txt was deleted on disk \(was \w+\)$`)},
		{"replaced by a directory", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "f.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, NoticeReplaced, regexp.MustCompile(`^notice: f\.txt was replaced on disk by a directory \(was \w+\)$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, dir := newTestEngine(t, map[string]string{"f.txt": text})
			s := NewSession("a")
			defer s.Close()
			read := mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "f.txt"}))
			if len(read.Notices) != 0 {
				t.Fatalf("the first read carries notices: %v", read.Notices)
			}
			tt.change(t, dir)

			res := waitNotices(t, e, s)
			if len(res.Notices) != 1 {
				t.Fatalf("got %d notices, want 1: %v", len(res.Notices), res.Notices)
			}
			n := res.Notices[0]
			if n.Kind != tt.kind || n.Path != "f.txt" || n.OldVersion != hashline.Version([]byte(text)) {
				t.Errorf("notice %+v: want kind %s for f.txt from the version read", n, tt.kind)
			}
			if !tt.want.MatchString(n.Text) {
				t.Errorf("notice text %q does not match %s", n.Text, tt.want)
			}
			checkNoticeText(t, res)

			// One notice per change: the next calls carry none.
			if again := s.Notices(); len(again) != 0 {
				t.Errorf("the change was noticed again: %v", again)
			}
			if res := mustOK(t, sessionCall(t, e, s, "list_dir", map[string]any{})); len(res.Notices) != 0 {
				t.Errorf("the change was noticed again: %v", res.Notices)
			}
		})
	}
}

// A read of the file itself finds the change, watcher or not.
func TestNoticeOnReadingTheChangedFile(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "a\nb\n"})
	s := NewSession("a")
	defer s.Close()
	mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "f.txt"}))
	writeTestFile(t, filepath.Join(dir, "f.txt"), "a\nB\n")
	res := mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "f.txt"}))
	if len(res.Notices) != 1 || res.Notices[0].NewVersion != hashline.Version([]byte("a\nB\n")) || fmt.Sprint(res.Notices[0].Changed) != "[[2 2]]" {
		t.Fatalf("notices %v, want one for the new version, line 2 changed", res.Notices)
	}
	checkNoticeText(t, res)
}

// A write by another session of the same engine is someone else's; the
// session's own writes are not.
func TestNoticeOfAnotherSessionsEdit(t *testing.T) {
	const text = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"
	e, _ := newTestEngine(t, map[string]string{"f.txt": text})
	a, b := NewSession("a"), NewSession("b")
	defer a.Close()
	defer b.Close()
	mustOK(t, sessionCall(t, e, a, "read_file", map[string]any{"path": "f.txt"}))
	mustOK(t, sessionCall(t, e, b, "read_file", map[string]any{"path": "f.txt"}))
	anc := anchors(t, e, "f.txt")

	edited := mustOK(t, sessionCall(t, e, b, "edit_file", edit("f.txt",
		op("replace_line", "tag", anc[1], "new_text", "L2"),
		op("insert_after", "tag", anc[5], "new_text", "l6a\nl6b"),
		op("delete_line", "tag", anc[7]))))
	if len(edited.Notices) != 0 {
		t.Errorf("b's own edit carries notices: %v", edited.Notices)
	}
	if ns := b.Notices(); len(ns) != 0 {
		t.Errorf("b is told of its own edit: %v", ns)
	}

	res := waitNotices(t, e, a)
	n := res.Notices[0]
	want := "notice: f.txt changed on disk (" + hashline.Version([]byte(text)) + " → " +
		hashline.Version([]byte("l1\nL2\nl3\nl4\nl5\nl6\nl6a\nl6b\nl7\n")) + "): lines 2, 7-8 changed; lines removed after line 9"
	if n.Text != want {
		t.Errorf("notice\n%s\nwant\n%s", n.Text, want)
	}
	if fmt.Sprint(n.Changed, n.RemovedAfter) != "[[2 2] [7 8]] [9]" {
		t.Errorf("ranges %v, removed after %v", n.Changed, n.RemovedAfter)
	}

	// a's own write after that: no notice, now or later.
	anc = anchors(t, e, "f.txt")
	mustOK(t, sessionCall(t, e, a, "read_file", map[string]any{"path": "f.txt"}))
	if res := mustOK(t, sessionCall(t, e, a, "edit_file", edit("f.txt", op("replace_line", "tag", anc[0], "new_text", "L1")))); len(res.Notices) != 0 {
		t.Errorf("a's own edit carries notices: %v", res.Notices)
	}
	if res := mustOK(t, sessionCall(t, e, a, "write_file", map[string]any{"path": "f.txt", "content": "whole\n"})); len(res.Notices) != 0 {
		t.Errorf("a's own write carries notices: %v", res.Notices)
	}
	if ns := a.Notices(); len(ns) != 0 {
		t.Errorf("a is told of its own writes: %v", ns)
	}
	// b, which read the file, is told of a's writes, once, from the
	// version b last knew.
	ns := b.Notices()
	if len(ns) != 1 || ns[0].NewVersion != hashline.Version([]byte("whole\n")) {
		t.Errorf("b's notices %v, want one ending at a's last write", ns)
	}
}

// A change on disk before the session's own edit is told with the edit's
// result.
func TestNoticeWithOwnEditAfterOutsideChange(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "a\nb\nc\nd\n"})
	s := NewSession("a")
	defer s.Close()
	mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "f.txt"}))
	anc := anchors(t, e, "f.txt")
	writeTestFile(t, filepath.Join(dir, "f.txt"), "a\nb\nc\nD\n")
	res := mustOK(t, sessionCall(t, e, s, "edit_file", edit("f.txt", op("replace_line", "tag", anc[0], "new_text", "A"))))
	if len(res.Notices) != 1 || res.Notices[0].NewVersion != hashline.Version([]byte("a\nb\nc\nD\n")) {
		t.Fatalf("notices %v, want the outside change", res.Notices)
	}
	checkNoticeText(t, res)
	if ns := s.Notices(); len(ns) != 0 {
		t.Errorf("told again: %v", ns)
	}
}

// A change undone before the session's next call, or one that keeps the
// same bytes, is no change.
func TestNoNoticeWithoutChange(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "a\n"})
	s := NewSession("a")
	defer s.Close()
	mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "f.txt"}))
	writeTestFile(t, filepath.Join(dir, "f.txt"), "b\n")
	writeTestFile(t, filepath.Join(dir, "f.txt"), "a\n")
	if ns := s.Notices(); len(ns) != 0 {
		t.Errorf("notices %v for a file back as it was", ns)
	}
}

// A call without a session carries no notice, and a closed session is
// forgotten.
func TestNoticesNeedASession(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "a\n"})
	s := NewSession("a")
	mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "f.txt"}))
	mustOK(t, call(t, e, "read_file", map[string]any{"path": "f.txt"}))
	writeTestFile(t, filepath.Join(dir, "f.txt"), "b\n")
	if res := mustOK(t, call(t, e, "read_file", map[string]any{"path": "f.txt"})); len(res.Notices) != 0 {
		t.Errorf("a call without a session carries notices: %v", res.Notices)
	}
	s.Close()
	if ns := s.Notices(); len(ns) != 0 {
		t.Errorf("a closed session has notices: %v", ns)
	}
	e.board.mu.Lock()
	views, names := len(e.board.views), len(e.board.names)
	e.board.mu.Unlock()
	if views != 0 || names != 0 {
		t.Errorf("after the session's end the board keeps %d views and watches %d names", views, names)
	}
}

// A file read through a symlink is told of when its target changes.
func TestNoticeThroughSymlink(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"real/f.txt": "a\n"})
	if err := os.Symlink("real/f.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	s := NewSession("a")
	defer s.Close()
	mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": "link.txt"}))
	writeTestFile(t, filepath.Join(dir, "real/f.txt"), "b\n")
	res := waitNotices(t, e, s)
	if res.Notices[0].Path != "link.txt" {
		t.Errorf("notice %+v, want one for link.txt", res.Notices[0])
	}
}

// The files a session is told about are bounded: the one used least
// recently is forgotten.
func TestNoticeFilesAreBounded(t *testing.T) {
	files := map[string]string{}
	for i := range maxSessionFiles + 1 {
		files[fmt.Sprintf("d%d/f%d.txt", i%4, i)] = "x\n"
	}
	e, dir := newTestEngine(t, files)
	s := NewSession("a")
	defer s.Close()
	for i := range maxSessionFiles + 1 {
		mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": fmt.Sprintf("d%d/f%d.txt", i%4, i)}))
	}
	writeTestFile(t, filepath.Join(dir, "d0/f0.txt"), "changed\n")
	writeTestFile(t, filepath.Join(dir, "d1/f1.txt"), "changed\n")
	ns := s.Notices()
	if len(ns) != 1 || ns[0].Path != "d1/f1.txt" {
		t.Errorf("notices %v, want one for d1/f1.txt only (d0/f0.txt was forgotten)", ns)
	}
}

func TestChangedRanges(t *testing.T) {
	tests := []struct {
		old, new string
		want     string
	}{
		{"a\nb\nc\n", "a\nB\nc\n", "lines 2 changed"},
		{"a\nb\nc\n", "a\nb\nc\nd\ne\n", "lines 4-5 changed"},
		{"a\nb\nc\n", "a\nc\n", "lines removed after line 1"},
		{"a\nb\nc\n", "b\nc\n", "lines removed after line 0"},
		{"a\nb\nc\nd\n", "a\nX\nd\n", "lines 2 changed; lines removed after line 2"},
		{"a\nb\nc\n", "a\nX\nY\nZ\nc\n", "lines 2-4 changed"},
		{"a\nb\nc\n", "x\na\nb\nc\n", "lines 1 changed"},
		{"a\nb\n", "a\r\nb\r\n", "lines 1-2 changed"},
		{"a\nb", "a\nb\n", "lines 2 changed"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\nx\n3\n4\nx\n6\n8\n9\nx\n", "lines 2, 5, 9 changed; lines removed after line 6"},
		{strings.Repeat("a\nb\n", 10), strings.Repeat("a\nB\n", 10), "lines 2, 4, 6, 8, 10, 12, 14, 16 and 2 more changed"},
	}
	for _, tt := range tests {
		c, r := changedRanges([]byte(tt.old), []byte(tt.new))
		if got := describeRanges(c, r); got != tt.want {
			t.Errorf("%q → %q: %q, want %q", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestSubscribe(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "a\n", "g.txt": "a\n", "sub/h.txt": "x\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeTestFile(t, outside, "secret\n")
	if err := os.Symlink(outside, filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, "escdir")); err != nil {
		t.Fatal(err)
	}
	s := NewSession("a")
	defer s.Close()
	updates := make(chan string, 16)
	subscribe := func(p string) (string, error) {
		return e.Subscribe(s, p, func() { updates <- p })
	}
	for _, bad := range []struct {
		path string
		code Code
	}{
		{"../outside.txt", EPathOutside},
		{filepath.Join(filepath.Dir(dir), "x.txt"), EPathOutside},
		{"sub", EIsDir},
		{"missing.txt", ENotFound},
		{"fifo", ENotRegular},
		{"escape.txt", EPathOutside},
		{"escdir/secret.txt", EPathOutside},
	} {
		if _, err := subscribe(bad.path); CodeOf(err) != bad.code {
			t.Errorf("Subscribe(%s): %v, want %s", bad.path, err, bad.code)
		}
		if _, _, err := e.ReadRaw(context.Background(), bad.path); CodeOf(err) != bad.code {
			t.Errorf("ReadRaw(%s): %v, want %s", bad.path, err, bad.code)
		}
	}
	abs, err := subscribe("f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if abs != filepath.Join(e.Workspace().Dir(), "f.txt") {
		t.Errorf("Subscribe returned %s", abs)
	}
	writeTestFile(t, filepath.Join(dir, "f.txt"), "b\n")
	if got := waitUpdate(t, updates); got != "f.txt" {
		t.Errorf("update for %s, want f.txt", got)
	}

	// After Unsubscribe, f.txt's changes are not sent; g.txt's, changed
	// after f.txt's, are.
	if err := e.Unsubscribe(s, "f.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := subscribe("g.txt"); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "f.txt"), "c\n")
	writeTestFile(t, filepath.Join(dir, "g.txt"), "c\n")
	if got := waitUpdate(t, updates); got != "g.txt" {
		t.Errorf("update for %s, want g.txt", got)
	}

	// Deletion is a change; the session's end stops the rest.
	if err := os.Remove(filepath.Join(dir, "g.txt")); err != nil {
		t.Fatal(err)
	}
	if got := waitUpdate(t, updates); got != "g.txt" {
		t.Errorf("update for %s, want g.txt", got)
	}
	s.Close()
	if _, err := subscribe("f.txt"); CodeOf(err) != EUnavailable {
		t.Errorf("subscribing with a closed session: %v", err)
	}
}

func waitUpdate(t *testing.T, updates chan string) string {
	t.Helper()
	select {
	case p := <-updates:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10s of the change")
		return ""
	}
}

// Each kind of notice, as the model reads it.
func TestNoticeText(t *testing.T) {
	v1, v2 := hashline.Version([]byte("a\n")), hashline.Version([]byte("b\n"))
	file := func(v string) fileState { return fileState{kind: stateFile, version: v} }
	tests := []struct {
		old, now         fileState
		oldText, newText string
		known            bool
		want             string
	}{
		{file(v1), file(v2), "a\n", "b\n", true, "notice: p/f.go changed on disk (" + v1 + " → " + v2 + "): lines 1 changed"},
		{file(v1), file(v2), "", "b\n", false, "notice: p/f.go changed on disk (" + v1 + " → " + v2 + "): changed lines unknown (the old text is no longer kept)"},
		{file(v1), fileState{kind: stateAbsent}, "", "", false, "notice: p/f.go was deleted on disk (was " + v1 + ")"},
		{file(v1), fileState{kind: stateOther, why: "a directory"}, "", "", false, "notice: p/f.go was replaced on disk by a directory (was " + v1 + ")"},
		{fileState{kind: stateAbsent}, file(v2), "", "b\n", false, "notice: p/f.go was created on disk (" + v2 + ")"},
		{file(v1), fileState{kind: stateUnreadable, why: "E_IO: p/f.go: permission denied"}, "", "", false, "notice: p/f.go changed on disk (was " + v1 + ") and cannot be read now: E_IO: p/f.go: permission denied"},
	}
	for _, tt := range tests {
		var oldText []byte
		if tt.known {
			oldText = []byte(tt.oldText)
		}
		n := newNotice("p/f.go", tt.old, tt.now, oldText, []byte(tt.newText))
		if n.Text != tt.want {
			t.Errorf("notice\n%s\nwant\n%s", n.Text, tt.want)
		}
		if n.OldUnknown != (tt.now.kind == stateFile && tt.old.kind == stateFile && !tt.known) {
			t.Errorf("%s: OldUnknown %v", n.Text, n.OldUnknown)
		}
	}
}

// BenchmarkReadFile2KiBSession is BenchmarkReadFile2KiB as a call of a
// session that was shown 100 other files: what keeping the notices costs
// a call.
func BenchmarkReadFile2KiBSession(b *testing.B) {
	e, dir := benchEngine(b, true)
	sourceFile(b, dir, "f.go", 2<<10)
	s := NewSession("bench")
	defer s.Close()
	ctx := WithSession(context.Background(), s)
	for i := range 100 {
		name := fmt.Sprintf("d%d/f%d.go", i%10, i)
		os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%d", i%10)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if res, _ := e.Catalog().Call(ctx, "read_file", json.RawMessage(fmt.Sprintf(`{"path":%q}`, name))); res.IsError {
			b.Fatal(res.Text)
		}
	}
	args := json.RawMessage(`{"path":"f.go","limit":1000000}`)
	b.SetBytes(2 << 10)
	for b.Loop() {
		res, err := e.Catalog().Call(ctx, "read_file", args)
		if err != nil || res.IsError || len(res.Notices) > 0 {
			b.Fatal(err, res.Text)
		}
	}
}

// A change of many files (a branch switch) is told in at most 21 lines;
// the structured notices hold them all.
func TestNoticeLinesAreBounded(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = "a\n"
	}
	e, _ := newTestEngine(t, files, withShell(func(p *sandbox.Policy) { p.Isolation = sandbox.IsolationNone }))
	s := NewSession("a")
	defer s.Close()
	for name := range files {
		mustOK(t, sessionCall(t, e, s, "read_file", map[string]any{"path": name}))
	}
	res := mustOK(t, sessionCall(t, e, s, "bash", map[string]any{"command": "for f in f*.txt; do echo b > $f; done"}))
	if len(res.Notices) != 30 {
		t.Fatalf("%d notices, want 30", len(res.Notices))
	}
	lines := strings.Split(res.Text, "\n")
	var notices []string
	for _, l := range lines {
		if strings.HasPrefix(l, "notice: ") {
			notices = append(notices, l)
		}
	}
	if len(notices) != 21 || !regexp.MustCompile(`^notice: 10 more files changed on disk: f\d\d\.txt(, f\d\d\.txt){7} and 2 more$`).MatchString(notices[20]) {
		t.Errorf("notice lines:\n%s", strings.Join(notices, "\n"))
	}
}
