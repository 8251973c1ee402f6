// Package service runs agent sessions as an HTTP service: a sessions API
// under /v1/sessions, each session's events as server-sent events in the
// formats UIs speak (the journal's own events, the Vercel AI SDK UI message
// stream, OpenAI chat-completion chunks, Anthropic message events), and
// drop-in endpoints for the clients of those APIs (/v1/chat,
// /v1/chat/completions, /v1/messages).
//
// Every session runs the same loop as the command line, through
// agent.RunSession, and writes the same journal; the journal is the
// service's only store, so a restarted service lists the sessions of the
// one before and can continue them. Every request passes the checks of
// internal/httpguard (Origin, Host, bearer token, body size), like those of
// "praxis serve --http".
package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/checkpoint"
	"github.com/praxis-tools/praxis/agent/journal"
	"github.com/praxis-tools/praxis/internal/httpguard"
)

// Defaults of Options.
const (
	DefaultAddr         = "127.0.0.1:8766"
	DefaultMaxBodyBytes = 4 << 20
	DefaultKeepAlive    = 15 * time.Second
	DefaultRetry        = 2 * time.Second
)

// ErrTokenRequired is returned by Serve on a non-loopback listener without
// a token.
var ErrTokenRequired = errors.New("serving on a non-loopback address requires a bearer token (--token or PRAXIS_TOKEN)")

// SessionOptions are what a request may choose for a session; a zero field
// takes the service's default (the flags of "praxis agent serve"). What
// Setup does with them is its own: praxis agent serve lets a request
// tighten the budgets of its flags, not loosen them.
type SessionOptions struct {
	// Model is the model name sent to the provider.
	Model string `json:"model,omitempty"`
	// MaxSteps bounds the model replies of each turn.
	MaxSteps int `json:"max_steps,omitempty"`
	// MaxToolCalls, MaxTokens and MaxCost are the turn's budgets.
	MaxToolCalls int     `json:"max_tool_calls,omitempty"`
	MaxTokens    int     `json:"max_tokens,omitempty"`
	MaxCost      float64 `json:"max_cost,omitempty"`
}

// Options configure a Service.
type Options struct {
	// Dir is the directory of the session journals. Required.
	Dir string
	// Setup returns the configuration and harness of one turn of a
	// session with the options o. The service sets the config's OnEvent
	// and RunID. Required.
	Setup func(o SessionOptions) (agent.Config, *agent.Harness, error)
	// Token, AllowedOrigins and Loopback are the request checks (see
	// httpguard.Options).
	Token          string
	AllowedOrigins []string
	Loopback       bool
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes).
	MaxBodyBytes int
	// KeepAlive is the interval of comment lines on quiet event streams
	// (default DefaultKeepAlive); Retry the reconnection delay the streams
	// advise (default DefaultRetry).
	KeepAlive, Retry time.Duration
	// Git, when set, keeps each session's work in Git (see package
	// checkpoint): on branch praxis/<session> of the work tree of
	// Workspace, a commit per step that changed files; a fork starts from
	// the commit of the event it forks at. The sessions share the work
	// tree, so one turn runs at a time.
	Git       checkpoint.Mode
	Workspace string
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
}

// Service runs sessions and serves them over HTTP. Close ends it.
type Service struct {
	opts  Options
	guard *httpguard.Guard
	mux   *http.ServeMux
	log   *slog.Logger

	ctx  context.Context
	stop context.CancelFunc
	runs sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*session
	busy     int // turns running
}

// errGitBusy is a turn asked for while another session's runs in the
// shared work tree.
var errGitBusy = errors.New("with git checkpoints the sessions share the work tree: another session's turn is running")

// checkout puts the work tree on ss's branch: a new one for a session's
// first turn (from HEAD, or from the commit a fork starts at), the
// session's own after. It returns h with the checkpoints set. ss.mu is held.
func (s *Service) checkout(ss *session, h *agent.Harness, resume bool) (*agent.Harness, error) {
	s.mu.Lock()
	busy := s.busy
	s.mu.Unlock()
	if busy > 0 {
		return nil, errGitBusy
	}
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	var repo *checkpoint.Repo
	var err error
	if resume && ss.from == "" {
		repo, err = checkpoint.Resume(ctx, s.opts.Workspace, ss.id)
	} else {
		repo, err = checkpoint.Start(ctx, s.opts.Workspace, ss.id, s.opts.Git, ss.from)
	}
	if err != nil {
		return nil, err
	}
	ss.from = ""
	hh := *h
	hh.Checkpoint, hh.Branch = repo.Commit, repo.Branch
	return &hh, nil
}

// New returns a Service for opts.
func New(opts Options) (*Service, error) {
	if opts.Dir == "" || opts.Setup == nil {
		return nil, errors.New("service: Dir and Setup are required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{opts: opts, log: opts.Logger, sessions: make(map[string]*session)}
	s.guard = httpguard.New(httpguard.Options{
		Token: opts.Token, AllowedOrigins: opts.AllowedOrigins, Loopback: opts.Loopback,
		AllowMethods:  "GET, POST, DELETE",
		AllowHeaders:  "Authorization, Content-Type, Accept, Last-Event-ID, X-Api-Key, Anthropic-Version",
		ExposeHeaders: "X-Vercel-AI-UI-Message-Stream",
	})
	s.ctx, s.stop = context.WithCancel(context.Background())
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/sessions", s.create)
	m.HandleFunc("GET /v1/sessions", s.list)
	m.HandleFunc("GET /v1/sessions/{id}", s.show)
	m.HandleFunc("DELETE /v1/sessions/{id}", s.remove)
	m.HandleFunc("POST /v1/sessions/{id}/messages", s.message)
	m.HandleFunc("POST /v1/sessions/{id}/cancel", s.cancel)
	m.HandleFunc("POST /v1/sessions/{id}/fork", s.fork)
	m.HandleFunc("GET /v1/sessions/{id}/events", s.events)
	m.HandleFunc("POST /v1/chat", s.chat)
	m.HandleFunc("GET /v1/chat/{id}/stream", s.chatStream)
	m.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	m.HandleFunc("POST /v1/messages", s.messages)
	m.HandleFunc("GET /{$}", s.page)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "E_NOT_FOUND", "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	s.mux = m
	return s, nil
}

// ServeHTTP checks the request (Origin, Host, token) and serves it.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	preflight, refusal := s.guard.Check(w, r)
	if refusal != nil {
		code := "E_FORBIDDEN"
		if refusal.Status == http.StatusUnauthorized {
			code = "E_UNAUTHORIZED"
		}
		apiError(w, refusal.Status, code, refusal.Message)
		return
	}
	if preflight {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Close cancels the running turns and waits for them to end (their
// journals end with run_complete, stop reason cancelled).
func (s *Service) Close() {
	s.stop()
	s.runs.Wait()
}

// Serve serves s on ln until ctx ends, then shuts down: running turns are
// cancelled and waited for. Off loopback a token is required
// (ErrTokenRequired); on loopback, requests must name a loopback host.
func Serve(ctx context.Context, ln net.Listener, opts Options) error {
	loopback := httpguard.LoopbackListener(ln.Addr())
	if !loopback && opts.Token == "" {
		ln.Close()
		return ErrTokenRequired
	}
	opts.Loopback = loopback
	s, err := New(opts)
	if err != nil {
		ln.Close()
		return err
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close() // ends the turns, so their streams end too
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
	}
	<-errc
	return nil
}

// session is one session: its events (the journal's, in memory) and its
// running turn.
type session struct {
	id   string
	opts SessionOptions

	mu      sync.Mutex
	events  []agent.Event
	running bool
	// ending is set once the running turn's run_complete is out: the turn
	// is over for clients, its goroutine is closing the journal; done is
	// closed when it has.
	ending  bool
	done    chan struct{}
	cancel  context.CancelFunc
	failure string // why the last turn could not start
	// from is the commit a fork's branch starts from (with Options.Git).
	from    string
	changed chan struct{} // closed and replaced when events or state change
	deleted bool
}

func newSession(id string, opts SessionOptions) *session {
	return &session{id: id, opts: opts, changed: make(chan struct{})}
}

// notifyLocked wakes the streams waiting on the session.
func (ss *session) notifyLocked() {
	close(ss.changed)
	ss.changed = make(chan struct{})
}

// settle waits for a turn whose run_complete is out to close its journal,
// so that the next turn can open it.
func (ss *session) settle() {
	ss.mu.Lock()
	d, wait := ss.done, ss.running && ss.ending
	ss.mu.Unlock()
	if wait {
		select {
		case <-d:
		case <-time.After(10 * time.Second):
		}
	}
}

// activeLocked reports whether a turn runs for clients: started, and its
// run_complete not out yet (its goroutine may still be closing the
// journal).
func (ss *session) activeLocked() bool { return ss.running && !ss.ending }

// active is activeLocked with the lock taken.
func (ss *session) active() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.activeLocked()
}

// snapshot returns the events from index i on, whether a turn runs, and
// the channel that signals the next change.
func (ss *session) snapshot(i int) ([]agent.Event, bool, <-chan struct{}) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var evs []agent.Event
	if i < len(ss.events) {
		evs = ss.events[i:len(ss.events):len(ss.events)]
	}
	return evs, ss.running, ss.changed
}

// lookup returns the session id: one this service runs or ran, or one
// whose journal is in Dir (a session of an earlier service), read then.
func (s *Service) lookup(id string) (*session, error) {
	if !journal.ValidID(id) {
		return nil, fs.ErrNotExist
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[id]; ss != nil {
		return ss, nil
	}
	events, jl, err := agent.ReadSession(s.opts.Dir, id)
	if err != nil {
		return nil, err
	}
	if jl != nil && jl.Torn != nil {
		s.log.Warn("the journal's last line was cut short and is left out", "session", id)
	}
	ss := newSession(id, SessionOptions{})
	ss.events = events
	for _, ev := range slices.Backward(events) {
		if ev.Type == agent.EventRunStart {
			ss.opts.Model = ev.Model
			break
		}
	}
	s.sessions[id] = ss
	return ss, nil
}

// forget drops ss from memory once its turn has ended; a later lookup
// reads it from the journal again.
func (s *Service) forget(ss *session) {
	ss.mu.Lock()
	done := ss.done
	ss.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-s.ctx.Done():
			return
		}
	}
	s.mu.Lock()
	if s.sessions[ss.id] == ss {
		delete(s.sessions, ss.id)
	}
	s.mu.Unlock()
}

// sessionOf answers 404 for an unknown session.
func (s *Service) sessionOf(w http.ResponseWriter, r *http.Request) *session {
	id := r.PathValue("id")
	ss, err := s.lookup(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		apiError(w, http.StatusNotFound, "E_NOT_FOUND", fmt.Sprintf("there is no session %q", id))
		return nil
	case err != nil:
		apiError(w, http.StatusInternalServerError, "E_JOURNAL", err.Error())
		return nil
	}
	return ss
}

// errBusy is a turn asked for while one runs.
var errBusy = errors.New("a turn of this session is running; cancel it or wait for it to end")

// run starts a turn of ss: the first (task) or a follow-up (resume). It
// returns once the turn runs.
func (s *Service) run(ss *session, task string, resume bool) error {
	if s.ctx.Err() != nil {
		return errors.New("the service is shutting down")
	}
	ss.settle()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running {
		return errBusy
	}
	if ss.deleted {
		return fs.ErrNotExist
	}
	cfg, h, err := s.opts.Setup(ss.opts)
	if err != nil {
		return err
	}
	if s.opts.Git != "" {
		if h, err = s.checkout(ss, h, resume); err != nil {
			return err
		}
	}
	cfg.OnEvent = func(ev agent.Event) {
		ss.mu.Lock()
		ss.events = append(ss.events, ev)
		if ev.Type == agent.EventRunComplete {
			ss.ending = true
		}
		ss.notifyLocked()
		ss.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	ss.running, ss.ending, ss.done, ss.cancel, ss.failure = true, false, done, cancel, ""
	s.mu.Lock()
	s.busy++
	s.mu.Unlock()
	ss.notifyLocked()
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		defer cancel()
		defer close(done)
		out, err := agent.RunSession(ctx, cfg, h, task, agent.SessionOptions{Dir: s.opts.Dir, ID: ss.id, Resume: resume, Logger: s.log})
		s.mu.Lock()
		s.busy--
		s.mu.Unlock()
		ss.mu.Lock()
		ss.running, ss.cancel = false, nil
		if err != nil {
			ss.failure = err.Error()
			s.log.Error("a session's turn could not start", "session", ss.id, "err", err)
		}
		ss.notifyLocked()
		ss.mu.Unlock()
		if err == nil {
			s.log.Info("turn ended", "session", ss.id, "stop_reason", out.StopReason, "steps", out.Steps)
		}
	}()
	return nil
}

// createRequest is the body of POST /v1/sessions.
type createRequest struct {
	Task string `json:"task"`
	SessionOptions
}

func (s *Service) create(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !s.decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Task) == "" {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", `the body needs a "task": what the agent is to do`)
		return
	}
	if err := checkOptions(req.SessionOptions); err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", err.Error())
		return
	}
	ss, err := s.start(agent.NewRunID(), req.Task, req.SessionOptions)
	if err != nil {
		s.startError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": ss.id})
}

// start creates session id and starts its first turn.
func (s *Service) start(id, task string, opts SessionOptions) (*session, error) {
	ss := newSession(id, opts)
	s.mu.Lock()
	if s.sessions[id] != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("session %s exists", id)
	}
	s.sessions[id] = ss
	s.mu.Unlock()
	if err := s.run(ss, task, false); err != nil {
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
		return nil, err
	}
	return ss, nil
}

// checkOptions refuses options no session can have.
func checkOptions(o SessionOptions) error {
	if o.MaxSteps < 0 || o.MaxToolCalls < 0 || o.MaxTokens < 0 || o.MaxCost < 0 {
		return errors.New("budgets cannot be negative")
	}
	return nil
}

// Summary describes a session in GET /v1/sessions and
// GET /v1/sessions/{id}.
type Summary struct {
	ID      string `json:"id"`
	Running bool   `json:"running"`
	Task    string `json:"task,omitempty"`
	Model   string `json:"model,omitempty"`
	// Events is the number of events; LastEventID the sequence number of
	// the last, for event streams.
	Events      int              `json:"events"`
	LastEventID int64            `json:"last_event_id"`
	Turns       int              `json:"turns"`
	StopReason  agent.StopReason `json:"stop_reason,omitempty"`
	Final       string           `json:"final,omitempty"`
	Error       string           `json:"error,omitempty"`
	Steps       int              `json:"steps"`
	ToolCalls   int              `json:"tool_calls"`
	Usage       agent.Usage      `json:"usage"`
	CostUSD     *float64         `json:"cost_usd,omitempty"`
	Started     *time.Time       `json:"started,omitempty"`
	Updated     *time.Time       `json:"updated,omitempty"`
}

func (ss *session) summary() Summary {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sum := Summary{ID: ss.id, Running: ss.activeLocked(), Model: ss.opts.Model, Events: len(ss.events), Error: ss.failure}
	var cost float64
	priced := false
	for _, ev := range ss.events {
		switch ev.Type {
		case agent.EventRunStart:
			sum.Turns++
			if sum.Task == "" {
				sum.Task = ev.Task
			}
			sum.Model = ev.Model
			if sum.Started == nil {
				t := ev.Time
				sum.Started = &t
			}
		case agent.EventRunComplete:
			sum.StopReason, sum.Final, sum.Error = ev.StopReason, ev.Final, ev.Error
			sum.Steps += ev.Steps
			sum.ToolCalls += ev.ToolCalls
			if ev.Usage != nil {
				sum.Usage = sum.Usage.Add(*ev.Usage)
			}
			if ev.CostUSD != nil {
				cost += *ev.CostUSD
				priced = true
			}
		}
	}
	if priced {
		sum.CostUSD = &cost
	}
	if n := len(ss.events); n > 0 {
		sum.LastEventID = ss.events[n-1].Seq
		t := ss.events[n-1].Time
		sum.Updated = &t
	}
	if ss.failure != "" {
		sum.Error = ss.failure
	}
	return sum
}

func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	infos, err := journal.List(s.opts.Dir)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "E_JOURNAL", err.Error())
		return
	}
	out := []Summary{}
	seen := map[string]bool{}
	for _, in := range infos {
		ss, err := s.lookup(in.ID)
		if err != nil {
			out = append(out, Summary{ID: in.ID, Error: err.Error()})
			continue
		}
		seen[in.ID] = true
		out = append(out, ss.summary())
	}
	s.mu.Lock()
	var fresh []*session // started, journal not yet listed
	for id, ss := range s.sessions {
		if !seen[id] {
			fresh = append(fresh, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range fresh {
		out = append(out, ss.summary())
	}
	slices.SortStableFunc(out, func(a, b Summary) int { return strings.Compare(a.ID, b.ID) })
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (s *Service) show(w http.ResponseWriter, r *http.Request) {
	if ss := s.sessionOf(w, r); ss != nil {
		writeJSON(w, http.StatusOK, ss.summary())
	}
}

// messageRequest is the body of POST /v1/sessions/{id}/messages.
type messageRequest struct {
	Text string `json:"text"`
}

func (s *Service) message(w http.ResponseWriter, r *http.Request) {
	ss := s.sessionOf(w, r)
	if ss == nil {
		return
	}
	var req messageRequest
	if !s.decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", `the body needs a "text": the message to the agent`)
		return
	}
	s.followUp(w, ss, req.Text)
}

// followUp starts a turn of ss with text and answers where its events
// start.
func (s *Service) followUp(w http.ResponseWriter, ss *session, text string) {
	ss.mu.Lock()
	after := int64(0)
	if n := len(ss.events); n > 0 {
		after = ss.events[n-1].Seq
	}
	ss.mu.Unlock()
	if err := s.run(ss, text, true); err != nil {
		s.startError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": ss.id, "after": after})
}

func (s *Service) cancel(w http.ResponseWriter, r *http.Request) {
	ss := s.sessionOf(w, r)
	if ss == nil {
		return
	}
	ss.mu.Lock()
	running := ss.activeLocked()
	if running {
		ss.cancel()
	}
	ss.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": ss.id, "cancelled": running})
}

// forkRequest is the body of POST /v1/sessions/{id}/fork.
type forkRequest struct {
	// Event is the sequence number of the last event the fork keeps.
	Event int64 `json:"event"`
}

func (s *Service) fork(w http.ResponseWriter, r *http.Request) {
	ss := s.sessionOf(w, r)
	if ss == nil {
		return
	}
	var req forkRequest
	if !s.decode(w, r, &req) {
		return
	}
	ss.mu.Lock()
	var kept []agent.Event
	for _, ev := range ss.events {
		if ev.Seq <= req.Event {
			kept = append(kept, ev)
		}
	}
	last := int64(0)
	if n := len(ss.events); n > 0 {
		last = ss.events[n-1].Seq
	}
	opts := ss.opts
	ss.mu.Unlock()
	if req.Event < 1 || req.Event > last {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", fmt.Sprintf(`"event" must be the sequence number of an event of the session, 1 to %d`, last))
		return
	}
	id := agent.NewRunID()
	jw, err := journal.Create(s.opts.Dir, id)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "E_JOURNAL", err.Error())
		return
	}
	defer jw.Close()
	for i := range kept {
		kept[i].RunID = id
		if _, err := jw.Append(kept[i]); err != nil {
			apiError(w, http.StatusInternalServerError, "E_JOURNAL", err.Error())
			return
		}
	}
	if err := jw.Sync(); err != nil {
		apiError(w, http.StatusInternalServerError, "E_JOURNAL", err.Error())
		return
	}
	nss := newSession(id, opts)
	nss.events = kept
	if s.opts.Git != "" {
		nss.from = forkCommit(ss.id, evsOf(ss), req.Event)
	}
	s.mu.Lock()
	s.sessions[id] = nss
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "from": ss.id, "event": req.Event})
}

func evsOf(ss *session) []agent.Event {
	evs, _, _ := ss.snapshot(0)
	return evs
}

// forkCommit is the commit a fork at event n of session src starts from:
// the last checkpoint at or before n; before the first checkpoint, that
// one's parent; the branch of src when it has none (it changed nothing).
func forkCommit(src string, evs []agent.Event, n int64) string {
	first, last := "", ""
	for _, ev := range evs {
		if ev.Type != agent.EventCheckpoint || ev.Commit == "" {
			continue
		}
		if first == "" {
			first = ev.Commit
		}
		if ev.Seq <= n {
			last = ev.Commit
		}
	}
	switch {
	case last != "":
		return last
	case first != "":
		return first + "^"
	}
	return "praxis/" + src
}

func (s *Service) remove(w http.ResponseWriter, r *http.Request) {
	ss := s.sessionOf(w, r)
	if ss == nil {
		return
	}
	ss.settle()
	ss.mu.Lock()
	if ss.running {
		ss.mu.Unlock()
		apiError(w, http.StatusConflict, "E_BUSY", errBusy.Error())
		return
	}
	ss.deleted = true
	ss.notifyLocked()
	ss.mu.Unlock()
	s.mu.Lock()
	delete(s.sessions, ss.id)
	s.mu.Unlock()
	root, err := os.OpenRoot(s.opts.Dir)
	if err == nil {
		err = root.Remove(ss.id + journal.Ext)
		root.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		apiError(w, http.StatusInternalServerError, "E_JOURNAL", err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decode reads a JSON body into v, answering the request when it cannot.
func (s *Service) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := httpguard.ReadBody(w, r, int64(s.opts.MaxBodyBytes), 30*time.Second, "praxis agent serve --max-body")
	if err != nil {
		be, _ := errors.AsType[*httpguard.BodyError](err)
		code := "E_INVALID_ARGS"
		if errors.Is(err, httpguard.ErrTooLarge) {
			code = "E_TOO_LARGE"
		}
		apiError(w, be.Status, code, be.Message)
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, v); err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", "the body is not the JSON object expected: "+err.Error())
		return false
	}
	return true
}

// apiError answers an error as {"error": {"code", "message"}}.
func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
