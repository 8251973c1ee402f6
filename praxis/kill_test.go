package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const writerEnv = "PRAXIS_TEST_KILLED_WRITER"

// TestMain lets the test binary double as a writer process that
// TestKilledWriterLeavesOldOrNew kills at random moments.
func TestMain(m *testing.M) {
	if dir := os.Getenv(writerEnv); dir != "" {
		runWriter(dir)
		return
	}
	os.Exit(m.Run())
}

// writerContents are the whole-file contents the writer alternates
// between: large enough that a write takes a while.
func writerContents() [2]string {
	return [2]string{strings.Repeat("aaaaaaa\n", 256<<10), strings.Repeat("bbbbbbbbbbbbbbb\n", 64<<10)}
}

// runWriter rewrites f.txt forever, alternating write_file and edit_file,
// with fsync on.
func runWriter(dir string) {
	e, err := New(Options{Workspace: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	contents := writerContents()
	ctx := context.Background()
	for i := 0; ; i++ {
		next := contents[i%2]
		if i%4 < 2 {
			args, _ := json.Marshal(map[string]any{"path": "f.txt", "content": next})
			e.Catalog().Call(ctx, "write_file", args)
			continue
		}
		// An edit that turns the file into next: replace all lines.
		res, _ := e.Catalog().Call(ctx, "read_file", json.RawMessage(`{"path":"f.txt","limit":1}`))
		first := renderedLine.FindStringSubmatch(res.Text)
		var info fileInfo
		if b, err := json.Marshal(res.Structured); err == nil {
			json.Unmarshal(b, &info)
		}
		if first == nil || info.Total == 0 {
			continue
		}
		last, _ := e.Catalog().Call(ctx, "read_file", json.RawMessage(fmt.Sprintf(`{"path":"f.txt","offset":%d}`, info.Total)))
		lastM := renderedLine.FindStringSubmatch(last.Text)
		if lastM == nil {
			continue
		}
		args, _ := json.Marshal(edit("f.txt", op("replace_range", "start_tag", first[1]+":"+first[2], "end_tag", lastM[1]+":"+lastM[2], "new_text", next)))
		e.Catalog().Call(ctx, "edit_file", args)
	}
}

func TestKilledWriterLeavesOldOrNew(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a writer process repeatedly")
	}
	dir := t.TempDir()
	contents := writerContents()
	writeTestFile(t, filepath.Join(dir, "f.txt"), contents[1])
	for round := range 25 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), writerEnv+"="+dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rand.IntN(200)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		got := readTestFile(t, filepath.Join(dir, "f.txt"))
		if got != contents[0] && got != contents[1] {
			t.Fatalf("round %d: after a kill the file holds neither version (%d bytes, starts %q)", round, len(got), got[:min(len(got), 20)])
		}
	}
}
