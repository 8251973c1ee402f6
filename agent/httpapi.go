package agent

import (
	"bufio"
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
	req.Header.Set("Accept", "text/event-stream")
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

// sseEvent is one server-sent event.
type sseEvent struct {
	Event string
	Data  string
}

// readSSE reads server-sent events from r and passes each to fn until the
// stream ends, fn returns an error, or ctx is done. Comment lines and
// fields other than event and data are ignored.
func readSSE(ctx context.Context, r io.Reader, fn func(sseEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev sseEvent
	var data []string
	dispatch := func() error {
		if len(data) == 0 && ev.Event == "" {
			return nil
		}
		ev.Data = strings.Join(data, "\n")
		err := fn(ev)
		ev, data = sseEvent{}, nil
		return err
	}
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return dispatch()
}

// errStreamEnded is a stream that stopped before its final event.
var errStreamEnded = errors.New("the stream ended before the reply was complete")
