package mdlink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	gmparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmarkDestinations is the oracle: the destinations of the links and
// images goldmark's parser finds, built as the skills package built it.
func goldmarkDestinations(src []byte) []string {
	p := gmparser.NewParser(gmparser.WithBlockParsers(gmparser.DefaultBlockParsers()...),
		gmparser.WithInlineParsers(gmparser.DefaultInlineParsers()...),
		gmparser.WithParagraphTransformers(gmparser.DefaultParagraphTransformers()...))
	doc := p.Parse(text.NewReader(src))
	var dests []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch n := n.(type) {
			case *ast.Link:
				dests = append(dests, string(n.Destination))
			case *ast.Image:
				dests = append(dests, string(n.Destination))
			}
		}
		return ast.WalkContinue, nil
	})
	return dests
}

type specExample struct {
	Markdown string `json:"markdown"`
	Example  int    `json:"example"`
	Section  string `json:"section"`
}

// specExamples reads the examples of the CommonMark specification that
// goldmark's module ships.
func specExamples(t testing.TB) []specExample {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/goldmark").Output()
	if err != nil {
		if _, lookErr := exec.LookPath("go"); lookErr != nil {
			t.Skip("the go command is not available to locate goldmark's module and its spec.json")
		}
		t.Fatalf("locating goldmark's module: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "_test", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	var examples []specExample
	if err := json.Unmarshal(data, &examples); err != nil {
		t.Fatal(err)
	}
	if len(examples) < 600 {
		t.Fatalf("spec.json has %d examples, expected the whole specification", len(examples))
	}
	return examples
}

// TestSpecExamples compares Destinations with goldmark on every example of
// the specification, as written and with CRLF line ends (SKILL.md files
// written on Windows).
func TestSpecExamples(t *testing.T) {
	examples := specExamples(t)
	withLinks, agree := 0, 0
	for _, ex := range examples {
		for _, src := range []string{ex.Markdown, strings.ReplaceAll(ex.Markdown, "\n", "\r\n")} {
			want := goldmarkDestinations([]byte(src))
			got, err := Destinations([]byte(src))
			if err != nil {
				t.Errorf("example %d (%s): %q: %v", ex.Example, ex.Section, src, err)
				continue
			}
			if len(want) > 0 {
				withLinks++
			}
			if !slices.Equal(got, want) {
				t.Errorf("example %d (%s):\n%q\ngot  %q\nwant %q", ex.Example, ex.Section, src, got, want)
				continue
			}
			agree++
		}
	}
	t.Logf("%d of %d documents (the examples, with LF and with CRLF) agree with goldmark (%d have links or images)", agree, 2*len(examples), withLinks)
}

func TestDestinations(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"", nil},
		{"[a](b.md) ![c](img/d.png \"t\")", []string{"b.md", "img/d.png"}},
		{"[a](<b c.md>)", []string{"b c.md"}},
		{"[a](b\\)c&amp;d)", []string{"b\\)c&amp;d"}}, // as written
		{"[a]()", []string{""}},
		{"[x]\n\n[x]: <f&ouml;.md>", []string{"f&ouml;.md"}},
		{"[ẞ]\n\n[SS]: /url", []string{"/url"}},                 // full case folding
		{"![[a](b)](c)", []string{"c", "b"}},                    // an image may hold links
		{"[[a](b)](c)", []string{"b"}},                          // a link may not
		{"`[a](b)` <a href=\"[c](d)\"> <http://x/[e](f)>", nil}, // code, HTML and autolinks first
		{"```\n[a](b)\n```\n    [c](d)\n<div>\n[e](f)\n</div>", nil},
		{"> [a]\n> - [b]\n\n[a]: one\n[b]: two", []string{"one", "two"}},
		{"- a\n\n  [b](c)", []string{"c"}},
		{"\\[a](b)", nil},
		{"a\\\\\\\n\\[b](c)", []string{"c"}}, // goldmark's escape across a line end
		// goldmark's bounds: open brackets spanning over 998 bytes, labels
		// over 999
		{"[x" + strings.Repeat("a", 995) + "[y[b](c)", []string{"c"}},
		{"[x" + strings.Repeat("a", 996) + "[y[b](c)", nil},
		{"[" + strings.Repeat("a", 999) + "]\n\n[" + strings.Repeat("a", 999) + "]: /u", []string{"/u"}},
		{"[" + strings.Repeat("a", 1000) + "]\n\n[" + strings.Repeat("a", 1000) + "]: /u", nil},
	} {
		if got, err := Destinations([]byte(tc.src)); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Destinations(%q) = %q, %v; want %q", tc.src, got, err, tc.want)
		}
		if gm := goldmarkDestinations([]byte(tc.src)); !slices.Equal(gm, tc.want) {
			t.Errorf("goldmark finds %q in %q, the test wants %q", gm, tc.src, tc.want)
		}
	}
}

// TestCaseFolding compares the label key with goldmark's for every rune.
func TestCaseFolding(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := "A" + string(r) + "b"
		if got, want := normalizeLabel([]byte(s)), util.ToLinkReference([]byte(s)); got != want {
			t.Errorf("the key of %q (%U) is %q, goldmark's %q", s, r, got, want)
		}
	}
	for _, s := range []string{"  a \t\n b  ", "\xff\xc3", "\xc3\xc3\x84", "x\ufffdY", " \v\f\r"} {
		if got, want := normalizeLabel([]byte(s)), util.ToLinkReference([]byte(s)); got != want {
			t.Errorf("the key of %q is %q, goldmark's %q", s, got, want)
		}
	}
}

func ExampleDestinations() {
	src := "See [the guide](docs/guide.md) and ![a diagram][fig].\n\n[fig]: img/flow.png\n"
	dests, err := Destinations([]byte(src))
	fmt.Printf("%q %v\n", dests, err)
	// Output: ["docs/guide.md" "img/flow.png"] <nil>
}

// TestDestinationsGivesUp holds Destinations to its bounds on the
// documents CommonMark makes costly, as large as a skill's body may be
// (256 KiB): each is given up, not parsed for seconds (goldmark takes 19 s
// on 256 KiB of "[a](" and 49 s on 256 KiB of ">\t"). Documents as large
// that are costly to nobody are parsed whole.
func TestDestinationsGivesUp(t *testing.T) {
	const size = 256 << 10
	for _, unit := range []string{"[a](", "[a](<", "![a](", ">\t", "> ", "1. ", "* > "} {
		src := bytes.Repeat([]byte(unit), size/len(unit))
		if dests, err := Destinations(src); !errors.Is(err, ErrTooComplex) {
			t.Errorf("%q x %d: %d destinations, %v; want ErrTooComplex", unit, size/len(unit), len(dests), err)
		}
	}
	deep := strings.Repeat("> ", MaxNesting) + "[a](b)\n"
	if dests, err := Destinations([]byte(deep)); err != nil || !slices.Equal(dests, []string{"b"}) {
		t.Errorf("nested %d deep: %q, %v", MaxNesting, dests, err)
	}
	if _, err := Destinations([]byte("> " + deep)); !errors.Is(err, ErrTooComplex) {
		t.Errorf("nested %d deep: %v, want ErrTooComplex", MaxNesting+1, err)
	}
	// Runs of other openers are read once.
	for _, doc := range append(skillSeeds, "a [b](c) `d` <e> [f][g] "+strings.Repeat("word ", 200)+"\n",
		"`a``", "[a]: b \"", "[a][", "- ", "<a b", "<!--", "*_") {
		src := bytes.Repeat([]byte(doc), size/len(doc))
		if _, err := Destinations(src); err != nil {
			t.Errorf("%.30q x %d: %v", doc, size/len(doc), err)
		}
	}
}
