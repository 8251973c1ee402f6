package praxis

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

func op(kind string, kv ...string) map[string]any {
	m := map[string]any{"op": kind}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func edit(path string, ops ...map[string]any) map[string]any {
	return map[string]any{"path": path, "ops": ops}
}

func TestEditOps(t *testing.T) {
	const base = "one\ntwo\nthree\nfour\nfive\n"
	for _, tc := range []struct {
		name string
		ops  func(a []string) []map[string]any
		want string
	}{
		{"replace_line", func(a []string) []map[string]any {
			return []map[string]any{op("replace_line", "tag", a[1], "new_text", "TWO")}
		},
			"one\nTWO\nthree\nfour\nfive\n"},
		{"replace_line by bare tag", func(a []string) []map[string]any {
			return []map[string]any{op("replace_line", "tag", strings.SplitN(a[1], ":", 2)[1], "new_text", "TWO")}
		}, "one\nTWO\nthree\nfour\nfive\n"},
		{"insert_after with several lines", func(a []string) []map[string]any {
			return []map[string]any{op("insert_after", "tag", a[0], "new_text", "1a\n1b\n")}
		}, "one\n1a\n1b\ntwo\nthree\nfour\nfive\n"},
		{"insert_before", func(a []string) []map[string]any {
			return []map[string]any{op("insert_before", "tag", a[0], "new_text", "zero")}
		},
			"zero\none\ntwo\nthree\nfour\nfive\n"},
		{"delete_line", func(a []string) []map[string]any { return []map[string]any{op("delete_line", "tag", a[4])} },
			"one\ntwo\nthree\nfour\n"},
		{"replace_range", func(a []string) []map[string]any {
			return []map[string]any{op("replace_range", "start_tag", a[1], "end_tag", a[3], "new_text", "middle")}
		}, "one\nmiddle\nfive\n"},
		{"delete_range", func(a []string) []map[string]any {
			return []map[string]any{op("delete_range", "start_tag", a[0], "end_tag", a[3])}
		},
			"five\n"},
		{"append and prepend", func(a []string) []map[string]any {
			return []map[string]any{op("append", "new_text", "six"), op("prepend", "new_text", "#!")}
		}, "#!\none\ntwo\nthree\nfour\nfive\nsix\n"},
		{"several ops against one base", func(a []string) []map[string]any {
			return []map[string]any{
				op("delete_line", "tag", a[0]),
				op("replace_line", "tag", a[2], "new_text", "3"),
				op("insert_after", "tag", a[2], "new_text", "3.5"),
				op("insert_after", "tag", a[4], "new_text", "6"),
				op("insert_after", "tag", a[4], "new_text", "7"),
			}
		}, "two\n3\n3.5\nfour\nfive\n6\n7\n"},
		{"whole rendered line as anchor", func(a []string) []map[string]any {
			return []map[string]any{op("replace_line", "tag", a[0]+"|one", "new_text", "ONE")}
		}, "ONE\ntwo\nthree\nfour\nfive\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, dir := newTestEngine(t, map[string]string{"f.txt": base})
			a := anchors(t, e, "f.txt")
			res := mustOK(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "ops": tc.ops(a)}))
			if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != tc.want {
				t.Fatalf("file = %q, want %q", got, tc.want)
			}
			// The result's fresh anchors match a new read.
			fresh := map[string]bool{}
			for _, x := range anchors(t, e, "f.txt") {
				fresh[x] = true
			}
			shown := renderedLine.FindAllStringSubmatch(res.Text, -1)
			if len(shown) == 0 && tc.want != "" {
				t.Fatalf("no changed region shown:\n%s", res.Text)
			}
			for _, m := range shown {
				if !fresh[m[1]+":"+m[2]] {
					t.Errorf("result shows anchor %s:%s that a new read does not", m[1], m[2])
				}
			}
			if !strings.Contains(res.Text, "version "+hashline.Version([]byte(base))+" -> "+hashline.Version([]byte(tc.want))) {
				t.Errorf("result lacks the versions:\n%s", res.Text)
			}
		})
	}
}

func TestEditEmptyFile(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"empty.txt": ""})
	mustOK(t, call(t, e, "edit_file", edit("empty.txt", op("append", "new_text", "first"))))
	if got := readTestFile(t, filepath.Join(dir, "empty.txt")); got != "first\n" {
		t.Errorf("got %q", got)
	}
}

func TestEditRefusals(t *testing.T) {
	const base = "a\nb\nc\n"
	e, dir := newTestEngine(t, map[string]string{"f.txt": base, "lock/cfg.yaml": "x: 1\n"},
		func(o *Options) { o.MaxChangedLines = 4; o.Protected = []string{"lock/"} })
	a := anchors(t, e, "f.txt")
	for _, tc := range []struct {
		name  string
		args  any
		code  Code
		frags []string
	}{
		{"stale tag", edit("f.txt", op("replace_line", "tag", "2:00000000", "new_text", "x")), EAnchorStale,
			[]string{"op 0 tag", "2:00000000", "> 2:" + strings.SplitN(a[1], ":", 2)[1] + "|b", "  1:", "  3:"}},
		{"tag from another line", edit("f.txt", op("replace_line", "tag", "1:"+strings.SplitN(a[1], ":", 2)[1], "new_text", "x")), EAnchorStale, nil},
		{"bad anchor", edit("f.txt", op("delete_line", "tag", "zz")), EAnchorSyntax, []string{"op 0 tag", "TAG or LINE:TAG"}},
		{"second op bad", edit("f.txt", op("delete_line", "tag", a[0]), op("delete_line", "tag", "3:1234")), EAnchorSyntax, []string{"op 1 tag"}},
		{"overlap", edit("f.txt", op("replace_range", "start_tag", a[0], "end_tag", a[1], "new_text", "x"), op("delete_line", "tag", a[1])),
			EOverlap, []string{"ops 0 and 1 overlap"}},
		{"end before start", edit("f.txt", op("delete_range", "start_tag", a[2], "end_tag", a[0])), EInvalidArgs, []string{"op 0", "before start_tag"}},
		{"missing field", edit("f.txt", op("replace_line", "tag", a[0])), EInvalidArgs, []string{"op 0 (replace_line): field new_text is required"}},
		{"noop", edit("f.txt", op("replace_line", "tag", a[1], "new_text", "b")), ENoop, []string{"unchanged"}},
		{"budget", edit("f.txt", op("replace_range", "start_tag", a[0], "end_tag", a[2], "new_text", "x\ny")), EBudgetExceeded,
			[]string{"changes 5 lines", "limit of 4"}},
		{"expect_version", map[string]any{"path": "f.txt", "expect_version": "0123456789abcdef", "ops": []any{op("delete_line", "tag", a[0])}},
			EConflict, []string{hashline.Version([]byte(base))}},
		{"missing file", edit("nope.txt", op("append", "new_text", "x")), ENotFound, nil},
		{"protected", edit("lock/cfg.yaml", op("append", "new_text", "x: 2")), EPolicy, []string{"protected"}},
		{"path and files", map[string]any{"path": "f.txt", "files": []any{edit("f.txt", op("append", "new_text", "x"))}}, EInvalidArgs, []string{"not both"}},
		{"neither", map[string]any{"dry_run": true}, EInvalidArgs, []string{"required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustFail(t, call(t, e, "edit_file", tc.args), tc.code, tc.frags...)
			if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != base {
				t.Fatalf("a refused edit changed the file: %q", got)
			}
		})
	}
	mustFail(t, call(t, e, "write_file", map[string]any{"path": "lock/cfg.yaml", "content": "x: 2\n"}), EPolicy)
}

func TestEditDryRun(t *testing.T) {
	base := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	e, dir := newTestEngine(t, map[string]string{"f.txt": base})
	a := anchors(t, e, "f.txt")
	res := mustOK(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "dry_run": true, "ops": []any{
		op("replace_line", "tag", a[1], "new_text", "L2"), op("delete_line", "tag", a[8]),
	}}))
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -1,10 +1,9 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n l6\n l7\n l8\n-l9\n l10\n"
	if !strings.HasSuffix(res.Text, want) {
		t.Errorf("dry run diff:\n%s\nwant suffix:\n%s", res.Text, want)
	}
	wouldBe := hashline.Version([]byte(strings.Replace(strings.Replace(base, "l2\n", "L2\n", 1), "l9\n", "", 1)))
	if !strings.Contains(res.Text, "to "+wouldBe) {
		t.Errorf("dry run lacks the would-be version %s:\n%s", wouldBe, res.Text)
	}
	if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != base {
		t.Errorf("dry run wrote: %q", got)
	}
}

func TestAnchorsSurviveOwnEdits(t *testing.T) {
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	base := strings.Join(lines, "\n") + "\n"
	e, dir := newTestEngine(t, map[string]string{"f.txt": base})
	old := anchors(t, e, "f.txt")

	// Insert two lines at the top, then edit line 10 with its old anchor.
	mustOK(t, call(t, e, "edit_file", edit("f.txt", op("prepend", "new_text", "a\nb"))))
	mustOK(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", old[9], "new_text", "LINE 10"))))
	// And line 15, still with the first read's anchor, after a second edit.
	mustOK(t, call(t, e, "edit_file", edit("f.txt", op("delete_line", "tag", old[14]))))
	got := readTestFile(t, filepath.Join(dir, "f.txt"))
	want := "a\nb\n" + strings.Replace(strings.Replace(base, "line 10\n", "LINE 10\n", 1), "line 15\n", "", 1)
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// The anchor of the line changed by the engine is stale.
	mustFail(t, call(t, e, "edit_file", edit("f.txt", op("delete_line", "tag", old[9]))), EAnchorStale, "changed or removed by an edit")
	// After a change by someone else, old anchors are stale too.
	writeTestFile(t, filepath.Join(dir, "f.txt"), got+"tail\n")
	mustFail(t, call(t, e, "edit_file", edit("f.txt", op("delete_line", "tag", old[0]))), EAnchorStale)
}

func TestHistoryIsBounded(t *testing.T) {
	h := newHistory()
	for i := range maxHistoryFiles + 10 {
		h.served(fmt.Sprint("f", i), "v")
	}
	for i := range 2 * maxChainVersions {
		h.edited("f0", fmt.Sprint("v", i), nil, fmt.Sprint("v", i+1))
	}
	if len(h.files) != maxHistoryFiles {
		t.Errorf("%d files remembered, want the bound %d", len(h.files), maxHistoryFiles)
	}
	if _, ok := h.files["f1"]; ok {
		t.Error("f1, the least recently changed, was not the one forgotten")
	}
	if c := h.files["f0"]; c == nil || len(c.versions) != maxChainVersions || len(c.hunks) != maxChainVersions-1 {
		t.Errorf("chain of f0: %+v", c)
	}
}

func TestMultiFileBatch(t *testing.T) {
	files := map[string]string{"a.txt": "a1\na2\n", "b.txt": "b1\nb2\n", "c.txt": "c1\n"}
	t.Run("all written", func(t *testing.T) {
		e, dir := newTestEngine(t, files)
		a, b := anchors(t, e, "a.txt"), anchors(t, e, "b.txt")
		res := mustOK(t, call(t, e, "edit_file", map[string]any{"files": []any{
			edit("a.txt", op("replace_line", "tag", a[0], "new_text", "A1")),
			edit("b.txt", op("delete_line", "tag", b[1])),
		}}))
		if readTestFile(t, filepath.Join(dir, "a.txt")) != "A1\na2\n" || readTestFile(t, filepath.Join(dir, "b.txt")) != "b1\n" {
			t.Fatal("batch not applied")
		}
		if !strings.Contains(res.Text, "edited a.txt") || !strings.Contains(res.Text, "edited b.txt") {
			t.Errorf("result:\n%s", res.Text)
		}
	})
	t.Run("one stale file stops all", func(t *testing.T) {
		e, dir := newTestEngine(t, files)
		a := anchors(t, e, "a.txt")
		mustFail(t, call(t, e, "edit_file", map[string]any{"files": []any{
			edit("a.txt", op("replace_line", "tag", a[0], "new_text", "A1")),
			edit("b.txt", op("delete_line", "tag", "2:00000000")),
		}}), EAnchorStale, "files[1] (b.txt)")
		if readTestFile(t, filepath.Join(dir, "a.txt")) != files["a.txt"] {
			t.Fatal("a.txt written although b.txt failed validation")
		}
	})
	t.Run("same file twice", func(t *testing.T) {
		e, _ := newTestEngine(t, files)
		mustFail(t, call(t, e, "edit_file", map[string]any{"files": []any{
			edit("a.txt", op("append", "new_text", "x")), edit("./a.txt", op("append", "new_text", "y")),
		}}), EInvalidArgs, "both edit a.txt")
	})
	t.Run("a failed write restores earlier files", func(t *testing.T) {
		e, dir := newTestEngine(t, files)
		e.testHook = func(stage, rel string) error {
			if stage == "write" && rel == "c.txt" {
				return errors.New("disk full")
			}
			return nil
		}
		a, b, c := anchors(t, e, "a.txt"), anchors(t, e, "b.txt"), anchors(t, e, "c.txt")
		mustFail(t, call(t, e, "edit_file", map[string]any{"files": []any{
			edit("a.txt", op("replace_line", "tag", a[0], "new_text", "A1")),
			edit("b.txt", op("replace_line", "tag", b[0], "new_text", "B1")),
			edit("c.txt", op("replace_line", "tag", c[0], "new_text", "C1")),
		}}), EIO, "c.txt: disk full", "after 2 of 3 files", "Restored: a.txt", "b.txt (back at version")
		for name, content := range files {
			if got := readTestFile(t, filepath.Join(dir, name)); got != content {
				t.Errorf("%s = %q after rollback, want %q", name, got, content)
			}
		}
		assertNoTempFiles(t, dir)
	})
}

// TestEditWithWriterOnDisk has another program write the file between an
// edit's preparation and its rename: the edit is prepared again from the
// new content, so that it is refused with fresh anchors when the other
// program changed its line, and lands beside the other change when not.
func TestEditWithWriterOnDisk(t *testing.T) {
	t.Run("same line", func(t *testing.T) {
		e, dir := newTestEngine(t, map[string]string{"f.txt": "a\nb\n"})
		a := anchors(t, e, "f.txt")
		e.testHook = func(stage, rel string) error {
			if stage == "verify" {
				writeTestFile(t, filepath.Join(dir, rel), "someone else\n")
			}
			return nil
		}
		mustFail(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a[0], "new_text", "A"))),
			EAnchorStale, "is stale", hashline.Version([]byte("someone else\n")), "1:"+hashline.Tag(1, []byte("someone else")))
		if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != "someone else\n" {
			t.Errorf("the other writer's content was overwritten: %q", got)
		}
		assertNoTempFiles(t, dir)
	})
	t.Run("other line", func(t *testing.T) {
		e, dir := newTestEngine(t, map[string]string{"f.txt": "a\nb\n"})
		a := anchors(t, e, "f.txt")
		once := false
		e.testHook = func(stage, rel string) error {
			if stage == "verify" && !once {
				once = true
				writeTestFile(t, filepath.Join(dir, rel), "a\nb\nappended elsewhere\n")
			}
			return nil
		}
		mustOK(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a[0], "new_text", "A"))))
		if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != "A\nb\nappended elsewhere\n" {
			t.Errorf("after the edit: %q", got)
		}
	})
	t.Run("keeps changing", func(t *testing.T) {
		e, dir := newTestEngine(t, map[string]string{"f.txt": "a\nb\n"})
		a := anchors(t, e, "f.txt")
		n := 0
		e.testHook = func(stage, rel string) error {
			if stage == "verify" {
				n++
				writeTestFile(t, filepath.Join(dir, rel), fmt.Sprintf("a\nb\n%d\n", n))
			}
			return nil
		}
		mustFail(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a[0], "new_text", "A"))),
			EConflict, "changed on disk", "Nothing was written")
		if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != fmt.Sprintf("a\nb\n%d\n", n) || n != 5 {
			t.Errorf("after the refused edit: %q", got)
		}
		assertNoTempFiles(t, dir)
	})
}

func TestConcurrentEditsLoseNothing(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"log.txt": ""})
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res := call(t, e, "edit_file", edit("log.txt", op("append", "new_text", fmt.Sprintf("w%d-%d", w, i))))
				if res.IsError {
					t.Error(res.Text)
					return
				}
			}
		}()
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(readTestFile(t, filepath.Join(dir, "log.txt")), "\n"), "\n")
	if len(got) != writers*each {
		t.Fatalf("%d lines, want %d", len(got), writers*each)
	}
	seen := map[string]bool{}
	for _, l := range got {
		seen[l] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct lines, want %d", len(seen), writers*each)
	}
}
