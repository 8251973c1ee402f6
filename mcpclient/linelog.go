package mcpclient

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// lineLog is the stderr of a stdio server: each line becomes one log record,
// and the last line is kept for error messages.
type lineLog struct {
	log *slog.Logger

	mu   sync.Mutex
	buf  []byte // an incomplete line
	last string
}

// maxLine bounds the bytes of one logged line; a longer one is logged in
// pieces.
const maxLine = 4096

func newLineLog(log *slog.Logger) *lineLog { return &lineLog{log: log} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxLine {
				l.emit(string(l.buf[:maxLine]))
				l.buf = l.buf[maxLine:]
				continue
			}
			return len(p), nil
		}
		l.emit(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLog) emit(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	l.last = line
	l.log.Info(line)
}

// tail returns the last non-empty line written, including a pending
// incomplete one.
func (l *lineLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := strings.TrimSpace(string(l.buf)); s != "" {
		return s
	}
	return l.last
}
