// Package gittest makes Git repositories for tests: real repositories on
// disk, driven by the git program, with one first commit. It is for tests
// only.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a repository in a test's temporary directory.
type Repo struct {
	t   testing.TB
	Dir string
}

// New makes a repository on branch main whose first commit holds files
// (name to content; names may hold slashes). It skips the test when git
// is not installed.
func New(t testing.TB, files map[string]string) *Repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &Repo{t: t, Dir: t.TempDir()}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "user.email", "t@example.com")
	r.Git("config", "user.name", "T")
	for name, text := range files {
		r.Write(name, text)
		r.Git("add", name)
	}
	r.Git("commit", "-q", "--allow-empty", "-m", "first")
	return r
}

// Git runs git with args in the repository and returns its output,
// trimmed; a failure fails the test.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	return Run(r.t, r.Dir, args...)
}

// Run runs git with args in dir and returns its output, trimmed; a
// failure fails the test.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Write writes text to the file name of the work tree, making its
// directories.
func (r *Repo) Write(name, text string) {
	r.t.Helper()
	p := filepath.Join(r.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
}
