// Package jsonrpc reads and writes JSON-RPC 2.0 messages as MCP carries
// them: one message (a request, a notification or a response) or a batch
// of them. The MCP server, the forwarder of "praxis connect", the stdio
// bridge and the load client share it, so that every part of Praxis
// judges a message by the same rules and answers a bad one with the same
// error.
//
// Decode accepts exactly the messages JSON-RPC 2.0 defines and says what
// is wrong with the others in the protocol's words, never in Go's. The
// Append functions write messages in their compact one-line form.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Version is the value of every message's "jsonrpc" member.
const Version = "2.0"

// The error codes JSON-RPC 2.0 defines.
const (
	CodeParseError     = -32700 // the message is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a JSON-RPC message
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Kind tells the four sorts of message apart.
type Kind uint8

const (
	KindInvalid      Kind = iota // not a message Decode returns; a forwarded batch, say
	KindRequest                  // a method and an id: it wants a response
	KindNotification             // a method without an id
	KindResponse                 // an id with a result or an error
)

// Message is one decoded JSON-RPC message. Its members are the raw JSON of
// the message, copied out of it.
type Message struct {
	// ID is absent (nil) for a notification; otherwise the id's raw JSON,
	// which a response sends back byte for byte. A response's id may be
	// null.
	ID json.RawMessage
	// Method is the method of a request or notification.
	Method string
	// Params is a request's or notification's parameters: nil when absent
	// or null, else an object or an array.
	Params json.RawMessage
	// Result and Error are a response's; exactly one of them is set.
	Result json.RawMessage
	Error  json.RawMessage
	Kind   Kind
}

// Error is a message that cannot be served, with the JSON-RPC error that
// answers it. ID is the message's id when a client can match it (a string
// or a number), else nil: the answer's id is then null.
type Error struct {
	ID      json.RawMessage
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// Append appends the error response that answers the message.
func (e *Error) Append(b []byte) []byte { return AppendError(b, e.ID, e.Code, e.Message) }

// ErrorObject is the "error" member of a response.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// DecodeError reads a response's error member. A member that is not an
// error object is returned whole as the message, with code 0.
func DecodeError(raw json.RawMessage) ErrorObject {
	var e ErrorObject
	if json.Unmarshal(raw, &e) != nil {
		return ErrorObject{Message: string(raw)}
	}
	return e
}

// Decode reads one JSON-RPC message (not a batch) from b. A message that
// is not valid JSON is a parse error (CodeParseError); one that is JSON
// but not a JSON-RPC 2.0 message is an invalid request
// (CodeInvalidRequest). In particular, an "id" member that is null, not a
// string or a number, or not valid UTF-8 makes a request invalid (never a
// notification), and such an id is not echoed back. Member names match
// case-insensitively, as encoding/json matches them.
func Decode(b []byte) (*Message, *Error) {
	if bad := checkObject(b); bad != nil {
		return nil, bad
	}
	d := new(decoded)
	if err := json.Unmarshal(b, &d.raw); err != nil {
		return nil, parseError(b)
	}
	r := &d.raw
	if r.JSONRPC.typeErr || r.Method.typeErr {
		return nil, decodeSlow(b) // says which member came first, as encoding/json does
	}
	return classify(&d.msg, r.JSONRPC.ok, r.ID, r.Method.name, r.Params, r.Result, r.Error)
}

// checkObject refuses b unless it is a JSON object.
func checkObject(b []byte) *Error {
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return &Error{Code: CodeParseError, Message: "parse error: the message is empty"}
	case trimmed[0] == '{':
		return nil
	case !json.Valid(trimmed):
		return parseError(b)
	}
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: a JSON-RPC message is a JSON object"}
}

// classify fills m from a message's members, whose types are right, or
// says what makes them no JSON-RPC message.
func classify(m *Message, versionOK bool, id json.RawMessage, method string, params, result, errMember json.RawMessage) (*Message, *Error) {
	invalid := func(msg string) (*Message, *Error) {
		return nil, &Error{ID: EchoableID(id), Code: CodeInvalidRequest, Message: "invalid request: " + msg}
	}
	if !versionOK {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if method != "" { // an empty or null method is no method
		m.Method, m.Kind = method, KindNotification
		if id != nil {
			if err := checkID(id); err != "" {
				return invalid(err)
			}
			m.Kind = KindRequest
		}
		switch firstByte(params) {
		case 0, '{', '[':
		case 'n':
			params = nil // null: no parameters
		default:
			return invalid(`"params" must be an object or an array`)
		}
		m.ID, m.Params = id, params
		return m, nil
	}
	// A response. Its id may be null when the other side could not read
	// the request.
	if id == nil {
		return invalid(`a message needs a "method" (request or notification) or an "id" (response)`)
	}
	if (result == nil) == (errMember == nil) {
		return invalid(`a response has exactly one of "result" and "error"`)
	}
	m.Kind, m.ID, m.Result, m.Error = KindResponse, id, result, errMember
	return m, nil
}

// decoded holds a message as read and as returned, in one allocation.
type decoded struct {
	raw struct {
		JSONRPC version         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  method          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	msg Message
}

// version decodes the "jsonrpc" member without keeping it.
type version struct{ ok, typeErr bool }

func (v *version) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == `"2.0"`:
		v.ok = true
	case b[0] == '"':
		var s string
		json.Unmarshal(b, &s) // escapes, or invalid UTF-8
		v.ok = s == Version
	case b[0] == 'n': // null leaves the member as it was
	default:
		v.ok, v.typeErr = false, true
	}
	return nil
}

// method decodes the "method" member, MCP's frequent names without
// allocating.
type method struct {
	name    string
	typeErr bool
}

func (m *method) UnmarshalJSON(b []byte) error {
	switch {
	case b[0] == '"':
		if s := commonMethod(b[1 : len(b)-1]); s != "" {
			m.name = s
			return nil
		}
		var s string
		json.Unmarshal(b, &s)
		m.name = s
	case b[0] == 'n':
	default:
		m.typeErr = true
	}
	return nil
}

// commonMethod returns the method b names when it is one of those sent
// with every call, else "".
func commonMethod(b []byte) string {
	switch string(b) {
	case "tools/call":
		return "tools/call"
	case "ping":
		return "ping"
	case "initialize":
		return "initialize"
	case "notifications/initialized":
		return "notifications/initialized"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	case "tools/list":
		return "tools/list"
	case "resources/read":
		return "resources/read"
	}
	return ""
}

// decodeSlow decodes a message one of whose "jsonrpc" and "method"
// members is not a string, and reports the first such member.
func decodeSlow(b []byte) *Error {
	var raw struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	err := json.Unmarshal(b, &raw)
	msg := `"jsonrpc" must be "2.0"`
	if typeErr, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && typeErr.Field == "method" {
		msg = `"method" must be a non-empty string`
	}
	return &Error{ID: EchoableID(raw.ID), Code: CodeInvalidRequest, Message: "invalid request: " + msg}
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

// EchoableID returns id when an error response may carry it (a string or
// a number a client can match), else nil, written as null.
func EchoableID(id json.RawMessage) json.RawMessage {
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
func parseError(b []byte) *Error {
	msg := "parse error: the message is not valid JSON"
	var syn *json.SyntaxError
	if err := json.Unmarshal(b, new(json.RawMessage)); errors.As(err, &syn) {
		msg += fmt.Sprintf(" (%s at byte %d)", syn.Error(), syn.Offset)
	} else if !utf8.Valid(b) {
		msg += " (invalid UTF-8)"
	} else if err != nil {
		msg += " (it ends too early)"
	}
	return &Error{Code: CodeParseError, Message: msg}
}

// IsBatch reports whether b holds a JSON array: a batch.
func IsBatch(b []byte) bool {
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// SplitBatch returns the items of a batch, each to be decoded with Decode.
// An empty array is an invalid request; an array that is not valid JSON a
// parse error.
func SplitBatch(b []byte) ([]json.RawMessage, *Error) {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, parseError(b)
	}
	if len(items) == 0 {
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: an empty batch"}
	}
	return items, nil
}

// AppendRequest appends a request with a numeric id. params, if not
// empty, must be compact JSON (an object or an array).
func AppendRequest(b []byte, id int64, method string, params json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	return appendCall(b, method, params)
}

// AppendNotification appends a notification; params as for
// AppendRequest.
func AppendNotification(b []byte, method string, params json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0"`...)
	return appendCall(b, method, params)
}

func appendCall(b []byte, method string, params json.RawMessage) []byte {
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// AppendResult appends the response to the request whose raw id is id
// (nil: null), its result the compact JSON result.
func AppendResult(b []byte, id, result json.RawMessage) []byte {
	b = appendHead(b, id)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// AppendError appends the error response to the request whose raw id is
// id (nil: null).
func AppendError(b []byte, id json.RawMessage, code int, message string) []byte {
	b = appendHead(b, id)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = appendString(b, message)
	return append(b, "}}"...)
}

// appendHead appends a response's first members, up to its id.
func appendHead(b []byte, id json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		return append(b, "null"...)
	}
	return append(b, id...)
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
