package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/internal/sse"
)

const protocolVersion = "2025-06-18"

// conn is one MCP client session.
type conn interface {
	// call sends a request and waits for its response. done is when the
	// last byte of the response was read: decoding and checking it come
	// after, so they are not measured.
	call(ctx context.Context, method string, params json.RawMessage) (resp []byte, done time.Time, err error)
	notify(ctx context.Context, method string, params json.RawMessage) error
	close() error
}

// checkResponse reports a JSON-RPC error, or a tool result with isError, as
// an error.
func checkResponse(resp []byte) error {
	m, bad := jsonrpc.Decode(resp)
	if bad != nil {
		return fmt.Errorf("undecodable response: %v", bad)
	}
	if m.Error != nil {
		e := jsonrpc.DecodeError(m.Error)
		return fmt.Errorf("JSON-RPC error %d: %s", e.Code, e.Message)
	}
	if !bytes.Contains(m.Result, []byte(`"isError"`)) {
		return nil // spare decoding a large result once more
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &r); err == nil && r.IsError {
		msg := ""
		if len(r.Content) > 0 {
			msg, _, _ = strings.Cut(r.Content[0].Text, "\n")
		}
		return fmt.Errorf("tool returned isError: %s", msg)
	}
	return nil
}

var initializeParams = json.RawMessage(`{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"mcpbench","version":"1"}}`)

// initialize performs the MCP handshake on c.
func initialize(ctx context.Context, c conn) error {
	resp, _, err := c.call(ctx, "initialize", initializeParams)
	if err != nil {
		return err
	}
	if err := checkResponse(resp); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return c.notify(ctx, "notifications/initialized", nil)
}

// stdioConn speaks newline-delimited JSON-RPC over a process's stdio.
type stdioConn struct {
	w      io.WriteCloser
	r      *bufio.Reader
	nextID int64
	line   []byte // the last line read, its memory reused by the next
}

func newStdioConn(w io.WriteCloser, r io.Reader) *stdioConn {
	return &stdioConn{w: w, r: bufio.NewReaderSize(r, 1<<20)}
}

func (s *stdioConn) call(ctx context.Context, method string, params json.RawMessage) ([]byte, time.Time, error) {
	s.nextID++
	id := s.nextID
	msg := append(jsonrpc.AppendRequest(nil, id, method, params), '\n')
	if _, err := s.w.Write(msg); err != nil {
		return nil, time.Time{}, fmt.Errorf("writing to server: %w", err)
	}
	want := strconv.FormatInt(id, 10)
	for {
		line, err := s.readLine()
		done := time.Now()
		if err != nil {
			return nil, done, fmt.Errorf("reading from server: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, done, err
		}
		m, bad := jsonrpc.Decode(line)
		if bad != nil {
			return nil, done, fmt.Errorf("server wrote a line that is not a JSON-RPC message (%v): %.200q", bad, line)
		}
		switch {
		case m.Kind == jsonrpc.KindRequest:
			// A request from the server: we offer no client capabilities.
			reply := jsonrpc.AppendError(nil, m.ID, jsonrpc.CodeMethodNotFound, "not supported by mcpbench")
			if _, err := s.w.Write(append(reply, '\n')); err != nil {
				return nil, done, err
			}
		case m.Kind == jsonrpc.KindResponse && string(m.ID) == want:
			return line, done, nil
		}
	}
}

// readLine reads the next line into the memory of the last one: a 10 MB
// response read into fresh memory on every call cost the client thousands
// of page faults inside the time measured, more than the server's own work
// on this machine.
func (s *stdioConn) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		s.line = append(s.line, frag...)
		if err != bufio.ErrBufferFull {
			return s.line, err
		}
	}
}

func (s *stdioConn) notify(ctx context.Context, method string, params json.RawMessage) error {
	_, err := s.w.Write(append(jsonrpc.AppendNotification(nil, method, params), '\n'))
	return err
}

func (s *stdioConn) close() error { return s.w.Close() }

// httpConn speaks streamable HTTP: one POST per message, answered with
// JSON or an SSE stream.
type httpConn struct {
	url     string
	client  *http.Client
	session string
	nextID  int64
}

func newHTTPConn(url string, client *http.Client) *httpConn {
	return &httpConn{url: url, client: client}
}

func (h *httpConn) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	return h.client.Do(req)
}

func (h *httpConn) call(ctx context.Context, method string, params json.RawMessage) ([]byte, time.Time, error) {
	h.nextID++
	id := h.nextID
	resp, err := h.post(ctx, jsonrpc.AppendRequest(nil, id, method, params))
	if err != nil {
		return nil, time.Time{}, err
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, time.Now(), fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && h.session == "" {
		h.session = s
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		return b, time.Now(), err
	case "text/event-stream":
		return readSSE(resp.Body, strconv.FormatInt(id, 10))
	default:
		return nil, time.Now(), fmt.Errorf("unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// readSSE reads events until the response with the wanted ID.
func readSSE(body io.Reader, want string) ([]byte, time.Time, error) {
	r := sse.NewReader(body, 1<<30)
	for {
		ev, err := r.Next()
		if err != nil {
			return nil, time.Now(), fmt.Errorf("SSE stream ended before the response: %w", err)
		}
		if len(ev.Data) == 0 {
			continue
		}
		done := time.Now()
		if m, bad := jsonrpc.Decode(ev.Data); bad == nil && m.Kind == jsonrpc.KindResponse && string(m.ID) == want {
			return ev.Data, done, nil
		}
	}
}

func (h *httpConn) notify(ctx context.Context, method string, params json.RawMessage) error {
	resp, err := h.post(ctx, jsonrpc.AppendNotification(nil, method, params))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notification %s: HTTP %s", method, resp.Status)
	}
	return nil
}

func (h *httpConn) close() error {
	if h.session == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", h.session)
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// stdioMux shares one stdio session among concurrent callers: each call
// writes its request whole, and one reader hands every response to the
// call that waits for its id. It serves -c above 1 over stdio: that many
// requests in flight on the one connection.
type stdioMux struct {
	w      io.WriteCloser
	wmu    sync.Mutex
	nextID atomic.Int64

	mu      sync.Mutex
	waiting map[string]chan muxReply
	err     error // why reading stopped
}

type muxReply struct {
	line []byte
	done time.Time
}

// newStdioMux takes over s's pipes; s must not be used for calls after.
func newStdioMux(s *stdioConn) *stdioMux {
	m := &stdioMux{w: s.w, waiting: make(map[string]chan muxReply)}
	m.nextID.Store(s.nextID)
	go m.read(s.r)
	return m
}

func (m *stdioMux) read(r *bufio.Reader) {
	for {
		line, err := r.ReadBytes('\n')
		done := time.Now()
		if err != nil {
			m.fail(fmt.Errorf("reading from server: %w", err))
			return
		}
		msg, bad := jsonrpc.Decode(line)
		if bad != nil {
			m.fail(fmt.Errorf("server wrote a line that is not a JSON-RPC message (%v): %.200q", bad, line))
			return
		}
		switch msg.Kind {
		case jsonrpc.KindRequest:
			m.write(jsonrpc.AppendError(nil, msg.ID, jsonrpc.CodeMethodNotFound, "not supported by mcpbench"))
		case jsonrpc.KindResponse:
			m.mu.Lock()
			ch := m.waiting[string(msg.ID)]
			delete(m.waiting, string(msg.ID))
			m.mu.Unlock()
			if ch != nil {
				ch <- muxReply{line, done}
			}
		}
	}
}

// fail ends every call waiting, and those to come, with err.
func (m *stdioMux) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
	for id, ch := range m.waiting {
		close(ch)
		delete(m.waiting, id)
	}
}

func (m *stdioMux) write(msg []byte) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_, err := m.w.Write(append(msg, '\n'))
	return err
}

func (m *stdioMux) call(ctx context.Context, method string, params json.RawMessage) ([]byte, time.Time, error) {
	id := m.nextID.Add(1)
	ch := make(chan muxReply, 1)
	key := strconv.FormatInt(id, 10)
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, time.Now(), m.err
	}
	m.waiting[key] = ch
	m.mu.Unlock()
	if err := m.write(jsonrpc.AppendRequest(nil, id, method, params)); err != nil {
		return nil, time.Now(), fmt.Errorf("writing to server: %w", err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			m.mu.Lock()
			defer m.mu.Unlock()
			return nil, time.Now(), m.err
		}
		return r.line, r.done, nil
	case <-ctx.Done():
		return nil, time.Now(), ctx.Err()
	}
}

func (m *stdioMux) notify(ctx context.Context, method string, params json.RawMessage) error {
	return m.write(jsonrpc.AppendNotification(nil, method, params))
}

func (m *stdioMux) close() error { return m.w.Close() }
