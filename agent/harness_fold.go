package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/praxis-tools/praxis/agent/journal"
	"github.com/praxis-tools/praxis/praxis"
)

// State is a session as its events describe it.
type State struct {
	SessionID string
	// Messages is the conversation to go on with.
	Messages []Message
	// Runs counts run_start events; Steps, ToolCalls and Usage add up
	// every run of the session.
	Runs      int
	Steps     int
	ToolCalls int
	Usage     Usage
	// Compacted, Preamble and Pinned carry compaction across a resume.
	Compacted int
	Preamble  string
	Pinned    []string
	// LastSeq is the last event's sequence number.
	LastSeq int64
	// Stop is the stop reason of the last run, "" when it did not end (the
	// process died); Final is its last text.
	Stop  StopReason
	Final string
	// Partial reports that the last step of a run that did not end was
	// rebuilt from its tool events (the model's reply had not been
	// recorded whole).
	Partial bool
	// Interrupted are the calls of that step that started but have no
	// result: Messages answers each with an error saying the call was
	// interrupted and its effect is unknown. A tool_result event of a later
	// run (the resumed run settling the call) replaces that answer.
	Interrupted []Block
}

// Fold rebuilds a session's state from its events, in order. It is
// deterministic: the conversation it returns is the one the run held after
// the last event, except that a step cut short by a crash is completed
// from its tool_start and tool_result events, with a cancelled result for
// every call that had not returned.
func Fold(events []Event) (*State, error) {
	st := &State{}
	var p partialStep
	for i, ev := range events {
		if i == 0 {
			if ev.Type != EventRunStart || ev.Resumed {
				return nil, fmt.Errorf("event 1 is %s, not the run_start of a new session", ev.Type)
			}
			st.SessionID = ev.RunID
		}
		if ev.RunID != st.SessionID {
			return nil, fmt.Errorf("event %d belongs to session %q, not %q", ev.Seq, ev.RunID, st.SessionID)
		}
		if ev.Seq <= st.LastSeq {
			return nil, fmt.Errorf("event sequence goes back from %d to %d", st.LastSeq, ev.Seq)
		}
		st.LastSeq = ev.Seq
		switch ev.Type {
		case EventRunStart:
			if i > 0 && !ev.Resumed {
				return nil, fmt.Errorf("event %d starts a new session inside session %q", ev.Seq, st.SessionID)
			}
			st.flush(&p)
			st.Runs++
			st.Stop, st.Final = "", ""
			if !ev.Resumed {
				st.Messages = []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: ev.Task}}}}
			} else if strings.TrimSpace(ev.Task) != "" {
				st.Messages = appendUserText(st.Messages, ev.Task)
			}
		case EventTextDelta:
			p.text += ev.Text
		case EventRetry:
			p.text = "" // the failed attempt's text is not part of the reply
		case EventToolStart:
			if st.interrupted(ev.CallID) >= 0 {
				break // a resumed run running an interrupted call again
			}
			p.calls = append(p.calls, Block{Type: BlockToolUse, ID: ev.CallID, Name: ev.Tool, Input: ev.Input})
		case EventToolResult:
			if i := st.interrupted(ev.CallID); i >= 0 {
				st.settle(i, Block{Type: BlockToolResult, ID: ev.CallID, Text: ev.Output, IsError: ev.IsError})
				break
			}
			if p.results == nil {
				p.results = map[string]Block{}
			}
			p.results[ev.CallID] = Block{Type: BlockToolResult, ID: ev.CallID, Text: ev.Output, IsError: ev.IsError, Images: ev.Images}
		case EventStepComplete:
			if ev.Message == nil {
				return nil, fmt.Errorf("event %d: step_complete without the model's message", ev.Seq)
			}
			msg := *ev.Message
			msg.Role = RoleAssistant
			st.Messages = append(st.Messages, msg)
			if t := msg.Text(); t != "" {
				st.Final = t
			}
			if calls := msg.ToolCalls(); len(calls) > 0 {
				st.Messages = append(st.Messages, Message{Role: RoleUser, Content: p.answer(calls)})
				st.ToolCalls += len(calls)
			}
			if ev.Usage != nil {
				st.Usage = st.Usage.Add(*ev.Usage)
			}
			st.Steps++
			st.Interrupted = nil
			p = partialStep{}
		case EventUsage:
			if ev.Usage != nil {
				st.Usage = st.Usage.Add(*ev.Usage)
			}
		case EventMessage:
			st.Messages = appendUserText(st.Messages, ev.Text)
		case EventCompacted:
			if ev.Usage != nil { // the summary's model call
				st.Usage = st.Usage.Add(*ev.Usage)
			}
			if ev.Error != "" {
				break // a failed compaction changed nothing
			}
			st.Messages = compactMessages(st.Messages, ev.Text, ev.Kept)
			st.Compacted += ev.Folded
			st.Preamble, st.Pinned = ev.Task, ev.Pinned
		case EventRunComplete:
			p = partialStep{} // a step that failed before its end left nothing
			st.Stop = ev.StopReason
			if ev.Final != "" {
				st.Final = ev.Final
			}
		}
	}
	st.flush(&p)
	return st, nil
}

// partialStep is what is known of a step that has not completed.
type partialStep struct {
	text    string
	calls   []Block
	results map[string]Block
}

// answer returns the tool results for calls, in their order; a call
// without a result gets an interrupted one.
func (p *partialStep) answer(calls []Block) []Block {
	out := make([]Block, 0, len(calls))
	for _, c := range calls {
		if b, ok := p.results[c.ID]; ok {
			out = append(out, b)
			continue
		}
		out = append(out, interruptedResult(c))
	}
	return out
}

// interruptedResult is the answer to call c, which a run started and did
// not see end.
func interruptedResult(c Block) Block {
	res := praxis.ErrorResult(praxis.Errorf(praxis.ECancelled, "%s did not return: the run was interrupted during the call", c.Name).
		WithDetail("It was not run again. Its effect on the workspace is unknown: check before you repeat it."))
	return Block{Type: BlockToolResult, ID: c.ID, Text: res.Text, IsError: true}
}

// interrupted returns the index in st.Interrupted of call id, or -1.
func (st *State) interrupted(id string) int {
	for i, c := range st.Interrupted {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// settle answers the interrupted call st.Interrupted[i] with res.
func (st *State) settle(i int, res Block) {
	st.Interrupted = append(st.Interrupted[:i:i], st.Interrupted[i+1:]...)
	replaceResult(st.Messages, res)
}

// replaceResult puts res in place of the latest tool result of the same
// call in msgs.
func replaceResult(msgs []Message, res Block) {
	for i := len(msgs) - 1; i >= 0; i-- {
		for j, b := range msgs[i].Content {
			if b.Type == BlockToolResult && b.ID == res.ID {
				msgs[i].Content[j] = res
				return
			}
		}
	}
}

// flush completes a step cut short: when tools had started, the reply is
// rebuilt from the streamed text and the tool_start events.
func (st *State) flush(p *partialStep) {
	if len(p.calls) > 0 {
		msg := Message{Role: RoleAssistant}
		if p.text != "" {
			msg.Content = append(msg.Content, Block{Type: BlockText, Text: p.text})
		}
		msg.Content = append(msg.Content, p.calls...)
		st.Messages = append(st.Messages, msg, Message{Role: RoleUser, Content: p.answer(p.calls)})
		st.Interrupted = nil
		for _, c := range p.calls {
			if _, ok := p.results[c.ID]; !ok {
				st.Interrupted = append(st.Interrupted, c)
			}
		}
		st.ToolCalls += len(p.calls)
		st.Partial = true
	}
	*p = partialStep{}
}

// ReadSession reads the events of session id from the journals in dir.
// A torn last line is left out (log.Torn says so); a corrupt line is an
// error (a *journal.CorruptError) returned with the events before it.
func ReadSession(dir, id string) ([]Event, *journal.Log, error) {
	log, err := journal.Read(dir, id)
	events, derr := decodeEvents(log)
	if err != nil {
		return events, log, err
	}
	return events, log, derr
}

// decodeEvents decodes the events of a journal log.
func decodeEvents(log *journal.Log) ([]Event, error) {
	if log == nil {
		return nil, nil
	}
	events := make([]Event, 0, len(log.Records))
	for _, rec := range log.Records {
		var ev Event
		if err := json.Unmarshal(rec.Event, &ev); err != nil {
			return events, fmt.Errorf("journal %s: record %d is not an event: %w", log.ID, rec.Seq, err)
		}
		events = append(events, ev)
	}
	return events, nil
}

// ResumeSession opens session id's journal in dir for appending and
// returns its events, for Harness.Resume.
func ResumeSession(dir, id string) (*journal.Writer, []Event, *journal.Log, error) {
	w, log, err := journal.Resume(dir, id)
	if err != nil {
		return nil, nil, log, err
	}
	events, err := decodeEvents(log)
	if err != nil {
		w.Close()
		return nil, nil, log, err
	}
	return w, events, log, nil
}

// JournalSink returns an event sink that appends every event to w, syncs
// it at a tool call's start, at step boundaries and at the run's end, then
// passes the event on to
// next (which may be nil). A journal failure is logged once; the run goes
// on.
func JournalSink(w *journal.Writer, next func(Event), log *slog.Logger) func(Event) {
	failed := false
	return func(ev Event) {
		if !failed {
			_, err := w.Append(ev)
			// A tool call's start is synced before the tool runs, so that
			// a resume knows of every call that may have had an effect.
			if err == nil && (ev.Type == EventToolStart || ev.Type == EventStepComplete || ev.Type == EventRunComplete || ev.Type == EventRunStart) {
				err = w.Sync()
			}
			if err != nil {
				failed = true
				if log != nil {
					log.Error("the session journal cannot be written; the run goes on without it", "path", w.Path(), "err", err)
				}
			}
		}
		if next != nil {
			next(ev)
		}
	}
}
