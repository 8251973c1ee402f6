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
	"github.com/mark3labs/mcp-go/server"

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

// conn is one client session: the stdio connection, or one HTTP session.
// It implements mcp-go's session interfaces that hold per-session state;
// requests run with a call, which adds the stream they answer on.
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
	// server/discover reports the versions the transports accept.
	ctx, end := context.WithCancel(server.WithSupportedProtocolVersions(ctx, s.versions))
	return &conn{srv: s, id: id, ctx: ctx, end: end, out: out, pending: make(map[int64]chan reply), ws: newSessionWorkspace()}
}

// register makes the session known to the protocol server, for broadcasts.
func (c *conn) register() error { return c.srv.mcp.RegisterSession(c.ctx, c) }

// close ends the session: its calls are cancelled, its workspace released.
func (c *conn) close() {
	c.end()
	c.srv.mcp.UnregisterSession(context.Background(), c.id)
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

// NotificationChannel carries notifications that belong to no request
// (list changes, broadcasts) to the session's own stream. The forwarder
// starts with the first of them.
func (c *conn) NotificationChannel() chan<- mcp.JSONRPCNotification {
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
//
// mcp-go sends notifications by a non-blocking send on the session's
// channel. A call's channel is read by a forwarder started with the first
// notification, and finish waits until the forwarder has written everything
// sent before the handler returned; so no notification of a call is lost or
// overtaken by the call's response.
type call struct {
	*conn
	out sink

	once    sync.Once
	started bool
	ch      chan mcp.JSONRPCNotification
	stop    chan struct{}
	exited  chan struct{}

	progressMu   sync.Mutex
	lastProgress float64
	progressSent bool

	resourceCode atomic.Int32 // set when a resource handler found no such resource
}

func newCall(c *conn, out sink) *call { return &call{conn: c, out: out} }

// NotificationChannel carries notifications mcp-go sends on behalf of this
// request to its stream.
func (c *call) NotificationChannel() chan<- mcp.JSONRPCNotification {
	c.once.Do(func() {
		c.started = true
		c.ch = make(chan mcp.JSONRPCNotification, 256)
		c.stop = make(chan struct{})
		c.exited = make(chan struct{})
		go c.forward()
	})
	return c.ch // nil once the call has finished: sends then fall through
}

func (c *call) forward() {
	defer close(c.exited)
	for {
		select {
		case n := <-c.ch:
			c.sendNotification(n)
		case <-c.stop:
			for {
				select {
				case n := <-c.ch:
					c.sendNotification(n)
				default:
					return
				}
			}
		}
	}
}

func (c *call) sendNotification(n mcp.JSONRPCNotification) {
	if err := c.out.send(jsonValue(n)); err != nil {
		c.srv.log.Debug("notification dropped", "session", c.id, "method", n.Method, "err", err)
	}
}

// finish waits until every notification sent during the call is written.
func (c *call) finish() {
	c.once.Do(func() {})
	if c.started {
		close(c.stop)
		<-c.exited
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

// ListRoots asks the client for its roots.
func (c *call) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	if !c.clientHasRoots() {
		return nil, server.ErrRootsNotSupported
	}
	var res mcp.ListRootsResult
	if err := c.request(ctx, string(mcp.MethodListRoots), struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// RequestSampling asks the client to sample its model.
func (c *call) RequestSampling(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if c.GetClientCapabilities().Sampling == nil {
		return nil, errors.New("the client does not support sampling")
	}
	var res mcp.CreateMessageResult
	if err := c.request(ctx, string(mcp.MethodSamplingCreateMessage), req.CreateMessageParams, &res); err != nil {
		return nil, err
	}
	content, err := mcp.ParseSamplingContent(res.Content)
	if err != nil {
		return nil, fmt.Errorf("sampling: %w", err)
	}
	res.Content = content
	return &res, nil
}

// RequestElicitation asks the client's user for input.
func (c *call) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	if c.GetClientCapabilities().Elicitation == nil {
		return nil, errors.New("the client does not support elicitation")
	}
	var res mcp.ElicitationResult
	if err := c.request(ctx, string(mcp.MethodElicitationCreate), req.Params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// connFromContext returns the session a request or notification is served
// for.
func connFromContext(ctx context.Context) *conn {
	switch s := server.ClientSessionFromContext(ctx).(type) {
	case *call:
		return s.conn
	case *conn:
		return s
	}
	return nil
}

// callFromContext returns the request being served, if any.
func callFromContext(ctx context.Context) *call {
	c, _ := server.ClientSessionFromContext(ctx).(*call)
	return c
}

// serve handles one request or notification from c. Messages the request
// emits go to out; the returned function writes its response. It returns
// nil for a notification, and for a request the client cancelled with
// notifications/cancelled: no response is sent for that request. A panic
// anywhere in the protocol server becomes an internal-error response.
func (s *Server) serve(ctx context.Context, c *conn, out sink, env *jsonrpc.Message, raw []byte) writeFunc {
	if env.Kind != jsonrpc.KindRequest {
		if env.Method == string(mcp.MethodNotificationCancelled) {
			c.cancelInflight(env.Params)
		}
		s.handle(s.mcp.WithContext(ctx, c), env, raw)
		return nil
	}
	cl := newCall(c, out)
	ctx = withSession(s.mcp.WithContext(ctx, cl), c)
	var entry *inflightCall
	if env.Method != string(mcp.MethodInitialize) { // initialize cannot be cancelled
		// mcp-go cancels the requests it serves itself; the server's own
		// tool calls get a context cancelInflight cancels.
		key := string(env.ID)
		entry = &inflightCall{}
		if env.Method == string(mcp.MethodToolsCall) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			entry.cancel = cancel
		}
		c.inflight.Store(key, entry)
		defer c.inflight.CompareAndDelete(key, entry)
	}
	var resp writeFunc
	if env.Method == string(mcp.MethodToolsCall) {
		resp = s.safeFastToolCall(ctx, cl, env)
	}
	if resp == nil {
		m := s.handle(ctx, env, raw)
		if m == nil {
			m = mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, "no response", nil)
		}
		resp = responseFunc(env.ID, cl.fixError(m))
	}
	cl.finish()
	if entry != nil && entry.cancelled.Load() {
		return nil
	}
	return resp
}

// handle passes a message to the protocol server.
func (s *Server) handle(ctx context.Context, env *jsonrpc.Message, raw []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving a request", "method", env.Method, "panic", p, "stack", string(debug.Stack()))
			resp = mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", p), nil)
		}
	}()
	return s.mcp.HandleMessage(ctx, raw)
}

// fixError gives a resource handler's not-found error the protocol's
// code, which mcp-go reports as an internal error.
func (c *call) fixError(m mcp.JSONRPCMessage) mcp.JSONRPCMessage {
	code := int(c.resourceCode.Load())
	if code == 0 {
		return m
	}
	switch e := m.(type) {
	case mcp.JSONRPCError:
		if e.Error.Code == mcp.INTERNAL_ERROR {
			e.Error.Code = code
		}
		return e
	case *mcp.JSONRPCError:
		if e.Error.Code == mcp.INTERNAL_ERROR {
			e.Error.Code = code
		}
	}
	return m
}

// notFoundMiddleware records on the call that a resource handler found no
// such resource, with the code the request's protocol version gives it.
func notFoundMiddleware(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		res, err := next(ctx, req)
		if err != nil && (errors.Is(err, server.ErrResourceNotFound) || errors.Is(err, mcp.ErrResourceNotFound)) {
			if cl := callFromContext(ctx); cl != nil {
				code := mcp.RESOURCE_NOT_FOUND
				if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
					code = mcp.INVALID_PARAMS // as 2026-07-28 has it
				}
				cl.resourceCode.Store(int32(code))
			}
		}
		return res, err
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
