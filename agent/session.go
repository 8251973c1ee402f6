package agent

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/praxis-tools/praxis/agent/journal"
)

// SessionOptions say how RunSession journals a session.
type SessionOptions struct {
	// Dir is the directory of the session journals; empty for a session
	// that is not journaled (it cannot be resumed).
	Dir string
	// ID is the new session's ID (NewRunID when empty), or, with Resume,
	// the session to go on with.
	ID string
	// Resume goes on with session ID from its journal in Dir.
	Resume bool
	// Started, if set, is called once the session has its ID and journal
	// (path empty when not journaled), before the run starts.
	Started func(id, journalPath string)
	// Logger receives the journal's warnings. Default: discard.
	Logger *slog.Logger
}

// RunSession runs one session under the harness h: a new one, whose
// events are journaled in Dir, or the one it resumes, whose journal it
// rebuilds the conversation from and appends to. Every front end (the
// command line, the HTTP service) runs sessions through it, so that their
// journals are alike. cfg.OnEvent receives the events after the journal.
// The error is non-nil only when the session could not start: the journal
// could not be created, or the session to resume could not be read (an
// error that Is fs.ErrNotExist when there is no such session).
func RunSession(ctx context.Context, cfg Config, h *Harness, task string, so SessionOptions) (Outcome, error) {
	log := so.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if h == nil {
		h = &Harness{}
	}
	var w *journal.Writer
	switch {
	case so.Resume:
		jw, events, jl, err := ResumeSession(so.Dir, so.ID)
		if err != nil {
			return Outcome{}, fmt.Errorf("cannot resume session %s: %w", so.ID, err)
		}
		if jl.Torn != nil {
			log.Warn("the journal's last line was cut short by a crash and is dropped", "session", so.ID, "line", jl.Torn.Line, "bytes", jl.Torn.Bytes)
		}
		w, cfg.RunID = jw, so.ID
		hr := *h
		hr.Resume = events
		h = &hr
	case so.Dir != "":
		id := so.ID
		if id == "" {
			id = NewRunID()
		}
		jw, err := journal.Create(so.Dir, id)
		if err != nil {
			return Outcome{}, err
		}
		w, cfg.RunID = jw, id
	default:
		cfg.RunID = so.ID
		if cfg.RunID == "" {
			cfg.RunID = NewRunID()
		}
	}
	if h.Hooks != nil {
		hh := *h
		r := *h.Hooks
		r.Env = append(append([]string(nil), r.Env...), "PRAXIS_SESSION_ID="+cfg.RunID)
		hh.Hooks = &r
		h = &hh
	}
	path := ""
	if w != nil {
		defer w.Close()
		cfg.OnEvent = JournalSink(w, cfg.OnEvent, log)
		hh := *h
		hh.TranscriptPath = w.Path()
		h = &hh
		path = w.Path()
	}
	if so.Started != nil {
		so.Started(cfg.RunID, path)
	}
	cfg.Harness = h
	a, err := New(cfg)
	if err != nil {
		return Outcome{}, err
	}
	return a.Run(ctx, task), nil
}
