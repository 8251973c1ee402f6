package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchEvent is the size of a typical tool_result event.
var benchEvent = json.RawMessage(`{"type":"tool_result","run_id":"20261121-120000-1a2b3c4d","seq":12,"time":"2026-11-21T12:00:00Z","step":3,"call_id":"toolu_01","tool":"read_file","output":"` + strings.Repeat("x", 900) + `","duration_ms":2}`)

// benchValue is a typical tool_result event as the agent appends it.
var benchValue = struct {
	Type, RunID string
	Seq         int64
	Step        int
	CallID      string
	Tool        string
	Output      string
	DurationMS  int64
}{"tool_result", "20261121-120000-1a2b3c4d", 12, 3, "toolu_01", "read_file", strings.Repeat("x ", 450), 2}

// BenchmarkAppend appends events without syncing.
func BenchmarkAppend(b *testing.B) {
	w, err := Create(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for b.Loop() {
		if _, err := w.Append(benchValue); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalWrite is the reference for BenchmarkAppend: the same
// events marshalled and written to a file, one write each, with no
// checksum and no framing.
func BenchmarkMarshalWrite(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for b.Loop() {
		line, err := json.Marshal(benchValue)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendRaw appends a JSON event as given, which is validated and
// compacted first.
func BenchmarkAppendRaw(b *testing.B) {
	w, err := Create(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for b.Loop() {
		if _, err := w.AppendRaw(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads back and verifies a journal of 10,000 records.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	w, _ := Create(dir, "bench")
	for range 10000 {
		w.AppendRaw(benchEvent)
	}
	w.Close()
	b.ResetTimer()
	for b.Loop() {
		log, err := Read(dir, "bench")
		if err != nil || len(log.Records) != 10000 {
			b.Fatal(err)
		}
	}
}
