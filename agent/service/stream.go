package service

import (
	"bufio"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/internal/sse"
)

// formatOf reads the stream format a request asks for: the format query
// parameter, else the format parameter of an Accept of text/event-stream
// ("text/event-stream; format=vercel"), else Native.
func formatOf(r *http.Request) (Format, error) {
	name := r.URL.Query().Get("format")
	if name == "" {
		for a := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(a))
			if err == nil && mt == "text/event-stream" && params["format"] != "" {
				name = params["format"]
				break
			}
		}
	}
	switch f := Format(strings.ToLower(name)); f {
	case "":
		return Native, nil
	case Native, Vercel, OpenAI, Anthropic:
		return f, nil
	}
	return "", fmt.Errorf("format %q: want native, vercel, openai or anthropic", name)
}

// position reads where a stream starts: after the Last-Event-ID header's
// event (a reconnection), else after the after query parameter's. An ID
// is a sequence number N, the last frame of event N, or N.K, the Kth frame
// of event N in the stream's format: the stream then goes on with the
// frame after it (after is N-1 and skip K).
func position(r *http.Request) (after int64, skip int, reconnect bool, err error) {
	v, reconnect := r.Header.Get("Last-Event-ID"), true
	if v == "" {
		v, reconnect = r.URL.Query().Get("after"), false
	}
	if v == "" {
		return 0, 0, false, nil
	}
	bad := errors.New("the event ID (Last-Event-ID or after) must be a sequence number N, 0 or more, or N.K")
	seq, part, dotted := strings.Cut(strings.TrimSpace(v), ".")
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n < 0 {
		return 0, 0, false, bad
	}
	if !dotted {
		return n, 0, reconnect, nil
	}
	k, err := strconv.Atoi(part)
	if err != nil || k < 1 || n < 1 {
		return 0, 0, false, bad
	}
	return n - 1, k, reconnect, nil
}

func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	ss := s.sessionOf(w, r)
	if ss == nil {
		return
	}
	f, err := formatOf(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", err.Error())
		return
	}
	after, skip, reconnect, err := position(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", err.Error())
		return
	}
	s.stream(w, r, ss, f, after, skip, reconnect)
}

// stream serves the events of ss after the event numbered after (and the
// first skip frames of the next) as server-sent events in format f. Every
// frame has an ID: an event's last frame the event's sequence number N,
// the frames before it N.1, N.2 ..., so that a client that reconnects with
// the last ID it saw as Last-Event-ID loses and repeats nothing.
//
// A Native stream goes on until the client leaves. The other formats cover
// one turn: the latest with after 0, else the one the event after the
// event numbered after belongs to; when that turn ended at after, a
// reconnection gets the stream's end, and a new request the next turn.
func (s *Service) stream(w http.ResponseWriter, r *http.Request, ss *session, f Format, after int64, skip int, reconnect bool) {
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if f == Vercel {
		h.Set("X-Vercel-AI-UI-Message-Stream", "v1")
	}
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	_ = sse.Retry(bw, s.opts.Retry)
	flush := func() {
		_ = bw.Flush()
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	enc := newEncoder(f, ss.id)
	write := func(frames []frame, id int64, from int) {
		for i, fr := range frames {
			if i < from {
				continue
			}
			ev := sse.Event{Event: fr.event, Data: []byte(fr.data)}
			switch {
			case id == 0:
			case i == len(frames)-1:
				ev.ID = strconv.FormatInt(id, 10)
			default:
				ev.ID = strconv.FormatInt(id, 10) + "." + strconv.Itoa(i+1)
			}
			_ = sse.Write(bw, ev)
		}
	}

	// from is the run_start of the turn streamed; 0 waits for the first
	// run_start after the event numbered after.
	from := int64(0)
	if f != Native {
		evs, _, _ := ss.snapshot(0)
		var lastStart, lastComplete, latest int64
		for _, ev := range evs {
			if ev.Type == agent.EventRunStart {
				latest = ev.Seq
			}
			switch {
			case ev.Type == agent.EventRunStart && ev.Seq <= after+1:
				lastStart = ev.Seq
			case ev.Type == agent.EventRunComplete && ev.Seq <= after:
				lastComplete = ev.Seq
			}
		}
		switch {
		case after == 0:
			from = latest
		case lastStart > 0 && lastComplete < lastStart:
			from = lastStart
		case reconnect:
			write(enc.end(), 0, 0)
			flush()
			return
		}
	}
	keep := time.NewTicker(s.opts.KeepAlive)
	defer keep.Stop()
	idx := 0
	inTurn := f == Native
	for {
		evs, running, changed := ss.snapshot(idx)
		idx += len(evs)
		for _, ev := range evs {
			if !inTurn {
				if ev.Type != agent.EventRunStart || (from > 0 && ev.Seq != from) || (from == 0 && ev.Seq <= after) {
					continue
				}
				inTurn = true
			}
			frames := enc.encode(ev)
			switch {
			case ev.Seq == after+1:
				write(frames, ev.Seq, skip)
			case ev.Seq > after:
				write(frames, ev.Seq, 0)
			}
			if f != Native && ev.Type == agent.EventRunComplete {
				write(enc.end(), 0, 0)
				flush()
				return
			}
		}
		flush()
		ss.mu.Lock()
		deleted := ss.deleted
		ss.mu.Unlock()
		if deleted {
			return
		}
		if f != Native && inTurn && !running && len(evs) == 0 {
			// The turn ended without its last event (its process died):
			// the stream ends as the turn did.
			write(enc.end(), 0, 0)
			flush()
			return
		}
		select {
		case <-changed:
		case <-keep.C:
			_ = sse.Comment(bw, "keep-alive")
			flush()
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}
