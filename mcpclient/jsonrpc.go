package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// message is one JSON-RPC 2.0 message as the client reads it: a request
// (Method and ID), a notification (Method, no ID) or a response (ID with
// Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object, and the error a request returns
// when the server answers with one.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// JSON-RPC error codes the client uses.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// decodeMessages parses one message or a batch of them.
func decodeMessages(data []byte) ([]message, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var batch []message
		err := json.Unmarshal(data, &batch)
		return batch, err
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return []message{m}, nil
}

// encodeRequest encodes a request (id non-empty) or a notification; empty
// params are left out.
func encodeRequest(id json.RawMessage, method string, params map[string]any) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  map[string]any  `json:"params,omitempty"`
	}{"2.0", id, method, params})
}

// encodeResponse encodes the answer to the request id: result, or rpcErr
// when it is not nil.
func encodeResponse(id json.RawMessage, result any, rpcErr *rpcError) ([]byte, error) {
	if rpcErr != nil {
		return json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *rpcError       `json:"error"`
		}{"2.0", id, rpcErr})
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}
