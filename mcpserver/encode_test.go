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
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/praxis"
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

// writeStringByteWise is writeString as it was before it went a word at a
// time, one byte after another: the reference writeString's bytes are held
// to.
func writeStringByteWise(w *bufio.Writer, s string) {
	w.WriteByte('"')
	if !utf8.ValidString(s) {
		writeInvalidUTF8(w, s)
		w.WriteByte('"')
		return
	}
	const minChunk = 64
	for len(s) > 0 {
		if w.Available() < 6*minChunk && w.Flush() != nil {
			return
		}
		buf := w.AvailableBuffer()
		if cap(buf) < 6*minChunk {
			buf = make([]byte, 6*minChunk)
		}
		buf = buf[:cap(buf)]
		part := s[:min(len(s), len(buf)/6)]
		s = s[len(part):]
		j := 0
		for i := 0; i < len(part); i++ {
			b := part[i]
			if safe[b] {
				buf[j] = b
				j++
				continue
			}
			buf[j] = '\\'
			switch b {
			case '"', '\\':
				buf[j+1] = b
				j += 2
			case '\n':
				buf[j+1] = 'n'
				j += 2
			case '\r':
				buf[j+1] = 'r'
				j += 2
			case '\t':
				buf[j+1] = 't'
				j += 2
			default:
				buf[j+1], buf[j+2], buf[j+3] = 'u', '0', '0'
				buf[j+4], buf[j+5] = hexDigits[b>>4], hexDigits[b&0xF]
				j += 6
			}
		}
		w.Write(buf[:j])
	}
	w.WriteByte('"')
}

// written returns what write puts out for s through a writer of size bytes
// (bufio's default for 0) that holds lead bytes already: the lead moves
// the chunks' boundaries.
func written(write func(*bufio.Writer, string), s string, size, lead int) string {
	var b bytes.Buffer
	w := bufio.NewWriterSize(&b, size)
	w.WriteString(strings.Repeat("x", lead))
	write(w, s)
	w.Flush()
	return b.String()[lead:]
}

// sameAsByteWise fails t unless writeString writes s as
// writeStringByteWise does.
func sameAsByteWise(t testing.TB, s string, size, lead int) {
	t.Helper()
	got, want := written(writeString, s, size, lead), written(writeStringByteWise, s, size, lead)
	if got != want {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("writer of %d bytes holding %d, %d bytes %.40q: first difference at byte %d:\n got %.60q\nwant %.60q",
			size, lead, len(s), s, i, got[max(0, i-20):], want[max(0, i-20):])
	}
}

// writerSizes are the writers the byte-wise comparisons go through: too
// small to escape into, bufio's default (0) and larger.
var writerSizes = []int{16, 64, 100, 0, 4096, 64 << 10}

// TestWriteStringEveryByte puts each byte value in every position of an
// eight-byte word, among safe ASCII and among multi-byte characters. A byte
// from 0x80 up is put in a character holding it, so that the text stays
// valid UTF-8; those no valid text holds (0xc0, 0xc1, 0xf5-0xff) are put
// alone, and take the invalid UTF-8 path.
func TestWriteStringEveryByte(t *testing.T) {
	var holder [256]string
	for b := range 0x80 {
		holder[b] = string(rune(b))
	}
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if s := string(r); utf8.ValidString(s) && r != utf8.RuneError {
			for i := 0; i < len(s); i++ {
				if holder[s[i]] == "" {
					holder[s[i]] = s
				}
			}
		}
	}
	for b := range 256 {
		if holder[b] == "" {
			holder[b] = string([]byte{byte(b)})
		}
	}
	for _, fill := range []string{strings.Repeat("abcdefgh", 4), strings.Repeat("é", 16), strings.Repeat("✓", 10)} {
		for b := range 256 {
			for pre := 0; pre <= 17; pre++ {
				for _, post := range []int{0, 1, 2, 7, 8, 9, 16} {
					if !utf8.ValidString(fill[:pre]) || !utf8.ValidString(fill[:post]) {
						continue // a character of the filler cut
					}
					sameAsByteWise(t, fill[:pre]+holder[b]+fill[:post], 0, 0)
				}
			}
		}
	}
}

// TestWriteStringPairs puts two bytes, each to escape or next to one
// (whose borrows the word-at-a-time test must not mistake for an escape),
// at every two positions of two words.
func TestWriteStringPairs(t *testing.T) {
	near := []string{"\x00", "\x01", "\t", "\n", "\x1f", " ", "!", "\"", "#", "[", "\\", "]", "\x7f", "é", "\u2028"}
	for p1 := range 16 {
		for p2 := p1 + 1; p2 < 16; p2++ {
			for _, a := range near {
				for _, b := range near {
					s := strings.Repeat("a", p1) + a + strings.Repeat("b", p2-p1-1) + b + strings.Repeat("c", 16-p2)
					sameAsByteWise(t, s, 0, 0)
				}
			}
		}
	}
}

// TestWriteStringChunkEdges moves bytes to escape across the boundaries of
// the chunks writeString escapes at a time, which depend on the writer's
// size and on how much it holds already.
func TestWriteStringChunkEdges(t *testing.T) {
	escapesAt := []string{"\"", "\\", "\n", "\x01", "\r\n", "\t\t\t", "é\"", "\"\\\x1f"}
	for _, fill := range []string{"a", "é", "😀"} {
		for _, size := range writerSizes {
			// Every position of a text over the first chunks: writers
			// under 384 bytes escape 63 or 64 bytes at a time, the others
			// a sixth of their free space (4096 bytes: 682, then 568 and
			// 473 more), which for 64 KiB is two windows of a long text.
			length, windows := 1800, [][2]int{{0, 1800}}
			switch size {
			case 16, 64, 100:
				length, windows = 300, [][2]int{{0, 300}}
			case 64 << 10:
				length, windows = 21000, [][2]int{{10922 - 40, 10922 + 40}, {20023 - 40, 20023 + 40}}
			}
			base := strings.Repeat(fill, length/len(fill))
			k := 0
			for _, lead := range []int{0, 7} {
				for _, win := range windows {
					for p := win[0]; p < win[1]; p++ {
						if p%len(fill) != 0 {
							continue // inside a character
						}
						e := escapesAt[k%len(escapesAt)]
						k++
						sameAsByteWise(t, base[:p]+e+base[p:], size, lead)
					}
				}
			}
		}
	}
}

// TestWriteStringLong compares long runs of one kind of byte, and the
// empty string.
func TestWriteStringLong(t *testing.T) {
	for _, s := range []string{
		"", strings.Repeat("a", 1<<18), strings.Repeat("\x01", 1<<18+3), strings.Repeat("\"", 1<<18+5),
		strings.Repeat("日本語", 1<<16), strings.Repeat("\\\n", 1<<17), sourceText(1 << 18), textOfSize(1 << 18),
		strings.Repeat("a", 1<<18) + "\x00",
	} {
		for _, size := range writerSizes {
			sameAsByteWise(t, s, size, 3)
		}
	}
}

// FuzzWriteString holds writeString to writeStringByteWise's bytes for
// any text, writer size and lead.
func FuzzWriteString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\nd\re\tf\x00g\x1fh\x7f", "héllo ✓ 😀 \u2028", "bad \xff \xc3", "\t\tx := \"y\"\n"} {
		f.Add(s, uint16(0), uint8(0))
		f.Add(s, uint16(16), uint8(5))
	}
	f.Add(strings.Repeat("ab\"cdefg\n", 200), uint16(100), uint8(7))
	f.Fuzz(func(t *testing.T, s string, size uint16, lead uint8) {
		sameAsByteWise(t, s, int(size), int(lead))
	})
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

// TestToolListEncoding holds the hand-written tools/list result to
// encoding/json's bytes (once its escaping of <, >, & and U+2028/9, which
// changes no value, is applied): the engine's own tools, and lists with
// every member the writer handles. Lists it does not handle go to
// encoding/json.
func TestToolListEncoding(t *testing.T) {
	eng, err := praxis.New(praxis.Options{Workspace: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var engineTools []mcp.Tool
	for _, tool := range eng.Catalog().Tools() {
		engineTools = append(engineTools, mcpTool(tool))
	}
	yes, no := true, false
	ttl := int64(0)
	odd := mcp.Tool{
		Name:            "odd \"name\" <&>\u2028",
		Description:     "line\nbreak\t<b> & \u2029",
		RawInputSchema:  json.RawMessage(`{"type":"object","description":"a \"quoted\" <thing> & \\u0041"}`),
		RawOutputSchema: nil,
		Annotations:     mcp.ToolAnnotation{ReadOnlyHint: &yes, OpenWorldHint: &no},
	}
	bare := mcp.Tool{Name: "bare", RawInputSchema: json.RawMessage(`{}`)}
	invalid := mcp.Tool{Name: "bad \xff", Description: "bad\n\xc3", RawInputSchema: json.RawMessage(`{}`)}
	cases := []struct {
		name  string
		res   mcp.ListToolsResult
		plain bool
		loose bool // invalid UTF-8, whose escapes may be spelt differently
	}{
		{"engine", mcp.ListToolsResult{Tools: engineTools}, true, false},
		{"members", mcp.ListToolsResult{Tools: []mcp.Tool{odd, bare}}, true, false},
		{"invalid UTF-8", mcp.ListToolsResult{Tools: []mcp.Tool{invalid}}, true, true},
		{"empty", mcp.ListToolsResult{Tools: []mcp.Tool{}}, true, false},
		{"nil", mcp.ListToolsResult{}, true, false},
		{"cursor", mcp.ListToolsResult{PaginatedResult: mcp.PaginatedResult{NextCursor: "abc"}, Tools: []mcp.Tool{bare}}, true, false},
		{"2026", func() mcp.ListToolsResult {
			r := mcp.ListToolsResult{Tools: []mcp.Tool{bare}}
			r.ResultType = mcp.ResultTypeComplete
			r.TTLMs, r.CacheScope = &ttl, mcp.CacheScopePrivate
			return r
		}(), true, false},
		{"title", mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "t", Title: "T", RawInputSchema: json.RawMessage(`{}`)}}}, false, false},
		{"spaced schema", mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "t", RawInputSchema: json.RawMessage(`{"type": "object"}`)}}}, false, false},
		{"invalid schema", mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "t", RawInputSchema: json.RawMessage(`{"type":`)}}}, false, false},
		{"struct schema", mcp.ListToolsResult{Tools: []mcp.Tool{{Name: "t", InputSchema: mcp.ToolInputSchema{Type: "object"}}}}, false, false},
		{"meta", mcp.ListToolsResult{PaginatedResult: mcp.PaginatedResult{CacheableResult: mcp.CacheableResult{Result: mcp.Result{Meta: mcp.NewMetaFromMap(map[string]any{"k": 1})}}}}, false, false},
	}
	for _, c := range cases {
		if got := plainToolList(&c.res); got != c.plain {
			t.Errorf("%s: plainToolList = %v, want %v", c.name, got, c.plain)
		}
		var b bytes.Buffer
		w := bufio.NewWriterSize(&b, 16) // smaller than any member
		err := writeResult(w, &c.res)
		w.Flush()
		want, wantErr := json.Marshal(&c.res)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json's %v", c.name, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		var got bytes.Buffer
		json.HTMLEscape(&got, b.Bytes())
		if !bytes.Equal(got.Bytes(), want) && !(c.loose && jsonEqual(t, got.Bytes(), want)) {
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, got.Bytes(), want)
		}
	}
}

// TestWarmRequest holds the request warmCodecs decodes to one the server
// would take: if it stopped decoding, the codecs of the members after the
// error would be built on a client's first request again.
func TestWarmRequest(t *testing.T) {
	if _, bad := jsonrpc.Decode([]byte(warmRequest)); bad != nil {
		t.Fatalf("envelope: %v", bad)
	}
	var req mcp.InitializeRequest
	if err := json.Unmarshal([]byte(warmRequest), &req); err != nil {
		t.Fatal(err)
	}
	if req.Method != "initialize" || req.Params.Capabilities.Roots == nil || req.Params.Capabilities.Sampling == nil {
		t.Errorf("decoded as %+v", req)
	}
}
