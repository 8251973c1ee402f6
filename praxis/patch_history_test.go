package praxis

import (
	"flag"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis/patch"
)

var historyCommits = flag.Int("patch-history", 10, "how many commits of this repository's history TestPatchFileReplaysHistory replays")

// TestPatchFileReplaysHistory applies, for the latest commits C of this
// repository (-patch-history sets how many), git diff C^ C with patch_file
// to the tree of C^ and checks that it gives exactly the tree of C; then
// the same patch rewritten in the envelope format. An envelope hunk whose
// lines are at two places may be refused (the format states no line
// numbers); it must never land elsewhere.
func TestPatchFileReplaysHistory(t *testing.T) {
	needGit(t)
	top, err := gitIn(".", "", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("not a git checkout (%v): the test replays this repository's history", err)
	}
	top = strings.TrimSpace(top)
	log, err := gitIn(top, "", "log", "--no-merges", "--format=%H", "-n", strconv.Itoa(*historyCommits))
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, log)
	}
	commits := strings.Fields(log)
	if len(commits) < 2 {
		t.Skip("the checkout has no history to replay (a shallow clone?)")
	}
	replayed, envelopes, ambiguous := 0, 0, 0
	for _, c := range commits {
		diff, err := gitIn(top, "", "diff", "--no-color", "--no-ext-diff", "-M", c+"^", c)
		if err != nil {
			continue // the root commit, or a parent missing from a shallow clone
		}
		if strings.Contains(diff, "\nBinary files ") || strings.Contains(diff, "GIT binary patch") ||
			strings.Contains(diff, " 120000") || strings.Contains(diff, " 160000") || strings.TrimSpace(diff) == "" {
			continue // binary files, symlinks and submodules are not patch_file's
		}
		t.Run(c[:12], func(t *testing.T) {
			want := checkout(t, top, c)
			dir := checkout(t, top, c+"^")
			e := newEngineAt(t, dir)
			mustOK(t, call(t, e, "patch_file", map[string]any{"patch": diff}))
			if !sameTree(t, "unified", treeOf(t, dir), treeOf(t, want)) {
				return
			}
			replayed++
			files, err := patch.ParseUnified(diff)
			if err != nil {
				t.Fatal(err)
			}
			env, ok := toEnvelope(files)
			if !ok || strings.Contains(diff, "\nnew mode ") || strings.Contains(diff, "\nnew file mode 100755") {
				return // a missing final newline or a mode change: the envelope cannot say it
			}
			dir = checkout(t, top, c+"^")
			e = newEngineAt(t, dir)
			res := call(t, e, "patch_file", map[string]any{"patch": env})
			if res.IsError && res.Code == EPatchFailed && strings.Contains(res.Text, "and again at line") {
				ambiguous++
				sameTree(t, "a refused envelope", treeOf(t, dir), treeOf(t, checkout(t, top, c+"^")))
				return
			}
			mustOK(t, res)
			if sameTree(t, "envelope", treeOf(t, dir), treeOf(t, want)) {
				envelopes++
			}
		})
	}
	t.Logf("%d commits replayed as unified diffs, %d as envelopes, %d envelopes refused as ambiguous", replayed, envelopes, ambiguous)
	if replayed == 0 {
		t.Skip("no commit with a text diff to replay")
	}
	if envelopes < replayed/2 {
		t.Errorf("only %d of %d envelopes applied", envelopes, replayed)
	}
}

// checkout writes the tree of rev into a new directory.
func checkout(t *testing.T, repo, rev string) string {
	t.Helper()
	dir := t.TempDir()
	archive := exec.Command("git", "archive", "--format=tar", rev)
	archive.Dir = repo
	tar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tar.Stdin = pipe
	if err := archive.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	if err := archive.Wait(); err != nil {
		t.Fatalf("git archive %s: %v", rev, err)
	}
	return dir
}

func newEngineAt(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := New(Options{Workspace: filepath.Clean(dir), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// toEnvelope rewrites parsed unified files as an envelope, false when a
// line has no final newline, which the envelope cannot say.
func toEnvelope(files []*patch.File) (string, bool) {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	line := func(op byte, text string) bool {
		if !strings.HasSuffix(text, "\n") {
			return false
		}
		b.WriteByte(op)
		b.WriteString(text)
		return true
	}
	for _, f := range files {
		switch {
		case f.OldPath == "":
			b.WriteString("*** Add File: " + f.NewPath + "\n")
			for _, h := range f.Hunks {
				for _, l := range h.Lines {
					if !line('+', l.Text) {
						return "", false
					}
				}
			}
		case f.NewPath == "":
			b.WriteString("*** Delete File: " + f.OldPath + "\n")
		default:
			b.WriteString("*** Update File: " + f.OldPath + "\n")
			if f.NewPath != f.OldPath {
				b.WriteString("*** Move to: " + f.NewPath + "\n")
			}
			for _, h := range f.Hunks {
				b.WriteString("@@\n")
				for _, l := range h.Lines {
					if !line(l.Op, l.Text) {
						return "", false
					}
				}
			}
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String(), true
}
