package praxis

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A protected file is protected whatever path reaches it, for every tool
// that writes: a directory symlink, a symlinked parent, "..", a trailing
// slash, a file symlink, a hard link, another letter case, a renamed
// parent directory; a protected tree likewise; and a protected file that
// does not exist yet cannot be created through an alias either. The same
// aliases reach an unprotected file, which is written: the refusals are the
// protection's, not the alias's.
func TestProtectedByIdentity(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	files := map[string]string{
		"policy.yaml":       "sandbox: {isolation: bwrap}\n",
		"rules.md":          "the rules\n",
		"guard/keep.txt":    "kept\n",
		"conf/config.yaml":  "shell: true\n",
		"sub/free.txt":      "free\n",
		"free.yaml":         "free\n",
		"memdir/.keep":      "",
		"conf/unrelated.md": "x\n",
	}
	setup := func(t *testing.T) (*Engine, string) {
		e, dir := newTestEngine(t, files, func(o *Options) {
			o.Protected = []string{"policy.yaml", "rules.md", "guard/", "conf/config.yaml", ".praxis/config.yaml"}
			o.MemoryDir = "notes"
		})
		for link, target := range map[string]string{
			"alias":     ".",
			"sub/up":    "..",
			"link.yaml": "policy.yaml",
			"g2":        "guard",
			"notes":     ".", // the memory directory is the workspace itself
		} {
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Link(filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "hard.yaml")); err != nil {
			t.Fatal(err)
		}
		return e, dir
	}
	writers := []struct {
		name string
		call func(t *testing.T, e *Engine, p string) Result
	}{
		{"write_file", func(t *testing.T, e *Engine, p string) Result {
			return call(t, e, "write_file", map[string]any{"path": p, "content": "pwned\n"})
		}},
		{"edit_file", func(t *testing.T, e *Engine, p string) Result {
			return call(t, e, "edit_file", edit(p, op("append", "new_text", "pwned")))
		}},
		{"edit_file batch", func(t *testing.T, e *Engine, p string) Result {
			return call(t, e, "edit_file", map[string]any{"files": []any{
				map[string]any{"path": "sub/free.txt", "ops": []any{op("append", "new_text", "pwned")}},
				map[string]any{"path": p, "ops": []any{op("append", "new_text", "pwned")}},
			}})
		}},
	}
	paths := []struct {
		path      string
		protected string // the protected file it reaches; "" for a free one
	}{
		{"policy.yaml", "policy.yaml"},
		{"alias/policy.yaml", "policy.yaml"},
		{"alias/alias/policy.yaml", "policy.yaml"},
		{"sub/../policy.yaml", "policy.yaml"},
		{"sub/up/policy.yaml", "policy.yaml"},
		{"policy.yaml/", "policy.yaml"},
		{"./policy.yaml", "policy.yaml"},
		{"link.yaml", "policy.yaml"},
		{"hard.yaml", "policy.yaml"},
		{"POLICY.yaml", "policy.yaml"},
		{"guard/keep.txt", "guard/keep.txt"},
		{"guard/new.txt", "guard/new.txt"},
		{"g2/new.txt", "guard/new.txt"},
		{"alias/guard/keep.txt", "guard/keep.txt"},
		{"alias/.praxis/config.yaml", ".praxis/config.yaml"},
		{"alias/free.yaml", ""},
		{"sub/up/sub/free.txt", ""},
		{"alias/conf/unrelated.md", ""},
	}
	for _, w := range writers {
		for _, p := range paths {
			t.Run(w.name+"/"+p.path, func(t *testing.T) {
				e, dir := setup(t)
				if w.name != "write_file" && p.protected != "" {
					if _, err := os.Stat(filepath.Join(dir, p.protected)); err != nil {
						t.Skip("edit_file edits existing files only")
					}
				}
				before := snapshot(t, dir)
				res := w.call(t, e, p.path)
				if p.protected == "" {
					mustOK(t, res)
					return
				}
				mustFail(t, res, EPolicy, "is protected", "Protected: policy.yaml, rules.md, guard/")
				if after := snapshot(t, dir); after != before {
					t.Errorf("the workspace changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}

	// Renaming a parent does not shed the protection: the file is still
	// the one that was protected.
	t.Run("renamed parent", func(t *testing.T) {
		e, dir := setup(t)
		if err := os.Rename(filepath.Join(dir, "conf"), filepath.Join(dir, "moved")); err != nil {
			t.Fatal(err)
		}
		mustFail(t, call(t, e, "write_file", map[string]any{"path": "moved/config.yaml", "content": "x\n"}), EPolicy)
		mustFail(t, call(t, e, "edit_file", edit("moved/config.yaml", op("append", "new_text", "x"))), EPolicy)
		// The path itself stays protected too.
		mustFail(t, call(t, e, "write_file", map[string]any{"path": "conf/config.yaml", "content": "x\n"}), EPolicy)
		mustOK(t, call(t, e, "write_file", map[string]any{"path": "moved/unrelated.md", "content": "y\n"}))
	})
	t.Run("renamed tree", func(t *testing.T) {
		e, dir := setup(t)
		if err := os.Rename(filepath.Join(dir, "guard"), filepath.Join(dir, "other")); err != nil {
			t.Fatal(err)
		}
		mustFail(t, call(t, e, "write_file", map[string]any{"path": "other/new.txt", "content": "x\n"}), EPolicy)
	})

	// The memory tools reach rules.md through the memory directory,
	// which is a symlink to the workspace.
	t.Run("memory", func(t *testing.T) {
		e, dir := setup(t)
		mustFail(t, call(t, e, "write_memory", map[string]any{"key": "rules", "content": "pwned"}), EPolicy, "is protected")
		mustFail(t, call(t, e, "delete_memory", map[string]any{"key": "rules"}), EPolicy, "is protected")
		if got := readTestFile(t, filepath.Join(dir, "rules.md")); got != "the rules\n" {
			t.Errorf("rules.md: %q", got)
		}
		mustOK(t, call(t, e, "write_memory", map[string]any{"key": "free", "content": "fine"}))
	})
}

// snapshot describes every file under dir: its path and content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + "=" + string(data) + ";")
		return nil
	})
	return b.String()
}
