package praxis

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// treeOf returns every regular file under dir but the engine's state
// and .git, as "x content" for an executable file, "- content" otherwise
// (the mode git keeps).
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && (rel == ".praxis" || rel == ".git") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		x := "- "
		if fi.Mode()&0o111 != 0 {
			x = "x "
		}
		out[rel] = x + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) bool {
	t.Helper()
	ok := true
	for name, w := range want {
		if g, found := got[name]; !found {
			t.Errorf("%s: %s is missing", what, name)
			ok = false
		} else if g != w {
			t.Errorf("%s: %s is\n%q\nwant\n%q", what, name, g, w)
			ok = false
		}
	}
	for name := range got {
		if _, found := want[name]; !found {
			t.Errorf("%s: %s should not exist", what, name)
			ok = false
		}
	}
	return ok
}

// needTool skips the test when the program name is not installed, or
// fails it when PRAXIS_REQUIRE_PATCH_TOOLS is set (as CI sets it).
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("PRAXIS_REQUIRE_PATCH_TOOLS") != "" {
			t.Fatalf("%s is not installed, and PRAXIS_REQUIRE_PATCH_TOOLS is set", name)
		}
		t.Skipf("%s is not installed: the test compares Praxis with it", name)
	}
}

func needGit(t *testing.T) { t.Helper(); needTool(t, "git") }

func gitIn(dir string, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPatchFileAgreesWithGitApply checks, on a table of well-formed,
// malformed and conflicting patches, that patch_file accepts exactly the
// patches git apply --check accepts, that an accepted patch leaves the same
// files as git apply, and that a refused one writes nothing.
func TestPatchFileAgreesWithGitApply(t *testing.T) {
	needGit(t)
	abc := "a\nb\nc\nd\ne\nf\ng\n"
	tests := []struct {
		name  string
		files map[string]string
		patch string
		// gitFlags are passed to git apply (-p0 for names without
		// prefixes, which patch_file tells apart itself).
		gitFlags []string
		wantOK   bool
		// lax, for the one rule where patch_file is meant to accept what
		// git apply refuses (trailing whitespace, when no exact match
		// exists), is the file f after patch_file.
		lax string
	}{
		{name: "change a line", files: map[string]string{"f": abc}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "git header", files: map[string]string{"f": abc}, wantOK: true,
			patch: "diff --git a/f b/f\nindex 0000000..1111111 100644\n--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "context differs", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n x\n"},
		{name: "removed line differs", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-z\n+C\n d\n"},
		{name: "at an offset", files: map[string]string{"f": "0\n1\n2\n" + abc}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "hunk past the end", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -20,3 +20,3 @@\n x\n-y\n+Y\n z\n"},
		{name: "first line must be at the start", files: map[string]string{"f": "0\n" + abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n"},
		{name: "no trailing context must be at the end", files: map[string]string{"f": abc + "h\n"}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -6,2 +6,2 @@\n f\n-g\n+G\n"},
		{name: "change at the end", files: map[string]string{"f": abc}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -6,2 +6,2 @@\n f\n-g\n+G\n"},
		{name: "two hunks, the second fails", files: map[string]string{"f": abc + "h\ni\nj\nk\nl\n"}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -9,3 +9,3 @@\n i\n-nope\n+J\n k\n"},
		{name: "one file twice, the second on the first's result", files: map[string]string{"f": abc}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,4 @@\n b\n-c\n+C\n+C2\n d\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@\n C\n-C2\n+C3\n d\n"},
		{name: "one file twice, the second fails", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "second file fails", files: map[string]string{"f": abc, "g": abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n--- a/g\n+++ b/g\n@@ -2,3 +2,3 @@\n b\n-X\n+C\n d\n"},
		{name: "hunk counts wrong", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -2,4 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "no newline at end, changed", files: map[string]string{"f": "a\nb\nc"}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n"},
		{name: "final newline added", files: map[string]string{"f": "a\nb\nc"}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n\\ No newline at end of file\n+c\n"},
		{name: "patch assumes a final newline the file lacks", files: map[string]string{"f": "a\nb\nc"}, wantOK: false,
			patch: "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n"},
		{name: "new file", files: map[string]string{"f": abc}, wantOK: true,
			patch: "diff --git a/dir/n b/dir/n\nnew file mode 100644\n--- /dev/null\n+++ b/dir/n\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{name: "new file that exists", files: map[string]string{"f": abc}, wantOK: false,
			patch: "diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"},
		{name: "delete a file", files: map[string]string{"f": "a\nb\n", "g": "x\n"}, wantOK: true,
			patch: "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{name: "delete a file that differs", files: map[string]string{"f": "a\nB\n"}, wantOK: false,
			patch: "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{name: "delete a file with more lines", files: map[string]string{"f": "a\nb\nc\n"}, wantOK: false,
			patch: "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{name: "patch a missing file", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/missing\n+++ b/missing\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n"},
		{name: "rename with a change", files: map[string]string{"f": abc}, wantOK: true,
			patch: "diff --git a/f b/sub/g\nsimilarity index 90%\nrename from f\nrename to sub/g\n--- a/f\n+++ b/sub/g\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "pure rename", files: map[string]string{"f": abc}, wantOK: true,
			patch: "diff --git a/f b/g\nsimilarity index 100%\nrename from f\nrename to g\n"},
		{name: "rename onto an existing file", files: map[string]string{"f": abc, "g": "x\n"}, wantOK: false,
			patch: "diff --git a/f b/g\nsimilarity index 100%\nrename from f\nrename to g\n"},
		{name: "mode change", files: map[string]string{"f": abc}, wantOK: true,
			patch: "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n"},
		{name: "CRLF file", files: map[string]string{"f": "a\r\nb\r\nc\r\n"}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n"},
		{name: "no prefixes", files: map[string]string{"f": abc}, wantOK: true, gitFlags: []string{"-p0"},
			patch: "--- f\n+++ f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "trailing whitespace in the file", files: map[string]string{"f": "a  \nb\t\nc\n"}, wantOK: true,
			lax:   "a  \nB\nc\n",
			patch: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{name: "trailing whitespace in the patch", files: map[string]string{"f": "x\na\nb\nc\nd\n"}, wantOK: true,
			lax:   "x\na\nB \nc\nd\n",
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n a \n-b\n+B \n c\n"},
		{name: "CRLF file, LF patch", files: map[string]string{"f": "a\r\nb\r\nc\r\n"}, wantOK: true,
			lax:   "a\r\nB\r\nc\r\n",
			patch: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{name: "path out of the tree", files: map[string]string{"f": abc}, wantOK: false,
			patch: "--- a/../f\n+++ b/../f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"},
		{name: "not a patch", files: map[string]string{"f": abc}, wantOK: false,
			patch: "hello\nworld\n"},
		{name: "empty", files: map[string]string{"f": abc}, wantOK: false, patch: ""},
		{name: "one file twice", files: map[string]string{"f": abc}, wantOK: true,
			patch: "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n--- a/f\n+++ b/f\n@@ -5,3 +5,3 @@\n e\n-f\n+F\n g\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gitDir := t.TempDir()
			if out, err := gitIn(gitDir, "", "init", "-q"); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			for name, content := range tc.files {
				writeTestFile(t, filepath.Join(gitDir, name), content)
			}
			args := append([]string{"apply", "--check"}, tc.gitFlags...)
			out, err := gitIn(gitDir, tc.patch, args...)
			if tc.lax != "" {
				if err == nil {
					t.Fatalf("git apply --check accepts the patch of a lax case:\n%s", tc.patch)
				}
				e, dir := newTestEngine(t, tc.files)
				mustOK(t, call(t, e, "patch_file", map[string]any{"patch": tc.patch}))
				if got := readTestFile(t, filepath.Join(dir, "f")); got != tc.lax {
					t.Errorf("f = %q, want %q", got, tc.lax)
				}
				return
			}
			if gitOK := err == nil; gitOK != tc.wantOK {
				t.Fatalf("git apply --check: ok=%v, the table says %v\n%s", gitOK, tc.wantOK, out)
			}

			e, dir := newTestEngine(t, tc.files)
			before := treeOf(t, dir)
			res := call(t, e, "patch_file", map[string]any{"patch": tc.patch})
			if res.IsError == tc.wantOK {
				t.Fatalf("patch_file: isError=%v, git apply --check says ok=%v:\n%s", res.IsError, tc.wantOK, res.Text)
			}
			if !tc.wantOK {
				if !strings.HasPrefix(res.Text, "E_") {
					t.Errorf("the refusal does not start with a code:\n%s", res.Text)
				}
				sameTree(t, "after a refused patch", treeOf(t, dir), before)
				assertNoTempFiles(t, dir)
				return
			}
			if out, err := gitIn(gitDir, tc.patch, append([]string{"apply"}, tc.gitFlags...)...); err != nil {
				t.Fatalf("git apply: %v\n%s", err, out)
			}
			sameTree(t, "patch_file against git apply", treeOf(t, dir), treeOf(t, gitDir))
		})
	}
}

// TestPatchFileEnvelope covers the envelope's operations and refusals.
func TestPatchFileEnvelope(t *testing.T) {
	src := "package app\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"
	tests := []struct {
		name  string
		patch string
		want  map[string]string // files after; nil when the patch is refused
		code  Code
	}{
		{name: "update after a context line",
			patch: "*** Begin Patch\n*** Update File: app.go\n@@ func B() int {\n-\treturn 1\n+\treturn 2\n*** End Patch\n",
			want:  map[string]string{"app.go": "package app\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n"}},
		{name: "ambiguous without context", code: EPatchFailed,
			patch: "*** Begin Patch\n*** Update File: app.go\n@@\n-\treturn 1\n+\treturn 2\n*** End Patch\n"},
		{name: "add, delete and move",
			patch: "*** Begin Patch\n*** Add File: n.txt\n+one\n*** Update File: app.go\n*** Move to: lib/app.go\n@@\n package app\n+// x\n*** End Patch",
			want:  map[string]string{"n.txt": "one\n", "lib/app.go": "package app\n// x\n" + src[len("package app\n"):]}},
		{name: "end of file",
			patch: "*** Begin Patch\n*** Update File: app.go\n@@\n \treturn 1\n }\n+// end\n*** End of File\n*** End Patch\n",
			want:  map[string]string{"app.go": src + "// end\n"}},
		{name: "delete",
			patch: "*** Begin Patch\n*** Delete File: app.go\n*** End Patch\n",
			want:  map[string]string{}},
		{name: "no end", code: EInvalidArgs,
			patch: "*** Begin Patch\n*** Delete File: app.go\n"},
		{name: "context line missing", code: EPatchFailed,
			patch: "*** Begin Patch\n*** Update File: app.go\n@@ func C() int {\n-\treturn 1\n+\treturn 2\n*** End Patch\n"},
		{name: "outside the workspace", code: EPathOutside,
			patch: "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch\n"},
		{name: "a bad line", code: EInvalidArgs,
			patch: "*** Begin Patch\n*** Update File: app.go\n@@\nreturn 1\n*** End Patch\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, dir := newTestEngine(t, map[string]string{"app.go": src})
			before := treeOf(t, dir)
			res := call(t, e, "patch_file", map[string]any{"patch": tc.patch})
			if tc.want == nil {
				mustFail(t, res, tc.code)
				sameTree(t, "after a refused patch", treeOf(t, dir), before)
				return
			}
			mustOK(t, res)
			want := map[string]string{}
			for name, content := range tc.want {
				want[name] = "- " + content
			}
			sameTree(t, "after the patch", treeOf(t, dir), want)
		})
	}
}

// TestPatchFileGuards checks that patch_file keeps the engine's other
// guarantees: protected files, symlinks out of the workspace, the change
// budget and dry_run.
func TestPatchFileGuards(t *testing.T) {
	change := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	t.Run("protected", func(t *testing.T) {
		e, dir := newTestEngine(t, map[string]string{"f": "a\nb\nc\n"}, func(o *Options) { o.Protected = []string{"f"} })
		mustFail(t, call(t, e, "patch_file", map[string]any{"patch": change}), EPolicy)
		if got := readTestFile(t, filepath.Join(dir, "f")); got != "a\nb\nc\n" {
			t.Errorf("f = %q", got)
		}
	})
	t.Run("symlink out", func(t *testing.T) {
		outside := t.TempDir()
		writeTestFile(t, filepath.Join(outside, "f"), "a\nb\nc\n")
		e, dir := newTestEngine(t, nil)
		if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "f")); err != nil {
			t.Fatal(err)
		}
		mustFail(t, call(t, e, "patch_file", map[string]any{"patch": change}), EPathOutside)
		if got := readTestFile(t, filepath.Join(outside, "f")); got != "a\nb\nc\n" {
			t.Errorf("the file outside = %q", got)
		}
	})
	t.Run("state dir", func(t *testing.T) {
		e, _ := newTestEngine(t, nil)
		mustFail(t, call(t, e, "patch_file", map[string]any{
			"patch": "--- /dev/null\n+++ b/" + StateDir + "/x\n@@ -0,0 +1 @@\n+x\n"}), EPolicy)
	})
	t.Run("budget", func(t *testing.T) {
		e, _ := newTestEngine(t, map[string]string{"f": "a\nb\nc\n"}, func(o *Options) { o.MaxChangedLines = 1 })
		mustFail(t, call(t, e, "patch_file", map[string]any{"patch": change}), EBudgetExceeded, "changes 2 lines")
	})
	t.Run("dry run", func(t *testing.T) {
		e, dir := newTestEngine(t, map[string]string{"f": "a\nb\nc\n"})
		res := mustOK(t, call(t, e, "patch_file", map[string]any{"patch": change, "dry_run": true}))
		if !strings.Contains(res.Text, "-b\n+B\n") || !strings.Contains(res.Text, "nothing was written") {
			t.Errorf("dry run text:\n%s", res.Text)
		}
		if got := readTestFile(t, filepath.Join(dir, "f")); got != "a\nb\nc\n" {
			t.Errorf("f = %q after a dry run", got)
		}
	})
	t.Run("failed hunk shows fresh anchors", func(t *testing.T) {
		e, _ := newTestEngine(t, map[string]string{"f": "a\nb\nc\n"})
		res := call(t, e, "patch_file", map[string]any{"patch": "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-x\n+B\n c\n"})
		mustFail(t, res, EPatchFailed, "f: hunk 1 (@@ -1,3 +1,3 @@)")
		for _, a := range anchors(t, e, "f") {
			if !strings.Contains(res.Text, a+"|") {
				t.Errorf("the error lacks the anchor %s:\n%s", a, res.Text)
			}
		}
	})
}

// TestWriteFileCountsChangedLines checks that write_file over an existing
// file counts the lines its diff adds and removes against the change
// budget, and that a refused write leaves the file.
func TestWriteFileCountsChangedLines(t *testing.T) {
	old := "a\nb\nc\nd\n"
	tests := []struct {
		name, content string
		ok            bool
	}{
		{"one line changed", "a\nB\nc\nd\n", true}, // +1 -1
		{"two lines changed", "A\nB\nc\nd\n", false},
		{"same content", old, true},
		{"line appended", old + "e\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, dir := newTestEngine(t, map[string]string{"f": old}, func(o *Options) { o.MaxChangedLines = 2 })
			res := call(t, e, "write_file", map[string]any{"path": "f", "content": tc.content})
			if !tc.ok {
				mustFail(t, res, EBudgetExceeded, "writing f changes 4 lines (2 added, 2 removed), over the limit of 2")
				if got := readTestFile(t, filepath.Join(dir, "f")); got != old {
					t.Errorf("f = %q after a refused write", got)
				}
				return
			}
			mustOK(t, res)
		})
	}
}
