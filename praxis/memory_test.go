package praxis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/praxis-tools/praxis/praxis"
)

func TestMemoryKeys(t *testing.T) {
	e := newEngine(t, t.TempDir())
	tests := []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"project/build", true},
		{"A-b_9/x-Y/z", true},
		{strings.Repeat("k", 64), true},
		{strings.Repeat("k", 65), false},
		{"", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{"../x", false},
		{"a/../b", false},
		{".hidden", false},
		{"a.b", false},
		{"a b", false},
		{"grüße", false},
		{`a\b`, false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			res := call(t, e, "write_memory", map[string]any{"key": tt.key, "content": "x"})
			if tt.ok && res.IsError {
				t.Fatalf("valid key refused: %s", res.Text)
			}
			if !tt.ok && (res.Code != praxis.EInvalidArgs || (len(tt.key) <= 64 && tt.key != "" && !strings.Contains(res.Text, "1-64 characters"))) {
				t.Fatalf("invalid key: got %q, want E_INVALID_ARGS with the rule", res.Text)
			}
			for _, tool := range []string{"read_memory", "delete_memory"} {
				if res := call(t, e, tool, map[string]any{"key": tt.key}); !tt.ok && res.Code != praxis.EInvalidArgs {
					t.Errorf("%s: invalid key gave %q", tool, res.Text)
				}
			}
		})
	}
}

func TestMemoryTools(t *testing.T) {
	ws := t.TempDir()
	e := newEngine(t, ws)
	steps := []struct {
		tool string
		args map[string]any
		code praxis.Code
		want []string // substrings of the text
	}{
		{"list_memory", nil, "", []string{"no memory notes yet"}},
		{"read_memory", map[string]any{"key": "none"}, "", []string{"memory note none does not exist", "no notes yet"}},
		{"write_memory", map[string]any{"key": "project/build", "content": "# Build\nRun make first."}, "", []string{"created memory note project/build"}},
		{"write_memory", map[string]any{"key": "project/build", "content": "Then make test.", "mode": "append"}, "", []string{"appended to memory note project/build"}},
		{"read_memory", map[string]any{"key": "project/build"}, "", []string{"# Build\nRun make first.\nThen make test.\n"}},
		{"write_memory", map[string]any{"key": "style", "content": "Tabs, not spaces.\n"}, "", []string{"created"}},
		{"write_memory", map[string]any{"key": "style", "content": "Use gofmt.\n"}, "", []string{"replaced memory note style"}},
		{"read_memory", map[string]any{"key": "style"}, "", []string{"Use gofmt.\n"}},
		{"read_memory", map[string]any{"key": "project"}, "", []string{"does not exist", "Existing keys:\nproject/build\nstyle"}},
		{"list_memory", nil, "", []string{"# 2 memory notes", "project/build  40  # Build\n", "style  11  Use gofmt.\n"}},
		{"search_memory", map[string]any{"query": "MAKE"}, "", []string{"# 2 matching lines in 1 notes", "project/build:2: Run make first.\n", "project/build:3: Then make test.\n"}},
		{"search_memory", map[string]any{"query": "make TEST"}, "", []string{"# 1 matching lines in 1 notes", "project/build:3: Then make test."}},
		{"search_memory", map[string]any{"query": "nothing-like-it"}, "", []string{"# 0 matching lines in 0 notes"}},
		{"search_memory", map[string]any{"query": "   "}, praxis.EInvalidArgs, []string{"no words"}},
		{"write_memory", map[string]any{"key": "style", "content": "x", "mode": "merge"}, praxis.EInvalidArgs, []string{"mode"}},
		{"delete_memory", map[string]any{"key": "project/build"}, "", []string{"deleted memory note project/build"}},
		{"delete_memory", map[string]any{"key": "project/build"}, praxis.ENotFound, []string{"does not exist"}},
		{"list_memory", nil, "", []string{"# 1 memory notes", "style"}},
	}
	for i, s := range steps {
		if s.args == nil {
			s.args = map[string]any{}
		}
		res := call(t, e, s.tool, s.args)
		if res.Code != s.code {
			t.Fatalf("step %d %s %v: code %q, want %q:\n%s", i, s.tool, s.args, res.Code, s.code, res.Text)
		}
		for _, w := range s.want {
			if !strings.Contains(res.Text, w) {
				t.Fatalf("step %d %s %v: text lacks %q:\n%s", i, s.tool, s.args, w, res.Text)
			}
		}
	}
	// The notes are plain files a person can read; empty topic
	// directories go with their last note.
	data, err := os.ReadFile(filepath.Join(ws, ".praxis", "memory", "style.md"))
	if err != nil || string(data) != "Use gofmt.\n" {
		t.Fatalf("style.md: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".praxis", "memory", "project")); !os.IsNotExist(err) {
		t.Errorf("the empty topic directory is still there: %v", err)
	}
}

func TestMemorySizeCap(t *testing.T) {
	ws := t.TempDir()
	e, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true, MaxMemoryBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	callOK(t, e, "write_memory", map[string]any{"key": "k", "content": strings.Repeat("a", 60)})
	for _, args := range []map[string]any{
		{"key": "k", "content": strings.Repeat("b", 60), "mode": "append"},
		{"key": "k", "content": strings.Repeat("c", 101)},
		{"key": "new", "content": strings.Repeat("d", 101)},
	} {
		res := call(t, e, "write_memory", args)
		if res.Code != praxis.ETooLarge || !strings.Contains(res.Text, "over the limit of 100 bytes") {
			t.Fatalf("%v: %s", args, res.Text)
		}
	}
	if got, err := e.ReadMemory("k"); err != nil || got != strings.Repeat("a", 60) {
		t.Fatalf("the note changed after refused writes: %q, %v", got, err)
	}
	if _, err := e.ReadMemory("new"); praxis.CodeOf(err) != praxis.ENotFound {
		t.Fatalf("a refused note exists: %v", err)
	}
}

func TestMemoryDirOption(t *testing.T) {
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "notes")
	for _, dir := range []string{store, "custom/mem"} {
		e, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true, MemoryDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		callOK(t, e, "write_memory", map[string]any{"key": "topic/k", "content": "kept here"})
		e.Close()
		want := dir
		if !filepath.IsAbs(dir) {
			want = filepath.Join(ws, dir)
		}
		if data, err := os.ReadFile(filepath.Join(want, "topic", "k.md")); err != nil || string(data) != "kept here" {
			t.Fatalf("MemoryDir %s: %q, %v", dir, data, err)
		}
	}
}

// TestMemorySymlinkOut checks that a memory directory inside the workspace
// that is a symlink to elsewhere is refused rather than followed.
func TestMemorySymlinkOut(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".praxis")); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, ws)
	res := call(t, e, "write_memory", map[string]any{"key": "k", "content": "x"})
	if !res.IsError {
		t.Fatalf("wrote through a symlink out of the workspace: %s", res.Text)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was created outside: %v", entries)
	}
}

func TestMemoryAPI(t *testing.T) {
	e := newEngine(t, t.TempDir())
	if notes, err := e.MemoryKeys(); err != nil || len(notes) != 0 {
		t.Fatalf("empty store: %v, %v", notes, err)
	}
	callOK(t, e, "write_memory", map[string]any{"key": "b", "content": "\n\n  second note  \nmore"})
	callOK(t, e, "write_memory", map[string]any{"key": "a/x", "content": "first"})
	notes, err := e.MemoryKeys()
	if err != nil || len(notes) != 2 || notes[0].Key != "a/x" || notes[1].Key != "b" ||
		notes[1].FirstLine != "second note" || notes[1].Size != 22 || notes[0].Modified.IsZero() {
		t.Fatalf("MemoryKeys: %+v, %v", notes, err)
	}
	if got, err := e.ReadMemory("a/x"); err != nil || got != "first" {
		t.Fatalf("ReadMemory: %q, %v", got, err)
	}
	if _, err := e.ReadMemory("../etc/passwd"); praxis.CodeOf(err) != praxis.EInvalidArgs {
		t.Fatalf("bad key: %v", err)
	}
}

// TestMemoryConcurrentWriters appends from many goroutines at once, and
// from two processes at once: every entry must be there exactly once.
func TestMemoryConcurrentWriters(t *testing.T) {
	t.Run("goroutines", func(t *testing.T) {
		ws := t.TempDir()
		e := newEngine(t, ws)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					res := call(t, e, "write_memory", map[string]any{"key": "log", "content": fmt.Sprintf("entry g%d-%d", g, i), "mode": "append"})
					if res.IsError {
						t.Error(res.Text)
					}
				}
			})
		}
		wg.Wait()
		checkEntries(t, e, 8, 50, "g")
	})
	t.Run("processes", func(t *testing.T) {
		if testing.Short() {
			t.Skip("spawns processes")
		}
		ws := t.TempDir()
		const procs, each = 2, 500
		var cmds []*exec.Cmd
		for p := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryHelperProcess$")
			cmd.Env = append(os.Environ(), "PRAXIS_MEMORY_HELPER="+ws, "PRAXIS_MEMORY_HELPER_ID=p"+strconv.Itoa(p), "PRAXIS_MEMORY_HELPER_N="+strconv.Itoa(each))
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("helper process: %v", err)
			}
		}
		checkEntries(t, newEngine(t, ws), procs, each, "p")
	})
}

func checkEntries(t *testing.T, e *praxis.Engine, writers, each int, prefix string) {
	t.Helper()
	content, err := e.ReadMemory("log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	seen := map[string]int{}
	for _, l := range lines {
		seen[l]++
	}
	for w := range writers {
		for i := range each {
			if n := seen[fmt.Sprintf("entry %s%d-%d", prefix, w, i)]; n != 1 {
				t.Errorf("entry %s%d-%d is there %d times", prefix, w, i, n)
			}
		}
	}
	if len(lines) != writers*each {
		t.Errorf("%d lines, want %d", len(lines), writers*each)
	}
}

// TestMemoryHelperProcess is not a test: TestMemoryConcurrentWriters runs
// the test binary again with it to append from another process.
func TestMemoryHelperProcess(t *testing.T) {
	ws := os.Getenv("PRAXIS_MEMORY_HELPER")
	if ws == "" {
		t.Skip("a helper process for TestMemoryConcurrentWriters")
	}
	id := os.Getenv("PRAXIS_MEMORY_HELPER_ID")
	n, _ := strconv.Atoi(os.Getenv("PRAXIS_MEMORY_HELPER_N"))
	e, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := range n {
		raw, _ := json.Marshal(map[string]any{"key": "log", "content": fmt.Sprintf("entry %s-%d", id, i), "mode": "append"})
		res, err := e.Catalog().Call(context.Background(), "write_memory", raw)
		if err != nil || res.IsError {
			t.Fatalf("append %d: %v %s", i, err, res.Text)
		}
	}
}

// TestMemoryOddFiles puts what a person might leave in the store: a FIFO
// where a note would be, and a note over the size cap. Neither may block or
// break the tools.
func TestMemoryOddFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	ws := t.TempDir()
	dir := filepath.Join(ws, ".praxis", "memory")
	mustWrite(t, filepath.Join(dir, "big.md"), "# Big\n"+strings.Repeat("x", 200))
	mustWrite(t, filepath.Join(dir, "ok.md"), "fine\n")
	if err := exec.Command("mkfifo", filepath.Join(dir, "pipe.md")).Run(); err != nil {
		t.Skip("mkfifo:", err)
	}
	e, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true, MaxMemoryBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
		code praxis.Code
		want string
	}{
		{"read_memory", map[string]any{"key": "pipe"}, praxis.ENotRegular, "not a regular file"},
		{"write_memory", map[string]any{"key": "pipe", "content": "x", "mode": "append"}, praxis.ENotRegular, "not a regular file"},
		{"read_memory", map[string]any{"key": "big"}, praxis.ETooLarge, "over the limit of 100 bytes"},
		{"write_memory", map[string]any{"key": "big", "content": "x", "mode": "append"}, praxis.ETooLarge, "over the limit"},
		{"list_memory", nil, "", "big  206  # Big\nok  5  fine\n"},
		{"search_memory", map[string]any{"query": "fine"}, "", "ok:1: fine"},
		{"write_memory", map[string]any{"key": "big", "content": "small now"}, "", "replaced memory note big"},
		{"read_memory", map[string]any{"key": "big"}, "", "small now"},
	} {
		if c.args == nil {
			c.args = map[string]any{}
		}
		res := call(t, e, c.tool, c.args)
		if res.Code != c.code || !strings.Contains(res.Text, c.want) {
			t.Errorf("%s %v: %s (code %q), want %q and %q", c.tool, c.args, res.Text, res.Code, c.code, c.want)
		}
	}
}

func TestMemoryProtected(t *testing.T) {
	ws := t.TempDir()
	e, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true, MemoryDir: "notes", Protected: []string{"notes/policy.md", "notes/locked/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	mustWrite(t, filepath.Join(ws, "notes", "policy.md"), "by hand\n")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"write_memory", map[string]any{"key": "policy", "content": "x"}},
		{"write_memory", map[string]any{"key": "locked/a", "content": "x", "mode": "append"}},
		{"delete_memory", map[string]any{"key": "policy"}},
	} {
		if res := call(t, e, c.tool, c.args); res.Code != praxis.EPolicy {
			t.Errorf("%s %v: %s", c.tool, c.args, res.Text)
		}
	}
	if got, err := e.ReadMemory("policy"); err != nil || got != "by hand\n" {
		t.Fatalf("protected note: %q, %v", got, err)
	}
	callOK(t, e, "write_memory", map[string]any{"key": "free", "content": "x"})
}
