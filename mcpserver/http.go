package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Defaults of HTTPOptions.
const (
	// DefaultHTTPAddr is where "praxis serve --http" listens.
	DefaultHTTPAddr    = "127.0.0.1:8765"
	DefaultMaxSessions = 64
	DefaultSessionIdle = 30 * time.Minute
	DefaultKeepAlive   = 25 * time.Second
	DefaultPath        = "/mcp"
)

// ErrTokenRequired is returned when HTTP would be served on a non-loopback
// address without a bearer token.
var ErrTokenRequired = errors.New("serving HTTP on a non-loopback address requires a bearer token (--token or PRAXIS_TOKEN)")

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
	// MaxBodyBytes bounds a request body; a larger one gets 413. Default
	// DefaultMaxMessageBytes.
	MaxBodyBytes int
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

// supportedVersions are the protocol versions the transport accepts in the
// MCP-Protocol-Version header.
var supportedVersions = []string{
	mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326, mcp.ProtocolVersion20241105,
}

// HTTPHandler serves MCP's streamable HTTP transport. Close ends its
// sessions.
type HTTPHandler struct {
	srv      *Server
	opts     HTTPOptions
	tokenSum [sha256.Size]byte
	origins  map[string]bool
	ctx      context.Context
	stop     context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession

	writers sync.Pool // *bufio.Writer, for responses
}

// httpSession is one HTTP session: the protocol session plus what the
// transport tracks of it.
type httpSession struct {
	*conn
	last   atomic.Int64 // unix nanoseconds of the last activity
	busy   atomic.Int32 // requests and streams in flight
	getMu  sync.Mutex
	getOne bool // a standalone GET stream is open
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
		opts.MaxBodyBytes = DefaultMaxMessageBytes
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	h := &HTTPHandler{srv: s, opts: opts, origins: make(map[string]bool), sessions: make(map[string]*httpSession)}
	h.tokenSum = sha256.Sum256([]byte(opts.Token))
	for _, o := range opts.AllowedOrigins {
		h.origins[normalizeOrigin(o)] = true
	}
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
	loopback := isLoopbackAddr(ln.Addr())
	if !loopback && opts.Token == "" {
		ln.Close()
		return ErrTokenRequired
	}
	opts.Loopback = loopback
	h := s.NewHTTPHandler(opts)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
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
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return loopbackHost(host)
}

func isLoopbackAddr(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

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
	origin := r.Header.Get("Origin")
	if origin != "" && !h.originAllowed(origin) {
		httpError(w, http.StatusForbidden, mcp.INVALID_REQUEST, "forbidden: origin "+origin+" is not allowed")
		return
	}
	if h.opts.Loopback && !loopbackHost(r.Host) {
		httpError(w, http.StatusForbidden, mcp.INVALID_REQUEST, "forbidden: host "+r.Host+" is not a loopback host")
		return
	}
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", "Mcp-Session-Id")
		w.Header().Add("Vary", "Origin")
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="praxis"`)
		httpError(w, http.StatusUnauthorized, mcp.INVALID_REQUEST, "unauthorized: a valid bearer token is required")
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

// authorized compares the request's bearer token with the configured one in
// constant time (over digests, so the length is not revealed either).
func (h *HTTPHandler) authorized(r *http.Request) bool {
	if h.opts.Token == "" {
		return true
	}
	auth := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) == 1
}

// originAllowed reports whether origin is one given in AllowedOrigins, or
// an http(s) origin on a loopback host.
func (h *HTTPHandler) originAllowed(origin string) bool {
	if h.origins[normalizeOrigin(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Host)
}

func normalizeOrigin(o string) string { return strings.TrimRight(strings.ToLower(o), "/") }

// loopbackHost reports whether a Host header (or an origin's host) names
// this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	s := &httpSession{conn: newConn(h.ctx, h.srv, hex.EncodeToString(b[:]), discard{})}
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.opts.MaxBodyBytes)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, mcp.INVALID_REQUEST, fmt.Sprintf("request body over the limit of %d bytes", h.opts.MaxBodyBytes))
			return
		}
		httpError(w, http.StatusBadRequest, mcp.PARSE_ERROR, "reading the request body: "+err.Error())
		return
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "JSON-RPC batches are not supported")
		return
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		httpError(w, http.StatusBadRequest, mcp.PARSE_ERROR, "parse error: "+err.Error())
		return
	}
	k := env.kind()
	if k == kindInvalid || env.JSONRPC != mcp.JSONRPC_VERSION {
		httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 request, notification or response")
		return
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(supportedVersions, v) {
		httpError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "unsupported MCP-Protocol-Version "+v+"; supported: "+strings.Join(supportedVersions, ", "))
		return
	}

	var s *httpSession
	if k == kindRequest && env.Method == string(mcp.MethodInitialize) {
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

	switch k {
	case kindResponse:
		if !s.deliver(&env) {
			h.srv.log.Debug("http: response to no pending request", "session", s.id, "id", string(env.ID))
		}
		w.WriteHeader(http.StatusAccepted)
		return
	case kindNotification:
		h.srv.serve(s.ctx, s.conn, discard{}, &env, body)
		w.WriteHeader(http.StatusAccepted)
		return
	}

	// A request: its notifications and server-to-client requests upgrade
	// the response to an event stream; otherwise it is plain JSON.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopAfter := context.AfterFunc(s.ctx, cancel) // the session ended
	defer stopAfter()
	w.Header().Set("Mcp-Session-Id", s.id)
	ps := &postStream{w: w, rc: http.NewResponseController(w)}
	ps.body.w = w
	bw, _ := h.writers.Get().(*bufio.Writer)
	if bw == nil {
		bw = bufio.NewWriterSize(nil, 32<<10)
	}
	bw.Reset(&ps.body)
	ps.bw = bw
	resp := h.srv.serve(ctx, s.conn, ps, &env, body)
	if err := ps.respond(resp); err != nil {
		h.srv.log.Debug("http: writing a response", "session", s.id, "err", err)
	}
	bw.Reset(nil)
	h.writers.Put(bw)
	if env.Method == string(mcp.MethodInitialize) && !s.Initialized() {
		h.endSession(s) // initialize failed: the session never existed
	}
}

// postStream is the response to one POST: plain JSON, or an event stream
// once something has to be sent before the response.
type postStream struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	rc   *http.ResponseController
	body jsonBody
	bw   *bufio.Writer // over body
	sse  bool
	done bool
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

func (p *postStream) send(enc writeFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return errStreamClosed
	}
	if !p.sse {
		p.sse = true
		p.body.started = true
		startEventStream(p.w)
	}
	return writeEvent(p.bw, p.rc, enc)
}

func (p *postStream) respond(enc writeFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.sse {
		return writeEvent(p.bw, p.rc, enc)
	}
	if err := enc(p.bw); err != nil {
		return err
	}
	if !p.body.started {
		p.w.Header().Set("Content-Length", strconv.Itoa(p.bw.Buffered()))
	}
	return p.bw.Flush()
}

func startEventStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// writeEvent writes one message as a server-sent event and flushes it.
func writeEvent(bw *bufio.Writer, rc *http.ResponseController, enc writeFunc) error {
	bw.WriteString("event: message\ndata: ")
	if err := enc(bw); err != nil {
		return err
	}
	bw.WriteString("\n\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	return rc.Flush()
}

// getStream is a session's standalone event stream.
type getStream struct {
	mu     sync.Mutex
	bw     *bufio.Writer
	rc     *http.ResponseController
	closed bool
}

func (g *getStream) send(enc writeFunc) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errStreamClosed
	}
	return writeEvent(g.bw, g.rc, enc)
}

func (g *getStream) ping() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bw.WriteString(": keep-alive\n\n")
	if err := g.bw.Flush(); err != nil {
		return err
	}
	return g.rc.Flush()
}

func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, mcp.INVALID_REQUEST, "not acceptable: GET opens an event stream; accept text/event-stream")
		return
	}
	s := h.session(w, r)
	if s == nil {
		return
	}
	s.getMu.Lock()
	if s.getOne {
		s.getMu.Unlock()
		httpError(w, http.StatusConflict, mcp.INVALID_REQUEST, "conflict: the session already has an open GET stream")
		return
	}
	s.getOne = true
	s.getMu.Unlock()
	s.enter()
	defer func() {
		s.getMu.Lock()
		s.getOne = false
		s.getMu.Unlock()
		s.leave()
	}()

	w.Header().Set("Mcp-Session-Id", s.id)
	startEventStream(w)
	g := &getStream{bw: bufio.NewWriterSize(w, 8<<10), rc: http.NewResponseController(w)}
	if err := g.ping(); err != nil {
		return
	}
	s.setOut(g)
	defer func() {
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		s.setOut(discard{})
	}()
	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C:
			if err := g.ping(); err != nil {
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

// httpError answers with status and a JSON-RPC error body.
func httpError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg},
	})
	w.Write(b)
}
