package praxis

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/praxis-tools/praxis/praxis/internal/match"
	"github.com/praxis-tools/praxis/praxis/internal/walk"
)

// A grep cancelled while it reads a file in pieces stops before the next
// piece, and before growing its buffer for a long line, instead of reading
// the file to its end.
func TestGrepCancelledMidFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("needle in a line of a large file\n"), 4*grepBuffer/32)
	long := append([]byte("needle\n"), bytes.Repeat([]byte("needle "), 2*grepBuffer)...)
	for name, data := range map[string][]byte{"big.txt": big, "long.txt": long} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	m, err := match.Compile("needle", false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"big.txt", "long.txt"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &cancelling{lineCounter: lineCounter{m: m, ctx: ctx}, cancel: cancel}
			_, err := walk.Walk(context.Background(), root, "", walk.Options{Workers: 1, Select: func(_, n string, _ bool) walk.Choice {
				if n == name {
					return walk.Include
				}
				return walk.Exclude
			}}, func(_ int, f *walk.File) error {
				_, err := f.Scan(make([]byte, 0, grepBuffer), 64<<20, c)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.calls != 2 {
				t.Errorf("%d pieces and long lines offered, want the first and one refused after the cancel", c.calls)
			}
			if c.n == 0 || c.n >= bytes.Count(big, []byte("\n")) {
				t.Errorf("%d lines counted", c.n)
			}
		})
	}
}

// cancelling is a lineCounter that cancels its search after the first
// piece or long line it is offered.
type cancelling struct {
	lineCounter
	cancel func()
	calls  int
}

func (c *cancelling) Piece(p []byte, whole bool) bool {
	c.calls++
	defer c.cancel()
	return c.lineCounter.Piece(p, whole)
}

func (c *cancelling) Long(start []byte) bool {
	c.calls++
	defer c.cancel()
	return c.lineCounter.Long(start)
}
