package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// ErrLineTooLong is returned by ReadLine for a line over its bound.
var ErrLineTooLong = errors.New("jsonrpc: line over the limit")

// ReadLine reads one line of newline-delimited JSON-RPC (the stdio
// framing) without its line end, LF or CRLF. Past max bytes it discards
// the rest of the line and returns ErrLineTooLong; the next call reads the
// line after it. At the end of r it returns what is left with io.EOF.
// The line is the caller's to keep.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, ErrLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			line = append(line, frag...)
			continue
		}
		if line == nil {
			line = make([]byte, len(frag))
			copy(line, frag)
		} else {
			line = append(line, frag...)
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// ReadLines calls handle with each line of r that is not blank, in order,
// until r ends. A line over max bytes is skipped and reported to tooLong.
// It returns io.EOF when r ends, or the error that stopped reading.
func ReadLines(r *bufio.Reader, max int, handle func(line []byte), tooLong func()) error {
	for {
		line, err := ReadLine(r, max)
		if errors.Is(err, ErrLineTooLong) {
			tooLong()
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			handle(line)
		}
		if err != nil {
			return err
		}
	}
}

// LineWriter writes messages one a line, each whole and flushed at once.
// It is safe for concurrent use: messages never interleave.
type LineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// NewLineWriter returns a LineWriter on w.
func NewLineWriter(w io.Writer) *LineWriter {
	return &LineWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// Send writes the message write writes, which must be compact JSON (no
// newline), then the newline, and flushes.
func (l *LineWriter) Send(write func(*bufio.Writer) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := write(l.w); err != nil {
		return err
	}
	if err := l.w.WriteByte('\n'); err != nil {
		return err
	}
	return l.w.Flush()
}

// SendBytes writes msg, compact JSON, as one line.
func (l *LineWriter) SendBytes(msg []byte) error {
	return l.Send(func(w *bufio.Writer) error { _, err := w.Write(msg); return err })
}
