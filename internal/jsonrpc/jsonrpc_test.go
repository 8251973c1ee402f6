package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	cases := []struct {
		name, raw string
		want      Message
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
			Message{ID: json.RawMessage(`1`), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`), Kind: KindRequest}},
		{"string id, array params", `{"jsonrpc":"2.0","id":"a-1","method":"m","params":[1,2]}`,
			Message{ID: json.RawMessage(`"a-1"`), Method: "m", Params: json.RawMessage(`[1,2]`), Kind: KindRequest}},
		{"null params are none", `{"jsonrpc":"2.0","id":-3,"method":"ping","params":null}`,
			Message{ID: json.RawMessage(`-3`), Method: "ping", Kind: KindRequest}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			Message{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":1}`), Kind: KindNotification}},
		{"escaped method", `{"jsonrpc":"2.0","method":"tools\/call"}`, Message{Method: "tools/call", Kind: KindNotification}},
		{"escaped version", `{"jsonrpc":"2\u002e0","method":"x"}`, Message{Method: "x", Kind: KindNotification}},
		{"names match in any case", `{"JSONRPC":"2.0","ID":7,"Method":"ping"}`, Message{ID: json.RawMessage(`7`), Method: "ping", Kind: KindRequest}},
		{"result", `{"jsonrpc":"2.0","id":4,"result":{"roots":[]}}`,
			Message{ID: json.RawMessage(`4`), Result: json.RawMessage(`{"roots":[]}`), Kind: KindResponse}},
		{"error with a null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
			Message{ID: json.RawMessage(`null`), Error: json.RawMessage(`{"code":-32700,"message":"x"}`), Kind: KindResponse}},
		{"null method is no method", `{"jsonrpc":"2.0","id":2,"method":null,"result":1}`,
			Message{ID: json.RawMessage(`2`), Result: json.RawMessage(`1`), Kind: KindResponse}},
		{"last member wins", `{"jsonrpc":"1.0","jsonrpc":"2.0","method":"a","method":"b"}`, Message{Method: "b", Kind: KindNotification}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, bad := Decode([]byte(tc.raw))
			if bad != nil {
				t.Fatalf("Decode: %v", bad)
			}
			if fmt.Sprint(*m) != fmt.Sprint(tc.want) {
				t.Errorf("got  %s\nwant %s", show(*m), show(tc.want))
			}
		})
	}
}

func show(m Message) string {
	return fmt.Sprintf("id=%s method=%q params=%s result=%s error=%s kind=%d", m.ID, m.Method, m.Params, m.Result, m.Error, m.Kind)
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		raw, id string // id: the echoed id's JSON, "" for none
		code    int
		message string
	}{
		{``, "", CodeParseError, "parse error: the message is empty"},
		{" \r\n", "", CodeParseError, "parse error: the message is empty"},
		{`{"jsonrpc":"2.0","id":6,`, "", CodeParseError, "parse error: the message is not valid JSON (unexpected end of JSON input at byte 24)"},
		{`{"jsonrpc":"2.0" "id":1}`, "", CodeParseError, "parse error: the message is not valid JSON (invalid character '\"' after object key:value pair at byte 18)"},
		{`nope`, "", CodeParseError, "parse error: the message is not valid JSON (invalid character 'o' in literal null (expecting 'u') at byte 2)"},
		{`"ping"`, "", CodeInvalidRequest, "invalid request: a JSON-RPC message is a JSON object"},
		{`[1]`, "", CodeInvalidRequest, "invalid request: a JSON-RPC message is a JSON object"},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, "5", CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`},
		{`{"id":5,"method":"ping"}`, "5", CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`},
		{`{"jsonrpc":null,"id":5,"method":"ping"}`, "5", CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`},
		{`{"jsonrpc":2,"id":5,"method":"ping"}`, "5", CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":3,"method":5}`, "3", CodeInvalidRequest, `invalid request: "method" must be a non-empty string`},
		{`{"jsonrpc":"2.0","method":{},"id":"x"}`, `"x"`, CodeInvalidRequest, `invalid request: "method" must be a non-empty string`},
		{`{"method":5,"jsonrpc":2,"id":1}`, "1", CodeInvalidRequest, `invalid request: "method" must be a non-empty string`},
		{`{"jsonrpc":2,"method":5,"id":1}`, "1", CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, "", CodeInvalidRequest, `invalid request: "id" must not be null; a notification has no "id" member`},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}", "", CodeInvalidRequest, `invalid request: "id" is not valid UTF-8`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "", CodeInvalidRequest, `invalid request: "id" must be a string or a number`},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "", CodeInvalidRequest, `invalid request: "id" must be a string or a number`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"}`, "4", CodeInvalidRequest, `invalid request: "params" must be an object or an array`},
		{`{"jsonrpc":"2.0"}`, "", CodeInvalidRequest, `invalid request: a message needs a "method" (request or notification) or an "id" (response)`},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, "1", CodeInvalidRequest, `invalid request: a response has exactly one of "result" and "error"`},
		{`{"jsonrpc":"2.0","id":1,"result":1,"error":{}}`, "1", CodeInvalidRequest, `invalid request: a response has exactly one of "result" and "error"`},
	}
	for _, tc := range cases {
		m, bad := Decode([]byte(tc.raw))
		if bad == nil {
			t.Errorf("%q: decoded as %s", tc.raw, show(*m))
			continue
		}
		if string(bad.ID) != tc.id || bad.Code != tc.code || bad.Message != tc.message {
			t.Errorf("%q:\n got id=%s code=%d %q\nwant id=%s code=%d %q", tc.raw, bad.ID, bad.Code, bad.Message, tc.id, tc.code, tc.message)
		}
	}
}

// TestDecodeMatchesReference holds Decode, which spares allocations, to
// the straightforward decoding it replaces, on messages valid and not.
func TestDecodeMatchesReference(t *testing.T) {
	for _, raw := range decodeCorpus {
		compareWithReference(t, []byte(raw))
	}
}

func FuzzDecode(f *testing.F) {
	for _, raw := range decodeCorpus {
		f.Add([]byte(raw))
	}
	f.Fuzz(compareWithReference)
}

var decodeCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":5,"id":1,"method":"x"}`,
	`{"jsonrpc":5,"id":1,"method":[]}`,
	`{"method":true,"jsonrpc":{},"id":"i"}`,
	`{"jsonrpc":"2.0","method":"a","method":null}`,
	`{"jsonrpc":"2.0","method":"a","method":3}`,
	`{"jsonrpc":"2.0","jsonrpc":null,"method":"a"}`,
	`{"jsonrpc":"2.\u0030","method":"ping\u0000"}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"p\xffing\"}",
	"{\"jsonrpc\":\"2.0\xff\",\"method\":\"ping\"}",
	`{"jsonrpc":"2.0","ID":1,"METHOD":"ping","Params":[]}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"ping","params":7}`,
	`{"jsonrpc":"2.0","id":null,"error":{}}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{}`, `[]`, `null`, `{`, `"x"`, ` {"jsonrpc":"2.0","method":"x"} `,
}

func compareWithReference(t *testing.T, b []byte) {
	m, bad := Decode(b)
	wm, wbad := referenceDecode(b)
	if (bad == nil) != (wbad == nil) {
		t.Fatalf("%q: Decode gave %v %v, the reference %v %v", b, m, bad, wm, wbad)
	}
	if bad != nil {
		if !bytes.Equal(bad.ID, wbad.ID) || bad.Code != wbad.Code || bad.Message != wbad.Message {
			t.Fatalf("%q: Decode's error %+v, the reference's %+v", b, *bad, *wbad)
		}
		return
	}
	if show(*m) != show(*wm) {
		t.Fatalf("%q:\nDecode    %s\nreference %s", b, show(*m), show(*wm))
	}
}

// referenceDecode is Decode written plainly: every member decoded by
// encoding/json as what it is.
func referenceDecode(b []byte) (*Message, *Error) {
	if bad := checkObject(b); bad != nil {
		return nil, bad
	}
	var raw struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	err := json.Unmarshal(b, &raw)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		msg := `"jsonrpc" must be "2.0"`
		if typeErr.Field == "method" {
			msg = `"method" must be a non-empty string`
		}
		return nil, &Error{ID: EchoableID(raw.ID), Code: CodeInvalidRequest, Message: "invalid request: " + msg}
	case err != nil:
		return nil, parseError(b)
	}
	return classify(&Message{}, raw.JSONRPC == Version, raw.ID, raw.Method, raw.Params, raw.Result, raw.Error)
}

func TestSplitBatch(t *testing.T) {
	items, bad := SplitBatch([]byte(` [{"jsonrpc":"2.0","id":1,"method":"ping"}, {"jsonrpc":"2.0","method":"x"}]`))
	if bad != nil || len(items) != 2 || string(items[1]) != `{"jsonrpc":"2.0","method":"x"}` {
		t.Errorf("SplitBatch: %q %v", items, bad)
	}
	if !IsBatch([]byte("\n [")) || IsBatch([]byte(`{"a":[]}`)) {
		t.Error("IsBatch")
	}
	for raw, code := range map[string]int{`[]`: CodeInvalidRequest, `[1,`: CodeParseError, `[}`: CodeParseError} {
		if _, bad := SplitBatch([]byte(raw)); bad == nil || bad.Code != code {
			t.Errorf("%s: %v, want code %d", raw, bad, code)
		}
	}
}

// TestAppend: the messages written are what encoding/json writes for the
// same values, member for member, and decode back to what was written.
func TestAppend(t *testing.T) {
	type errObj struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, msg := range []string{"plain", `quotes " and \ and <tags> & "`, "bad \xff UTF-8", "line\nbreak\ttab\u2028"} {
		got := string(AppendError([]byte("> "), json.RawMessage(`"id-1"`), CodeInvalidParams, msg))
		want := "> " + marshal(struct {
			JSONRPC string `json:"jsonrpc"`
			ID      string `json:"id"`
			Error   errObj `json:"error"`
		}{"2.0", "id-1", errObj{CodeInvalidParams, msg}})
		if got != want {
			t.Errorf("AppendError:\n got %s\nwant %s", got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("AppendError wrote invalid UTF-8: %q", got)
		}
	}
	if got := string(AppendError(nil, nil, CodeParseError, "x")); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}` {
		t.Errorf("AppendError without an id: %s", got)
	}
	if got := string((&Error{ID: json.RawMessage("9"), Code: -1, Message: "m"}).Append(nil)); got != `{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"m"}}` {
		t.Errorf("Error.Append: %s", got)
	}
	if got := string(AppendResult(nil, json.RawMessage(`12345678901234567890`), json.RawMessage(`{"a":1}`))); got != `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"a":1}}` {
		t.Errorf("AppendResult: %s", got)
	}
	for _, tc := range []struct {
		got  []byte
		want Message
	}{
		{AppendRequest(nil, 42, "tools/call", json.RawMessage(`{"name":"x"}`)), Message{ID: json.RawMessage("42"), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`), Kind: KindRequest}},
		{AppendRequest(nil, -1, `odd "name"`, nil), Message{ID: json.RawMessage("-1"), Method: `odd "name"`, Kind: KindRequest}},
		{AppendNotification(nil, "notifications/initialized", nil), Message{Method: "notifications/initialized", Kind: KindNotification}},
		{AppendNotification(nil, "n", json.RawMessage(`[1]`)), Message{Method: "n", Params: json.RawMessage(`[1]`), Kind: KindNotification}},
	} {
		m, bad := Decode(tc.got)
		if bad != nil || show(*m) != show(tc.want) {
			t.Errorf("%s decodes to %v %v, want %s", tc.got, m, bad, show(tc.want))
		}
	}
}

func TestDecodeError(t *testing.T) {
	if e := DecodeError(json.RawMessage(`{"code":-32601,"message":"no","data":{"x":1}}`)); e.Code != -32601 || e.Message != "no" || string(e.Data) != `{"x":1}` {
		t.Errorf("DecodeError: %+v", e)
	}
	if e := DecodeError(json.RawMessage(`"just text"`)); e.Code != 0 || e.Message != `"just text"` {
		t.Errorf("DecodeError of a string: %+v", e)
	}
}

// BenchmarkDecode decodes a tool call's envelope, the server's hot path.
func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.go"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := Decode(line); bad != nil {
			b.Fatal(bad)
		}
	}
}

func BenchmarkDecodeReference(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.go"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := referenceDecode(line); bad != nil {
			b.Fatal(bad)
		}
	}
}
