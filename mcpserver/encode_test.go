package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestWriteStringMatchesEncodingJSON checks that every string decodes back
// to what encoding/json makes of it, including control characters, quotes,
// invalid UTF-8 and texts longer than one chunk.
func TestWriteStringMatchesEncodingJSON(t *testing.T) {
	long := textOfSize(100 << 10)
	for _, s := range []string{
		"", "plain", "quote \" backslash \\ slash /", "tab\tnl\ncr\r",
		"\x00\x01\x1f\x7f", "<html> & </html>", "héllo wörld ✓ 日本語 😀",
		"bad \xff utf8 \xc3", "bad \xff with \" and \n", "\u2028\u2029",
		long, long + "\xff", strings.Repeat("\x01", 40000),
	} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		writeString(w, s)
		w.Flush()
		var got string
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%.40q: invalid JSON %.80q: %v", s, b.String(), err)
		}
		want, _ := json.Marshal(s)
		var wantS string
		json.Unmarshal(want, &wantS)
		if got != wantS {
			t.Errorf("%.40q: decodes to %.40q, want %.40q", s, got, wantS)
		}
	}
}

// TestToolResultEncoding compares the hand-written encoding of tool results
// with mcp-go's own.
func TestToolResultEncoding(t *testing.T) {
	for _, res := range []*mcp.CallToolResult{
		{Content: []mcp.Content{mcp.NewTextContent("a\nb \"c\"")}},
		{Content: []mcp.Content{mcp.NewTextContent("E_NOT_FOUND: x")}, IsError: true},
		{Content: []mcp.Content{mcp.NewTextContent("t")}, StructuredContent: map[string]any{"path": "a<b>", "n": 3}},
		{Content: []mcp.Content{mcp.NewTextContent("t"), mcp.NewImageContent("AAAA", "image/png")}},
		{Content: []mcp.Content{}},
		{Content: []mcp.Content{mcp.NewTextContent("meta")}, Result: mcp.Result{Meta: mcp.NewMetaFromMap(map[string]any{"k": "v"})}},
	} {
		resp := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(7), res)
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		if err := responseFunc(json.RawMessage("7"), resp)(w); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, b.Bytes(), want) {
			t.Errorf("got  %s\nwant %s", b.Bytes(), want)
		}
	}
}
