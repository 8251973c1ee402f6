package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// transport carries JSON-RPC messages between the client and one server.
type transport interface {
	// start opens the connection. From then on every message the server
	// sends is passed to h.receive, and h.closed is called once when the
	// connection ends for good, with the reason.
	start(ctx context.Context, h handler) error
	// send delivers one message. The answer to a request may be passed to
	// h.receive before send returns (over HTTP it comes back on the POST).
	send(ctx context.Context, out outgoing) error
	// close ends the connection and releases what it holds (a stdio
	// server's process group with it).
	close() error
}

// outgoing is one message to send.
type outgoing struct {
	data []byte
	// headers go with the message over HTTP (protocol version, method).
	headers map[string]string
	// settled, for a request, reports whether its answer has arrived; nil
	// for notifications and responses.
	settled func() bool
}

// handler takes what a transport receives.
type handler interface {
	receive(data []byte)
	closed(err error)
}

// connError is a failure of the connection (a process that died, a
// refused or broken HTTP connection, a session the server forgot), as
// opposed to an answer of the server.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// isConnectionError reports whether err is a failure of the connection
// rather than an answer of the server.
func isConnectionError(err error) bool {
	var ce *connError
	return errors.As(err, &ce)
}

// legacyVersions returns the protocol versions negotiated with
// initialize, newest first: those mcp-go's mcp package lists, up to
// 2025-11-25.
func legacyVersions() []string {
	return slices.DeleteFunc(slices.Clone(mcp.ValidProtocolVersions), mcp.IsModernProtocol)
}

// conn is one MCP session with a server over a transport: the handshake,
// requests and their answers, and what the server sends unasked.
type conn struct {
	t      transport
	log    *slog.Logger
	client mcp.Implementation

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *jsonrpc.Message
	err     error         // why the connection ended, once it has
	done    chan struct{} // closed when the connection ends
	// answering holds a token for each answer to a server's request in
	// flight: a server that floods requests and reads no answers gets
	// no more than its capacity.
	answering chan struct{}
	version   string // the negotiated protocol version
	modern    bool   // 2026-07-28 or later: no session, _meta on every request

	// Set by the handshake.
	server mcp.Implementation
	caps   mcp.ServerCapabilities
}

// maxAnswering bounds the answers to a server's requests in flight.
const maxAnswering = 16

func newConn(t transport, log *slog.Logger, client mcp.Implementation) *conn {
	return &conn{t: t, log: log, client: client, pending: map[string]chan *jsonrpc.Message{}, done: make(chan struct{}), answering: make(chan struct{}, maxAnswering)}
}

// rpcError is the error answer of the server to a request.
type rpcError struct{ jsonrpc.ErrorObject }

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code)
}

// receive implements handler.
func (c *conn) receive(data []byte) {
	items := []json.RawMessage{data}
	if jsonrpc.IsBatch(data) {
		var bad *jsonrpc.Error
		if items, bad = jsonrpc.SplitBatch(data); bad != nil {
			c.log.Warn("MCP server sent something that is not JSON-RPC", "err", bad)
			return
		}
	}
	for _, item := range items {
		m, bad := jsonrpc.Decode(item)
		if bad != nil {
			c.log.Warn("MCP server sent something that is not JSON-RPC", "err", bad)
			continue
		}
		switch m.Kind {
		case jsonrpc.KindRequest:
			select {
			case c.answering <- struct{}{}:
				go func() {
					defer func() { <-c.answering }()
					c.answer(m)
				}()
			default:
				c.log.Warn("MCP server sent more requests than it reads answers; one is left unanswered", "method", m.Method)
			}
		case jsonrpc.KindNotification:
			c.notification(m)
		case jsonrpc.KindResponse:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// closed implements handler.
func (c *conn) closed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	if !isConnectionError(err) {
		err = &connError{err}
	}
	c.err = err
	close(c.done)
}

// answer replies to a request of the server: ping is answered; the
// requests Praxis does not serve (sampling, roots, elicitation, ...) get
// method-not-found, as it declares no capability for them.
func (c *conn) answer(m *jsonrpc.Message) {
	var data []byte
	if m.Method == "ping" {
		data = jsonrpc.AppendResult(nil, m.ID, json.RawMessage("{}"))
	} else {
		c.log.Debug("MCP server asked for something Praxis does not serve", "method", m.Method)
		data = jsonrpc.AppendError(nil, m.ID, jsonrpc.CodeMethodNotFound, "method not found: "+m.Method)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.t.send(ctx, outgoing{data: data, headers: c.headers("")}); err != nil {
		c.log.Debug("answering the MCP server failed", "method", m.Method, "err", err)
	}
}

// notification handles what the server tells unasked. The tool list is
// the one read at the first connection: a change is logged, not followed.
func (c *conn) notification(m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/tools/list_changed":
		c.log.Info("MCP server's tool list changed; the tools listed when it connected stay in use")
	case "notifications/message":
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.log.Debug("MCP server log", "level", p.Level, "logger", p.Logger, "data", string(p.Data))
	default:
		c.log.Debug("MCP server notification", "method", m.Method)
	}
}

// headers are the HTTP headers of a message of method ("" for responses).
// name is the tool a tools/call names.
func (c *conn) headers(method string, name ...string) map[string]string {
	c.mu.Lock()
	version, modern := c.version, c.modern
	c.mu.Unlock()
	if version == "" {
		return nil
	}
	h := map[string]string{mcp.HeaderProtocolVersion: version}
	if modern && method != "" {
		h[mcp.HeaderMethod] = method
		if len(name) > 0 {
			if v, ok := mcp.EncodeHeaderValue(name[0]); ok {
				h[mcp.HeaderName] = v
			}
		}
	}
	return h
}

// withMeta adds, on 2026-07-28 and later, the _meta every request carries:
// the protocol version, the client and its capabilities.
func (c *conn) withMeta(params map[string]any) map[string]any {
	c.mu.Lock()
	version, modern := c.version, c.modern
	c.mu.Unlock()
	if !modern {
		return params
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         c.client,
		mcp.MetaKeyClientCapabilities: struct{}{},
	}
	return params
}

// request sends method with params and decodes the answer's result into
// result (when not nil). An error answer is returned as *rpcError, a
// broken connection as *connError. When ctx ends first, the server is
// told to cancel the request and ctx's error is returned.
func (c *conn) request(ctx context.Context, method string, params map[string]any, result any, name ...string) error {
	c.mu.Lock()
	if c.err != nil {
		defer c.mu.Unlock()
		return c.err
	}
	c.nextID++
	n := c.nextID
	id := json.RawMessage(strconv.FormatInt(n, 10))
	ch := make(chan *jsonrpc.Message, 1)
	c.pending[string(id)] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, string(id))
		c.mu.Unlock()
	}()

	p, err := encodeParams(c.withMeta(params))
	if err != nil {
		return err
	}
	err = c.t.send(ctx, outgoing{data: jsonrpc.AppendRequest(nil, n, method, p), headers: c.headers(method, name...), settled: func() bool { return len(ch) > 0 }})
	select {
	case m := <-ch:
		return decodeResult(m, result)
	default:
	}
	if err != nil {
		if ctx.Err() != nil {
			c.cancel(id, ctx)
			return ctx.Err()
		}
		return err
	}
	select {
	case m := <-ch:
		return decodeResult(m, result)
	case <-ctx.Done():
		c.cancel(id, ctx)
		return ctx.Err()
	case <-c.done:
		select {
		case m := <-ch:
			return decodeResult(m, result)
		default:
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
}

// encodeParams encodes a message's parameters; empty ones are left out.
func encodeParams(params map[string]any) (json.RawMessage, error) {
	if len(params) == 0 {
		return nil, nil
	}
	return json.Marshal(params)
}

func decodeResult(m *jsonrpc.Message, result any) error {
	if m.Error != nil {
		return &rpcError{jsonrpc.DecodeError(m.Error)}
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, result); err != nil {
		return fmt.Errorf("the server's answer does not parse: %w", err)
	}
	return nil
}

// cancel tells the server, without waiting, that the request id is
// abandoned.
func (c *conn) cancel(id json.RawMessage, ctx context.Context) {
	reason := "the client cancelled the request"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "the client's timeout expired"
	}
	go func() {
		_ = c.notify(context.Background(), "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
	}()
}

// notify sends a notification, bounded by a few seconds.
func (c *conn) notify(ctx context.Context, method string, params map[string]any) error {
	p, err := encodeParams(c.withMeta(params))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.t.send(ctx, outgoing{data: jsonrpc.AppendNotification(nil, method, p), headers: c.headers(method)})
}

// handshake settles the protocol version. With tryModern it first asks
// server/discover at 2026-07-28, giving the server probe to answer; a
// server that refuses or ignores it gets initialize, which negotiates the
// newest of legacyVersions the server accepts.
func (c *conn) handshake(ctx context.Context, tryModern bool, probe time.Duration) error {
	if tryModern {
		err := c.discover(ctx, probe)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || isConnectionError(err) {
			return err
		}
		c.log.Debug("server/discover refused; using initialize", "err", err)
	}
	return c.initialize(ctx)
}

func (c *conn) discover(ctx context.Context, probe time.Duration) error {
	c.setVersion(mcp.LATEST_PROTOCOL_VERSION, true)
	pctx, cancel := context.WithTimeout(ctx, probe)
	defer cancel()
	var res mcp.DiscoverResult
	err := c.request(pctx, string(mcp.MethodServerDiscover), nil, &res)
	// A server that answers every method, this one included, with an
	// empty result is not taken for a 2026-07-28 server: the answer must
	// list the version.
	if err == nil && !slices.Contains(res.SupportedVersions, mcp.LATEST_PROTOCOL_VERSION) {
		err = fmt.Errorf("server/discover answered without %s among its versions %v", mcp.LATEST_PROTOCOL_VERSION, res.SupportedVersions)
	}
	if err != nil {
		c.setVersion("", false)
		return err
	}
	c.caps = res.Capabilities
	if info := res.GetResultMeta().ServerInfo(); info != nil {
		c.server = *info
	}
	return nil
}

func (c *conn) initialize(ctx context.Context) error {
	versions := legacyVersions()
	var res mcp.InitializeResult
	err := c.request(ctx, "initialize", map[string]any{
		"protocolVersion": versions[0],
		"capabilities":    struct{}{},
		"clientInfo":      c.client,
	}, &res)
	if err != nil {
		return err
	}
	if !slices.Contains(versions, res.ProtocolVersion) {
		return fmt.Errorf("the server speaks protocol version %q; Praxis speaks %s", res.ProtocolVersion, strings.Join(versions, ", "))
	}
	c.setVersion(res.ProtocolVersion, false)
	c.server, c.caps = res.ServerInfo, res.Capabilities
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	if l, ok := c.t.(listener); ok {
		l.listen(ctx)
	}
	return nil
}

// listener is a transport with a stream for what the server sends unasked,
// opened once the session is initialized.
type listener interface{ listen(ctx context.Context) }

func (c *conn) setVersion(v string, modern bool) {
	c.mu.Lock()
	c.version, c.modern = v, modern
	c.mu.Unlock()
}

// protocolVersion returns the negotiated version.
func (c *conn) protocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// tool is a tool as tools/list describes it; the input schema is kept as
// the server wrote it.
type tool struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	InputSchema json.RawMessage    `json:"inputSchema"`
	Annotations mcp.ToolAnnotation `json:"annotations"`
}

// maxToolPages bounds the pages of tools/list read from one server.
const maxToolPages = 1000

// listTools reads every page of tools/list.
func (c *conn) listTools(ctx context.Context) ([]tool, error) {
	var all []tool
	seen := map[string]bool{}
	cursor := ""
	for range maxToolPages {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		var page struct {
			Tools      []tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := c.request(ctx, string(mcp.MethodToolsList), params, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("tools/list: the server repeats the cursor %q", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("tools/list: more than %d pages", maxToolPages)
}

// callTool runs the server's tool name with the arguments args.
func (c *conn) callTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	var raw json.RawMessage
	err := c.request(ctx, string(mcp.MethodToolsCall), map[string]any{"name": name, "arguments": args}, &raw, name)
	if err != nil {
		return nil, err
	}
	return mcp.ParseCallToolResult(&raw)
}

// close ends the connection.
func (c *conn) close() error {
	err := c.t.close()
	c.closed(errors.New("the connection was closed"))
	return err
}
