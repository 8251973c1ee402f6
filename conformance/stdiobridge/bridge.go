package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/internal/httpguard"
	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/internal/procgroup"
	"github.com/praxis-tools/praxis/internal/sse"
)

const (
	sessionHeader = "Mcp-Session-Id"
	maxBodyBytes  = 16 << 20
	// killGrace is how long a server process may take to exit after its
	// stdin is closed before it is killed.
	killGrace = 2 * time.Second
)

// bridge is the HTTP handler: it owns the sessions, one process each.
type bridge struct {
	command     []string
	maxSessions int
	log         *slog.Logger
	guard       *httpguard.Guard
	mux         *http.ServeMux // the endpoint's methods; others get 405

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
}

func newBridge(command []string, maxSessions int, log *slog.Logger) *bridge {
	guard := httpguard.New(httpguard.Options{
		Loopback:      true,
		AllowMethods:  "GET, POST, DELETE",
		AllowHeaders:  "Content-Type, Accept, " + sessionHeader + ", MCP-Protocol-Version, Last-Event-ID",
		ExposeHeaders: sessionHeader,
	})
	b := &bridge{command: command, maxSessions: maxSessions, log: log, guard: guard, mux: http.NewServeMux(), sessions: map[string]*session{}}
	b.mux.HandleFunc("POST /mcp", b.post)
	b.mux.HandleFunc("GET /mcp", b.get)
	b.mux.HandleFunc("DELETE /mcp", b.delete)
	return b
}

// closeAll ends every session and refuses new ones.
func (b *bridge) closeAll() {
	b.mu.Lock()
	b.closed = true
	all := make([]*session, 0, len(b.sessions))
	for _, s := range b.sessions {
		all = append(all, s)
	}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.terminate() }()
	}
	wg.Wait()
}

// ServeHTTP refuses requests from other hosts and origins, then serves
// /mcp.
func (b *bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	preflight, refusal := b.guard.Check(w, r)
	if refusal != nil {
		writeRPCError(w, refusal.Status, jsonrpc.CodeInvalidRequest, refusal.Message)
		return
	}
	if !preflight {
		b.mux.ServeHTTP(w, r)
	}
}

// progressToken returns the progress token of a request (in its params'
// _meta) or of a progress notification (in its params), or nil.
func progressToken(m *jsonrpc.Message) json.RawMessage {
	var p struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Meta          struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	if m.Kind == jsonrpc.KindRequest {
		return p.Meta.ProgressToken
	}
	return p.ProgressToken
}

func key(raw json.RawMessage) string { return string(bytes.TrimSpace(raw)) }

func (b *bridge) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	raws, msgs, bad := splitMessages(body)
	if bad != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(append(bad.Append(nil), '\n'))
		return
	}

	var s *session
	if id := r.Header.Get(sessionHeader); id != "" {
		b.mu.Lock()
		s = b.sessions[id]
		b.mu.Unlock()
		if s == nil {
			writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
			return
		}
	} else {
		if len(msgs) != 1 || msgs[0].Method != "initialize" {
			writeRPCError(w, http.StatusBadRequest, -32000, "Bad Request: Mcp-Session-Id header is required")
			return
		}
		if s, err = b.start(); err != nil {
			b.log.Error("starting server", "err", err)
			writeRPCError(w, http.StatusServiceUnavailable, -32603, err.Error())
			return
		}
	}

	var st *stream
	for _, m := range msgs {
		if m.Kind == jsonrpc.KindRequest {
			if st == nil {
				st = newStream()
			}
			st.waiting[key(m.ID)] = true
		}
	}
	if st == nil {
		// Notifications and responses only: accepted, nothing to stream.
		if err := s.send(raws); err != nil {
			http.Error(w, "server process gone", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !s.open(st, msgs) {
		writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
		return
	}
	defer s.release(st)
	if err := s.send(raws); err != nil {
		writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
		return
	}
	w.Header().Set(sessionHeader, s.id)
	serveSSE(w, r, st)
}

func (b *bridge) get(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	s := b.sessions[r.Header.Get(sessionHeader)]
	b.mu.Unlock()
	if s == nil {
		writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
		return
	}
	st := newStream()
	if !s.openGet(st) {
		http.Error(w, "Conflict: a GET stream is already open for this session", http.StatusConflict)
		return
	}
	defer s.releaseGet(st)
	w.Header().Set(sessionHeader, s.id)
	serveSSE(w, r, st)
}

func (b *bridge) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(sessionHeader)
	b.mu.Lock()
	s := b.sessions[id]
	delete(b.sessions, id)
	b.mu.Unlock()
	if s == nil {
		writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
		return
	}
	s.terminate()
	w.WriteHeader(http.StatusOK)
}

// start launches a server process and registers its session.
func (b *bridge) start() (*session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("bridge is shutting down")
	}
	if len(b.sessions) >= b.maxSessions {
		return nil, fmt.Errorf("too many sessions (max %d)", b.maxSessions)
	}
	var idb [16]byte
	rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])

	cmd := exec.Command(b.command[0], b.command[1:]...)
	cmd.Stderr = os.Stderr
	procgroup.Own(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &session{
		id:       id,
		cmd:      cmd,
		stdin:    stdin,
		log:      b.log.With("session", id[:8], "pid", cmd.Process.Pid),
		pending:  map[string]*stream{},
		progress: map[string]*stream{},
		exited:   make(chan struct{}),
	}
	b.sessions[id] = s
	go func() {
		s.readLoop(stdout)
		cmd.Wait()
		s.log.Info("server process exited", "state", cmd.ProcessState.String())
		b.mu.Lock()
		if b.sessions[id] == s {
			delete(b.sessions, id)
		}
		b.mu.Unlock()
		s.finishAll()
		close(s.exited)
	}()
	return s, nil
}

// session is one server process and the HTTP streams waiting on it.
type session struct {
	id    string
	cmd   *exec.Cmd
	log   *slog.Logger
	wmu   sync.Mutex // serializes writes to stdin
	stdin io.WriteCloser

	mu       sync.Mutex
	pending  map[string]*stream // request ID -> POST stream awaiting its response
	progress map[string]*stream // progress token -> POST stream of its request
	posts    []*stream          // open POST streams, oldest first
	get      *stream
	gone     bool

	exited chan struct{}
}

// send writes messages to the process, one line each.
func (s *session) send(raws []json.RawMessage) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var buf bytes.Buffer
	for _, raw := range raws {
		if err := json.Compact(&buf, raw); err != nil {
			return err
		}
		buf.WriteByte('\n')
	}
	_, err := s.stdin.Write(buf.Bytes())
	return err
}

// open registers a POST stream for the requests in msgs.
func (s *session) open(st *stream, msgs []*jsonrpc.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return false
	}
	for _, m := range msgs {
		if m.Kind != jsonrpc.KindRequest {
			continue
		}
		s.pending[key(m.ID)] = st
		if tok := progressToken(m); len(tok) > 0 {
			s.progress[key(tok)] = st
		}
	}
	s.posts = append(s.posts, st)
	return true
}

// release forgets a POST stream once its HTTP response is over (answered or
// abandoned by the client).
func (s *session) release(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.pending {
		if v == st {
			delete(s.pending, k)
		}
	}
	for k, v := range s.progress {
		if v == st {
			delete(s.progress, k)
		}
	}
	s.dropPost(st)
}

// dropPost removes st from the open POST streams; s.mu is held.
func (s *session) dropPost(st *stream) {
	for i, v := range s.posts {
		if v == st {
			s.posts = append(s.posts[:i:i], s.posts[i+1:]...)
			return
		}
	}
}

func (s *session) openGet(st *stream) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || s.get != nil {
		return false
	}
	s.get = st
	return true
}

func (s *session) releaseGet(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.get == st {
		s.get = nil
	}
}

// readLoop routes every line the process prints until stdout closes.
func (s *session) readLoop(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.route(bytes.TrimSpace(line))
		}
		if err != nil {
			return
		}
	}
}

func (s *session) route(line []byte) {
	m, bad := jsonrpc.Decode(line)
	if bad != nil {
		s.log.Warn("server wrote a line that is not a JSON-RPC message", "line", truncate(line), "err", bad)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var target *stream
	switch {
	case m.Kind == jsonrpc.KindResponse:
		target = s.pending[key(m.ID)]
		if target == nil {
			s.log.Warn("response to no open request", "id", key(m.ID))
			return
		}
		delete(s.pending, key(m.ID))
		if target.push(line, key(m.ID)) {
			// Answered in full: later messages must not ride on it.
			s.dropPost(target)
		}
		return
	case m.Method == "notifications/progress":
		if tok := progressToken(m); len(tok) > 0 {
			target = s.progress[key(tok)]
		}
	}
	if target == nil && len(s.posts) > 0 {
		target = s.posts[len(s.posts)-1]
	}
	if target == nil {
		target = s.get
	}
	if target == nil {
		s.log.Warn("no open stream for server message; dropped", "method", m.Method)
		return
	}
	target.push(line, "")
}

// finishAll ends every open stream: the process is gone.
func (s *session) finishAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone = true
	for _, st := range s.posts {
		st.finish()
	}
	if s.get != nil {
		s.get.finish()
	}
}

// terminate closes the process's stdin, waits briefly, then kills its
// process group.
func (s *session) terminate() {
	s.wmu.Lock()
	s.stdin.Close()
	s.wmu.Unlock()
	select {
	case <-s.exited:
		return
	case <-time.After(killGrace):
	}
	procgroup.Kill(s.cmd)
	<-s.exited
}

// stream is an unbounded queue of messages for one HTTP response.
type stream struct {
	mu      sync.Mutex
	queue   [][]byte
	waiting map[string]bool // request IDs still unanswered (POST streams)
	done    bool
	wake    chan struct{}
}

func newStream() *stream {
	return &stream{waiting: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// push queues a message; answered names the request it answers, if any.
// It reports whether the stream is now complete.
func (st *stream) push(msg []byte, answered string) bool {
	st.mu.Lock()
	st.queue = append(st.queue, msg)
	if answered != "" {
		delete(st.waiting, answered)
		if len(st.waiting) == 0 {
			st.done = true
		}
	}
	done := st.done
	st.mu.Unlock()
	st.signal()
	return done
}

func (st *stream) finish() {
	st.mu.Lock()
	st.done = true
	st.mu.Unlock()
	st.signal()
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// take returns the queued messages and whether the stream is over.
func (st *stream) take() ([][]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	q := st.queue
	st.queue = nil
	return q, st.done
}

// serveSSE writes the stream as server-sent events until it is over or the
// client goes away.
func serveSSE(w http.ResponseWriter, r *http.Request, st *stream) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	bw := bufio.NewWriter(w)
	for {
		msgs, done := st.take()
		for _, m := range msgs {
			sse.Write(bw, sse.Event{Event: "message", Data: m})
		}
		bw.Flush()
		if len(msgs) > 0 {
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if done {
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		}
	}
}

// splitMessages parses a POST body: one JSON-RPC message or a batch. A
// body that is not JSON-RPC gets the error the Praxis server would give.
func splitMessages(body []byte) ([]json.RawMessage, []*jsonrpc.Message, *jsonrpc.Error) {
	raws := []json.RawMessage{body}
	if jsonrpc.IsBatch(body) {
		var bad *jsonrpc.Error
		if raws, bad = jsonrpc.SplitBatch(body); bad != nil {
			return nil, nil, bad
		}
	}
	msgs := make([]*jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, bad := jsonrpc.Decode(raw)
		if bad != nil {
			return nil, nil, bad
		}
		msgs[i] = m
	}
	return raws, msgs, nil
}

// writeRPCError answers with status and a JSON-RPC error without an id.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(jsonrpc.AppendError(nil, nil, code, msg), '\n'))
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
