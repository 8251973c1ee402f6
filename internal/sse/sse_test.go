package sse_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/sse"
)

func readAll(t *testing.T, s string, max int) ([]sse.Event, error) {
	t.Helper()
	r := sse.NewReader(strings.NewReader(s), max)
	var evs []sse.Event
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []sse.Event
	}{
		{"one", "event: message\ndata: {}\n\n", []sse.Event{{Event: "message", Data: []byte("{}")}}},
		{"crlf and id", "id: 7\r\ndata: a\r\n\r\n", []sse.Event{{ID: "7", Data: []byte("a")}}},
		{"data lines joined", "data: a\ndata:b\ndata: \n\n", []sse.Event{{Data: []byte("a\nb\n")}}},
		{"comments and unknown fields", ": ping\n\nretry: 10\nfoo\ndata: x\n\n", []sse.Event{{Data: []byte("x")}}},
		{"empty data line", "id: 3\ndata: \n\n", []sse.Event{{ID: "3"}}},
		{"event without data", "event: ping\n\n", []sse.Event{{Event: "ping"}}},
		{"id alone is no event", "id: 4\n\n\n", nil},
		{"ends within an event", "data: tail", []sse.Event{{Data: []byte("tail")}}},
		{"two", "data: 1\n\ndata: 2\n\n", []sse.Event{{Data: []byte("1")}, {Data: []byte("2")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.in, 1<<10)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReaderRetry: the retry field sets the stream's reconnection time,
// whether its event has data or not; a value that is not whole
// milliseconds is ignored.
func TestReaderRetry(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"data: x\n\n", 0},
		{"id: 1\nretry: 500\ndata: \n\n", 500 * time.Millisecond},
		{"retry: 250\n\ndata: x\n\n", 250 * time.Millisecond},
		{"retry: 250\ndata: x\n\nretry: 1000\ndata: y\n\n", time.Second},
		{"retry: 300\ndata: x\n\nretry: 1.5\ndata: y\n\nretry: -1\ndata: z\n\n", 300 * time.Millisecond},
	} {
		r := sse.NewReader(strings.NewReader(tc.in), 1<<10)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		if r.Retry() != tc.want {
			t.Errorf("%q: Retry() = %s, want %s", tc.in, r.Retry(), tc.want)
		}
	}
}

func TestReaderLineTooLong(t *testing.T) {
	evs, err := readAll(t, "data: ok\n\ndata: "+strings.Repeat("x", 100)+"\n\n", 64)
	if !errors.Is(err, sse.ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
	if len(evs) != 1 || string(evs[0].Data) != "ok" {
		t.Errorf("events before the long line: %q", evs)
	}
}

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   sse.Event
		want string
	}{
		{"message", sse.Event{ID: "s-1", Event: "message", Data: []byte(`{"a":1}`)}, "id: s-1\nevent: message\ndata: {\"a\":1}\n\n"},
		{"no data", sse.Event{ID: "s-2"}, "id: s-2\ndata: \n\n"},
		{"lines", sse.Event{Data: []byte("a\nb")}, "data: a\ndata: b\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := bufio.NewWriter(&b)
			if err := sse.Write(w, tc.ev); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if b.String() != tc.want {
				t.Errorf("wrote %q, want %q", b.String(), tc.want)
			}
			got, err := readAll(t, b.String(), 1<<10)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.ev
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("read back %q, want %q", got, want)
			}
		})
	}
}

func TestComment(t *testing.T) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	sse.Comment(w, "keep-alive")
	sse.Write(w, sse.Event{Data: []byte("x")})
	w.Flush()
	got, err := readAll(t, b.String(), 1<<10)
	if err != nil || len(got) != 1 || string(got[0].Data) != "x" {
		t.Errorf("read %q, %v: the comment must be skipped", got, err)
	}
	if !strings.HasPrefix(b.String(), ": keep-alive\n\n") {
		t.Errorf("wrote %q", b.String())
	}
}
