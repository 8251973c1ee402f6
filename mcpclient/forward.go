package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/internal/sse"
)

// ForwardOptions configure Forward.
type ForwardOptions struct {
	// Token is sent as "Authorization: Bearer TOKEN" when set.
	Token string
	// Client makes the HTTP requests. Default: a client without timeouts
	// (streams stay open as long as calls run).
	Client *http.Client
	// MaxMessageBytes bounds one line from the stdio client. Default 96
	// MiB, the bound of the server's own stdio.
	MaxMessageBytes int
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
}

// defaultMaxLineBytes is ForwardOptions.MaxMessageBytes's default.
const defaultMaxLineBytes = 96 << 20

// Forward serves a stdio MCP client (on in and out) by forwarding every
// message to the streamable HTTP endpoint at url, so that a client that
// only speaks stdio can use a shared "praxis serve --http". Requests are
// forwarded concurrently; what the server streams back (notifications,
// its own requests, responses) is written to out in the order it arrives.
// The session is opened by the client's initialize and deleted when in
// ends. Forward returns when in ends or ctx is cancelled.
func Forward(ctx context.Context, url string, opts ForwardOptions, in io.Reader, out io.Writer) error {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = defaultMaxLineBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &forwarder{url: url, opts: opts, out: jsonrpc.NewLineWriter(out), ctx: ctx}

	var (
		mu      sync.Mutex
		closing bool
		wg      sync.WaitGroup
	)
	handle := func(line []byte) {
		if jsonrpc.IsBatch(line) {
			// The server judges batches by the session's protocol version;
			// its answer, an error included, goes back as it is.
			f.post(&jsonrpc.Message{Kind: jsonrpc.KindInvalid}, line)
			return
		}
		env, bad := jsonrpc.Decode(line)
		if bad != nil {
			f.out.SendBytes(bad.Append(nil))
			return
		}
		if env.Kind != jsonrpc.KindRequest || env.Method == methodInitialize {
			// initialize, notifications and responses go in order: the
			// session must exist before anything else, and a cancellation
			// must not overtake what it cancels.
			f.post(env, line)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if closing {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.post(env, line)
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		readErr <- jsonrpc.ReadLines(bufio.NewReaderSize(in, 64<<10), opts.MaxMessageBytes, handle, func() {
			f.out.SendBytes(jsonrpc.AppendError(nil, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over the limit of %d bytes", opts.MaxMessageBytes)))
		})
	}()
	defer f.close()
	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
	}
	mu.Lock()
	closing = true
	mu.Unlock()
	wg.Wait() // at EOF, the requests in flight answer; after ctx, they were cancelled
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// The methods the forwarder watches for.
const (
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
)

type forwarder struct {
	url  string
	opts ForwardOptions
	out  *jsonrpc.LineWriter
	ctx  context.Context

	mu       sync.Mutex
	session  string
	version  string
	listener bool
	init     []byte // the client's initialize request, to open a new session

	reopenMu sync.Mutex // one reopening at a time
}

func (f *forwarder) headers(h http.Header) (session string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opts.Token != "" {
		h.Set("Authorization", "Bearer "+f.opts.Token)
	}
	if f.session != "" {
		h.Set("Mcp-Session-Id", f.session)
	}
	if f.version != "" {
		h.Set("MCP-Protocol-Version", f.version)
	}
	return f.session
}

// send POSTs one message in the current session and returns the response
// and the session it was sent in.
func (f *forwarder) send(body []byte) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	session := f.headers(req.Header)
	resp, err := f.opts.Client.Do(req)
	return resp, session, err
}

// post forwards one message and relays what comes back. A request that
// cannot be delivered is answered with a JSON-RPC error, so that the client
// is never left waiting. When the server no longer knows the session (it
// expired, or the server restarted), a new one is opened with the client's
// initialize and the message is sent again once.
func (f *forwarder) post(env *jsonrpc.Message, body []byte) {
	isInit := env.Method == methodInitialize
	if isInit {
		f.mu.Lock()
		f.init = append([]byte(nil), body...)
		f.mu.Unlock()
	}
	resp, session, err := f.send(body)
	if err == nil && resp.StatusCode == http.StatusNotFound && !isInit && session != "" {
		resp.Body.Close()
		if err = f.reopen(session); err == nil {
			resp, _, err = f.send(body)
		}
	}
	if err != nil {
		f.fail(env, fmt.Sprintf("forwarding to %s: %v", f.url, err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		if env.Kind == jsonrpc.KindInvalid {
			f.relayResponse(resp, env) // a batch: the server's error is its answer
			return
		}
		f.fail(env, statusMessage(f.url, resp))
		return
	}
	if isInit {
		f.mu.Lock()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			f.session = id
		}
		f.mu.Unlock()
	}
	f.relayResponse(resp, env)
	if env.Method == methodInitialized {
		f.startListener()
	}
}

func (f *forwarder) relayResponse(resp *http.Response, env *jsonrpc.Message) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		f.relayEvents(resp.Body, env)
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			f.fail(env, "reading the response: "+err.Error())
			return
		}
		f.relay(b, env)
	}
}

func statusMessage(url string, resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := fmt.Sprintf("%s answered %s", url, resp.Status)
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		msg += ": " + e.Error.Message
	}
	return msg
}

// reopen replaces the session lost, unless another request already did,
// by sending the client's initialize and initialized again.
func (f *forwarder) reopen(lost string) error {
	f.reopenMu.Lock()
	defer f.reopenMu.Unlock()
	f.mu.Lock()
	current, init := f.session, f.init
	f.mu.Unlock()
	if current != lost {
		return nil
	}
	if init == nil {
		return errors.New("the session ended before it was initialized")
	}
	f.mu.Lock()
	f.session = ""
	f.mu.Unlock()
	resp, _, err := f.send(init)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body) // the client has its initialize result already
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		return fmt.Errorf("opening a new session: %s", resp.Status)
	}
	f.mu.Lock()
	f.session = id
	f.listener = false // the standalone stream belonged to the old session
	f.mu.Unlock()
	f.opts.Logger.Info("connect: the session ended on the server; opened a new one")
	resp, _, err = f.send(jsonrpc.AppendNotification(nil, methodInitialized, nil))
	if err != nil {
		return err
	}
	resp.Body.Close()
	f.startListener()
	return nil
}

// relay writes one message from the server to the client, compacted onto
// one line. The negotiated protocol version is remembered from the
// initialize response.
func (f *forwarder) relay(data []byte, env *jsonrpc.Message) {
	var line bytes.Buffer
	if err := json.Compact(&line, data); err != nil {
		f.opts.Logger.Warn("connect: the server sent invalid JSON", "err", err)
		return
	}
	if env != nil && env.Method == methodInitialize {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(line.Bytes(), &r) == nil && r.Result.ProtocolVersion != "" {
			f.mu.Lock()
			f.version = r.Result.ProtocolVersion
			f.mu.Unlock()
		}
	}
	f.out.SendBytes(line.Bytes())
}

// relayEvents relays the messages of an event stream.
func (f *forwarder) relayEvents(r io.Reader, env *jsonrpc.Message) {
	sr := sse.NewReader(r, f.opts.MaxMessageBytes+64)
	for {
		ev, err := sr.Next()
		if err != nil {
			return
		}
		if len(ev.Data) > 0 {
			f.relay(ev.Data, env)
		}
	}
}

func (f *forwarder) fail(env *jsonrpc.Message, msg string) {
	f.opts.Logger.Warn("connect: "+msg, "method", env.Method)
	if env.Kind == jsonrpc.KindRequest {
		f.out.SendBytes(jsonrpc.AppendError(nil, env.ID, jsonrpc.CodeInternalError, msg))
	}
}

// startListener opens the session's standalone stream, which carries what
// the server sends outside of any request, and reopens it when it drops.
func (f *forwarder) startListener() {
	f.mu.Lock()
	if f.listener || f.session == "" {
		f.mu.Unlock()
		return
	}
	f.listener = true
	mine := f.session
	f.mu.Unlock()
	go func() {
		for delay := time.Second; f.ctx.Err() == nil; delay = min(2*delay, 30*time.Second) {
			f.mu.Lock()
			current := f.session
			f.mu.Unlock()
			if current != mine {
				return // the session was replaced; its new stream is another's
			}
			req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, f.url, nil)
			if err != nil {
				return
			}
			req.Header.Set("Accept", "text/event-stream")
			f.headers(req.Header)
			resp, err := f.opts.Client.Do(req)
			if err == nil {
				ok := resp.StatusCode == http.StatusOK
				if ok {
					delay = time.Second
					f.relayEvents(resp.Body, nil)
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound {
					return // no standalone stream, or the session is gone
				}
			}
			select {
			case <-f.ctx.Done():
			case <-time.After(delay):
			}
		}
	}()
}

// close deletes the session on the server.
func (f *forwarder) close() {
	f.mu.Lock()
	session := f.session
	f.mu.Unlock()
	if session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, f.url, nil)
	if err != nil {
		return
	}
	f.headers(req.Header)
	if resp, err := f.opts.Client.Do(req); err == nil {
		resp.Body.Close()
	}
}
