package mdlink

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// pieces are the text generated documents are made of: what opens and
// closes blocks and inline constructs, and what goldmark treats oddly.
var pieces = []string{
	"[", "]", "(", ")", "![", "<", ">", "`", "``", "\\", "\n", "\n", "\n\n", " ", "  ", "\t", "\r\n", "\r", "\v", "\f",
	"a", "foo", "*", "_", "***", "\"", "'", ":", "=", "/>", "&amp;", "&#42;", "\\[", "\\]", "\\(", "\\`", "\\<", "\\\\",
	"\\\n", "  \n", "[a](b)", "](", "][", "[]", "[ ]", "[a]", "[A]", "[a][]", "[a][b]", "![a][b]", "[a\nb]",
	"[a]: /u", "[b]:", "[b]: <>", "[c]: <x y>", "[a]:\n/u\n'title'", "/url", "\"t\"", "'t'", "(t)",
	"<http://x>", "<http:", "<a@b.c>", "http://x", "<!--", "-->", "<!-- a -->", "<?", "?>", "<!X", "<![CDATA[", "]]>",
	"<a ", "<a>", "</a>", "</x >", "<x-y z=1/>", "<a href='[x](y)'>", "<a\nb='c'>", "x=\"y\"", "<div>", "</div>", "<DIV>",
	"<pre>", "<PrE ", "</pre>", "<script>", "</script>", "<textarea>", "</style>", "<!DOCTYPE",
	"```", "~~~", "#", "## ", "#\t", "####### ", "===", "---", "- ", "* ", "+ ", "1. ", "2) ", "10. ", "-\t", ">\t",
	"> ", "    ", "    - ", "  > ", "ſ", "ẞ", "\u00a0", "\xff", "\ufffd",
}

// prefixes start the lines of documents made line by line.
var prefixes = []string{"", "", "", " ", "  ", "   ", "    ", "\t", "> ", ">", "> > ", ">\t", "- ", "* ", "-\t", "1. ", "  - ", "> - ", "- > "}

// TestGeneratedDocuments compares Destinations with goldmark on documents
// made at random (with a fixed seed) of pieces that matter to links.
func TestGeneratedDocuments(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	failed := 0
	for range n {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			for i := rng.IntN(40); i >= 0; i-- {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
		} else {
			for l := rng.IntN(8); l >= 0; l-- {
				b.WriteString(prefixes[rng.IntN(len(prefixes))])
				for i := rng.IntN(6); i > 0; i-- {
					b.WriteString(pieces[rng.IntN(len(pieces))])
				}
				b.WriteString("\n")
			}
		}
		src := []byte(b.String())
		got, err := Destinations(src)
		if err != nil {
			t.Fatalf("Destinations(%q): %v", src, err)
		}
		if want := goldmarkDestinations(src); !slices.Equal(got, want) {
			if failed++; failed <= 10 {
				t.Errorf("Destinations(%q)\n= %q\ngoldmark finds %q", src, got, want)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d documents differ", failed, n)
	}
}

// BenchmarkDestinations compares the cost of a call with goldmark's parse,
// on a SKILL.md-like body.
func BenchmarkDestinations(b *testing.B) {
	src := []byte(strings.Repeat(skillSeeds[0]+skillSeeds[1], 4))
	b.Run("mdlink", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			Destinations(src)
		}
	})
	b.Run("goldmark", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			goldmarkDestinations(src)
		}
	})
}
