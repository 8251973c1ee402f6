package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 40)
	cases := []struct {
		name, in string
		max      int
		want     []string // the lines handled; "!" for a line over the bound
	}{
		{"LF and CRLF", "a\nb\r\nc", 10, []string{"a", "b", "c"}},
		{"blank lines skipped", "\n  \r\n{}\n\n", 10, []string{"{}"}},
		{"exactly the bound", "12345\n123456\n", 5, []string{"12345", "!"}},
		{"the line after a long one", long + "\nok\n" + long, 8, []string{"!", "ok", "!"}},
		{"a long line over the reader's buffer", strings.Repeat("y", 100) + "\n" + strings.Repeat("z", 50) + "\n", 60, []string{"!", strings.Repeat("z", 50)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			r := bufio.NewReaderSize(strings.NewReader(tc.in), 16)
			err := ReadLines(r, tc.max, func(line []byte) { got = append(got, string(line)) }, func() { got = append(got, "!") })
			if !errors.Is(err, io.EOF) {
				t.Errorf("ReadLines returned %v, want io.EOF", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReadLineKeeps: a line is the caller's; the next read does not
// overwrite it.
func TestReadLineKeeps(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("first\nsecond\n"), 16)
	a, _ := ReadLine(r, 100)
	ReadLine(r, 100)
	if string(a) != "first" {
		t.Errorf("the first line became %q", a)
	}
}

// TestLineWriter: concurrent messages come out whole, one a line.
func TestLineWriter(t *testing.T) {
	var buf bytes.Buffer
	lw := NewLineWriter(&buf)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			lw.SendBytes(AppendNotification(nil, "n", []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("p", 4000)))))
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines, want 50", len(lines))
	}
	for _, l := range lines {
		if _, bad := Decode([]byte(l)); bad != nil {
			t.Errorf("a line is not one message: %v", bad)
		}
	}
}
