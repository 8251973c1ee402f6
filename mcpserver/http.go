package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/httpguard"
	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// Defaults of HTTPOptions.
const (
	// DefaultHTTPAddr is where "praxis serve --http" listens.
	DefaultHTTPAddr           = "127.0.0.1:8765"
	DefaultMaxSessions        = 64
	DefaultSessionIdle        = 30 * time.Minute
	DefaultKeepAlive          = 25 * time.Second
	DefaultPath               = "/mcp"
	DefaultMaxBodyBytes       = 4 << 20
	DefaultMaxSessionRequests = 16
	DefaultReadHeaderTimeout  = 10 * time.Second
	DefaultReadBodyTimeout    = 30 * time.Second
	DefaultIdleTimeout        = 2 * time.Minute
	DefaultStreamAfter        = time.Second
)

// ErrTokenRequired is returned when HTTP would be served on a non-loopback
// address without a bearer token.
var ErrTokenRequired = errors.New("serving HTTP on a non-loopback address requires a bearer token")

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Token, if set, must be sent by every request as
	// "Authorization: Bearer TOKEN". Required off loopback.
	Token string
	// AllowedOrigins are origins ("https://example.com:8443") allowed to
	// send requests besides loopback ones. A request whose Origin header is
	// present and not allowed gets 403.
	AllowedOrigins []string
	// MaxSessions bounds the sessions open at once. At the bound, a new
	// session replaces the least recently active idle one; when every
	// session has a request or stream in flight, initialize gets 503.
	// Default DefaultMaxSessions.
	MaxSessions int
	// SessionIdle ends sessions that had no request and no open stream for
	// this long. Default DefaultSessionIdle.
	SessionIdle time.Duration
	// MaxBodyBytes bounds a request body; a larger one gets 413. The body
	// is counted as it is read and never buffered past the bound. Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int
	// MaxSessionRequests bounds the requests one session has in flight; a
	// request over it gets 429. Notifications and responses to the
	// server's requests are not counted. Default DefaultMaxSessionRequests.
	MaxSessionRequests int
	// ReadHeaderTimeout is how long a client may take to send a request's
	// headers; IdleTimeout how long a kept-alive connection may wait for
	// the next request (both applied by ServeStreamableHTTP);
	// ReadBodyTimeout how long a client may take to send a request's body.
	// Defaults DefaultReadHeaderTimeout, DefaultIdleTimeout,
	// DefaultReadBodyTimeout.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	ReadBodyTimeout   time.Duration
	// ReplayBytes is the size of each session's event store: the events of
	// its streams a client that lost a connection can fetch again with GET
	// and Last-Event-ID. Default DefaultReplayBytes.
	ReplayBytes int
	// StreamAfter is how long a request of a session on protocol
	// 2025-11-25 or later may run before its response becomes an event
	// stream, primed with an event ID so that the client can resume it if
	// the connection drops. Default DefaultStreamAfter.
	StreamAfter time.Duration
	// KeepAlive is the interval of comment lines on idle event streams.
	// Default DefaultKeepAlive.
	KeepAlive time.Duration
	// Path is the endpoint's path. Default DefaultPath.
	Path string
	// Loopback makes the handler accept only requests whose Host header
	// names a loopback host (DNS-rebinding protection). ServeStreamableHTTP
	// sets it when the listener is on a loopback address.
	Loopback bool
}

// HTTPHandler serves MCP's streamable HTTP transport. Close ends its
// sessions.
type HTTPHandler struct {
	srv   *Server
	opts  HTTPOptions
	guard *httpguard.Guard
	ctx   context.Context
	stop  context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession

	writers sync.Pool // *bufio.Writer, for responses
}

// httpSession is one HTTP session: the protocol session plus what the
// transport tracks of it.
type httpSession struct {
	*conn
	last     atomic.Int64 // unix nanoseconds of the last activity
	busy     atomic.Int32 // requests and streams in flight
	requests atomic.Int32 // requests in flight
	events   *eventStore

	getMu      sync.Mutex
	getOne     bool    // a standalone GET stream is connected
	standalone *stream // the standalone stream, once a GET opened one
}

func (s *httpSession) enter() { s.busy.Add(1); s.last.Store(time.Now().UnixNano()) }
func (s *httpSession) leave() { s.last.Store(time.Now().UnixNano()); s.busy.Add(-1) }

// NewHTTPHandler returns the streamable HTTP handler for s. The handler
// serves opts.Path and answers 404 elsewhere.
func (s *Server) NewHTTPHandler(opts HTTPOptions) *HTTPHandler {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxSessionRequests <= 0 {
		opts.MaxSessionRequests = DefaultMaxSessionRequests
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if opts.ReadBodyTimeout <= 0 {
		opts.ReadBodyTimeout = DefaultReadBodyTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ReplayBytes <= 0 {
		opts.ReplayBytes = DefaultReplayBytes
	}
	if opts.StreamAfter <= 0 {
		opts.StreamAfter = DefaultStreamAfter
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	h := &HTTPHandler{srv: s, opts: opts, sessions: make(map[string]*httpSession)}
	h.guard = httpguard.New(httpguard.Options{
		Token: opts.Token, AllowedOrigins: opts.AllowedOrigins, Loopback: opts.Loopback,
		AllowMethods:  "GET, POST, DELETE",
		AllowHeaders:  "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID",
		ExposeHeaders: "Mcp-Session-Id",
	})
	h.ctx, h.stop = context.WithCancel(context.Background())
	go h.expire()
	return h
}

// ServeStreamableHTTP serves MCP over streamable HTTP on ln until ctx is
// cancelled, then shuts down: it stops accepting, cancels the calls in
// flight, ends the sessions and waits (a few seconds at most) for the
// handlers to return. Serving on a non-loopback address without a token is
// refused with ErrTokenRequired.
func (s *Server) ServeStreamableHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	loopback := httpguard.LoopbackListener(ln.Addr())
	if !loopback && opts.Token == "" {
		ln.Close()
		return ErrTokenRequired
	}
	opts.Loopback = loopback
	h := s.NewHTTPHandler(opts)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: h.opts.ReadHeaderTimeout,
		IdleTimeout:       h.opts.IdleTimeout,
	}
	s.log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+h.opts.Path, "workspace", s.Workspace())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.SetKeepAlivesEnabled(false)
	h.Close() // cancels calls and ends streams, so Shutdown need not wait for them
	err := hs.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
	}
	<-errc
	return nil
}

// LoopbackAddr reports whether a listen address (host:port) is on the
// loopback interface: an IP literal of it, or "localhost". An empty host
// listens everywhere and is not loopback.
func LoopbackAddr(addr string) bool { return httpguard.LoopbackAddr(addr) }

// Close ends every session: calls in flight are cancelled and streams end.
func (h *HTTPHandler) Close() {
	h.stop()
	h.mu.Lock()
	sessions := h.sessions
	h.sessions = make(map[string]*httpSession)
	h.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
}

// Sessions returns the number of open sessions.
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// expire ends idle sessions until the handler is closed.
func (h *HTTPHandler) expire() {
	tick := time.NewTicker(max(h.opts.SessionIdle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-tick.C:
			h.sweep()
		}
	}
}

func (h *HTTPHandler) sweep() {
	cutoff := time.Now().Add(-h.opts.SessionIdle).UnixNano()
	var idle []*httpSession
	h.mu.Lock()
	for id, s := range h.sessions {
		if s.busy.Load() == 0 && s.last.Load() < cutoff {
			delete(h.sessions, id)
			idle = append(idle, s)
		}
	}
	h.mu.Unlock()
	for _, s := range idle {
		h.srv.log.Info("session expired", "session", s.id)
		s.close()
	}
}

// ServeHTTP checks the request's origin, host and token, then serves it.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.opts.Path {
		httpError(w, http.StatusNotFound, mcp.INVALID_REQUEST, "not found: the MCP endpoint is "+h.opts.Path)
		return
	}
	preflight, refusal := h.guard.Check(w, r)
	if refusal != nil {
		httpError(w, refusal.Status, mcp.INVALID_REQUEST, refusal.Message)
		return
	}
	if preflight {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, mcp.INVALID_REQUEST, "method not allowed")
	}
}

// session returns the session the request names: 400 without the header,
// 404 for an unknown, ended or expired session.
func (h *HTTPHandler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "bad request: the Mcp-Session-Id header is required; initialize first")
		return nil
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil {
		httpError(w, http.StatusNotFound, mcp.INVALID_REQUEST, "session not found: it ended or expired; initialize a new one")
		return nil
	}
	return s
}

func (h *HTTPHandler) newSession() (*httpSession, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() != nil {
		return nil, errors.New("the server is shutting down")
	}
	if len(h.sessions) >= h.opts.MaxSessions && !h.evictIdleLocked() {
		return nil, errTooManySessions
	}
	s := &httpSession{conn: newConn(h.ctx, h.srv, hex.EncodeToString(b[:]), discard{}), events: newEventStore(h.opts.ReplayBytes)}
	s.last.Store(time.Now().UnixNano())
	if err := s.register(); err != nil {
		return nil, err
	}
	h.sessions[s.id] = s
	return s, nil
}

// evictIdleLocked ends the least recently active session that has no
// request or stream in flight, to make room for a new one. Clients that
// never delete their sessions thus cannot lock others out; only when every
// session is busy is a new one refused. It reports whether it made room.
func (h *HTTPHandler) evictIdleLocked() bool {
	var oldest *httpSession
	for _, s := range h.sessions {
		if s.busy.Load() == 0 && (oldest == nil || s.last.Load() < oldest.last.Load()) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	delete(h.sessions, oldest.id)
	h.srv.log.Info("session evicted to make room", "session", oldest.id)
	go oldest.close()
	return true
}

var errTooManySessions = errors.New("too many sessions")

func (h *HTTPHandler) endSession(s *httpSession) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
	s.close()
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, mcp.INVALID_REQUEST, "unsupported media type: the body must be application/json")
		return
	}
	if !accepts(r, "application/json") && !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, mcp.INVALID_REQUEST, "not acceptable: the client must accept application/json and text/event-stream")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	if jsonrpc.IsBatch(body) {
		h.postBatch(w, r, body)
		return
	}
	env, bad := jsonrpc.Decode(body)
	if bad != nil {
		messageHTTPError(w, bad)
		return
	}
	if version, modern, err := h.requestEra(r, env); modern {
		h.postModern(w, r, env, body, version, err)
		return
	} else if err != nil {
		messageHTTPError(w, err)
		return
	}

	var s *httpSession
	if env.Kind == jsonrpc.KindRequest && env.Method == string(mcp.MethodInitialize) {
		if r.Header.Get("Mcp-Session-Id") != "" {
			httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "bad request: initialize opens a new session and must not carry Mcp-Session-Id")
			return
		}
		var err error
		if s, err = h.newSession(); err != nil {
			httpError(w, http.StatusServiceUnavailable, mcp.INTERNAL_ERROR, "cannot open a session: "+err.Error())
			return
		}
	} else if s = h.session(w, r); s == nil {
		return
	}
	s.enter()
	defer s.leave()

	switch env.Kind {
	case jsonrpc.KindResponse:
		if !s.deliver(env) {
			h.srv.log.Debug("http: response to no pending request", "session", s.id, "id", string(env.ID))
		}
		w.WriteHeader(http.StatusAccepted)
		return
	case jsonrpc.KindNotification:
		h.srv.serve(s.ctx, s.conn, discard{}, env, body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !h.admit(w, s, 1) {
		return
	}
	defer s.requests.Add(-1)
	// The call runs in the session's context, not the request's: a client
	// that goes away does not cancel it (notifications/cancelled does).
	// Its events stay in the session's store for the client to resume.
	w.Header().Set("Mcp-Session-Id", s.id)
	ps := h.newPostStream(w, r, s.events, s.negotiated())
	resp := h.srv.serve(s.ctx, s.conn, ps, env, body)
	ps.respond(resp)
	h.releasePostStream(ps)
	if env.Method == string(mcp.MethodInitialize) && !s.Initialized() {
		h.endSession(s) // initialize failed: the session never existed
	}
}

// readBody reads a request's body, at most MaxBodyBytes of it, within
// ReadBodyTimeout. It answers the request itself when it fails.
func (h *HTTPHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := httpguard.ReadBody(w, r, int64(h.opts.MaxBodyBytes), h.opts.ReadBodyTimeout, "praxis serve --max-body")
	if err != nil {
		be, _ := errors.AsType[*httpguard.BodyError](err)
		code := mcp.PARSE_ERROR
		if errors.Is(err, httpguard.ErrTooLarge) {
			code = mcp.INVALID_REQUEST
		}
		httpError(w, be.Status, code, be.Message)
		return nil, false
	}
	return body, true
}

// admit counts n requests of s in flight, or answers 429 when they would
// exceed MaxSessionRequests.
func (h *HTTPHandler) admit(w http.ResponseWriter, s *httpSession, n int32) bool {
	if s.requests.Add(n) > int32(h.opts.MaxSessionRequests) {
		s.requests.Add(-n)
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusTooManyRequests, mcp.INVALID_REQUEST,
			fmt.Sprintf("too many requests: the session already has %d in flight", h.opts.MaxSessionRequests))
		return false
	}
	return true
}

// requestEra tells a request of protocol 2026-07-28 or later, which is
// served without a session, from one of an initialized session, and
// checks the protocol version the request names against the versions the
// server speaks. version is the modern request's version.
func (h *HTTPHandler) requestEra(r *http.Request, env *jsonrpc.Message) (version string, modern bool, err *jsonrpc.Error) {
	header := r.Header.Get("MCP-Protocol-Version")
	meta := metaProtocolVersion(env.Params)
	if !mcp.IsModernProtocol(header) && !mcp.IsModernProtocol(meta) {
		if header != "" && !slices.Contains(h.srv.versions, header) {
			return "", false, &jsonrpc.Error{ID: jsonrpc.EchoableID(env.ID), Code: jsonrpc.CodeInvalidRequest,
				Message: "unsupported MCP-Protocol-Version " + header + "; supported: " + strings.Join(h.srv.versions, ", ")}
		}
		return "", false, nil
	}
	bad := func(code int, msg string) (string, bool, *jsonrpc.Error) {
		return "", true, &jsonrpc.Error{ID: jsonrpc.EchoableID(env.ID), Code: code, Message: msg}
	}
	switch {
	case header == "":
		return bad(mcp.HEADER_MISMATCH, "the MCP-Protocol-Version header is required with a _meta protocol version")
	case meta == "":
		return bad(mcp.INVALID_PARAMS, "missing _meta "+mcp.MetaKeyProtocolVersion)
	case header != meta:
		return bad(mcp.HEADER_MISMATCH, "the MCP-Protocol-Version header "+header+" does not match _meta "+mcp.MetaKeyProtocolVersion+" "+meta)
	case !slices.Contains(h.srv.versions, meta):
		return bad(mcp.UNSUPPORTED_PROTOCOL_VERSION, "unsupported protocol version "+meta+"; supported: "+strings.Join(h.srv.versions, ", "))
	case r.Header.Get("Last-Event-ID") != "":
		return bad(mcp.HEADER_MISMATCH, "Last-Event-ID is not part of protocol version "+meta+": its streams are not resumable")
	}
	if e := mcp.ValidateStandardHeaders(r.Header.Get, meta, mcp.MCPMethod(env.Method), env.Params); e != nil {
		return bad(mcp.HEADER_MISMATCH, e.Error())
	}
	return meta, true, nil
}

// metaProtocolVersion returns the protocol version a request's _meta
// names, if any.
func metaProtocolVersion(params json.RawMessage) string {
	if !bytes.Contains(params, []byte(mcp.MetaKeyProtocolVersion)) {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// postModern serves a message of protocol 2026-07-28 or later: without a
// session, each request on a connection of its own.
func (h *HTTPHandler) postModern(w http.ResponseWriter, r *http.Request, env *jsonrpc.Message, body []byte, version string, bad *jsonrpc.Error) {
	if bad != nil {
		messageHTTPError(w, bad)
		return
	}
	c := newConn(h.ctx, h.srv, "", discard{})
	c.sessionless = true
	defer c.end()
	switch env.Kind {
	case jsonrpc.KindResponse:
		httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "invalid request: protocol version "+version+" has no requests from the server to answer")
		return
	case jsonrpc.KindNotification:
		h.srv.serve(c.ctx, c, discard{}, env, body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ps := h.newPostStream(w, r, newEventStore(0), version)
	ps.respond(h.srv.serve(c.ctx, c, ps, env, body))
	h.releasePostStream(ps)
}

// postBatch serves a JSON-RPC batch, if the session's protocol version
// has them: its responses and notifications in order, its requests
// concurrently, their responses as one array.
func (h *HTTPHandler) postBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	if mcp.IsModernProtocol(r.Header.Get("MCP-Protocol-Version")) {
		messageHTTPError(w, batchRefusal(r.Header.Get("MCP-Protocol-Version")))
		return
	}
	var s *httpSession
	if r.Header.Get("Mcp-Session-Id") == "" {
		messageHTTPError(w, batchRefusal(""))
		return
	}
	if s = h.session(w, r); s == nil {
		return
	}
	if v := s.negotiated(); !batchesAllowed(v) {
		messageHTTPError(w, batchRefusal(v))
		return
	}
	items, bad := jsonrpc.SplitBatch(body)
	if bad != nil {
		messageHTTPError(w, bad)
		return
	}
	s.enter()
	defer s.leave()
	b := splitBatch(s.ctx, s.conn, items)
	reqs, raws, resps := b.reqs, b.raws, b.resps
	if len(reqs) == 0 && len(resps) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !h.admit(w, s, int32(len(reqs))) {
		b.done()
		return
	}
	defer s.requests.Add(-int32(len(reqs)))
	w.Header().Set("Mcp-Session-Id", s.id)
	ps := h.newPostStream(w, r, s.events, s.negotiated())
	resps = append(resps, serveAll(func(i int) writeFunc {
		return h.srv.answer(b.flights[i], ps, reqs[i], raws[i])
	}, len(reqs))...)
	if len(resps) > 0 {
		ps.respond(joinResponses(resps))
	} else {
		ps.respond(nil)
	}
	h.releasePostStream(ps)
}

// postStream is the response to one POST: plain JSON, or an event stream
// once something has to be sent before the response, or once the request
// has run for StreamAfter.
type postStream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	body   jsonBody
	bw     *bufio.Writer // over body
	store  *eventStore
	st     *stream // once an event stream
	ew     *eventWriter
	done   bool
	timer  *time.Timer
	cancel func() bool // stops watching the client's connection
}

// newPostStream prepares the response to a request on w. A request of a
// session on protocol 2025-11-25 or later whose client accepts event
// streams becomes one, primed, after StreamAfter.
func (h *HTTPHandler) newPostStream(w http.ResponseWriter, r *http.Request, store *eventStore, version string) *postStream {
	ps := &postStream{w: w, store: store}
	ps.body.w = w
	bw, _ := h.writers.Get().(*bufio.Writer)
	if bw == nil {
		bw = bufio.NewWriterSize(nil, 32<<10)
	}
	bw.Reset(&ps.body)
	ps.bw = bw
	if store.max > 0 && version >= mcp.ProtocolVersion20251125 && !mcp.IsModernProtocol(version) && acceptsExplicitly(r, "text/event-stream") {
		ps.timer = time.AfterFunc(h.opts.StreamAfter, ps.primeStream)
	}
	ps.cancel = context.AfterFunc(r.Context(), ps.clientGone)
	return ps
}

func (h *HTTPHandler) releasePostStream(ps *postStream) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.cancel()
	if ps.timer != nil {
		ps.timer.Stop()
	}
	ps.bw.Reset(nil)
	h.writers.Put(ps.bw)
	ps.bw = nil
}

// clientGone detaches the stream from the connection the client closed;
// its events keep going to the store.
func (ps *postStream) clientGone() {
	ps.mu.Lock()
	st, ew := ps.st, ps.ew
	ps.mu.Unlock()
	if st != nil {
		st.detach(ew)
	}
}

// primeStream turns a response still running into an event stream whose
// first event gives the client an ID to resume from.
func (ps *postStream) primeStream() {
	ps.mu.Lock()
	if ps.done || ps.st != nil {
		ps.mu.Unlock()
		return
	}
	st := ps.upgradeLocked()
	ps.mu.Unlock()
	st.prime()
}

func (ps *postStream) upgradeLocked() *stream {
	ps.body.started = true
	startEventStream(ps.w)
	ps.ew = newEventWriter(ps.w, ps.bw)
	ps.st = ps.store.open()
	ps.st.w = ps.ew
	return ps.st
}

// jsonBody writes a JSON response body, sending the header with the first
// bytes: a response that fits the buffer gets a Content-Length, a larger
// one is streamed.
type jsonBody struct {
	w       http.ResponseWriter
	started bool
}

func (b *jsonBody) Write(p []byte) (int, error) {
	if !b.started {
		b.started = true
		b.w.Header().Set("Content-Type", "application/json")
		b.w.WriteHeader(http.StatusOK)
	}
	return b.w.Write(p)
}

var errStreamClosed = errors.New("the response was already sent")

func (ps *postStream) send(enc writeFunc) error {
	ps.mu.Lock()
	if ps.done {
		ps.mu.Unlock()
		return errStreamClosed
	}
	st := ps.st
	if st == nil {
		st = ps.upgradeLocked()
	}
	ps.mu.Unlock()
	return st.send(enc)
}

// respond sends the response and ends the stream. A nil enc (a cancelled
// request) sends nothing: an event stream that ends without a response.
func (ps *postStream) respond(enc writeFunc) {
	ps.mu.Lock()
	ps.done = true
	if ps.timer != nil {
		ps.timer.Stop()
	}
	st := ps.st
	if st == nil && enc == nil {
		st = ps.upgradeLocked()
	}
	if st != nil {
		ps.mu.Unlock()
		st.finish(enc)
		return
	}
	defer ps.mu.Unlock()
	if err := enc(ps.bw); err != nil {
		return
	}
	if !ps.body.started {
		ps.w.Header().Set("Content-Length", strconv.Itoa(ps.bw.Buffered()))
	}
	ps.bw.Flush()
}

func startEventStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request) {
	if mcp.IsModernProtocol(r.Header.Get("MCP-Protocol-Version")) {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, mcp.INVALID_REQUEST, "method not allowed: protocol version "+r.Header.Get("MCP-Protocol-Version")+" has no GET stream")
		return
	}
	if !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, mcp.INVALID_REQUEST, "not acceptable: GET opens an event stream; accept text/event-stream")
		return
	}
	s := h.session(w, r)
	if s == nil {
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		h.resume(w, r, s, last)
		return
	}
	s.getMu.Lock()
	if s.getOne {
		s.getMu.Unlock()
		httpError(w, http.StatusConflict, mcp.INVALID_REQUEST, "conflict: the session already has an open GET stream")
		return
	}
	s.getOne = true
	old := s.standalone
	st := s.events.open()
	s.standalone = st
	s.getMu.Unlock()
	if old != nil {
		s.events.drop(old) // a new standalone stream replaces one the client did not resume
	}
	s.enter()
	defer func() {
		s.getMu.Lock()
		s.getOne = false
		s.getMu.Unlock()
		s.leave()
	}()

	w.Header().Set("Mcp-Session-Id", s.id)
	startEventStream(w)
	ew := newEventWriter(w, bufio.NewWriterSize(w, 8<<10))
	// The stream takes the session's messages before the client sees it
	// open (with the first comment), so that none sent after is lost.
	st.attach(ew, 0)
	s.setOut(st)
	if st.ping(ew) != nil {
		st.detach(ew)
		return
	}
	h.follow(r, s, st, ew)
}

// resume serves a GET with Last-Event-ID: the events of that stream the
// client missed, then the stream's further events as they come.
func (h *HTTPHandler) resume(w http.ResponseWriter, r *http.Request, s *httpSession, last string) {
	st, seq, err := s.events.lookup(last)
	if err != nil {
		httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "bad request: Last-Event-ID "+strconv.Quote(last)+": "+err.Error())
		return
	}
	s.enter()
	defer s.leave()
	w.Header().Set("Mcp-Session-Id", s.id)
	startEventStream(w)
	ew := newEventWriter(w, bufio.NewWriterSize(w, 8<<10))
	if !st.attach(ew, seq) {
		return // the stream ended and all of it was replayed
	}
	h.follow(r, s, st, ew)
}

// follow keeps ew attached to st until the stream ends, the client goes
// away, another connection takes the stream over or the session ends,
// with keep-alive comments meanwhile.
func (h *HTTPHandler) follow(r *http.Request, s *httpSession, st *stream, ew *eventWriter) {
	defer st.detach(ew)
	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-st.ended:
			return
		case <-ew.gone:
			return
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C:
			if st.ping(ew) != nil {
				return
			}
		}
	}
}

func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request) {
	s := h.session(w, r)
	if s == nil {
		return
	}
	h.endSession(s)
	w.WriteHeader(http.StatusOK)
}

// accepts reports whether the request's Accept header allows mediaType. A
// missing header accepts anything.
func accepts(r *http.Request, mediaType string) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return true
	}
	major, _, _ := strings.Cut(mediaType, "/")
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if mt == mediaType || mt == "*/*" || mt == major+"/*" {
				return true
			}
		}
	}
	return false
}

// acceptsExplicitly reports whether the request's Accept header names
// mediaType (or a wildcard covering it).
func acceptsExplicitly(r *http.Request, mediaType string) bool {
	return len(r.Header.Values("Accept")) > 0 && accepts(r, mediaType)
}

// httpError answers with status and a JSON-RPC error body.
func httpError(w http.ResponseWriter, status, code int, msg string) {
	writeHTTPError(w, status, &jsonrpc.Error{Code: code, Message: msg})
}

// messageHTTPError answers a message the server cannot serve with 400 and
// its JSON-RPC error.
func messageHTTPError(w http.ResponseWriter, e *jsonrpc.Error) {
	writeHTTPError(w, http.StatusBadRequest, e)
}

func writeHTTPError(w http.ResponseWriter, status int, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	bw := bufio.NewWriter(w)
	errorResponse(e)(bw)
	bw.Flush()
}
