package mdlink

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// skillSeeds are documents like the bodies of SKILL.md files.
var skillSeeds = []string{
	"# Deploy\n\nRun [the script](scripts/deploy.sh) first; see [the reference][ref].\n\n" +
		"## Steps\n\n1. Read [setup](docs/setup.md#install)\n2. Check ![diagram](img/flow.png \"flow\")\n" +
		"   - nested [item](./notes.md)\n\n> Note: [quoted](q.md)\n\n```sh\n./scripts/deploy.sh [not](a-link)\n```\n\n" +
		"[ref]: reference/REFERENCE.md \"The reference\"\n",
	"Use <https://example.com> or [mail](mailto:a@b.c).\n\n    [indented](code.md)\n\n" +
		"<details>\n[inside](html.md)\n</details>\n\n* [a](a.md)\n* [b](<b c.md>)\n\n[c]\n\n[C]: c.md\n",
	"Setext [heading](h.md)\n===\n\n| table | [cell](cell.md) |\n|---|---|\n\n---\n\n" +
		"Text with `[code](span.md)` and \\[escaped](x.md) and [a [nested](n.md)](o.md).\n" +
		"![img [with](link.md)](pic.png)\n\n[foo]:\n/url\n\"title\"\n\n[foo]\n",
}

// FuzzDestinations compares Destinations with goldmark's parser, on every
// input: no kind of document is known where they differ. -fuzz takes one
// package: go test -run=^$ -fuzz=FuzzDestinations ./skills/internal/mdlink
func FuzzDestinations(f *testing.F) {
	for _, ex := range specExamples(f) {
		f.Add([]byte(ex.Markdown))
	}
	for _, s := range skillSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		want := goldmarkDestinations(src)
		got, err := Destinations(src)
		if err != nil {
			// Only nesting gives a document this short up.
			if !errors.Is(err, ErrTooComplex) || len(src) < workBase/workPerByte && containerMarkers(src) <= MaxNesting {
				t.Fatalf("Destinations(%q): %v", src, err)
			}
			return // deeper than MaxNesting: not compared
		}
		if !slices.Equal(got, want) {
			t.Errorf("Destinations(%q)\n= %q\ngoldmark finds %q", src, got, want)
		}
	})
}

// containerMarkers counts the bytes of src that may open a block quote, a
// list or a list item.
func containerMarkers(src []byte) int {
	n := 0
	for _, c := range src {
		if bytes.IndexByte([]byte(">-*+.)"), c) >= 0 {
			n++
		}
	}
	return n
}
