package praxis

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis/patch"
)

var diffCases = flag.Int("diff-cases", 60, "how many random texts TestDiffRoundTrip diffs and applies")

// randomText returns a text of lines drawn from a small alphabet, so that
// diffs find common lines; its line ends are LF, CRLF or mixed, and its
// last line may have none.
func randomText(r *rand.Rand) string {
	words := []string{"a", "b", "c", "func f() {", "}", "", "\treturn x", "// note", "x := 1  "}
	var b strings.Builder
	n := r.IntN(30)
	crlf := r.IntN(3)
	for i := range n {
		b.WriteString(words[r.IntN(len(words))])
		if i == n-1 && r.IntN(4) == 0 {
			break // no final newline
		}
		if crlf == 1 || (crlf == 2 && r.IntN(2) == 0) {
			b.WriteString("\r\n")
		} else {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// mutate changes some lines of s: deletes, inserts, replaces, and may
// add or drop the final newline.
func mutate(r *rand.Rand, s string) string {
	lines := patch.SplitLines(s)
	for range r.IntN(6) {
		switch i := r.IntN(len(lines) + 1); r.IntN(3) {
		case 0:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 1:
			lines = append(lines[:i], append([]string{fmt.Sprintf("new %d\n", r.IntN(100))}, lines[i:]...)...)
		default:
			if i < len(lines) {
				lines[i] = "changed\n"
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(5) == 0 {
		if strings.HasSuffix(out, "\n") {
			out = strings.TrimSuffix(out, "\n")
		} else if out != "" {
			out += "\n"
		}
	}
	return out
}

// TestDiffRoundTrip applies the diffs the engine prints between random
// texts (LF, CRLF, mixed, with and without a final newline) with git
// apply, patch -p1 and patch_file's own parser, and checks that each gives
// the new text byte for byte.
func TestDiffRoundTrip(t *testing.T) {
	needGit(t)
	needTool(t, "patch")
	r := rand.New(rand.NewPCG(1, uint64(*diffCases)))
	for i := range *diffCases {
		old := randomText(r)
		new := mutate(r, old)
		if i%7 == 0 {
			new = old // no change: no diff
		}
		d := appendDiff(nil, "f.txt", "f.txt", []byte(old), []byte(new))
		if old == new {
			if len(d) != 0 {
				t.Fatalf("case %d: a diff of identical texts:\n%s", i, d)
			}
			continue
		}
		check := func(tool string, apply func(dir string) ([]byte, error)) {
			dir := t.TempDir()
			writeTestFile(t, filepath.Join(dir, "f.txt"), old)
			if out, err := apply(dir); err != nil {
				t.Fatalf("case %d: %s: %v\n%s\nold %q\nnew %q\ndiff:\n%s", i, tool, err, out, old, new, d)
			}
			if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != new {
				t.Fatalf("case %d: %s gives %q, want %q\ndiff:\n%s", i, tool, got, new, d)
			}
		}
		check("git apply", func(dir string) ([]byte, error) {
			out, err := gitIn(dir, string(d), "apply", "--whitespace=nowarn", "-")
			return []byte(out), err
		})
		check("patch -p1", func(dir string) ([]byte, error) {
			cmd := exec.Command("patch", "-p1", "-s", "--binary", "--no-backup-if-mismatch")
			cmd.Dir, cmd.Stdin = dir, bytes.NewReader(d)
			return cmd.CombinedOutput()
		})
		check("patch_file's parser", func(dir string) ([]byte, error) {
			files, err := patch.ParseUnified(string(d))
			if err != nil {
				return nil, err
			}
			out, err := patch.Apply([]byte(old), files[0].Hunks)
			if err != nil {
				return nil, err
			}
			return nil, os.WriteFile(filepath.Join(dir, "f.txt"), out, 0o644)
		})
	}
}

// TestDryRunDiffsApply checks that the diffs edit_file's dry run and
// patch_file print apply with git apply to give what the call writes.
func TestDryRunDiffsApply(t *testing.T) {
	needGit(t)
	const src = "one\ntwo\nthree\nfour"
	e, dir := newTestEngine(t, map[string]string{"f.txt": src})
	a := anchors(t, e, "f.txt")
	res := mustOK(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "dry_run": true,
		"ops": []map[string]any{op("replace_line", "tag", a[3], "new_text", "FOUR\n")}}))
	d := regexp.MustCompile(`(?s)--- a/.*`).FindString(res.Text)
	if !strings.Contains(d, `\ No newline at end of file`) {
		t.Errorf("the dry-run diff lacks the no-newline marker:\n%s", d)
	}
	gitDir := t.TempDir()
	writeTestFile(t, filepath.Join(gitDir, "f.txt"), src)
	if out, err := gitIn(gitDir, d, "apply", "-"); err != nil {
		t.Fatalf("git apply: %v\n%s\n%s", err, out, d)
	}
	mustOK(t, call(t, e, "edit_file", map[string]any{"path": "f.txt",
		"ops": []map[string]any{op("replace_line", "tag", a[3], "new_text", "FOUR\n")}}))
	if got, want := readTestFile(t, filepath.Join(gitDir, "f.txt")), readTestFile(t, filepath.Join(dir, "f.txt")); got != want {
		t.Errorf("git apply of the dry-run diff gives %q, the edit wrote %q", got, want)
	}
}
