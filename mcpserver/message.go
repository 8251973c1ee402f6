package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/internal/lazyre"
)

// errorResponse writes the error response that answers a message the
// server cannot serve.
func errorResponse(e *jsonrpc.Error) writeFunc { return errorFunc(e.ID, e.Code, e.Message) }

// batchesAllowed reports whether a session that negotiated version may send
// JSON-RPC batches: 2025-03-26 allows them (as JSON-RPC 2.0 does, which
// 2024-11-05 builds on); 2025-06-18 removed them.
func batchesAllowed(version string) bool {
	return version != "" && version <= mcp.ProtocolVersion20250326
}

// batchRefusal is the error for a batch a session may not send.
func batchRefusal(version string) *jsonrpc.Error {
	if version == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a batch before initialize; initialize must be sent alone"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: JSON-RPC batches are not part of protocol version " + version + " (only 2025-03-26 and earlier)"}
}

// joinResponses writes responses as one JSON array: a batch's answer.
func joinResponses(resps []writeFunc) writeFunc {
	return func(w *bufio.Writer) error {
		w.WriteByte('[')
		for i, r := range resps {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := r(w); err != nil {
				return err
			}
		}
		return w.WriteByte(']')
	}
}

// goTypeText matches encoding/json's messages about a value of the wrong
// type, which name Go types ("json: cannot unmarshal string into Go struct
// field CallToolParams.params.name of type int"). It is compiled on first
// use, not at every start of the binary.
var goTypeText = lazyre.New(`json: cannot unmarshal (\w+) into Go (?:struct field (\S+) of type (\S+(?: \{\})?)|value of type (\S+(?: \{\})?))`)

// protocolText rewrites msg, an error message bound for a client, so that
// it speaks of JSON values rather than the Go types they were decoded into.
func protocolText(msg string) string {
	if !strings.Contains(msg, "json: cannot unmarshal") {
		return msg
	}
	re := goTypeText.Get()
	return re.ReplaceAllStringFunc(msg, func(m string) string {
		sub := re.FindStringSubmatch(m)
		got, field, goType := sub[1], sub[2], sub[3]
		if field == "" {
			goType = sub[4]
		}
		want := jsonTypeOf(goType)
		if field == "" {
			return fmt.Sprintf("expected %s, got %s", want, got)
		}
		if _, rest, ok := strings.Cut(field, "."); ok {
			field = rest // drop the Go struct's name
		}
		// and the names of structs embedded in it ("Request.params"):
		// Go's are capitalised, the protocol's members are not.
		for {
			first, rest, ok := strings.Cut(field, ".")
			if !ok || first == "" || first[0] < 'A' || first[0] > 'Z' {
				break
			}
			field = rest
		}
		return fmt.Sprintf("%q must be %s, got %s", field, want, got)
	})
}

// jsonTypeOf names the JSON type a Go type decodes from.
func jsonTypeOf(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["):
		return "an object"
	}
	return "a value of another type"
}

// batch is a JSON-RPC batch sorted for serving: its requests with their
// raw bytes and their flights, and the responses already decided for
// malformed items and a batched initialize.
type batch struct {
	reqs    []*jsonrpc.Message
	raws    [][]byte
	flights []*inflightCall
	resps   []writeFunc
}

// done ends the flights of requests that will not be served.
func (b batch) done() {
	for _, f := range b.flights {
		f.done()
	}
}

// splitBatch sorts the items of a batch from c. Responses and
// notifications are handled in the order they stand. Requests are admitted
// with contexts derived from ctx as they come, so that a cancellation
// later in the batch finds them, and kept for the caller to serve.
func splitBatch(ctx context.Context, c *conn, items []json.RawMessage) batch {
	var b batch
	for _, item := range items {
		env, bad := jsonrpc.Decode(item)
		switch {
		case bad != nil:
			b.resps = append(b.resps, errorResponse(bad))
		case env.Kind == jsonrpc.KindRequest && env.Method == string(mcp.MethodInitialize):
			b.resps = append(b.resps, errorFunc(env.ID, jsonrpc.CodeInvalidRequest, "invalid request: initialize must not be part of a batch"))
		case env.Kind == jsonrpc.KindRequest:
			b.reqs, b.raws = append(b.reqs, env), append(b.raws, item)
			b.flights = append(b.flights, c.admit(ctx, env))
		case env.Kind == jsonrpc.KindResponse:
			c.deliver(env)
		default:
			c.srv.notification(c, env)
		}
	}
	return b
}
