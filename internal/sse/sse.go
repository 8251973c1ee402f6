// Package sse reads and writes server-sent events (the text/event-stream
// format of the HTML standard), as MCP's streamable HTTP transport and the
// model providers' streaming APIs use them.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// Event is one server-sent event. Data joins the event's data lines with
// "\n". An empty Event or ID is absent from the stream.
type Event struct {
	ID    string
	Event string
	Data  []byte
}

// Reader reads events from a stream. Lines end in LF or CRLF; comment
// lines (":" first) and fields other than id, event, data and retry are
// ignored.
type Reader struct {
	sc    *bufio.Scanner
	done  bool
	retry time.Duration
}

// Retry returns the reconnection time the stream set last with a retry
// field (whole milliseconds), or 0 when it set none.
func (r *Reader) Retry() time.Duration { return r.retry }

// ErrTooLong is returned by [Reader.Next] for a line longer than the
// reader's limit.
var ErrTooLong = errors.New("sse: line too long")

// NewReader returns a reader of r whose lines may be up to maxLine bytes.
func NewReader(r io.Reader, maxLine int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(64<<10, maxLine)), maxLine)
	return &Reader{sc: sc}
}

// Next returns the next event: the fields read up to a blank line, or up
// to the end of the stream when it ends within an event. An event that
// has neither data lines nor an event name is skipped. At the end of the
// stream Next returns io.EOF; a read error or a line over the limit
// ([ErrTooLong]) is returned as it is and ends the stream.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var hasData bool
	for !r.done {
		if !r.sc.Scan() {
			r.done = true
			if err := r.sc.Err(); err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					err = ErrTooLong
				}
				return Event{}, err
			}
			break
		}
		line := r.sc.Bytes()
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			if hasData || ev.Event != "" {
				return ev, nil
			}
			ev = Event{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "id":
			ev.ID = string(value)
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			hasData = true
		}
	}
	if hasData || ev.Event != "" {
		return ev, nil
	}
	return Event{}, io.EOF
}

// Write writes ev to w, one data line per line of ev.Data, and the blank
// line that ends it. An event with no data gets one empty data line, so
// that a client's last event ID follows ev.ID.
func Write(w *bufio.Writer, ev Event) error {
	if ev.ID != "" {
		w.WriteString("id: ")
		w.WriteString(ev.ID)
		w.WriteByte('\n')
	}
	if ev.Event != "" {
		w.WriteString("event: ")
		w.WriteString(ev.Event)
		w.WriteByte('\n')
	}
	data := ev.Data
	for {
		w.WriteString("data: ")
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			w.Write(data)
			break
		}
		w.Write(data[:i])
		w.WriteByte('\n')
		data = data[i+1:]
	}
	_, err := w.WriteString("\n\n")
	return err
}

// Retry writes the reconnection time a client should wait after the
// stream breaks (the retry field), in whole milliseconds, as an event of
// its own.
func Retry(w *bufio.Writer, d time.Duration) error {
	w.WriteString("retry: ")
	w.WriteString(strconv.FormatInt(d.Milliseconds(), 10))
	_, err := w.WriteString("\n\n")
	return err
}

// Comment writes a comment line, which readers ignore (a keep-alive, say),
// and the blank line after it.
func Comment(w *bufio.Writer, text string) error {
	w.WriteString(": ")
	w.WriteString(text)
	_, err := w.WriteString("\n\n")
	return err
}
