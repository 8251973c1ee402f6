package mcpserver

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// jsonValue writes v as compact JSON on one line.
func jsonValue(v any) writeFunc {
	return func(w *bufio.Writer) error { return writeJSON(w, v) }
}

// writeJSON writes v as compact JSON on one line.
func writeJSON(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// responseFunc writes the response to the request whose raw JSON-RPC id is
// id. The id is copied from the request byte for byte, so that large
// integers and strings round-trip exactly.
//
// A tool result whose content is text is written by hand: the text, which
// may be a whole file, is escaped once straight into w. mcp-go's own
// encoding goes through a map, json.Marshal and the encoder's validation of
// that output, each a pass over the text.
func responseFunc(id json.RawMessage, resp mcp.JSONRPCMessage) writeFunc {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return func(w *bufio.Writer) error {
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(id)
		var err error
		switch r := resp.(type) {
		case mcp.JSONRPCResponse:
			w.WriteString(`,"result":`)
			err = writeResult(w, r.Result)
		case *mcp.JSONRPCResponse:
			w.WriteString(`,"result":`)
			err = writeResult(w, r.Result)
		case mcp.JSONRPCError:
			w.WriteString(`,"error":`)
			err = writeError(w, r.Error)
		case *mcp.JSONRPCError:
			w.WriteString(`,"error":`)
			err = writeError(w, r.Error)
		default:
			w.WriteString(`,"error":{"code":-32603,"message":"unexpected response type"}`)
		}
		if err != nil {
			return err
		}
		return w.WriteByte('}')
	}
}

// writeError writes an error response's error, its message in the
// protocol's words (see protocolText).
func writeError(w *bufio.Writer, e mcp.JSONRPCErrorDetails) error {
	e.Message = protocolText(e.Message)
	return writeJSON(w, e)
}

func writeResult(w *bufio.Writer, result any) error {
	switch r := result.(type) {
	case *mcp.CallToolResult:
		if plainToolResult(r) {
			return writeToolResult(w, r)
		}
	case mcp.CallToolResult:
		if plainToolResult(&r) {
			return writeToolResult(w, &r)
		}
	case *mcp.ListToolsResult:
		if plainToolList(r) {
			return writeToolList(w, r)
		}
	}
	return writeJSON(w, result)
}

// plainToolList reports whether writeToolList encodes r as mcp-go would:
// no result metadata, and tools whose schemas are raw JSON and that carry
// nothing but a name, a description, schemas and the four hints.
func plainToolList(r *mcp.ListToolsResult) bool {
	if r.Meta != nil {
		return false
	}
	for i := range r.Tools {
		t := &r.Tools[i]
		if t.Meta != nil || t.Title != "" || t.Annotations.Title != "" || t.DeferLoading || t.Icons != nil ||
			t.Execution != nil || t.InputSchema.Type != "" || t.OutputSchema.Type != "" ||
			!compactJSON(t.RawInputSchema) || (t.RawOutputSchema != nil && !compactJSON(t.RawOutputSchema)) {
			return false
		}
	}
	return true
}

// writeToolList writes a tools/list result by hand. Listing the tools is
// most of what a client waits for after starting a server, and mcp-go's
// encoding of a tool builds a map, sorts its keys and re-validates each
// schema: 1.1-1.4 ms of a cold start for Praxis's 18 tools. The members
// are in the order encoding/json writes them: the result's in field
// order, each tool's as mcp.Tool's map sorts them.
func writeToolList(w *bufio.Writer, r *mcp.ListToolsResult) error {
	w.WriteByte('{')
	if r.ResultType != "" {
		w.WriteString(`"resultType":`)
		writeString(w, string(r.ResultType))
		w.WriteByte(',')
	}
	if r.TTLMs != nil {
		w.WriteString(`"ttlMs":`)
		w.Write(strconv.AppendInt(w.AvailableBuffer(), *r.TTLMs, 10))
		w.WriteByte(',')
	}
	if r.CacheScope != "" {
		w.WriteString(`"cacheScope":`)
		writeString(w, string(r.CacheScope))
		w.WriteByte(',')
	}
	if r.NextCursor != "" {
		w.WriteString(`"nextCursor":`)
		writeString(w, string(r.NextCursor))
		w.WriteByte(',')
	}
	if r.Tools == nil {
		w.WriteString(`"tools":null}`)
		return nil
	}
	w.WriteString(`"tools":[`)
	for i := range r.Tools {
		t := &r.Tools[i]
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(`{"annotations":{`)
		sep := ""
		for _, h := range [...]struct {
			name string
			v    *bool
		}{
			{"readOnlyHint", t.Annotations.ReadOnlyHint},
			{"destructiveHint", t.Annotations.DestructiveHint},
			{"idempotentHint", t.Annotations.IdempotentHint},
			{"openWorldHint", t.Annotations.OpenWorldHint},
		} {
			if h.v != nil {
				w.WriteString(sep)
				w.WriteByte('"')
				w.WriteString(h.name)
				w.WriteString(`":`)
				w.WriteString(strconv.FormatBool(*h.v))
				sep = ","
			}
		}
		w.WriteByte('}')
		if t.Description != "" {
			w.WriteString(`,"description":`)
			writeString(w, t.Description)
		}
		w.WriteString(`,"inputSchema":`)
		w.Write(t.RawInputSchema)
		w.WriteString(`,"name":`)
		writeString(w, t.Name)
		if t.RawOutputSchema != nil {
			w.WriteString(`,"outputSchema":`)
			w.Write(t.RawOutputSchema)
		}
		w.WriteByte('}')
	}
	_, err := w.WriteString("]}")
	return err
}

// compactJSON reports whether b is valid JSON with no whitespace between
// its tokens, which encoding/json writes as it is (but for its escaping of
// <, > and &, which changes no value).
func compactJSON(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return !in
}

// plainToolResult reports whether writeToolResult encodes r exactly as
// mcp-go would: no metadata, no multi-round-trip fields.
func plainToolResult(r *mcp.CallToolResult) bool {
	return r.Meta == nil && r.ResultType == "" && len(r.InputRequests) == 0 && r.RequestState == ""
}

func writeToolResult(w *bufio.Writer, r *mcp.CallToolResult) error {
	w.WriteString(`{"content":[`)
	for i, c := range r.Content {
		if i > 0 {
			w.WriteByte(',')
		}
		if t, ok := c.(mcp.TextContent); ok && t.Annotations == nil && t.Meta == nil {
			w.WriteString(`{"type":"text","text":`)
			writeString(w, t.Text)
			w.WriteByte('}')
			continue
		}
		if err := writeJSON(w, c); err != nil {
			return err
		}
	}
	w.WriteByte(']')
	switch {
	case len(r.RawStructuredContent) > 0:
		w.WriteString(`,"structuredContent":`)
		w.Write(r.RawStructuredContent)
	case r.StructuredContent != nil:
		w.WriteString(`,"structuredContent":`)
		if err := writeJSON(w, r.StructuredContent); err != nil {
			return err
		}
	}
	if r.IsError {
		w.WriteString(`,"isError":true`)
	}
	return w.WriteByte('}')
}

// safe marks the bytes that appear in a JSON string as they are.
var safe = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\'
	}
	for b := 0x80; b < 0x100; b++ {
		t[b] = true // parts of UTF-8 sequences, checked by the caller
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// writeString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does. Valid text is escaped a chunk at a time straight
// into w's free buffer space, so that a large text costs one pass and no
// allocation: an allocation per result, as large as the text, was half of
// what a small read_file call allocated.
//
// A byte-at-a-time loop was a tenth of the server's CPU time for a 10 MB
// read_file result. On amd64 escapeVec goes sixteen bytes at a time, up to
// the last fifteen (escape_amd64.s); the rest, and all of it elsewhere, go
// eight at a time: each word of s is stored as it is, and when it holds a
// byte to escape, the escape is stored over that byte and the next word
// starts after it; what is stored past the end is overwritten, or left in
// w's free space. The last bytes, fewer than eight, go one at a time.
func writeString(w *bufio.Writer, s string) {
	w.WriteByte('"')
	if !utf8.ValidString(s) {
		writeInvalidUTF8(w, s)
		w.WriteByte('"')
		return
	}
	const minChunk = 64 // bytes of s escaped at a time, at least
	for len(s) > 0 {
		if w.Available() < 6*minChunk && w.Flush() != nil {
			return // w failed: the rest cannot be written, and its later writes report the error
		}
		buf := w.AvailableBuffer()
		if cap(buf) < 6*minChunk {
			buf = make([]byte, 6*minChunk) // a writer too small to escape into
		}
		buf = buf[:cap(buf)]
		// The worst case: every byte becomes \u00XX, the last one stored
		// as eight bytes.
		part := s[:min(len(s), (len(buf)-2)/6)]
		s = s[len(part):]
		i, j := escapeVec(buf, part) // all but the last bytes, where it can
		for i < len(part) {
			if i+8 <= len(part) {
				x := binary.LittleEndian.Uint64([]byte(part[i : i+8])) // a load, not a copy
				binary.LittleEndian.PutUint64(buf[j:], x)
				m := escapeMask(x)
				if m == 0 {
					i += 8
					j += 8
					continue
				}
				n := bits.TrailingZeros64(m) / 8 // the first byte to escape
				i += n
				j += n
			}
			e := escapes[part[i]]
			binary.LittleEndian.PutUint64(buf[j:], e)
			j += int(e >> 56)
			i++
		}
		w.Write(buf[:j]) // in place when buf is w's own space
	}
	w.WriteByte('"')
}

// escapes holds each byte as writeString stores it, in the low bytes of a
// little-endian word: the byte itself if it is safe, else its escape (\n,
// \", \u001f). The top byte holds the length, so that a byte costs one
// load, one store and no branch.
var escapes = func() (t [256]uint64) {
	for b := range 256 {
		t[b] = uint64(b) | 1<<56
	}
	for b := range 0x20 {
		t[b] = binary.LittleEndian.Uint64([]byte{'\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF], 0, 6})
	}
	for _, c := range [...]struct{ b, e byte }{{'"', '"'}, {'\\', '\\'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}} {
		t[c.b] = uint64('\\') | uint64(c.e)<<8 | 2<<56
	}
	return t
}()

// Words with each byte 0x01 or 0x80.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// escapeMask tests x, eight bytes of a string loaded little-endian, for a
// byte to escape: one below 0x20, '"' or '\\'. It returns 0 if there is
// none, else a word whose lowest bit set is the high bit of the first one.
// Subtracting 0x20 from each byte sets the high bit of those below 0x20;
// xoring with '"' makes a '"' 0, which subtracting 1 turns to 0xff, and
// likewise a '\\'; &^ x leaves out the bytes from 0x80 up, which are safe.
// A borrow can set the bit of the byte above as well, but borrows start
// only at bytes to escape and carry upwards: the bits above the lowest may
// be wrong, the lowest is not.
func escapeMask(x uint64) uint64 {
	q := x ^ '"'*lowBits
	bs := x ^ '\\'*lowBits
	return ((x - 0x20*lowBits) | (q - lowBits) | (bs - lowBits)) &^ x & highBits
}

// writeInvalidUTF8 writes the inside of a JSON string for s, which holds
// invalid UTF-8, rune by rune.
func writeInvalidUTF8(w *bufio.Writer, s string) {
	for i := 0; i < len(s); {
		b := s[i]
		if b >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				w.WriteString(`\ufffd`)
			} else {
				w.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch {
		case safe[b]:
			w.WriteByte(b)
		case b == '"' || b == '\\':
			w.WriteByte('\\')
			w.WriteByte(b)
		default:
			w.WriteString(`\u00`)
			w.WriteByte(hexDigits[b>>4])
			w.WriteByte(hexDigits[b&0xF])
		}
		i++
	}
}

// warmRequest is a client's first request, as warmCodecs decodes it: with
// every member whose type has a decoder of its own.
const warmRequest = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"","capabilities":` +
	`{"experimental":{},"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"","version":""}}}`

// warmCodecs has encoding/json build its decoders and encoders for the
// messages that start a session (the initialize request and its result),
// as New calls it: on a goroutine of its own while the default
// workspace's engine opens, on another CPU. encoding/json builds a type's
// codecs on its first use, which took 0.4 ms of a cold start on the path
// to the client's first answer.
func warmCodecs() {
	jsonrpc.Decode([]byte(warmRequest))
	var req mcp.InitializeRequest
	_ = json.Unmarshal([]byte(warmRequest), &req)
	_, _ = json.Marshal(&mcp.InitializeResult{})
}
