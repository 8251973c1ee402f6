package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
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

// TestWriteStringBytes holds writeString to the exact bytes of a plain
// one-byte-at-a-time escape, for random texts dense in bytes that need an
// escape, through writers too small to escape into, small and large.
func TestWriteStringBytes(t *testing.T) {
	want := func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				fmt.Fprintf(&b, `\u%04x`, c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	alphabet := []string{"a", "Z", " ", "~", "\x7f", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "é", "✓", "😀", "\u2028"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{16, 100, 500, 4096, 64 << 10} {
		for n := range 300 {
			var sb strings.Builder
			for range rng.IntN(1 + n*n/10) {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := sb.String()
			if n%50 == 0 {
				s = strings.Repeat("\x01", n*20+1) // the worst case, every byte six
			}
			var b bytes.Buffer
			w := bufio.NewWriterSize(&b, size)
			w.WriteString("x") // the writer's space starts anywhere
			writeString(w, s)
			w.Flush()
			if got := b.String()[1:]; got != want(s) {
				t.Fatalf("writer of %d bytes, %.60q:\n got %.200s\nwant %.200s", size, s, got, want(s))
			}
		}
	}
}

// failingWriter refuses every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestWriteStringStopsOnError: once the writer fails, a large text is not
// escaped on, chunk after chunk, for nothing; the writer reports the error.
func TestWriteStringStopsOnError(t *testing.T) {
	text := strings.Repeat("line \"quoted\"\n", 100<<10)
	w := bufio.NewWriterSize(failingWriter{}, 4096)
	allocs := testing.AllocsPerRun(3, func() { writeString(w, text) })
	if allocs > 2 {
		t.Errorf("writeString allocated %.0f times into a failed writer", allocs)
	}
	if err := w.Flush(); err == nil {
		t.Error("the writer's error was lost")
	}
}
