package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"

	"github.com/praxis-tools/praxis/internal/sse"
)

// sseTransport speaks the HTTP+SSE transport of protocol 2024-11-05: one
// GET event stream carries everything the server sends, its first event
// ("endpoint") names the URL the client POSTs its messages to. That URL
// must have the stream's origin, so that a server cannot send the
// client's messages (and its headers) elsewhere.
type sseTransport struct {
	url     string
	headers map[string]string
	client  *http.Client
	log     *slog.Logger

	endpoint string
	stop     context.CancelFunc
	wg       sync.WaitGroup
}

func (t *sseTransport) start(ctx context.Context, h handler) error {
	life, stop := context.WithCancel(context.Background())
	t.stop = stop
	// Until the endpoint is known, ctx bounds the wait.
	unbind := context.AfterFunc(ctx, stop)
	defer unbind()

	req, err := http.NewRequestWithContext(life, http.MethodGet, t.url, nil)
	if err != nil {
		return err
	}
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &connError{err}
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("GET %s: HTTP %s, %q: %s", t.url, resp.Status, resp.Header.Get("Content-Type"), snippet)
	}
	r := sse.NewReader(resp.Body, maxHTTPMessage)
	for t.endpoint == "" {
		ev, err := r.Next()
		if err != nil {
			resp.Body.Close()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &connError{fmt.Errorf("the event stream ended before naming its endpoint: %w", err)}
		}
		if ev.Event != "endpoint" {
			continue
		}
		ep, err := sameOrigin(t.url, string(ev.Data))
		if err != nil {
			resp.Body.Close()
			return err
		}
		t.endpoint = ep
	}
	t.wg.Go(func() {
		defer resp.Body.Close()
		var err error
		for {
			var ev sse.Event
			if ev, err = r.Next(); err != nil {
				break
			}
			if len(ev.Data) > 0 && (ev.Event == "" || ev.Event == "message") {
				h.receive(ev.Data)
			}
		}
		if errors.Is(err, io.EOF) {
			err = errors.New("the server ended its event stream")
		}
		h.closed(&connError{err})
	})
	return nil
}

// sameOrigin resolves the endpoint ref against the stream's URL base and
// checks it has the same scheme and host.
func sameOrigin(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("the server's endpoint %q: %w", ref, err)
	}
	u := b.ResolveReference(r)
	if u.Scheme != b.Scheme || u.Host != b.Host {
		return "", fmt.Errorf("the server's endpoint %q is not on %s://%s", ref, b.Scheme, b.Host)
	}
	return u.String(), nil
}

func (t *sseTransport) send(ctx context.Context, out outgoing) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(out.data))
	if err != nil {
		return err
	}
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &connError{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("HTTP %s: %s", resp.Status, snippet)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHTTPMessage))
	return nil
}

// close ends the event stream.
func (t *sseTransport) close() error {
	if t.stop != nil {
		t.stop()
	}
	t.wg.Wait()
	t.client.CloseIdleConnections()
	return nil
}
