package hashline

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"lukechampine.com/blake3"
)

// refTag computes a tag the slow, obvious way: hex of the full BLAKE3 hash.
func refTag(n int, content string) string {
	h := blake3.Sum256([]byte(fmt.Sprintf("%d:%s", n, content)))
	return hex.EncodeToString(h[:])[:TagLen]
}

func TestTagMatchesBLAKE3(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		n       int
		content string
	}{
		{1, ""}, {1, "package main"}, {2, "package main"}, {123456, "\tif err != nil {"},
		{7, strings.Repeat("a", 62)}, {7, strings.Repeat("a", 61)}, {10, strings.Repeat("b", 61)},
		{99, long}, {1, "héllo wörld ✓"},
	} {
		if got, want := Tag(tc.n, []byte(tc.content)), refTag(tc.n, tc.content); got != want {
			t.Errorf("Tag(%d, %q) = %s, want %s", tc.n, tc.content, got, want)
		}
	}
	if Tag(1, []byte("x")) == Tag(2, []byte("x")) {
		t.Error("identical lines at different numbers got the same tag")
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		lines   []string
		eols    []EOL
		bom     bool
		finalNL bool
		style   string
	}{
		{"empty", "", nil, nil, false, true, "none"},
		{"one line no newline", "a", []string{"a"}, []EOL{NoEOL}, false, false, "none"},
		{"lf", "a\nb\n", []string{"a", "b"}, []EOL{LF, LF}, false, true, "lf"},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}, []EOL{CRLF, CRLF}, false, true, "crlf"},
		{"mixed", "a\r\nb\nc", []string{"a", "b", "c"}, []EOL{CRLF, LF, NoEOL}, false, false, "mixed"},
		{"lone cr is content", "a\rb\n", []string{"a\rb"}, []EOL{LF}, false, true, "lf"},
		{"bom", "\xEF\xBB\xBFx\n", []string{"x"}, []EOL{LF}, true, true, "lf"},
		{"blank lines", "\n\n", []string{"", ""}, []EOL{LF, LF}, false, true, "lf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Parse([]byte(tc.in))
			if d.Lines() != len(tc.lines) {
				t.Fatalf("Lines() = %d, want %d", d.Lines(), len(tc.lines))
			}
			for i := range tc.lines {
				if got := string(d.Line(i + 1)); got != tc.lines[i] {
					t.Errorf("Line(%d) = %q, want %q", i+1, got, tc.lines[i])
				}
				if got := d.EOL(i + 1); got != tc.eols[i] {
					t.Errorf("EOL(%d) = %q, want %q", i+1, got, tc.eols[i])
				}
			}
			if d.BOM() != tc.bom || d.FinalNewline() != tc.finalNL || d.Style() != tc.style {
				t.Errorf("bom=%v finalNL=%v style=%s, want %v %v %s", d.BOM(), d.FinalNewline(), d.Style(), tc.bom, tc.finalNL, tc.style)
			}
		})
	}
}

func TestRender(t *testing.T) {
	d := Parse([]byte("alpha\n\tbeta\r\n"))
	got := string(d.AppendRender(nil, 1, 2, 0))
	want := "1:" + refTag(1, "alpha") + "|alpha\n2:" + refTag(2, "\tbeta") + "|\tbeta\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	long := strings.Repeat("é", 10) // 20 bytes
	clipped := string(AppendLine(nil, 3, []byte(long), 5))
	if !strings.HasPrefix(clipped, "3:"+refTag(3, long)+"|éé …[clipped 16 bytes]") {
		t.Fatalf("clipped line = %q", clipped)
	}
}

func TestParseAnchor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Anchor
		err  bool
	}{
		{"1a2b3c4d", Anchor{Sum: 0x1a2b3c4d}, false},
		{"12:1A2B3C4D", Anchor{Line: 12, Sum: 0x1a2b3c4d}, false},
		{"12:1a2b3c4d|  content | with bars", Anchor{Line: 12, Sum: 0x1a2b3c4d}, false},
		{" 7:00000000 ", Anchor{Line: 7}, false},
		{"", Anchor{}, true},
		{"1a2b3c4", Anchor{}, true},
		{"1a2b3c4d5", Anchor{}, true},
		{"0:1a2b3c4d", Anchor{}, true},
		{"-3:1a2b3c4d", Anchor{}, true},
		{"x:1a2b3c4d", Anchor{}, true},
		{"12:zzzzzzzz", Anchor{}, true},
		{"12:+1a2b3c4", Anchor{}, true},
	} {
		got, err := ParseAnchor(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseAnchor(%q) = %+v, %v; want %+v, err=%v", tc.in, got, err, tc.want, tc.err)
		}
	}
	a := Anchor{Line: 3, Sum: 0xabc}
	if b, err := ParseAnchor(a.String()); err != nil || b != a {
		t.Errorf("round trip of %v: %v, %v", a, b, err)
	}
}

func TestSplitText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\n", []string{"a", ""}},
		{"a\r\nb", []string{"a", "b"}},
		{"\n", []string{""}},
		{"a\rb", []string{"a\rb"}},
	} {
		if got := SplitText(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("SplitText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func lines(s ...string) []string { return s }

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		edits []Edit
		want  string
		hunks []Hunk
	}{
		{"replace middle", "a\nb\nc\n", []Edit{{From: 2, To: 2, Lines: lines("B")}}, "a\nB\nc\n",
			[]Hunk{{2, 1, 2, 1}}},
		{"replace with several", "a\nb\nc\n", []Edit{{From: 2, To: 2, Lines: lines("x", "y")}}, "a\nx\ny\nc\n",
			[]Hunk{{2, 1, 2, 2}}},
		{"delete", "a\nb\nc\n", []Edit{{From: 2, To: 2}}, "a\nc\n", []Hunk{{2, 1, 2, 0}}},
		{"insert after last", "a\nb\n", []Edit{{From: 3, To: 2, Lines: lines("c")}}, "a\nb\nc\n", []Hunk{{3, 0, 3, 1}}},
		{"insert before first", "a\n", []Edit{{From: 1, To: 0, Lines: lines("z")}}, "z\na\n", []Hunk{{1, 0, 1, 1}}},
		{"append to empty", "", []Edit{{From: 1, To: 0, Lines: lines("x", "y")}}, "x\ny\n", []Hunk{{1, 0, 1, 2}}},
		{"crlf kept, new lines take crlf", "a\r\nb\r\nc\r\n", []Edit{{From: 2, To: 2, Lines: lines("B", "B2")}}, "a\r\nB\r\nB2\r\nc\r\n", nil},
		{"mixed kept per line", "a\r\nb\nc\r\n", []Edit{{From: 3, To: 3, Lines: lines("C")}}, "a\r\nb\nC\r\n", nil},
		{"no final newline kept on replace", "a\nb", []Edit{{From: 2, To: 2, Lines: lines("B")}}, "a\nB", nil},
		{"no final newline kept on append", "a\nb", []Edit{{From: 3, To: 2, Lines: lines("c")}}, "a\nb\nc", nil},
		{"no final newline kept on delete last", "a\nb\nc", []Edit{{From: 3, To: 3}}, "a\nb", nil},
		{"delete everything", "a\nb\n", []Edit{{From: 1, To: 2}}, "", []Hunk{{1, 2, 1, 0}}},
		{"bom kept", "\xEF\xBB\xBFa\nb\n", []Edit{{From: 1, To: 1, Lines: lines("A")}}, "\xEF\xBB\xBFA\nb\n", nil},
		{"tabs kept", "\ta\n\tb\n", []Edit{{From: 2, To: 2, Lines: lines("\t\tB")}}, "\ta\n\t\tB\n", nil},
		{"inserts at one place keep call order", "a\nb\n",
			[]Edit{{Op: 0, From: 2, To: 1, Lines: lines("1")}, {Op: 1, From: 2, To: 1, Lines: lines("2")}}, "a\n1\n2\nb\n",
			[]Hunk{{2, 0, 2, 2}}},
		{"insert before a replaced line goes first", "a\nb\nc\n",
			[]Edit{{Op: 0, From: 2, To: 2, Lines: lines("B")}, {Op: 1, From: 2, To: 1, Lines: lines("ins")}}, "a\nins\nB\nc\n",
			[]Hunk{{2, 1, 2, 2}}},
		{"insert after a replaced range goes after", "a\nb\nc\n",
			[]Edit{{Op: 0, From: 4, To: 3, Lines: lines("end")}, {Op: 1, From: 1, To: 3, Lines: lines("all")}}, "all\nend\n",
			[]Hunk{{1, 3, 1, 2}}},
		{"separate hunks", "1\n2\n3\n4\n5\n",
			[]Edit{{Op: 0, From: 5, To: 5, Lines: lines("five")}, {Op: 1, From: 1, To: 1, Lines: lines("one", "uno")}}, "one\nuno\n2\n3\n4\nfive\n",
			[]Hunk{{1, 1, 1, 2}, {5, 1, 6, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, hunks, err := Apply(Parse([]byte(tc.in)), tc.edits)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got %q, want %q", out, tc.want)
			}
			if tc.hunks != nil && fmt.Sprint(hunks) != fmt.Sprint(tc.hunks) {
				t.Errorf("hunks %v, want %v", hunks, tc.hunks)
			}
		})
	}
}

func TestApplyRefuses(t *testing.T) {
	d := Parse([]byte("a\nb\nc\nd\n"))
	for _, tc := range []struct {
		name  string
		edits []Edit
		kind  ErrorKind
		ops   []int
	}{
		{"same line twice", []Edit{{Op: 0, From: 2, To: 2}, {Op: 1, From: 2, To: 2}}, ErrOverlap, []int{0, 1}},
		{"ranges overlap", []Edit{{Op: 0, From: 1, To: 3}, {Op: 1, From: 3, To: 4}}, ErrOverlap, []int{0, 1}},
		{"insert inside a range", []Edit{{Op: 0, From: 1, To: 3}, {Op: 1, From: 3, To: 2, Lines: lines("x")}}, ErrOverlap, []int{0, 1}},
		{"past the end", []Edit{{Op: 3, From: 5, To: 5}}, ErrRange, []int{3}},
		{"end before start", []Edit{{Op: 2, From: 3, To: 1}}, ErrRange, []int{2}},
		{"line zero", []Edit{{Op: 0, From: 0, To: 0}}, ErrRange, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Apply(d, tc.edits)
			be, ok := errors.AsType[*BatchError](err)
			if !ok {
				t.Fatalf("err = %v, want *BatchError", err)
			}
			if be.Kind != tc.kind || fmt.Sprint(be.Ops) != fmt.Sprint(tc.ops) {
				t.Errorf("kind %d ops %v, want %d %v (%s)", be.Kind, be.Ops, tc.kind, tc.ops, be.Msg)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	h := blake3.Sum256([]byte("abc"))
	if got, want := Version([]byte("abc")), hex.EncodeToString(h[:8]); got != want {
		t.Errorf("Version = %s, want %s", got, want)
	}
	if !bytes.Equal([]byte(Version(nil)), []byte(Version([]byte{}))) {
		t.Error("nil and empty differ")
	}
}

// TestSumEqualsBLAKE3 checks the block-by-block hashing against the BLAKE3
// library for every message length around the block and chunk boundaries.
func TestSumEqualsBLAKE3(t *testing.T) {
	content := make([]byte, 1200)
	for i := range content {
		content[i] = byte(i*131 + i/7)
	}
	for _, n := range []int{1, 9, 10, 99999, 1234567890} {
		for size := 0; size <= len(content); size++ {
			c := content[:size]
			if got, want := Tag(n, c), refTag(n, string(c)); got != want {
				t.Fatalf("Tag(%d, %d bytes) = %s, want %s", n, size, got, want)
			}
		}
	}
}

// TestRenderEqualsAppendLine renders ranges, some large enough to be split
// among goroutines, some hashed in lanes, and compares each with rendering
// line by line.
func TestRenderEqualsAppendLine(t *testing.T) {
	var b strings.Builder
	for i := range 3 * parallelLines {
		switch i % 5 {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString(strings.Repeat("é", 40+i%30) + "\n") // clipped at clip=50
		default:
			fmt.Fprintf(&b, "line %d\tof text\r\n", i)
		}
	}
	d := Parse([]byte(b.String()))
	for _, tc := range []struct{ from, to, clip int }{
		{1, d.Lines(), 0}, {1, d.Lines(), 50}, {7, d.Lines() - 3, 50}, {100, 100 + parallelLines, 0},
		// Serial, hashed line by line or in lanes, across batches.
		{1, 1, 0}, {3, 3 + laneMin - 2, 0}, {5, 5 + laneMin, 50}, {95, 95 + 2*renderBatch + 3, 0},
	} {
		var serial []byte
		for n := tc.from; n <= tc.to; n++ {
			serial = AppendLine(serial, n, d.Line(n), tc.clip)
		}
		prefix := []byte("header\n")
		// A destination with no room, and one with room to spare that holds
		// stale bytes: the result is written in place there, every byte.
		roomy := bytes.Repeat([]byte{0xFF}, len(prefix)+len(serial)+100)
		roomy = append(roomy[:0], prefix...)
		for name, dst := range map[string][]byte{"tight": append([]byte(nil), prefix...), "roomy": roomy} {
			got := d.AppendRender(dst, tc.from, tc.to, tc.clip)
			if !bytes.Equal(got, append(prefix, serial...)) {
				t.Fatalf("%+v, %s destination: AppendRender differs from AppendLine line by line (%d vs %d bytes)", tc, name, len(got), len(prefix)+len(serial))
			}
		}
	}
}
