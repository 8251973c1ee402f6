package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-tools/praxis/internal/lazyre"
	"github.com/praxis-tools/praxis/internal/sse"
)

// maxErrorBody bounds the bytes of an error response read for its message.
const maxErrorBody = 64 << 10

// postJSON sends body to url and returns the response when its status is
// 2xx. Any other status, and a failure to reach the API, is an *APIError;
// classify refines its kind from the response body.
func postJSON(ctx context.Context, hc *http.Client, provider, url string, header http.Header, body any,
	classify func(status int, body []byte) (ErrorKind, string)) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, &APIError{Provider: provider, Kind: ErrNetwork, Message: err.Error(), Err: err}
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &APIError{Provider: provider, Kind: ErrNetwork, Message: err.Error(), Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	kind, msg := classify(resp.StatusCode, data)
	if msg == "" {
		msg = strings.TrimSpace(string(data))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
	}
	return nil, &APIError{
		Provider:   provider,
		Kind:       kind,
		Status:     resp.StatusCode,
		Message:    msg,
		RetryAfter: retryAfter(resp.Header, time.Now()),
	}
}

// retryAfter reads how long the API asks to wait: retry-after-ms, or
// Retry-After in seconds or as an HTTP date. 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// readSSE reads server-sent events from r and passes each to fn until the
// stream ends, fn returns an error, or ctx is done. Comment lines and
// fields other than event and data are ignored.
func readSSE(ctx context.Context, r io.Reader, fn func(sse.Event) error) error {
	sr := sse.NewReader(r, 16<<20)
	for {
		ev, err := sr.Next()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// errStreamEnded is a stream that stopped before its final event.
var errStreamEnded = errors.New("the stream ended before the reply was complete")

// DefaultIdleTimeout is how long a streamed reply may send nothing before
// the call counts as stalled and fails with ErrStalled (retried by
// WithRetry).
const DefaultIdleTimeout = 2 * time.Minute

// wholeReplyTimeout bounds the wait for a reply that is not streamed.
const wholeReplyTimeout = 10 * time.Minute

// errStalled is the cause of a call's context ended by its idle timer.
var errStalled = errors.New("the stream stalled")

// endpoint is a model API's endpoint and how to read its errors.
type endpoint struct {
	provider string
	hc       *http.Client
	url      string
	header   http.Header
	classify func(status int, body []byte) (ErrorKind, string)
	// idle bounds the silence of a streamed reply, from the request on;
	// 0 or less is DefaultIdleTimeout.
	idle time.Duration
}

// post sends body and hands the reply to read, with the context read must
// use. With stream set, the reply is asked for as server-sent events and a
// reply that sends no byte for the idle timeout (waiting for the headers
// included) is cut: the call fails with an *APIError of kind ErrStalled.
// Without stream, the whole reply is waited for up to the idle timeout or
// wholeReplyTimeout, whichever is longer.
func (e endpoint) post(ctx context.Context, body any, stream bool, read func(ctx context.Context, resp *http.Response, r io.Reader) error) error {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	h := e.header.Clone()
	idle := e.idle
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	var timer *time.Timer
	if stream {
		timer = time.AfterFunc(idle, func() { cancel(errStalled) })
		defer timer.Stop()
	} else {
		// A whole reply comes at once, when the model is done: it gets the
		// time a long reply takes.
		h.Set("Accept", "application/json")
		idle = max(idle, wholeReplyTimeout)
		wait := time.AfterFunc(idle, func() { cancel(errStalled) })
		defer wait.Stop()
	}
	resp, err := postJSON(sctx, e.hc, e.provider, e.url, h, body, e.classify)
	if err == nil {
		defer resp.Body.Close()
		var r io.Reader = resp.Body
		if timer != nil {
			r = &idleReader{r: r, timer: timer, idle: idle}
		}
		err = read(sctx, resp, r)
	}
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(sctx), errStalled) {
		return &APIError{Provider: e.provider, Kind: ErrStalled, Message: fmt.Sprintf("the reply sent nothing for %s", idle), Err: errStalled}
	}
	return err
}

// idleReader restarts an idle timer whenever bytes arrive.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.timer.Reset(ir.idle)
	}
	return n, err
}

// isJSONReply reports whether resp is a plain JSON body: a server that
// ignores the request for a stream answers so.
func isJSONReply(resp *http.Response) bool {
	return strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "application/json")
}

// streamWord finds the word stream or streaming (not upstream).
var streamWord = lazyre.New(`(?i)\bstream(ing)?\b`)

// refusesStreaming reports whether err is an API's refusal to stream, so
// that the same request may be sent again without streaming.
func refusesStreaming(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Kind != ErrRefused || ae.Status < 400 || ae.Status >= 500 {
		return false
	}
	return streamWord.Get().MatchString(ae.Message)
}

// withUsage adds u to the usage of err when it is an *APIError.
func withUsage(err error, u Usage) error {
	var ae *APIError
	if errors.As(err, &ae) {
		ae.Usage = ae.Usage.Add(u)
	}
	return err
}
