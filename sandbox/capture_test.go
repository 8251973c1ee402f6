package sandbox

import (
	"strings"
	"testing"
)

func TestCapture(t *testing.T) {
	type write struct {
		stream int
		data   string
	}
	tests := []struct {
		name    string
		limit   int
		writes  []write
		since   int64
		stdout  string
		stderr  string
		omitted [2]int64
		next    int64
	}{
		{
			name:   "under the cap",
			limit:  16,
			writes: []write{{stdout, "abc"}, {stderr, "E"}, {stdout, "def"}},
			stdout: "abcdef", stderr: "E", next: 7,
		},
		{
			name:    "head and tail kept, middle omitted",
			limit:   8,
			writes:  []write{{stdout, "0123456789"}, {stdout, "abcdefghij"}},
			stdout:  "0123\n…[praxis: 12 bytes omitted]…\nghij",
			omitted: [2]int64{12, 0},
			next:    20,
		},
		{
			name:    "many small writes",
			limit:   4,
			writes:  []write{{stdout, "a"}, {stdout, "b"}, {stdout, "c"}, {stdout, "d"}, {stdout, "e"}, {stdout, "f"}},
			stdout:  "ab\n…[praxis: 2 bytes omitted]…\nef",
			omitted: [2]int64{2, 0},
			next:    6,
		},
		{
			name:   "since skips what was read, per stream",
			limit:  64,
			writes: []write{{stdout, "old"}, {stderr, "OLD"}, {stdout, "new"}, {stderr, "NEW"}},
			since:  6,
			stdout: "new", stderr: "NEW", next: 12,
		},
		{
			name:   "since inside a write",
			limit:  64,
			writes: []write{{stdout, "abcdef"}},
			since:  4,
			stdout: "ef", next: 6,
		},
		{
			name:    "since inside the omitted part",
			limit:   4,
			writes:  []write{{stdout, "0123456789"}},
			since:   4,
			stdout:  "…[praxis: up to 6 bytes omitted]…\n89",
			omitted: [2]int64{6, 0},
			next:    10,
		},
		{
			name:   "since past everything",
			limit:  4,
			writes: []write{{stdout, "0123456789"}},
			since:  10,
			next:   10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.limit)
			for _, w := range tt.writes {
				c.write(w.stream, []byte(w.data))
			}
			out, next := c.since(tt.since)
			if out[0].Text != tt.stdout || out[1].Text != tt.stderr {
				t.Errorf("got stdout %q, stderr %q; want %q, %q", out[0].Text, out[1].Text, tt.stdout, tt.stderr)
			}
			if out[0].Omitted != tt.omitted[0] || out[1].Omitted != tt.omitted[1] || next != tt.next {
				t.Errorf("omitted %d/%d next %d; want %v next %d", out[0].Omitted, out[1].Omitted, next, tt.omitted, tt.next)
			}
		})
	}
}

// The kept bytes never exceed the cap, whatever the writes.
func TestCaptureBounded(t *testing.T) {
	c := newCapture(1000)
	total := 0
	for i := range 5000 {
		b := []byte(strings.Repeat("x", i%97+1))
		c.write(i%2, b)
		total += len(b)
	}
	for i := range 2 {
		s := &c.streams[i]
		if s.headLen+s.tailLen > 1000 {
			t.Errorf("stream %d keeps %d bytes", i, s.headLen+s.tailLen)
		}
	}
	out, next := c.since(0)
	if next != int64(total) || out[0].Total+out[1].Total != int64(total) {
		t.Errorf("next %d totals %d+%d, want %d", next, out[0].Total, out[1].Total, total)
	}
	if kept := out[0].Total - out[0].Omitted; kept != 1000 {
		t.Errorf("stdout keeps %d bytes, want 1000", kept)
	}
}
