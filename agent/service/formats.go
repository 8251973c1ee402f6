package service

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/praxis-tools/praxis/agent"
)

// Format is the shape of an event stream.
type Format string

// The event stream formats.
const (
	// Native is the journal's events, one JSON object per SSE event.
	Native Format = "native"
	// Vercel is the AI SDK's UI message stream protocol, v1.
	Vercel Format = "vercel"
	// OpenAI is chat.completion.chunk objects, ending with [DONE].
	OpenAI Format = "openai"
	// Anthropic is the Messages API's stream events.
	Anthropic Format = "anthropic"
)

// frame is one server-sent event.
type frame struct {
	event string // the event field; empty for none
	data  string
}

// encoder turns a turn's events into frames of one format. Encoders of
// the other formats than Native cover one turn: run_start to run_complete.
type encoder interface {
	encode(ev agent.Event) []frame
	// end returns the frames after the turn's last event.
	end() []frame
}

func newEncoder(f Format, session string) encoder {
	switch f {
	case Vercel:
		return &vercelEncoder{session: session, started: map[string]bool{}}
	case OpenAI:
		return &openaiEncoder{session: session}
	case Anthropic:
		return &anthropicEncoder{index: -1}
	default:
		return nativeEncoder{}
	}
}

func dataOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// nativeEncoder passes the journal's events on as they are.
type nativeEncoder struct{}

func (nativeEncoder) encode(ev agent.Event) []frame { return []frame{{data: dataOf(ev)}} }
func (nativeEncoder) end() []frame                  { return nil }

// vercelEncoder speaks the AI SDK UI message stream: one assistant message
// per turn, a step per model reply, tools as dynamic tool parts.
type vercelEncoder struct {
	session    string
	stepOpen   bool
	text, mind string // the open text and reasoning parts' IDs
	n          int
	started    map[string]bool // tool calls whose input part started
}

type part map[string]any

func (e *vercelEncoder) frames(ps ...part) []frame {
	out := make([]frame, len(ps))
	for i, p := range ps {
		out[i] = frame{data: dataOf(p)}
	}
	return out
}

// closeText ends the open text and reasoning parts.
func (e *vercelEncoder) closeText() []part {
	var ps []part
	if e.text != "" {
		ps = append(ps, part{"type": "text-end", "id": e.text})
		e.text = ""
	}
	if e.mind != "" {
		ps = append(ps, part{"type": "reasoning-end", "id": e.mind})
		e.mind = ""
	}
	return ps
}

func (e *vercelEncoder) step() []part {
	if e.stepOpen {
		return nil
	}
	e.stepOpen = true
	return []part{{"type": "start-step"}}
}

func (e *vercelEncoder) id(prefix string) string {
	e.n++
	return fmt.Sprintf("%s%d", prefix, e.n)
}

func (e *vercelEncoder) encode(ev agent.Event) []frame {
	var ps []part
	switch ev.Type {
	case agent.EventRunStart:
		ps = append(ps, part{"type": "start", "messageId": fmt.Sprintf("%s-%d", e.session, ev.Seq)})
	case agent.EventThinking:
		ps = append(ps, e.step()...)
		if e.text != "" {
			ps = append(ps, part{"type": "text-end", "id": e.text})
			e.text = ""
		}
		if e.mind == "" {
			e.mind = e.id("reasoning-")
			ps = append(ps, part{"type": "reasoning-start", "id": e.mind})
		}
		ps = append(ps, part{"type": "reasoning-delta", "id": e.mind, "delta": ev.Text})
	case agent.EventTextDelta:
		ps = append(ps, e.step()...)
		if e.mind != "" {
			ps = append(ps, part{"type": "reasoning-end", "id": e.mind})
			e.mind = ""
		}
		if e.text == "" {
			e.text = e.id("text-")
			ps = append(ps, part{"type": "text-start", "id": e.text})
		}
		ps = append(ps, part{"type": "text-delta", "id": e.text, "delta": ev.Text})
	case agent.EventToolInput:
		ps = append(ps, e.step()...)
		ps = append(ps, e.closeText()...)
		ps = append(ps, e.startTool(ev)...)
		ps = append(ps, part{"type": "tool-input-delta", "toolCallId": ev.CallID, "inputTextDelta": ev.Text})
	case agent.EventToolStart:
		ps = append(ps, e.step()...)
		ps = append(ps, e.closeText()...)
		ps = append(ps, e.startTool(ev)...)
		var input any = map[string]any{}
		if len(ev.Input) > 0 {
			_ = json.Unmarshal(ev.Input, &input)
		}
		ps = append(ps, part{"type": "tool-input-available", "toolCallId": ev.CallID, "toolName": ev.Tool, "input": input, "dynamic": true})
	case agent.EventToolResult:
		if ev.IsError {
			ps = append(ps, part{"type": "tool-output-error", "toolCallId": ev.CallID, "errorText": ev.Output, "dynamic": true})
		} else {
			ps = append(ps, part{"type": "tool-output-available", "toolCallId": ev.CallID, "output": ev.Output, "dynamic": true})
		}
	case agent.EventStepComplete:
		ps = append(ps, e.closeText()...)
		if e.stepOpen {
			ps = append(ps, part{"type": "finish-step"})
			e.stepOpen = false
		}
	case agent.EventRunComplete:
		ps = append(ps, e.closeText()...)
		if e.stepOpen {
			ps = append(ps, part{"type": "finish-step"})
			e.stepOpen = false
		}
		switch ev.StopReason {
		case agent.StopCompleted:
		case agent.StopCancelled:
			ps = append(ps, part{"type": "abort", "reason": ev.Error})
		default:
			msg := ev.Error
			if msg == "" {
				msg = "the run stopped: " + string(ev.StopReason)
			}
			ps = append(ps, part{"type": "error", "errorText": msg})
		}
		ps = append(ps, part{"type": "finish", "finishReason": vercelFinish(ev.StopReason), "messageMetadata": turnMetadata(ev)})
	}
	return e.frames(ps...)
}

func (e *vercelEncoder) startTool(ev agent.Event) []part {
	if e.started[ev.CallID] {
		return nil
	}
	e.started[ev.CallID] = true
	return []part{{"type": "tool-input-start", "toolCallId": ev.CallID, "toolName": ev.Tool, "dynamic": true}}
}

func (e *vercelEncoder) end() []frame { return []frame{{data: "[DONE]"}} }

func vercelFinish(s agent.StopReason) string {
	switch s {
	case agent.StopCompleted:
		return "stop"
	case agent.StopMaxTokens, agent.StopMaxSteps, agent.StopMaxToolCalls, agent.StopMaxCost:
		return "length"
	case agent.StopError:
		return "error"
	default:
		return "other"
	}
}

// turnMetadata is what a turn's last event says of it, for the formats'
// metadata fields.
func turnMetadata(ev agent.Event) map[string]any {
	m := map[string]any{"stop_reason": ev.StopReason, "steps": ev.Steps, "tool_calls": ev.ToolCalls, "elapsed_ms": ev.ElapsedMS}
	if ev.Usage != nil {
		m["usage"] = ev.Usage
	}
	if ev.CostUSD != nil {
		m["cost_usd"] = *ev.CostUSD
	}
	if ev.Error != "" {
		m["error"] = ev.Error
	}
	return m
}

// toolLines is how the formats without tool parts show a tool call and its
// result in the answer's text.
func toolStartLine(ev agent.Event) string {
	in := strings.TrimSpace(string(ev.Input))
	if len(in) > 200 {
		in = in[:200] + "…"
	}
	return fmt.Sprintf("\n\n> tool %s %s\n", ev.Tool, in)
}

func toolResultLine(ev agent.Event) string {
	first, _, _ := strings.Cut(strings.TrimSpace(ev.Output), "\n")
	if len(first) > 200 {
		first = first[:200] + "…"
	}
	mark := "ok"
	if ev.IsError {
		mark = "failed"
	}
	return fmt.Sprintf("> %s: %s\n\n", mark, first)
}

func stopText(ev agent.Event) string {
	if ev.StopReason == agent.StopCompleted {
		return ""
	}
	msg := "\n\n[the run stopped: " + string(ev.StopReason)
	if ev.Error != "" {
		msg += ": " + ev.Error
	}
	return msg + "]"
}

// openaiEncoder speaks chat.completion.chunk: the model's text and tool
// lines as content, reasoning as reasoning_content.
type openaiEncoder struct {
	session string
	model   string
	created int64
}

func (e *openaiEncoder) chunk(delta map[string]any, finish any, usage any) frame {
	c := map[string]any{
		"id": "chatcmpl-" + e.session, "object": "chat.completion.chunk", "created": e.created, "model": e.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
	if usage != nil {
		c["usage"] = usage
	}
	return frame{data: dataOf(c)}
}

func (e *openaiEncoder) encode(ev agent.Event) []frame {
	switch ev.Type {
	case agent.EventRunStart:
		e.model, e.created = ev.Model, ev.Time.Unix()
		return []frame{e.chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)}
	case agent.EventTextDelta:
		return []frame{e.chunk(map[string]any{"content": ev.Text}, nil, nil)}
	case agent.EventThinking:
		return []frame{e.chunk(map[string]any{"reasoning_content": ev.Text}, nil, nil)}
	case agent.EventToolStart:
		return []frame{e.chunk(map[string]any{"content": toolStartLine(ev)}, nil, nil)}
	case agent.EventToolResult:
		return []frame{e.chunk(map[string]any{"content": toolResultLine(ev)}, nil, nil)}
	case agent.EventRunComplete:
		var out []frame
		if t := stopText(ev); t != "" {
			out = append(out, e.chunk(map[string]any{"content": t}, nil, nil))
		}
		return append(out, e.chunk(map[string]any{}, openaiFinish(ev.StopReason), openaiUsage(ev.Usage)))
	}
	return nil
}

func (e *openaiEncoder) end() []frame { return []frame{{data: "[DONE]"}} }

func openaiFinish(s agent.StopReason) string {
	switch s {
	case agent.StopMaxTokens, agent.StopMaxSteps, agent.StopMaxToolCalls, agent.StopMaxCost:
		return "length"
	default:
		return "stop"
	}
}

func openaiUsage(u *agent.Usage) map[string]any {
	if u == nil {
		u = &agent.Usage{}
	}
	return map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens}
}

// anthropicEncoder speaks the Messages API's stream: reasoning as thinking
// blocks, the model's text and tool lines as text blocks.
type anthropicEncoder struct {
	index int    // the open block's index, -1 before the first
	kind  string // the open block's type, "" when none is open
}

func (e *anthropicEncoder) ev(name string, v map[string]any) frame {
	v["type"] = name
	return frame{event: name, data: dataOf(v)}
}

// block returns the frames that make the open block one of kind.
func (e *anthropicEncoder) block(kind string) []frame {
	if e.kind == kind {
		return nil
	}
	out := e.closeBlock()
	e.index++
	e.kind = kind
	cb := map[string]any{"type": "text", "text": ""}
	if kind == "thinking" {
		cb = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	}
	return append(out, e.ev("content_block_start", map[string]any{"index": e.index, "content_block": cb}))
}

func (e *anthropicEncoder) closeBlock() []frame {
	if e.kind == "" {
		return nil
	}
	e.kind = ""
	return []frame{e.ev("content_block_stop", map[string]any{"index": e.index})}
}

func (e *anthropicEncoder) text(s string) []frame {
	return append(e.block("text"), e.ev("content_block_delta", map[string]any{"index": e.index, "delta": map[string]any{"type": "text_delta", "text": s}}))
}

func (e *anthropicEncoder) encode(ev agent.Event) []frame {
	switch ev.Type {
	case agent.EventRunStart:
		return []frame{e.ev("message_start", map[string]any{"message": map[string]any{
			"id": fmt.Sprintf("msg_%s_%d", ev.RunID, ev.Seq), "type": "message", "role": "assistant", "model": ev.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 0, "output_tokens": 0},
		}})}
	case agent.EventThinking:
		return append(e.block("thinking"), e.ev("content_block_delta", map[string]any{"index": e.index, "delta": map[string]any{"type": "thinking_delta", "thinking": ev.Text}}))
	case agent.EventTextDelta:
		return e.text(ev.Text)
	case agent.EventToolStart:
		return e.text(toolStartLine(ev))
	case agent.EventToolResult:
		return e.text(toolResultLine(ev))
	case agent.EventRunComplete:
		var out []frame
		if t := stopText(ev); t != "" {
			out = e.text(t)
		}
		out = append(out, e.closeBlock()...)
		u := ev.Usage
		if u == nil {
			u = &agent.Usage{}
		}
		out = append(out, e.ev("message_delta", map[string]any{
			"delta": map[string]any{"stop_reason": anthropicStop(ev.StopReason), "stop_sequence": nil},
			"usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens},
		}))
		return append(out, e.ev("message_stop", map[string]any{}))
	}
	return nil
}

func (e *anthropicEncoder) end() []frame { return nil }

func anthropicStop(s agent.StopReason) string {
	switch s {
	case agent.StopMaxTokens, agent.StopMaxSteps, agent.StopMaxToolCalls, agent.StopMaxCost:
		return "max_tokens"
	default:
		return "end_turn"
	}
}
