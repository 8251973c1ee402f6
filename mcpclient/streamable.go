package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/sse"
)

// The HTTP transports' limits.
const (
	// maxHTTPMessage bounds one message (a JSON body, or one event).
	maxHTTPMessage = 64 << 20
	// maxResumes bounds how often one request's event stream is resumed
	// after it broke.
	maxResumes = 3
	// listenRetry is the wait before the standalone stream is reopened,
	// unless the stream set its own with a retry field.
	listenRetry = time.Second
	// deleteTimeout bounds the DELETE that ends a session.
	deleteTimeout = 2 * time.Second
)

// httpTransport speaks MCP's streamable HTTP transport: every message is
// a POST to the endpoint, answered with JSON or with an event stream that
// carries the answer (and what the server sends before it); a stream
// that breaks is resumed with Last-Event-ID when its events have IDs. The
// session's ID (Mcp-Session-Id) goes with every request once the server
// gave one; the standalone GET stream is opened when the server offers
// it; DELETE ends the session on close.
type httpTransport struct {
	url     string
	headers map[string]string // from the configuration
	client  *http.Client
	log     *slog.Logger

	h    handler
	life context.Context // ends with close: the standalone stream
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	session string
	version string // the protocol version the messages name, for GET and DELETE
}

func newHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

func (t *httpTransport) start(_ context.Context, h handler) error {
	t.h = h
	t.life, t.stop = context.WithCancel(context.Background())
	return nil
}

// newRequest makes a request to the endpoint with the configured headers,
// the message's headers and the session's ID.
func (t *httpTransport) newRequest(ctx context.Context, method string, body []byte, headers map[string]string) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.url, r)
	if err != nil {
		return nil, err
	}
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	t.mu.Lock()
	if v := headers[mcp.HeaderProtocolVersion]; v != "" {
		t.version = v
	} else if t.version != "" {
		req.Header.Set(mcp.HeaderProtocolVersion, t.version)
	}
	if t.session != "" {
		req.Header.Set("Mcp-Session-Id", t.session)
	}
	t.mu.Unlock()
	return req, nil
}

// do sends req; a failure to reach the server is a connError.
func (t *httpTransport) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &connError{err}
	}
	return resp, nil
}

func (t *httpTransport) send(ctx context.Context, out outgoing) error {
	req, err := t.newRequest(ctx, http.MethodPost, out.data, out.headers)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := t.do(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.mu.Lock()
		if t.session == "" {
			t.session = id
		}
		t.mu.Unlock()
	}
	if err := t.checkStatus(resp); err != nil {
		return err
	}
	if out.settled == nil || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHTTPMessage))
		return nil
	}
	switch mediaType(resp) {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPMessage+1))
		if err != nil {
			return &connError{fmt.Errorf("reading the answer: %w", err)}
		}
		if len(body) > maxHTTPMessage {
			return fmt.Errorf("the answer is over %d MiB", maxHTTPMessage>>20)
		}
		t.h.receive(body)
		return nil
	case "text/event-stream":
		return t.readAnswer(ctx, resp.Body, out.settled)
	default:
		return fmt.Errorf("the server answered with %q, neither JSON nor an event stream", resp.Header.Get("Content-Type"))
	}
}

// checkStatus turns an HTTP failure into an error: 404 on a session is
// the session's end, a connError; other statuses quote the body's start.
func (t *httpTransport) checkStatus(resp *http.Response) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := "HTTP " + resp.Status
	if s := strings.TrimSpace(string(snippet)); s != "" {
		msg += ": " + s
	}
	if resp.StatusCode == http.StatusNotFound && resp.Request.Header.Get("Mcp-Session-Id") != "" {
		return &connError{fmt.Errorf("the server ended the session (%s)", msg)}
	}
	return errors.New(msg)
}

func mediaType(resp *http.Response) string {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt
}

// readAnswer reads a request's event stream until its answer arrived
// (settled) or the stream ends. A stream that ends first is resumed with
// Last-Event-ID when its events had IDs, after the reconnection time its
// retry field set; otherwise the connection broke.
func (t *httpTransport) readAnswer(ctx context.Context, body io.ReadCloser, settled func() bool) error {
	lastID := ""
	var retry time.Duration
	for resumes := 0; ; resumes++ {
		err := t.readEvents(body, &lastID, &retry, settled)
		if settled() {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if lastID == "" || resumes == maxResumes {
			if err == nil || errors.Is(err, io.EOF) {
				err = errors.New("the server's event stream ended before its answer")
			}
			return &connError{err}
		}
		t.log.Debug("resuming an event stream", "last_event_id", lastID, "after", retry, "err", err)
		if !sleep(ctx, retry) {
			return ctx.Err()
		}
		resp, err := t.get(ctx, lastID)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body = resp.Body
	}
}

// sleep waits d, and reports whether ctx was still alive after it.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// readEvents passes the messages of an event stream to the handler until
// it ends or done reports true; lastID follows the events' IDs, retry the
// stream's reconnection time.
func (t *httpTransport) readEvents(body io.Reader, lastID *string, retry *time.Duration, done func() bool) error {
	r := sse.NewReader(body, maxHTTPMessage)
	for {
		ev, err := r.Next()
		if d := r.Retry(); d > 0 {
			*retry = d
		}
		if err != nil {
			return err
		}
		if ev.ID != "" {
			*lastID = ev.ID
		}
		if len(ev.Data) > 0 && (ev.Event == "" || ev.Event == "message") {
			t.h.receive(ev.Data)
		}
		if done != nil && done() {
			return nil
		}
	}
}

// get opens an event stream with GET, resuming after lastID when it is
// not empty.
func (t *httpTransport) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := t.newRequest(ctx, http.MethodGet, nil, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := t.do(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := t.checkStatus(resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if mediaType(resp) != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("GET answered with %q, not an event stream", resp.Header.Get("Content-Type"))
	}
	return resp, nil
}

// listen opens the session's standalone stream, where the server sends
// what is not the answer to a request, and keeps it open until close. A
// server that does not offer one (405, or anything but a stream) is left
// alone. listen returns once the server answered the first GET, or ctx
// ended, so that the stream is open before the session's first request.
func (t *httpTransport) listen(ctx context.Context) {
	opened := make(chan struct{})
	t.wg.Go(func() {
		once := sync.OnceFunc(func() { close(opened) })
		defer once()
		lastID, retry := "", listenRetry
		for t.life.Err() == nil {
			resp, err := t.get(t.life, lastID)
			once()
			if err != nil {
				if t.life.Err() == nil {
					t.log.Debug("no standalone event stream", "err", err)
				}
				return
			}
			err = t.readEvents(resp.Body, &lastID, &retry, nil)
			resp.Body.Close()
			t.log.Debug("standalone event stream ended", "err", err)
			sleep(t.life, retry)
		}
	})
	select {
	case <-opened:
	case <-ctx.Done():
	}
}

// close ends the standalone stream and the session.
func (t *httpTransport) close() error {
	if t.stop == nil {
		return nil
	}
	t.stop()
	t.mu.Lock()
	session := t.session
	t.mu.Unlock()
	if session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
		defer cancel()
		if req, err := t.newRequest(ctx, http.MethodDelete, nil, nil); err == nil {
			if resp, err := t.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	t.wg.Wait()
	t.client.CloseIdleConnections()
	return nil
}
