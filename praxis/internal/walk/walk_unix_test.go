//go:build unix

package walk

import (
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestIgnoreFIFO puts FIFOs where ignore files are read, in the directory
// walked and above it: the walk must neither wait on them nor fail.
func TestIgnoreFIFO(t *testing.T) {
	dir := tree(t, "a/b/c.txt", "a/d.txt")
	for _, p := range []string{".gitignore", "a/.ignore", "a/b/.gitignore"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, start := range []string{"", "a", "a/b"} {
		got := walkPaths(t, dir, start, Options{Ignore: true})
		want := []string{"a/b/c.txt", "a/d.txt"}
		if start == "a/b" {
			want = want[:1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("start %q: got %v, want %v", start, got, want)
		}
	}
}
