package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/praxis"
)

// writeFunc writes one JSON value.
type writeFunc func(w *bufio.Writer) error

// sink is one stream of messages to a client: stdout, an HTTP response
// upgraded to server-sent events, or a session's standalone GET stream.
// send writes one whole message; concurrent sends do not interleave.
type sink interface {
	send(enc writeFunc) error
}

// discard is the sink of a connection with nowhere to send messages that
// belong to no request (an HTTP session without a GET stream).
type discard struct{}

func (discard) send(writeFunc) error { return errNoStream }

var errNoStream = errors.New("no stream open to the client")

// conn is one client session: the stdio connection, one HTTP session, or
// one request of a protocol without sessions. Requests run with a call,
// which adds the stream they answer on.
type conn struct {
	srv *Server
	id  string
	ctx context.Context // cancelled when the session ends
	end context.CancelFunc

	outMu sync.RWMutex
	out   sink // messages that belong to no request

	initialized atomic.Bool
	level       atomic.Value // mcp.LoggingLevel

	infoMu sync.RWMutex
	info   mcp.Implementation
	caps   mcp.ClientCapabilities

	nextID    atomic.Int64
	pendingMu sync.Mutex
	pending   map[int64]chan reply

	notifyOnce sync.Once
	notify     chan mcp.JSONRPCNotification

	ws *sessionWorkspace

	inflight sync.Map // raw request id -> *inflightCall

	version atomic.Value // string: the protocol version initialize negotiated

	sessionless bool // serves one request of protocol 2026-07-28 or later

	files fileSession // the engine session and the file subscriptions (subscribe.go)
}

// reply is a client's answer to a request the server sent.
type reply struct {
	result json.RawMessage
	err    *mcp.JSONRPCErrorDetails
}

func newConn(ctx context.Context, s *Server, id string, out sink) *conn {
	ctx, end := context.WithCancel(ctx)
	return &conn{srv: s, id: id, ctx: ctx, end: end, out: out, pending: make(map[int64]chan reply), ws: newSessionWorkspace()}
}

// errSessionExists is register's error for a session ID in use.
var errSessionExists = errors.New("session already exists")

// register makes the session known to the server, for the notifications
// it sends every session (list changes).
func (c *conn) register() error {
	if _, loaded := c.srv.sessions.LoadOrStore(c.id, c); loaded {
		return errSessionExists
	}
	return nil
}

// close ends the session: its calls are cancelled, its workspace released.
func (c *conn) close() {
	c.end()
	c.srv.sessions.CompareAndDelete(c.id, c)
	c.ws.close()
}

// negotiated returns the protocol version initialize negotiated, or "".
func (c *conn) negotiated() string {
	v, _ := c.version.Load().(string)
	return v
}

func (c *conn) setOut(out sink) {
	c.outMu.Lock()
	c.out = out
	c.outMu.Unlock()
}

func (c *conn) sendOut(enc writeFunc) error {
	c.outMu.RLock()
	out := c.out
	c.outMu.RUnlock()
	return out.send(enc)
}

func (c *conn) SessionID() string              { return c.id }
func (c *conn) Initialize()                    { c.initialized.Store(true) }
func (c *conn) Initialized() bool              { return c.initialized.Load() }
func (c *conn) SetLogLevel(l mcp.LoggingLevel) { c.level.Store(l) }

func (c *conn) GetLogLevel() mcp.LoggingLevel {
	if l, ok := c.level.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelInfo
}

func (c *conn) GetClientInfo() mcp.Implementation {
	c.infoMu.RLock()
	defer c.infoMu.RUnlock()
	return c.info
}

func (c *conn) SetClientInfo(info mcp.Implementation) {
	c.infoMu.Lock()
	c.info = info
	c.infoMu.Unlock()
}

func (c *conn) GetClientCapabilities() mcp.ClientCapabilities {
	c.infoMu.RLock()
	defer c.infoMu.RUnlock()
	return c.caps
}

func (c *conn) SetClientCapabilities(caps mcp.ClientCapabilities) {
	c.infoMu.Lock()
	c.caps = caps
	c.infoMu.Unlock()
}

func (c *conn) clientHasRoots() bool { return c.GetClientCapabilities().Roots != nil }

// broadcast sends n, a notification that belongs to no request (a list
// change), to the session's own stream. It does not wait for the stream: a
// forwarder, started with the first notification, writes them in order,
// and drops those that find its queue full.
func (c *conn) broadcast(n mcp.JSONRPCNotification) {
	select {
	case c.notifyChannel() <- n:
	default:
		c.srv.log.Debug("notification dropped: queue full", "session", c.id, "method", n.Method)
	}
}

func (c *conn) notifyChannel() chan mcp.JSONRPCNotification {
	c.notifyOnce.Do(func() {
		c.notify = make(chan mcp.JSONRPCNotification, 64)
		go func() {
			for {
				select {
				case n := <-c.notify:
					if err := c.sendOut(jsonValue(n)); err != nil {
						c.srv.log.Debug("notification dropped", "session", c.id, "method", n.Method, "err", err)
					}
				case <-c.ctx.Done():
					return
				}
			}
		}()
	})
	return c.notify
}

// deliver routes a client's response to the request the server sent. It
// reports whether a request was waiting for it.
func (c *conn) deliver(env *jsonrpc.Message) bool {
	id, err := strconv.ParseInt(string(env.ID), 10, 64)
	if err != nil {
		return false
	}
	c.pendingMu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.pendingMu.Unlock()
	if !ok {
		return false
	}
	r := reply{result: env.Result}
	if len(env.Error) > 0 {
		r.err = &mcp.JSONRPCErrorDetails{}
		if json.Unmarshal(env.Error, r.err) != nil {
			r.err.Message = string(env.Error)
		}
	}
	ch <- r // buffered, and delivered at most once
	return true
}

// call is one request being served: the session, plus the stream its
// notifications, its server-to-client requests and its response go to.
// Handlers write the call's notifications to the stream as they send them,
// so they reach the client before the call's response.
type call struct {
	*conn
	out sink
	era era // what the request says of its protocol version

	progressMu   sync.Mutex
	lastProgress float64
	progressSent bool
}

func newCall(c *conn, out sink) *call { return &call{conn: c, out: out} }

func (c *call) sendNotification(n mcp.JSONRPCNotification) {
	if err := c.out.send(jsonValue(n)); err != nil {
		c.srv.log.Debug("notification dropped", "session", c.id, "method", n.Method, "err", err)
	}
}

// progressFunc returns the function that reports a tool's progress as
// notifications/progress for token. Reports are written before the call
// returns; a report that does not increase the progress is dropped, as the
// protocol requires progress to increase.
func (c *call) progressFunc(token mcp.ProgressToken) praxis.ProgressFunc {
	return func(progress, total float64, message string) {
		c.progressMu.Lock()
		defer c.progressMu.Unlock()
		if c.progressSent && progress <= c.lastProgress {
			return
		}
		c.progressSent, c.lastProgress = true, progress
		params := map[string]any{"progressToken": token, "progress": progress}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationProgress),
			Params: mcp.NotificationParams{AdditionalFields: params},
		}}
		c.sendNotification(n)
	}
}

// request sends a request to the client on the call's stream and decodes
// its result into out.
func (c *call) request(ctx context.Context, method string, params, out any) error {
	id := c.conn.nextID.Add(1)
	ch := make(chan reply, 1)
	c.pendingMu.Lock()
	c.pending[id] = ch
	c.pendingMu.Unlock()
	defer func() {
		c.pendingMu.Lock()
		delete(c.pending, id)
		c.pendingMu.Unlock()
	}()
	msg := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, id, method, params}
	if err := c.out.send(jsonValue(msg)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: the client answered with error %d: %s", method, r.err.Code, r.err.Message)
		}
		if err := json.Unmarshal(r.result, out); err != nil {
			return fmt.Errorf("%s: decoding the client's result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case <-c.conn.ctx.Done():
		return fmt.Errorf("%s: the session ended", method)
	}
}

// listRoots asks the client for its roots.
func (c *call) listRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	if !c.clientHasRoots() {
		return nil, errRootsNotSupported
	}
	var res mcp.ListRootsResult
	if err := c.request(ctx, string(mcp.MethodListRoots), struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

var errRootsNotSupported = errors.New("session does not support roots")

// requestSampling asks the client to sample its model.
func (c *call) requestSampling(ctx context.Context, params mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if c.GetClientCapabilities().Sampling == nil {
		return nil, errors.New("the client does not support sampling")
	}
	var res mcp.CreateMessageResult
	if err := c.request(ctx, string(mcp.MethodSamplingCreateMessage), params, &res); err != nil {
		return nil, err
	}
	content, err := mcp.ParseSamplingContent(res.Content)
	if err != nil {
		return nil, fmt.Errorf("sampling: %w", err)
	}
	res.Content = content
	return &res, nil
}

// requestElicitation asks the client's user for input.
func (c *call) requestElicitation(ctx context.Context, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	if c.GetClientCapabilities().Elicitation == nil {
		return nil, errors.New("the client does not support elicitation")
	}
	var res mcp.ElicitationResult
	if err := c.request(ctx, string(mcp.MethodElicitationCreate), params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// callKey is the context key of the request being served.
type callKey struct{}

// withCall makes ctx the context of a request cl serves.
func withCall(ctx context.Context, cl *call) context.Context {
	return context.WithValue(ctx, callKey{}, cl)
}

// callFromContext returns the request being served, if any.
func callFromContext(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// connFromContext returns the session a request is served for.
func connFromContext(ctx context.Context) *conn {
	if c := callFromContext(ctx); c != nil {
		return c.conn
	}
	return nil
}

// serve handles one request or notification from c. Messages the request
// emits go to out; the returned function writes its response. It returns
// nil for a notification, and for a request the client cancelled with
// notifications/cancelled: no response is sent for that request. A panic
// anywhere in serving a request becomes an internal-error response.
func (s *Server) serve(ctx context.Context, c *conn, out sink, env *jsonrpc.Message, raw []byte) writeFunc {
	if env.Kind != jsonrpc.KindRequest {
		s.notification(c, env)
		return nil
	}
	return s.answer(c.admit(ctx, env), out, env, raw)
}

// answer serves the request env, admitted as f, and ends f's flight. It
// returns what serve does.
func (s *Server) answer(f *inflightCall, out sink, env *jsonrpc.Message, raw []byte) writeFunc {
	defer f.done()
	cl := newCall(f.c, out)
	ctx := withSession(withCall(f.ctx, cl), f.c)
	var resp writeFunc
	if env.Method == string(mcp.MethodToolsCall) {
		resp = s.safeFastToolCall(ctx, cl, env)
	}
	if resp == nil {
		resp = responseFunc(env.ID, s.dispatch(ctx, cl, env, raw))
	}
	if f.cancelled.Load() {
		return nil
	}
	return resp
}

// notification handles a notification from the client: a cancellation, or
// word that its roots changed. Others need nothing done.
func (s *Server) notification(c *conn, env *jsonrpc.Message) {
	switch mcp.MCPMethod(env.Method) {
	case mcp.MethodNotificationCancelled:
		c.cancelInflight(env.Params)
	case mcp.MethodNotificationRootsListChanged:
		c.ws.markStale()
	}
}

// safeFastToolCall runs fastToolCall, turning a panic into an internal
// error response. It returns nil when the call is not one for the fast
// path.
func (s *Server) safeFastToolCall(ctx context.Context, cl *call, env *jsonrpc.Message) (resp writeFunc) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving a tool call", "panic", p, "stack", string(debug.Stack()))
			resp = errorFunc(env.ID, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", p))
		}
	}()
	return s.fastToolCall(ctx, cl, env)
}
