package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/praxis"
)

// toolCallParams are the parameters of a tools/call the server runs itself.
type toolCallParams struct {
	Name      string                     `json:"name"`
	Arguments json.RawMessage            `json:"arguments"`
	Meta      map[string]json.RawMessage `json:"_meta"`
	Task      json.RawMessage            `json:"task"`
}

// fastToolCall serves a tools/call of an engine tool directly: the request
// is parsed once, the catalog runs the tool and the result is encoded
// straight to the wire, where the generic dispatch decodes the whole
// message into mcp's request type first. It returns nil, having done
// nothing, for anything but a plain call of a tool of the engine (an
// extension's tool, an unknown one, a task-augmented call, metadata other
// than a progress token), which then goes through dispatch as usual. The
// result is the same on the wire either way; tests hold the two paths to
// that.
func (s *Server) fastToolCall(ctx context.Context, cl *call, env *jsonrpc.Message) writeFunc {
	var p toolCallParams
	if len(env.Params) == 0 || json.Unmarshal(env.Params, &p) != nil || len(p.Task) > 0 || !s.isEngineTool(p.Name) {
		return nil
	}
	var token json.RawMessage
	for k, v := range p.Meta {
		if k != "progressToken" || !utf8.Valid(v) {
			return nil // a token that is not UTF-8 is not sent back as it came
		}
		token = v
	}
	eng, release := s.engineFor(ctx)
	defer release()
	if _, ok := eng.Catalog().Lookup(p.Name); !ok {
		return nil
	}
	args := p.Arguments
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}

	if len(token) > 0 && !bytes.Equal(token, []byte("null")) {
		ctx = withProgress(ctx, cl, token)
	}
	res, err := eng.Catalog().Call(ctx, p.Name, args)
	if err != nil {
		return errorFunc(env.ID, mcp.INVALID_PARAMS, err.Error())
	}
	return responseFunc(env.ID, mcp.NewJSONRPCResultResponse(mcp.NewRequestId(nil), toolResult(res)))
}

// isEngineTool reports whether name is one of the engine's tools, as
// mounted.
func (s *Server) isEngineTool(name string) bool {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	_, ok := s.engineTools[name]
	return ok
}

// withProgress makes the tool's progress reports notifications for token
// (the raw JSON of the request's progressToken, sent back verbatim).
func withProgress(ctx context.Context, cl *call, token json.RawMessage) context.Context {
	return praxis.WithProgress(ctx, cl.progressFunc(token))
}
