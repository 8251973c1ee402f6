package checkpoint

import (
	"context"
	"errors"
	"github.com/praxis-tools/praxis/internal/gittest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a Git repository with one commit of a.txt, and .praxis
// holding a journal as a session would.
func repo(t *testing.T) string {
	t.Helper()
	r := gittest.New(t, map[string]string{"a.txt": "one\n"})
	r.Write(".praxis/sessions/x.jsonl", "{}\n")
	return r.Dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBranchAndCommits(t *testing.T) {
	dir := repo(t)
	ctx := context.Background()
	r, err := Start(ctx, dir, "s1", Clean, "")
	if err != nil {
		t.Fatal(err)
	}
	if cur := gittest.Run(t, dir, "branch", "--show-current"); cur != "praxis/s1" {
		t.Fatalf("on branch %q", cur)
	}
	if c, err := r.Commit(ctx, 1, "Looked around"); err != nil || c != "" {
		t.Fatalf("a step that changed nothing: %q, %v", c, err)
	}
	write(t, dir, "a.txt", "two\n")
	write(t, dir, "b.txt", "new\n")
	c, err := r.Commit(ctx, 2, "Changed a and added b\nmore words")
	if err != nil || c == "" {
		t.Fatalf("commit: %q, %v", c, err)
	}
	if head := gittest.Run(t, dir, "rev-parse", "HEAD"); head != c {
		t.Errorf("HEAD %s, commit %s", head, c)
	}
	msg := gittest.Run(t, dir, "log", "-1", "--format=%B")
	if msg != "Changed a and added b\n\nPraxis-Session: s1\nPraxis-Step: 2" {
		t.Errorf("message %q", msg)
	}
	if tr := gittest.Run(t, dir, "log", "-1", "--format=%(trailers:key=Praxis-Step,valueonly)"); tr != "2" {
		t.Errorf("git reads the step trailer as %q", tr)
	}
	files := gittest.Run(t, dir, "show", "--name-only", "--format=", c)
	if files != "a.txt\nb.txt" {
		t.Errorf("the commit holds %q; the journal must stay out", files)
	}

	// A fork starts from a checkpoint: the first commit's tree, not the
	// branch's tip.
	first := gittest.Run(t, dir, "rev-parse", "main")
	gittest.Run(t, dir, "switch", "-q", "main")
	f, err := Start(ctx, dir, "s2", Clean, first)
	if err != nil {
		t.Fatal(err)
	}
	if f.Branch != "praxis/s2" || gittest.Run(t, dir, "rev-parse", "HEAD") != first {
		t.Errorf("fork on %s at %s", f.Branch, gittest.Run(t, dir, "rev-parse", "HEAD"))
	}
	if r2, err := Resume(ctx, dir, "s1"); err != nil || gittest.Run(t, dir, "branch", "--show-current") != "praxis/s1" || r2.Branch != "praxis/s1" {
		t.Errorf("resume: %v", err)
	}
}

func TestDirtyTree(t *testing.T) {
	ctx := context.Background()
	t.Run("refused", func(t *testing.T) {
		dir := repo(t)
		write(t, dir, "a.txt", "changed\n")
		if _, err := Start(ctx, dir, "s", Clean, ""); !errors.Is(err, ErrDirty) || !strings.Contains(err.Error(), "--git=stash") {
			t.Fatalf("err %v", err)
		}
		if cur := gittest.Run(t, dir, "branch", "--show-current"); cur != "main" {
			t.Errorf("switched to %s", cur)
		}
	})
	t.Run("stash", func(t *testing.T) {
		dir := repo(t)
		write(t, dir, "a.txt", "changed\n")
		write(t, dir, "u.txt", "untracked\n")
		if _, err := Start(ctx, dir, "s", Stash, ""); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\n" {
			t.Errorf("a.txt %q after the stash", b)
		}
		if list := gittest.Run(t, dir, "stash", "list"); !strings.Contains(list, "praxis: before session s") {
			t.Errorf("stash list %q", list)
		}
		if _, err := os.Stat(filepath.Join(dir, ".praxis/sessions/x.jsonl")); err != nil {
			t.Errorf("the journal went into the stash: %v", err)
		}
	})
	t.Run("allow-dirty", func(t *testing.T) {
		dir := repo(t)
		write(t, dir, "a.txt", "changed\n")
		r, err := Start(ctx, dir, "s", AllowDirty, "")
		if err != nil {
			t.Fatal(err)
		}
		if msg := gittest.Run(t, dir, "log", "-1", "--format=%s"); !strings.Contains(msg, "uncommitted changes before session s") {
			t.Errorf("first commit %q", msg)
		}
		write(t, dir, "b.txt", "b\n")
		c, _ := r.Commit(ctx, 1, "b")
		if files := gittest.Run(t, dir, "show", "--name-only", "--format=", c); files != "b.txt" {
			t.Errorf("the step's commit holds %q", files)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		if _, err := Start(ctx, t.TempDir(), "s", Clean, ""); !errors.Is(err, ErrNotRepo) {
			t.Errorf("err %v", err)
		}
	})
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Clean, "true": Clean, "stash": Stash, "allow-dirty": AllowDirty} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, m, err)
		}
	}
	if _, err := ParseMode("force"); err == nil {
		t.Error("ParseMode(force) succeeded")
	}
}
