package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sourceFile writes about size bytes of Go-like source to dir/name.
func sourceFile(b *testing.B, dir, name string, size int) {
	var s strings.Builder
	for i := 0; s.Len() < size; i++ {
		fmt.Fprintf(&s, "\tif err := step%d(ctx, arg); err != nil {\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

func benchEngine(b *testing.B, noSync bool) (*Engine, string) {
	dir := b.TempDir()
	e, err := New(Options{Workspace: dir, NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e, dir
}

func benchRead(b *testing.B, size int) { benchReadAt(b, "f.go", size) }

// benchReadAt reads a file of size bytes at rel, a slash-separated path.
func benchReadAt(b *testing.B, rel string, size int) {
	e, dir := benchEngine(b, true)
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
		b.Fatal(err)
	}
	sourceFile(b, dir, rel, size)
	args, _ := json.Marshal(map[string]any{"path": rel, "limit": 1000000})
	ctx := context.Background()
	b.SetBytes(int64(size))
	for b.Loop() {
		res, err := e.Catalog().Call(ctx, "read_file", args)
		if err != nil || res.IsError {
			b.Fatal(err, res.Text)
		}
	}
}

func BenchmarkReadFile2KiB(b *testing.B) { benchRead(b, 2<<10) }
func BenchmarkReadFile10MB(b *testing.B) { benchRead(b, 10<<20) }

// BenchmarkReadFile2KiBNested reads a file four directories down, as most
// files of a repository are.
func BenchmarkReadFile2KiBNested(b *testing.B) { benchReadAt(b, "src/pkg/sub/dir/f.go", 2<<10) }

// benchEdit replaces one line in the middle of a 10,000-line file, back and
// forth, so that every call changes the file.
func benchEdit(b *testing.B, noSync bool) {
	e, dir := benchEngine(b, noSync)
	sourceFile(b, dir, "f.go", 10000*45)
	ctx := context.Background()
	read, _ := e.Catalog().Call(ctx, "read_file", json.RawMessage(`{"path":"f.go","offset":5000,"limit":1}`))
	m := renderedLine.FindStringSubmatch(read.Text)
	anchor, text := m[1]+":"+m[2], m[3]
	for i := 0; b.Loop(); i++ {
		next := "\t// changed"
		if i%2 == 1 {
			next = text
		}
		args, _ := json.Marshal(edit("f.go", op("replace_line", "tag", anchor, "new_text", next)))
		res, err := e.Catalog().Call(ctx, "edit_file", args)
		if err != nil || res.IsError {
			b.Fatal(err, res.Text)
		}
		anchor = renderedLine.FindAllStringSubmatch(res.Text, -1)[2][1] + ":" + renderedLine.FindAllStringSubmatch(res.Text, -1)[2][2]
	}
}

func BenchmarkEdit10kLines(b *testing.B)      { benchEdit(b, true) }
func BenchmarkEdit10kLinesFsync(b *testing.B) { benchEdit(b, false) }

// BenchmarkNew measures building an engine (workspace, commit recovery,
// catalog of the built-in tools) and closing it, the start-up of every
// praxis command. The shell is off: probing the sandbox starts processes,
// whose time would drown the rest.
func BenchmarkNew(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		e, err := New(Options{Workspace: dir, NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
