package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/checkpoint"
	"github.com/praxis-tools/praxis/agent/journal"
)

// DefaultProfile is the model name of the drop-in endpoints that selects
// the service's own defaults; any other name is the model a session uses.
const DefaultProfile = "praxis"

// chatRequest is the body the AI SDK's useChat default transport sends.
type chatRequest struct {
	ID       string      `json:"id"`
	Messages []uiMessage `json:"messages"`
}

type uiMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"parts"`
}

func (m uiMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// chat answers useChat: the chat's ID is the session's; the last user
// message starts the session, or is the next turn of it. The reply is the
// turn as a UI message stream.
func (s *Service) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !s.decode(w, r, &req) {
		return
	}
	if !journal.ValidID(req.ID) {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", `"id" must name the chat: letters, digits, '.', '_' and '-', at most 128`)
		return
	}
	text := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			text = req.Messages[i].text()
			break
		}
	}
	if strings.TrimSpace(text) == "" {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", `"messages" has no user message with text`)
		return
	}
	ss, err := s.lookup(req.ID)
	after := int64(0)
	switch {
	case err == nil:
		if after, err = s.next(ss, text); err != nil {
			s.startError(w, err)
			return
		}
	default:
		if ss, err = s.start(req.ID, text, SessionOptions{}); err != nil {
			s.startError(w, err)
			return
		}
	}
	s.stream(w, r, ss, Vercel, after, 0, false)
}

// chatStream answers useChat's resumption of a chat's stream: the running
// turn's UI message stream, from its start or after Last-Event-ID, or 204
// when no turn runs.
func (s *Service) chatStream(w http.ResponseWriter, r *http.Request) {
	ss := s.sessionOf(w, r)
	if ss == nil {
		return
	}
	after, skip, reconnect, err := position(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", err.Error())
		return
	}
	if !ss.active() { // a turn whose run_complete is out is over for clients
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.stream(w, r, ss, Vercel, after, skip, reconnect)
}

// next starts the next turn of ss with text and returns the sequence
// number of the session's last event before it.
func (s *Service) next(ss *session, text string) (int64, error) {
	ss.mu.Lock()
	after := int64(0)
	if n := len(ss.events); n > 0 {
		after = ss.events[n-1].Seq
	}
	ss.mu.Unlock()
	return after, s.run(ss, text, true)
}

func (s *Service) startError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errBusy) || errors.Is(err, errGitBusy):
		apiError(w, http.StatusConflict, "E_BUSY", err.Error())
		return
	case errors.Is(err, checkpoint.ErrDirty):
		apiError(w, http.StatusConflict, "E_GIT_DIRTY", err.Error())
		return
	}
	apiError(w, http.StatusInternalServerError, "E_START", err.Error())
}

// chatMessage is a message of the OpenAI and Anthropic APIs: content is a
// string or an array of parts, of which the text parts are read.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// taskOf makes a session's task of a stateless API's conversation: the
// last user message, after the system text and the earlier messages.
func taskOf(system string, msgs []chatMessage) (string, error) {
	last := -1
	for i, m := range msgs {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 || strings.TrimSpace(contentText(msgs[last].Content)) == "" {
		return "", errors.New(`"messages" has no user message with text`)
	}
	var b strings.Builder
	if strings.TrimSpace(system) != "" {
		fmt.Fprintf(&b, "The client's instructions:\n%s\n\n", strings.TrimSpace(system))
	}
	if last > 0 {
		b.WriteString("The conversation so far:\n")
		for _, m := range msgs[:last] {
			if t := strings.TrimSpace(contentText(m.Content)); t != "" {
				fmt.Fprintf(&b, "%s: %s\n", m.Role, t)
			}
		}
		b.WriteString("\nThe user's message:\n")
	}
	b.WriteString(contentText(msgs[last].Content))
	return b.String(), nil
}

// profile returns the session options a drop-in request's model name
// selects.
func profile(model string) SessionOptions {
	if model == "" || model == DefaultProfile {
		return SessionOptions{}
	}
	return SessionOptions{Model: model}
}

// turnResult is a whole turn, for the answers that are not streamed.
type turnResult struct {
	runID, model string
	reasoning    strings.Builder
	text         strings.Builder
	done         agent.Event
}

// dropIn runs one turn of a new session for a stateless API and answers
// it: streamed in format f, or whole by answer. A client that leaves
// cancels the turn.
func (s *Service) dropIn(w http.ResponseWriter, r *http.Request, task string, opts SessionOptions, stream bool, f Format, answer func(*turnResult)) {
	ss, err := s.start(agent.NewRunID(), task, opts)
	if err != nil {
		s.startError(w, err)
		return
	}
	defer func() {
		ss.mu.Lock()
		if ss.running && r.Context().Err() != nil {
			ss.cancel()
		}
		ss.mu.Unlock()
		// Nobody comes back to a stateless API's session: its events
		// leave memory once it ends (the journal keeps them).
		go s.forget(ss)
	}()
	if stream {
		s.stream(w, r, ss, f, 0, 0, false)
		return
	}
	res := &turnResult{}
	idx := 0
	for {
		evs, running, changed := ss.snapshot(idx)
		idx += len(evs)
		for _, ev := range evs {
			switch ev.Type {
			case agent.EventRunStart:
				res.runID, res.model = ev.RunID, ev.Model
			case agent.EventThinking:
				res.reasoning.WriteString(ev.Text)
			case agent.EventTextDelta:
				res.text.WriteString(ev.Text)
			case agent.EventToolStart:
				res.text.WriteString(toolStartLine(ev))
			case agent.EventToolResult:
				res.text.WriteString(toolResultLine(ev))
			case agent.EventRunComplete:
				res.text.WriteString(stopText(ev))
				res.done = ev
				answer(res)
				return
			}
		}
		if !running && len(evs) == 0 {
			ss.mu.Lock()
			why := ss.failure
			ss.mu.Unlock()
			apiError(w, http.StatusInternalServerError, "E_START", "the turn ended without its result: "+why)
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

// completionsRequest is the body of POST /v1/chat/completions.
type completionsRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
}

func (s *Service) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req completionsRequest
	if !s.decode(w, r, &req) {
		return
	}
	var system []string
	var msgs []chatMessage
	for _, m := range req.Messages {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, contentText(m.Content))
		} else {
			msgs = append(msgs, m)
		}
	}
	task, err := taskOf(strings.Join(system, "\n"), msgs)
	if err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", err.Error())
		return
	}
	s.dropIn(w, r, task, profile(req.Model), req.Stream, OpenAI, func(t *turnResult) {
		msg := map[string]any{"role": "assistant", "content": t.text.String()}
		if t.reasoning.Len() > 0 {
			msg["reasoning_content"] = t.reasoning.String()
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-" + t.runID, "object": "chat.completion", "created": t.done.Time.Unix(), "model": t.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": openaiFinish(t.done.StopReason)}},
			"usage":   openaiUsage(t.done.Usage),
		})
	})
}

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []chatMessage   `json:"messages"`
	Stream   bool            `json:"stream"`
}

func (s *Service) messages(w http.ResponseWriter, r *http.Request) {
	var req messagesRequest
	if !s.decode(w, r, &req) {
		return
	}
	system := ""
	if len(req.System) > 0 {
		system = contentText(req.System)
	}
	task, err := taskOf(system, req.Messages)
	if err != nil {
		apiError(w, http.StatusBadRequest, "E_INVALID_ARGS", err.Error())
		return
	}
	s.dropIn(w, r, task, profile(req.Model), req.Stream, Anthropic, func(t *turnResult) {
		var content []any
		if t.reasoning.Len() > 0 {
			content = append(content, map[string]any{"type": "thinking", "thinking": t.reasoning.String(), "signature": ""})
		}
		content = append(content, map[string]any{"type": "text", "text": t.text.String()})
		u := t.done.Usage
		if u == nil {
			u = &agent.Usage{}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "msg_" + t.runID, "type": "message", "role": "assistant", "model": t.model, "content": content,
			"stop_reason": anthropicStop(t.done.StopReason), "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens},
		})
	})
}
