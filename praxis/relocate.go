package praxis

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// An edit whose anchors were read from an earlier version B of a file that
// is now at version C is relocated to C by three-way reasoning: each op,
// as a range of B's lines, moves to C when the lines it touches and one
// line on each side of them are unchanged from B to C. "Unchanged" comes
// from one of two line maps:
//
//   - exact, when C came from B by the engine's own edits: their hunks say
//     where every untouched line went, so only the touched lines must be
//     untouched (the rule anchors followed before the version store);
//   - by diff otherwise: a go-diff line diff of B and C. The lines from one
//     before the op to one after it must be equal lines of the diff, in a
//     row in C too, and occur in that order exactly once in B and once in
//     C, so that no other alignment of the two files could place them
//     elsewhere (the file's start and end count as lines here).

// maxRelocationSources bounds the earlier versions an edit is tried from.
const maxRelocationSources = 16

// relocSource is one earlier version an edit may have been read from.
type relocSource struct {
	version string
	doc     *hashline.Doc
	steps   [][]hashline.Hunk // exact map: the engine's edits from doc to now
	exact   bool
	lines   *lineMap // the map by diff, built on first use
}

// lineMap maps the lines of an earlier version B to the current version C
// by a line diff. Lines are numbered with the file's start as 0 and its
// end as Lines()+1.
type lineMap struct {
	b, c []rune // line identities, the start and end included
	toC  []int  // B's line -> C's line, -1 where the diff changed it
}

// Line identities are runes: valid ones, so that go-diff, which turns
// runes into strings, never confuses two. The start and end of a file
// get two of their own.
const (
	runeStart = 0
	runeEnd   = 1
	maxRuneID = utf8.MaxRune - 0x800 - 2
)

func runeID(i int) rune {
	r := rune(i + 2)
	if r >= 0xD800 {
		r += 0x800 // past the surrogates
	}
	return r
}

// newLineMap diffs b and c; ok is false when they have more distinct lines
// than runes can name.
func newLineMap(b, c *hashline.Doc) (*lineMap, bool) {
	ids := make(map[string]rune)
	encode := func(d *hashline.Doc) ([]rune, bool) {
		out := make([]rune, 0, d.Lines()+2)
		out = append(out, runeStart)
		for n := 1; n <= d.Lines(); n++ {
			key := string(d.Line(n)) + string(d.EOL(n))
			id, ok := ids[key]
			if !ok {
				if len(ids) >= maxRuneID {
					return nil, false
				}
				id = runeID(len(ids))
				ids[key] = id
			}
			out = append(out, id)
		}
		return append(out, runeEnd), true
	}
	m := &lineMap{}
	var ok bool
	if m.b, ok = encode(b); !ok {
		return nil, false
	}
	if m.c, ok = encode(c); !ok {
		return nil, false
	}
	m.toC = make([]int, len(m.b))
	for i := range m.toC {
		m.toC[i] = -1
	}
	dmp := diffmatchpatch.New()
	i, j := 0, 0
	for _, d := range dmp.DiffMainRunes(m.b, m.c, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := range n {
				m.toC[i+k] = j + k
			}
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			i += n
		case diffmatchpatch.DiffInsert:
			j += n
		}
	}
	return m, true
}

// block maps B's lines from..to (to >= from-1, from the start 0 to the
// end Lines()+1) to C, where they must be equal lines in a row, occurring
// once in B and once in C. It returns the first line in C.
func (m *lineMap) block(from, to int) (int, bool) {
	if from < 0 || to >= len(m.b) || to < from {
		return 0, false
	}
	first := m.toC[from]
	if first < 0 {
		return 0, false
	}
	for k := from + 1; k <= to; k++ {
		if m.toC[k] != first+k-from {
			return 0, false
		}
	}
	w := m.b[from : to+1]
	if count(m.b, w) != 1 || count(m.c, w) != 1 {
		return 0, false
	}
	return first, true
}

// count returns how many times w occurs in s, stopping at two.
func count(s, w []rune) int {
	n := 0
	for i := 0; i+len(w) <= len(s) && n < 2; i++ {
		if s[i] == w[0] && slices.Equal(s[i:i+len(w)], w) {
			n++
		}
	}
	return n
}

// mapExact follows line of the source through the engine's own edits.
func (s *relocSource) mapExact(line int) (int, bool) {
	for _, hunks := range s.steps {
		var ok bool
		if line, ok = hashline.MapLine(line, hunks); !ok {
			return 0, false
		}
	}
	return line, true
}

// relocate maps x, an edit of the source's lines, to the current version
// cur. anchor is the line an insertion was anchored to (insert_after names
// the line before x.From, insert_before x.From); 0 otherwise.
func (s *relocSource) relocate(x hashline.Edit, anchor int, cur *hashline.Doc) (hashline.Edit, bool) {
	if s.exact {
		if x.To < x.From {
			n, ok := s.mapExact(anchor)
			if !ok {
				return x, false
			}
			x.From = n + (x.From - anchor)
			x.To = x.From - 1
			return x, true
		}
		first, ok := s.mapExact(x.From)
		if !ok {
			return x, false
		}
		for k := x.From + 1; k <= x.To; k++ {
			if n, ok := s.mapExact(k); !ok || n != first+k-x.From {
				return x, false
			}
		}
		x.From, x.To = first, first+x.To-x.From
		return x, true
	}
	if s.lines == nil {
		m, ok := newLineMap(s.doc, cur)
		if !ok {
			return x, false
		}
		s.lines = m
	}
	first, ok := s.lines.block(x.From-1, x.To+1)
	if !ok {
		return x, false
	}
	n := x.To - x.From
	x.From = first + 1
	x.To = x.From + n
	return x, true
}

// relocationSources returns the earlier versions of a file (at rel, also
// spelled alt) that every anchor in stale names a line of: base alone when
// given, else the versions the engine served, newest first. Versions the
// engine's own edits lead from to the current one get an exact map.
func (e *Engine) relocationSources(rel, alt, current, base string, stale []hashline.Anchor) []*relocSource {
	exact := e.history.since(rel, current)
	var candidates []string
	if base != "" {
		candidates = []string{base}
	} else {
		candidates = e.versions.recentVersions(rel, maxRelocationSources)
		if alt != rel {
			for _, v := range e.versions.recentVersions(alt, maxRelocationSources) {
				if !slices.Contains(candidates, v) {
					candidates = append(candidates, v)
				}
			}
		}
		for v := range exact {
			if !slices.Contains(candidates, v) {
				candidates = append(candidates, v)
			}
		}
	}
	var out []*relocSource
	for _, v := range candidates {
		if v == current || len(out) == maxRelocationSources {
			continue
		}
		data, ok := e.versions.get(v)
		if !ok {
			continue
		}
		doc := hashline.Parse(data)
		if !slices.ContainsFunc(stale, func(a hashline.Anchor) bool { return findAnchor(doc, a) <= 0 }) {
			steps, isExact := exact[v]
			out = append(out, &relocSource{version: v, doc: doc, steps: steps, exact: isExact})
		}
	}
	return out
}

// relocationRefusal says why an op, x in src's lines (anchored to line
// anchor if an insertion), could not be relocated from src.
func relocationRefusal(src *relocSource, x hashline.Edit, anchor int) string {
	if src.exact {
		at := x.From
		if anchor > 0 {
			at = anchor
		}
		return fmt.Sprintf("line %d of version %s, which it names, was changed or removed by an edit since that anchor was read", at, src.version)
	}
	lines := fmt.Sprintf("line %d", x.From)
	if x.To > x.From {
		lines = fmt.Sprintf("lines %d-%d", x.From, x.To)
	} else if x.To < x.From {
		lines = fmt.Sprintf("the place after line %d", x.To)
	}
	return fmt.Sprintf("it is from version %s, and %s of that version, or a line next to them, changed since or occurs more than once", src.version, lines)
}
