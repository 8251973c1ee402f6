package agent

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
)

// ClaudeInit is what the first line of Claude Code's stream-json output
// says about the session beyond what run_start has.
type ClaudeInit struct {
	// Cwd is the workspace directory.
	Cwd string
	// MCPServers are the external MCP servers and their states.
	MCPServers []ClaudeMCPServer
}

// ClaudeMCPServer is an external MCP server as the init line lists it.
type ClaudeMCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// ClaudeStreamJSON returns an event sink that writes the run as Claude
// Code's stream-json output (claude -p --output-format stream-json), one
// JSON object a line: a system/init line at run_start, an assistant line
// for each model reply and a user line for each set of tool results and
// each message the harness adds, and a result line at run_complete. Tools
// that read Claude Code's output read this. Deltas and the harness's own
// events are not written; use JSONLines for the whole story.
func ClaudeStreamJSON(w io.Writer, init ClaudeInit) func(Event) {
	c := &claudeWriter{enc: json.NewEncoder(w), init: init}
	c.enc.SetEscapeHTML(false)
	return c.handle
}

// ClaudeJSON returns an event sink that writes only the result line of
// ClaudeStreamJSON, at run_complete, as claude -p --output-format json
// does.
func ClaudeJSON(w io.Writer) func(Event) {
	c := &claudeWriter{enc: json.NewEncoder(w), resultOnly: true}
	c.enc.SetEscapeHTML(false)
	return c.handle
}

type claudeWriter struct {
	enc        *json.Encoder
	init       ClaudeInit
	resultOnly bool
	model      string
	results    []claudeBlock // tool results of the step in flight
	turns      int
}

// claudeBlock is a content block as the Anthropic Messages API writes it.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
}

// claudeUsage is usage as the Anthropic Messages API writes it.
type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func toClaudeUsage(u *Usage) claudeUsage {
	if u == nil {
		return claudeUsage{}
	}
	return claudeUsage{InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheWriteTokens, CacheReadInputTokens: u.CacheReadTokens, OutputTokens: u.OutputTokens}
}

func ptr[T any](v T) *T { return &v }

// claudeUUID returns a random version 4 UUID.
func claudeUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// claudeSubtype maps a stop reason to the subtype of Claude Code's result
// line.
func claudeSubtype(stop StopReason) string {
	switch stop {
	case StopCompleted:
		return "success"
	case StopMaxSteps:
		return "error_max_turns"
	case StopMaxCost:
		return "error_max_budget_usd"
	default:
		return "error_during_execution"
	}
}

func (c *claudeWriter) write(v any) { _ = c.enc.Encode(v) }

func (c *claudeWriter) handle(ev Event) {
	switch ev.Type {
	case EventRunStart:
		c.model = ev.Model
		if c.resultOnly {
			return
		}
		c.write(map[string]any{
			"type": "system", "subtype": "init", "session_id": ev.RunID, "uuid": claudeUUID(),
			"cwd": c.init.Cwd, "model": ev.Model, "tools": orEmpty(ev.Tools), "mcp_servers": orEmpty(c.init.MCPServers),
			"permissionMode": "default", "resumed": ev.Resumed,
		})
	case EventToolResult:
		c.results = append(c.results, claudeBlock{Type: "tool_result", ToolUseID: ev.CallID, Content: ptr(ev.Output), IsError: ptr(ev.IsError)})
	case EventStepComplete:
		c.turns++
		if c.resultOnly || ev.Message == nil {
			c.results = nil
			return
		}
		var content []claudeBlock
		for _, b := range ev.Message.Content {
			switch b.Type {
			case BlockText:
				content = append(content, claudeBlock{Type: "text", Text: ptr(b.Text)})
			case BlockToolUse:
				in := objectOrEmpty(b.Input)
				if b.InvalidInput != "" {
					in = json.RawMessage("{}")
				}
				content = append(content, claudeBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: in})
			case BlockThinking:
				content = append(content, claudeBlock{Type: "thinking", Thinking: ptr(b.Text), Signature: b.Signature})
			case BlockRedactedThinking:
				content = append(content, claudeBlock{Type: "redacted_thinking", Data: b.Data})
			}
		}
		c.write(map[string]any{
			"type": "assistant", "session_id": ev.RunID, "uuid": claudeUUID(), "parent_tool_use_id": nil,
			"message": map[string]any{
				"id": fmt.Sprintf("msg_%s_%d", ev.RunID, ev.Step), "type": "message", "role": "assistant", "model": c.model,
				"content": orEmpty(content), "stop_reason": nil, "stop_sequence": nil, "usage": toClaudeUsage(ev.Usage),
			},
		})
		if len(c.results) > 0 {
			c.user(ev.RunID, c.results)
		}
		c.results = nil
	case EventMessage:
		if !c.resultOnly {
			c.user(ev.RunID, []claudeBlock{{Type: "text", Text: ptr(ev.Text)}})
		}
	case EventRunComplete:
		cost := 0.0
		if ev.CostUSD != nil {
			cost = *ev.CostUSD
		}
		res := map[string]any{
			"type": "result", "subtype": claudeSubtype(ev.StopReason), "is_error": ev.StopReason != StopCompleted,
			"duration_ms": ev.ElapsedMS, "num_turns": c.turns, "result": ev.Final, "session_id": ev.RunID,
			"total_cost_usd": cost, "usage": toClaudeUsage(ev.Usage), "permission_denials": []any{}, "uuid": claudeUUID(),
		}
		if ev.Error != "" {
			res["errors"] = []string{ev.Error}
		}
		c.write(res)
	}
}

// user writes a user line with content.
func (c *claudeWriter) user(session string, content []claudeBlock) {
	c.write(map[string]any{
		"type": "user", "session_id": session, "uuid": claudeUUID(), "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": content},
	})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
