package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/praxis-tools/praxis/internal/lazyre"
)

// Scripted is a provider that replays model turns from a script, for tests
// and demos without a network. Turn N of the script answers the request
// whose conversation holds N-1 assistant messages, so a replay depends only
// on the conversation.
//
// In the string values of a tool call's input, {{match RE}} is replaced by
// what the regular expression RE matches (its first group, if it has one)
// in the text of the tool results the model received last. A script can so
// use the anchors a read_file call returned, as a model would.
type Scripted struct {
	Turns []ScriptTurn `json:"turns"`
}

// ScriptTurn is one scripted model reply.
type ScriptTurn struct {
	// Reasoning is the model's reasoning before the reply, streamed word
	// by word to the reasoning receiver (WithReasoningStream).
	Reasoning string `json:"reasoning,omitempty"`
	// Text is the reply's text, streamed word by word.
	Text string `json:"text,omitempty"`
	// ToolCalls are the tools the reply calls.
	ToolCalls []ScriptCall `json:"tool_calls,omitempty"`
	// Usage is reported as the call's usage; when absent, it is estimated
	// as one token per four bytes.
	Usage *Usage `json:"usage,omitempty"`
	// Error, when set, makes the call fail with this API error instead.
	Error *ScriptError `json:"error,omitempty"`
}

// ScriptCall is one scripted tool call.
type ScriptCall struct {
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ScriptError is a scripted API failure.
type ScriptError struct {
	Kind    ErrorKind `json:"kind"`
	Status  int       `json:"status,omitempty"`
	Message string    `json:"message"`
}

// scriptInputPiece is the size in bytes of the pieces a scripted tool
// call's arguments stream in.
const scriptInputPiece = 16

// LoadScript reads a script file: {"turns": [...]}.
func LoadScript(name string) (*Scripted, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	var s Scripted
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	if len(s.Turns) == 0 {
		return nil, fmt.Errorf("script %s: no turns", name)
	}
	for i, t := range s.Turns {
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("script %s: turn %d, tool call %d: no name", name, i+1, j+1)
			}
		}
	}
	return &s, nil
}

// Name returns "scripted".
func (s *Scripted) Name() string { return "scripted" }

// Complete replays the turn the conversation has reached.
func (s *Scripted) Complete(ctx context.Context, req *Request, onText StreamFunc) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := req.Compacted
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			n++
		}
	}
	if n >= len(s.Turns) {
		return nil, fmt.Errorf("scripted: the script has %d turns and the conversation asks for turn %d", len(s.Turns), n+1)
	}
	turn := s.Turns[n]
	if e := turn.Error; e != nil {
		return nil, &APIError{Provider: s.Name(), Kind: e.Kind, Status: e.Status, Message: e.Message}
	}
	results := lastToolResults(req.Messages)
	msg := Message{Role: RoleAssistant}
	if turn.Reasoning != "" {
		if fn := reasoningStream(ctx); fn != nil {
			for _, w := range strings.SplitAfter(turn.Reasoning, " ") {
				fn(w)
			}
		}
		msg.Content = append(msg.Content, Block{Type: BlockThinking, Text: turn.Reasoning})
	}
	if turn.Text != "" {
		if onText != nil {
			for _, w := range strings.SplitAfter(turn.Text, " ") {
				onText(w)
			}
		}
		msg.Content = append(msg.Content, Block{Type: BlockText, Text: turn.Text})
	}
	for i, c := range turn.ToolCalls {
		in, err := fillMatches(objectOrEmpty(c.Input), results)
		if err != nil {
			return nil, fmt.Errorf("scripted: turn %d, tool call %d (%s): %w", n+1, i+1, c.Name, err)
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", n+1, i+1)
		}
		if fn := toolInputStream(ctx); fn != nil {
			for rest := string(in); rest != ""; {
				n := min(len(rest), scriptInputPiece)
				fn(id, c.Name, rest[:n])
				rest = rest[n:]
			}
		}
		msg.Content = append(msg.Content, Block{Type: BlockToolUse, ID: id, Name: c.Name, Input: in})
	}
	stop := "end_turn"
	if len(turn.ToolCalls) > 0 {
		stop = "tool_use"
	}
	usage := Usage{}
	if turn.Usage != nil {
		usage = *turn.Usage
	} else {
		in := len(req.System)
		for _, m := range req.Messages {
			for _, b := range m.Content {
				in += len(b.Text) + len(b.Input)
			}
		}
		out := len(turn.Text)
		for _, b := range msg.Content {
			out += len(b.Input)
		}
		usage = Usage{InputTokens: (in + 3) / 4, OutputTokens: (out + 3) / 4}
	}
	return &Response{Message: msg, StopReason: stop, Usage: usage}, nil
}

// lastToolResults returns the text of the tool results in the last user
// message.
func lastToolResults(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleUser {
			continue
		}
		var parts []string
		for _, b := range msgs[i].Content {
			if b.Type == BlockToolResult {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

var matchPlaceholder = lazyre.New(`\{\{match (.+?)\}\}`)

// fillMatches replaces {{match RE}} in the JSON text raw, keeping the rest
// of it, key order included, as written. A placeholder stands inside a JSON
// string, so RE is unescaped before use and the match escaped after.
func fillMatches(raw json.RawMessage, results string) (json.RawMessage, error) {
	if !strings.Contains(string(raw), "{{match ") {
		return raw, nil
	}
	var ferr error
	out := matchPlaceholder.Get().ReplaceAllStringFunc(string(raw), func(ph string) string {
		escaped := matchPlaceholder.Get().FindStringSubmatch(ph)[1]
		var expr string
		if err := json.Unmarshal([]byte(`"`+escaped+`"`), &expr); err != nil {
			ferr = fmt.Errorf("{{match %s}}: %w", escaped, err)
			return ph
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			ferr = fmt.Errorf("{{match %s}}: %w", expr, err)
			return ph
		}
		m := re.FindStringSubmatch(results)
		if m == nil {
			ferr = fmt.Errorf("{{match %s}} found nothing in the last tool results", expr)
			return ph
		}
		v := m[0]
		if len(m) > 1 {
			v = m[1]
		}
		b, _ := json.Marshal(v)
		return string(b[1 : len(b)-1])
	})
	if ferr != nil {
		return nil, ferr
	}
	if !json.Valid([]byte(out)) {
		return nil, fmt.Errorf("input with matches filled in is not valid JSON: %s", out)
	}
	return json.RawMessage(out), nil
}
