//go:build unix

package walk

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// TestReadSwapped replaces a listed file, after the walk has read its
// directory, with what is not a regular file: a FIFO (with a writer that
// never writes, and with none), a directory, a symbolic link to a file
// outside the tree. The read must fail at once, never block, never give
// the link's target, and the walk go on.
func TestReadSwapped(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	swaps := map[string]func(p string) error{
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"fifo-with-writer": func(p string) error {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				return err
			}
			r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				r.Close()
				return err
			}
			t.Cleanup(func() { w.Close(); r.Close() })
			return nil
		},
		"dir":     func(p string) error { return os.Mkdir(p, 0o755) },
		"symlink": func(p string) error { return os.Symlink(outside, p) },
	}
	for name, swap := range swaps {
		t.Run(name, func(t *testing.T) {
			dir := tree(t, "a/x", "a/y")
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			var got []string
			_, err = Walk(context.Background(), root, "", Options{Workers: 1}, func(_ int, f *File) error {
				if f.Name == "x" {
					p := filepath.Join(dir, "a", "x")
					if err := os.Remove(p); err != nil {
						return err
					}
					if err := swap(p); err != nil {
						return err
					}
				}
				data, err := f.Read(nil, 1<<20)
				switch {
				case f.Name == "x" && err == nil:
					return fmt.Errorf("read %q from a swapped-in %s", data, name)
				case f.Name == "x" && !errors.Is(err, ErrNotRegular):
					return fmt.Errorf("%s: %v, want ErrNotRegular", name, err)
				case err == nil:
					got = append(got, string(data))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []string{"a/y\n"}) {
				t.Errorf("read %q, want the other file", got)
			}
		})
	}
}
