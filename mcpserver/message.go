package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// envelope is what the transports read of a message to route it.
type envelope struct {
	ID     json.RawMessage // absent: nil; otherwise the raw JSON, "null" included
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	kind   kind
}

type kind int

const (
	kindInvalid kind = iota
	kindRequest
	kindNotification
	kindResponse
)

// rawEnvelope is a message's members as decoded; a member of the wrong
// type is reported in the protocol's words rather than Go's.
type rawEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// messageError is a message the server cannot serve, with the JSON-RPC
// error that answers it. ID is the message's id when it could be read, so
// that the client can match the error; otherwise null.
type messageError struct {
	ID      json.RawMessage
	Code    int
	Message string
}

func (e *messageError) Error() string { return e.Message }

// response writes the JSON-RPC error response to the message.
func (e *messageError) response() writeFunc { return errorFunc(e.ID, e.Code, e.Message) }

// decodeMessage reads one JSON-RPC message (not a batch) from b: a request,
// a notification or a response. A message that is not valid JSON is a
// parse error (-32700); one that is JSON but not a JSON-RPC 2.0 message is
// an invalid request (-32600). Neither error names a Go type. In
// particular, an "id" member that is null, not a string or a number, or
// not valid UTF-8 makes a request invalid (never a notification), and such
// an id is not echoed back.
func decodeMessage(b []byte) (*envelope, *messageError) {
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &messageError{Code: mcp.PARSE_ERROR, Message: "parse error: the message is empty"}
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return nil, parseError(b)
		}
		return nil, &messageError{Code: mcp.INVALID_REQUEST, Message: "invalid request: a JSON-RPC message is a JSON object"}
	}
	var raw rawEnvelope
	err := json.Unmarshal(b, &raw)
	invalid := func(msg string) (*envelope, *messageError) {
		return nil, &messageError{ID: echoableID(raw.ID), Code: mcp.INVALID_REQUEST, Message: "invalid request: " + msg}
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "method":
		return invalid(`"method" must be a non-empty string`)
	case errors.As(err, &typeErr) && typeErr.Field == "jsonrpc":
		return invalid(`"jsonrpc" must be "2.0"`)
	case err != nil:
		return nil, parseError(b)
	}
	env := &envelope{}
	if raw.JSONRPC != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if raw.Method != "" { // an empty or null method is no method
		env.Method = raw.Method
		if raw.ID != nil {
			if err := checkID(raw.ID); err != "" {
				return invalid(err)
			}
			env.kind = kindRequest
		} else {
			env.kind = kindNotification
		}
		switch p := firstByte(raw.Params); p {
		case 0, '{', '[':
		case 'n':
			raw.Params = nil // null: no parameters
		default:
			return invalid(`"params" must be an object or an array`)
		}
		env.ID, env.Params = raw.ID, raw.Params
		return env, nil
	}
	// A response to a request the server sent. Its id may be null when the
	// client could not read the request.
	if raw.ID == nil {
		return invalid(`a message needs a "method" (request or notification) or an "id" (response)`)
	}
	if (raw.Result == nil) == (raw.Error == nil) {
		return invalid(`a response has exactly one of "result" and "error"`)
	}
	env.kind, env.ID, env.Result, env.Error = kindResponse, raw.ID, raw.Result, raw.Error
	return env, nil
}

// checkID returns what is wrong with a request's id, or "".
func checkID(id json.RawMessage) string {
	switch c := firstByte(id); {
	case c == 'n':
		return `"id" must not be null; a notification has no "id" member`
	case c == '"':
		if !utf8.Valid(id) {
			return `"id" is not valid UTF-8`
		}
		return ""
	case c == '-' || (c >= '0' && c <= '9'):
		return ""
	}
	return `"id" must be a string or a number`
}

// echoableID returns id when an error response may carry it, else nil
// (written as null).
func echoableID(id json.RawMessage) json.RawMessage {
	if id == nil || checkID(id) != "" {
		return nil
	}
	return id
}

func firstByte(b json.RawMessage) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// parseError describes why b is not JSON, without naming Go types.
func parseError(b []byte) *messageError {
	msg := "parse error: the message is not valid JSON"
	var syn *json.SyntaxError
	if err := json.Unmarshal(b, new(json.RawMessage)); errors.As(err, &syn) {
		msg += fmt.Sprintf(" (%s at byte %d)", syn.Error(), syn.Offset)
	} else if !utf8.Valid(b) {
		msg += " (invalid UTF-8)"
	} else if err != nil {
		msg += " (it ends too early)"
	}
	return &messageError{Code: mcp.PARSE_ERROR, Message: msg}
}

// isBatch reports whether b holds a JSON array: a JSON-RPC batch.
func isBatch(b []byte) bool {
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// decodeBatch splits a JSON-RPC batch into its messages. An empty array is
// an invalid request; an array that is not valid JSON a parse error.
func decodeBatch(b []byte) ([]json.RawMessage, *messageError) {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, parseError(b)
	}
	if len(items) == 0 {
		return nil, &messageError{Code: mcp.INVALID_REQUEST, Message: "invalid request: an empty batch"}
	}
	return items, nil
}

// batchesAllowed reports whether a session that negotiated version may send
// JSON-RPC batches: 2025-03-26 allows them (as JSON-RPC 2.0 does, which
// 2024-11-05 builds on); 2025-06-18 removed them.
func batchesAllowed(version string) bool {
	return version != "" && version <= mcp.ProtocolVersion20250326
}

// batchRefusal is the error for a batch a session may not send.
func batchRefusal(version string) *messageError {
	if version == "" {
		return &messageError{Code: mcp.INVALID_REQUEST, Message: "invalid request: a batch before initialize; initialize must be sent alone"}
	}
	return &messageError{Code: mcp.INVALID_REQUEST, Message: "invalid request: JSON-RPC batches are not part of protocol version " + version + " (only 2025-03-26 and earlier)"}
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
// field CallToolParams.params.name of type int").
var goTypeText = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field (\S+) of type (\S+(?: \{\})?)|value of type (\S+(?: \{\})?))`)

// protocolText rewrites msg, an error message bound for a client, so that
// it speaks of JSON values rather than the Go types they were decoded into.
func protocolText(msg string) string {
	if !strings.Contains(msg, "json: cannot unmarshal") {
		return msg
	}
	return goTypeText.ReplaceAllStringFunc(msg, func(m string) string {
		sub := goTypeText.FindStringSubmatch(m)
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
// raw bytes, and the responses already decided for malformed items and a
// batched initialize.
type batch struct {
	reqs  []*envelope
	raws  [][]byte
	resps []writeFunc
}

// splitBatch sorts the items of a batch. Responses go to deliver and
// notifications to notify, in the order they stand; requests are kept for
// the caller to serve.
func splitBatch(items []json.RawMessage, deliver func(*envelope) bool, notify func(*envelope, []byte)) batch {
	var b batch
	for _, item := range items {
		env, bad := decodeMessage(item)
		switch {
		case bad != nil:
			b.resps = append(b.resps, bad.response())
		case env.kind == kindRequest && env.Method == string(mcp.MethodInitialize):
			b.resps = append(b.resps, errorFunc(env.ID, mcp.INVALID_REQUEST, "invalid request: initialize must not be part of a batch"))
		case env.kind == kindRequest:
			b.reqs, b.raws = append(b.reqs, env), append(b.raws, item)
		case env.kind == kindResponse:
			deliver(env)
		default:
			notify(env, item)
		}
	}
	return b
}
