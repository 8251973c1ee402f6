package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// DefaultMaxMessageBytes is the default bound on one incoming message, on
// either transport: large enough for a write_file of the largest file
// read_file accepts, escaped.
const DefaultMaxMessageBytes = 96 << 20

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// MaxMessageBytes bounds one incoming line. A longer line is skipped and
	// answered with a JSON-RPC error. Default DefaultMaxMessageBytes.
	MaxMessageBytes int
}

// lineWriter is the stdio sink: one message per line, written whole and
// flushed.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) send(enc writeFunc) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := enc(l.w); err != nil {
		return err
	}
	if err := l.w.WriteByte('\n'); err != nil {
		return err
	}
	return l.w.Flush()
}

// ServeStdio serves one client over newline-delimited JSON-RPC on r and w
// until r ends or ctx is cancelled. Only protocol messages are written to w.
// Requests are served concurrently; a request's notifications are written
// before its response. When ServeStdio returns, the calls it started have
// been cancelled and have returned.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer, opts StdioOptions) error {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	out := &lineWriter{w: bufio.NewWriterSize(w, 64<<10)}
	c := newConn(ctx, s, "stdio", out)
	if err := c.register(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer func() {
		c.close() // cancels what still runs
		waitAtMost(&wg, shutdownGrace)
	}()

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(c.ctx, bufio.NewReaderSize(r, 64<<10), opts.MaxMessageBytes, lines, out)
	}()
	for {
		var line []byte
		select {
		case line = <-lines:
		case err := <-readErr:
			// The client closed its end: let the calls in flight answer.
			wg.Wait()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-ctx.Done():
			return nil
		}
		var env envelope
		if err := json.Unmarshal(line, &env); err != nil {
			out.send(errorFunc(nil, mcp.PARSE_ERROR, "parse error: "+err.Error()))
			continue
		}
		switch env.kind() {
		case kindResponse:
			if !c.deliver(&env) {
				s.log.Debug("stdio: response to no pending request", "id", string(env.ID))
			}
		case kindNotification:
			s.serve(c.ctx, c, out, &env, line)
		case kindRequest:
			if env.Method == string(mcp.MethodInitialize) {
				// Served in order, so that what follows finds the session
				// initialized.
				if err := out.send(s.serve(c.ctx, c, out, &env, line)); err != nil {
					s.log.Warn("stdio: writing a response", "err", err)
				}
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resp := s.serve(c.ctx, c, out, &env, line); resp != nil {
					if err := out.send(resp); err != nil {
						s.log.Warn("stdio: writing a response", "err", err)
					}
				}
			}()
		default:
			out.send(errorFunc(env.ID, mcp.INVALID_REQUEST, "invalid request: not a JSON-RPC request, notification or response"))
		}
	}
}

// readLines sends each non-blank line of r to lines. A line over max bytes
// is skipped to its end and answered on out with an error.
func readLines(ctx context.Context, r *bufio.Reader, max int, lines chan<- []byte, out sink) error {
	for {
		line, err := readLine(r, max)
		if errors.Is(err, errLineTooLong) {
			out.send(errorFunc(nil, mcp.INVALID_REQUEST, fmt.Sprintf("message over the limit of %d bytes", max)))
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			select {
			case lines <- line:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err != nil {
			return err
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its end. Past max bytes it discards the
// rest of the line and returns errLineTooLong.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
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
			return nil, errLineTooLong
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

// errorFunc writes a JSON-RPC error response.
func errorFunc(id json.RawMessage, code int, msg string) writeFunc {
	return responseFunc(id, mcp.NewJSONRPCError(mcp.NewRequestId(nil), code, msg, nil))
}

// shutdownGrace is how long cancelled calls get to return before the
// server stops waiting for them.
const shutdownGrace = 5 * time.Second

// waitAtMost waits for wg, or for d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
