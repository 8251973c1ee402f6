package praxis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// collidingLines returns the contents of a line 1 and a line 2 whose tags
// are equal, found by a birthday search over the 32-bit tags.
func collidingLines(t *testing.T) (string, string) {
	t.Helper()
	first := map[uint32]string{}
	for i := range 1 << 17 {
		s := fmt.Sprintf("one %d", i)
		first[hashline.Sum(1, []byte(s))] = s
	}
	for j := range 1 << 22 {
		s := fmt.Sprintf("two %d", j)
		if a, ok := first[hashline.Sum(2, []byte(s))]; ok {
			return a, s
		}
	}
	t.Skip("no colliding tags found (unlikely): nothing to test")
	return "", ""
}

// TestAnchorCandidates checks that an ambiguous or partial anchor is
// refused with the lines it may name, each with its full anchor.
func TestAnchorCandidates(t *testing.T) {
	a, b := collidingLines(t)
	src := a + "\n" + b + "\nthree\nfour\n"
	e, _ := newTestEngine(t, map[string]string{"f": src})
	full := anchors(t, e, "f")
	tag := func(i int) string { _, tg, _ := strings.Cut(full[i], ":"); return tg }
	tests := []struct {
		name   string
		anchor string
		want   []string // full anchors the error must list
		none   []string // and must not
	}{
		{"bare tag naming two lines", tag(0), []string{full[0], full[1]}, []string{full[2]}},
		{"short tag with its line", "3:" + tag(2)[:4], []string{full[2]}, []string{full[0], full[3]}},
		{"line number alone", "4", []string{full[3]}, []string{full[2]}},
		{"line and colon", "4:", []string{full[3]}, []string{full[2]}},
		{"short bare tag", tag(3)[:5], []string{full[3]}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, e, "edit_file", map[string]any{"path": "f",
				"ops": []map[string]any{op("replace_line", "tag", tc.anchor, "new_text", "x")}})
			mustFail(t, res, EAnchorSyntax, "with their full anchors")
			for _, w := range tc.want {
				if !strings.Contains(res.Text, "\n"+w+"|") {
					t.Errorf("the error does not list %s:\n%s", w, res.Text)
				}
			}
			for _, w := range tc.none {
				if strings.Contains(res.Text, "\n"+w+"|") {
					t.Errorf("the error lists %s, which the anchor cannot name:\n%s", w, res.Text)
				}
			}
		})
	}
}
