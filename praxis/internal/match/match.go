// Package match finds the lines of a text that hold a match of a regular
// expression, as a line-oriented grep does. It is pure: no I/O.
//
// A line is the bytes between two "\n" (a "\r" before the "\n" belongs to
// the line, as in ripgrep). Patterns use Go's RE2 syntax; "^" and "$" match
// at the start and end of every line, and no part of a pattern matches a
// line break. Every pattern is searched for the longest literal string all
// its matches contain or, failing one, for a few literals every match
// holds one of (the words of foo|bar|baz), each found with a fast
// substring search before the regular expression looks at the one line
// around it; a pattern that is just those literals needs no regular
// expression at all.
package match

//go:generate go run gen_rank.go

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Matcher finds matching lines. It is safe for concurrent use.
type Matcher struct {
	re  *regexp.Regexp
	lit []byte // a literal every match holds; nil if there is none
	// With eolLit, lit ends in the line break the end of the line ($)
	// stands for in every match but one on a last line without one.
	eolLit bool
	pure   bool // a hit of the prefilter that passes around is a match: no regexp runs
	pivot  int  // offset in lit of its rarest byte, searched for first
	// around checks the bytes next to a hit of lit before the regular
	// expression runs on its line: every match holds lit with single bytes
	// of known sets at fixed offsets around it (the digits of
	// [0-9]{4}-[0-9]{2} around its "-").
	around []window

	// Without lit, a case-insensitive pattern may still have a run of ASCII
	// characters every match holds in some mix of cases: seg, in lower
	// case, found through its byte at offset pivot in either case, b1 or b2.
	fold   bool
	seg    []byte
	b1, b2 byte

	// With a vector kernel, a literal (lit or seg) of two bytes or more is
	// searched for by its two rarest bytes at once.
	usePair bool
	pair    pair

	// Without one literal, every match may still hold one of a few (the
	// words of foo|bar|baz): any finds them, each by its rarest bytes.
	any []finder

	// Without any, bytes is the set of one byte of fixed width every
	// match has (one of [A-Z] in [A-Z]{3,}), around checking the rest;
	// or, with eol, the end of the line is, around checking what comes
	// before it.
	bytes *[256]bool
	eol   bool
	few   []byte // the members of bytes, when they are few enough for IndexByte
	run   int    // with bytes, a run of this many of them is looked for

	// With a vector kernel, bytes a range of values ([A-Z]) next to a byte
	// of fixed width whose set is a range too (the [a-z] of [a-z][A-Z]):
	// both are looked for at once.
	ranges *rangePair

	// A pattern with none of the above may still have one on the lines
	// of ASCII alone, where its classes beyond ASCII (\p{Lu}, \PL) keep
	// their ASCII members only, and its characters beyond ASCII match
	// nothing: ascii finds the matches on those lines, and the regular
	// expression looks at the others, found by their bytes beyond ASCII.
	// With asciiNever, no line of ASCII alone holds a match (\p{Greek}).
	ascii      *Matcher
	asciiNever bool

	// every: the pattern matches in every line (^, .*, ^.*$).
	every bool

	// A pattern that is one class with members beyond ASCII (\p{Greek},
	// \PL) needs no regular expression: class holds its ranges of
	// characters, bytes its ASCII members and the bytes that may start
	// one of the others, and a character is decoded where such a byte is
	// found. When bytes is one range of values, span is it.
	class []rune
	span  *[2]byte // the range's first byte and width

	// With anchor, bytes are those of a repeat every match has, and a run
	// of them is where a match may be (see runAnchor).
	anchor *anchorRun
}

// rangePair is two bytes side by side, each in its range of values [lo,
// lo+w]: the first at the search's position, the second after it. The
// byte of bytes is the one at lead (0 or 1).
type rangePair struct {
	lead     int
	lo1, lo2 byte
	w1, w2   byte
}

// finder searches for one literal of a set, in any mix of cases with
// fold (lit then in lower case), by its rarest byte at pivot or, with
// usePair, by that byte and the next rarest at once.
type finder struct {
	lit     []byte
	fold    bool
	pivot   int
	usePair bool
	pair    pair

	// A finder of one branch of a pattern checks around its hits as
	// Matcher.around does; exact: a hit that passes is a match.
	around []window
	exact  bool
}

// pair is two bytes of a literal at different offsets: a byte c of a text
// is the one at off when c|mask == want, so that the mask 0x20 takes a
// letter in either case.
type pair struct {
	off1, off2   int
	want1, want2 byte
	mask1, mask2 byte
}

// choosePair returns the pair of lit's two cheapest bytes, pivot the
// cheapest; with fold, lit is in lower case and its letters match in
// either case.
func choosePair(lit []byte, pivot int, cost func(c byte) int, fold bool) pair {
	second := -1
	for i := range lit {
		if i != pivot && (second < 0 || cost(lit[i]) < cost(lit[second])) {
			second = i
		}
	}
	mask := func(c byte) byte {
		if fold && 'a' <= c && c <= 'z' {
			return 0x20
		}
		return 0
	}
	return pair{
		off1: pivot, off2: second,
		want1: lit[pivot], want2: lit[second],
		mask1: mask(lit[pivot]), mask2: mask(lit[second]),
	}
}

// Compile compiles pattern. With literal set the pattern is plain text;
// with ignoreCase letters match either case. An invalid pattern's error
// names the problem and the part of the pattern at fault.
func Compile(pattern string, literal, ignoreCase bool) (*Matcher, error) {
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	flags := syntax.Perl &^ syntax.OneLine
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, err
	}
	if err := noNewline(re); err != nil {
		return nil, err
	}
	replacementClass(re)
	m, err := compile(re.Simplify(), true)
	if err != nil {
		return nil, fmt.Errorf("compiling %q: %w", pattern, err)
	}
	return m, nil
}

// compile returns the matcher of re, simplified. With split, a pattern
// whose prefilter does not find its matches alone is looked for on the
// lines of ASCII alone with its ASCII form, when that is faster there
// (see splitASCII).
func compile(re *syntax.Regexp, split bool) (*Matcher, error) {
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: compiled}
	if m.every = everyLine(re); m.every {
		return m, nil
	}
	// What the line must hold is what re's line core must: x{2,} is xx.
	m.prefilter(lineCore(re))
	if split && !m.exactly() {
		m.splitASCII(re)
	}
	return m, nil
}

// everyLine reports whether re matches in every line: it is made of the
// edges of the line, parts that may match nothing, and repeats from none
// on of any character (.*), so that whatever it asks for is there in any
// line. ^ must come before $, with a .* between them.
func everyLine(re *syntax.Regexp) bool {
	var parts []*syntax.Regexp
	var flat func(*syntax.Regexp)
	flat = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				flat(sub)
			}
		case syntax.OpCapture:
			flat(re.Sub[0])
		default:
			parts = append(parts, re)
		}
	}
	flat(re)
	begin, end, any := false, false, false // seen ^, $, and .* after the last ^
	for _, p := range parts {
		switch {
		case p.Op == syntax.OpBeginLine || p.Op == syntax.OpBeginText:
			if end {
				return false
			}
			begin, any = true, false
		case p.Op == syntax.OpEndLine || p.Op == syntax.OpEndText:
			if begin && !any {
				return false
			}
			end = true
		case p.Op == syntax.OpStar && anyChar(p.Sub[0]):
			any = true
		case p.Op == syntax.OpEmptyMatch, p.Op == syntax.OpStar, p.Op == syntax.OpQuest:
			// matches nothing here
		default:
			return false
		}
	}
	return true
}

// anyChar reports whether re matches any one character but a line break.
func anyChar(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyCharNotNL:
		return true
	case syntax.OpCharClass:
		return slices.Equal(re.Rune, []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune})
	}
	return false
}

// prefilter chooses how the lines that may hold a match of re, a line
// core, are found.
func (m *Matcher) prefilter(re *syntax.Regexp) {
	set := unlessClass(requiredSet(re, false))
	if fset := requiredSet(re, true); set != nil && better(foldRuns(fset), set) {
		set = nil // the literals in any case are better: (?i)todo:?\s
	}
	ex, ok := exact(re, false)
	pure := set != nil && ok && sameSet(minimize(ex), set) // set is all re matches
	if !pure && m.branchPrefilter(re, set, len(set) == 1) {
		return
	}
	if len(set) > 1 {
		m.setPrefilter(set, false, pure)
		return
	}
	if len(set) == 1 && len(set[0]) == 1 && m.repeatOf(re, set[0][0]) {
		return // the literal's runs are searched for whole (^\t+\S)
	}
	if len(set) == 1 {
		lit := set[0]
		m.lit = lit
		m.pure = pure
		for i := range lit {
			if byteRank[lit[i]] < byteRank[lit[m.pivot]] {
				m.pivot = i
			}
		}
		if havePair && len(lit) >= 2 {
			m.usePair = true
			m.pair = choosePair(lit, m.pivot, rankCost, false)
		}
		if !m.pure {
			m.around, m.pure = windowAround(re, lit, false)
		}
		if m.endsLine(len(lit)) {
			// The literal's line break is rarer after it than either is
			// alone (the space and the line break of " +$").
			m.lit, m.eolLit = append(slices.Clip(lit), '\n'), true
			lit = m.lit
			if byteRank['\n'] < byteRank[lit[m.pivot]] {
				m.pivot = len(lit) - 1
			}
			if havePair {
				m.usePair = true
				m.pair = choosePair(lit, m.pivot, rankCost, false)
			}
		}
		if !m.pure && len(lit) == 1 && byteRank[lit[0]] >= commonRank {
			// A common byte whose hits leave the regular expression to run
			// on most lines they are in (the parenthesis of
			// \b[a-z]+[A-Z]\w*\(): a search by bytes of fixed width that
			// needs none is faster, if there is one.
			alt := &Matcher{re: m.re}
			if alt.exactRanges(re) {
				*m = *alt
			}
		}
	} else if set := unlessClass(requiredSet(re, true)); len(set) == 1 {
		m.foldPrefilter(re, set[0])
	} else if len(set) > 1 {
		m.setPrefilter(set, true, false)
	} else {
		m.bytesPrefilter(re)
	}
}

// endsLine reports whether m.around checks the end of the line right
// after m's literal of n bytes.
func (m *Matcher) endsLine(n int) bool {
	return slices.ContainsFunc(m.around, func(w window) bool {
		return w.op == syntax.OpEndLine && w.off == n && w.runs == nil && w.gap == nil
	})
}

// exactly reports whether a hit of m's prefilter that passes its checks
// is a match, with no regular expression run.
func (m *Matcher) exactly() bool {
	if m.pure || m.class != nil || m.every {
		return true
	}
	for _, f := range m.any {
		if !f.exact {
			return false
		}
	}
	return len(m.any) > 0
}

// prefiltered reports whether m finds its candidate lines by something
// faster than the regular expression, not counting its ASCII form.
func (m *Matcher) prefiltered() bool {
	return m.lit != nil || m.fold || m.any != nil || m.bytes != nil || m.eol
}

// splitASCII sets up the search of re on the lines of ASCII alone with
// the matcher of its ASCII form: when it matches nothing there, when m has
// no prefilter and it has one, or when it needs no regular expression
// (\pL\d is [A-Za-z][0-9] there, found by its bytes alone).
func (m *Matcher) splitASCII(re *syntax.Regexp) {
	a := asciiOnly(re)
	if a.Op == syntax.OpNoMatch {
		m.asciiNever = true
		return
	}
	am, err := compile(a, false)
	if err == nil && (!m.prefiltered() && am.prefiltered() || am.exactly()) {
		m.ascii = am
	}
}

// asciiOnly returns a pattern that matches as re does on text of ASCII
// alone: a class keeps its ASCII members, a character beyond ASCII
// matches nothing, or, case-folded, its ASCII case variants (k for the
// Kelvin sign), and a part that must match what matches nothing matches
// nothing too.
func asciiOnly(re *syntax.Regexp) *syntax.Regexp {
	none := &syntax.Regexp{Op: syntax.OpNoMatch}
	out := *re
	out.Sub, out.Sub0 = nil, [1]*syntax.Regexp{}
	switch re.Op {
	case syntax.OpLiteral:
		return asciiLiteral(re)
	case syntax.OpCharClass:
		out.Rune = nil
		for i := 0; i+1 < len(re.Rune) && re.Rune[i] < utf8.RuneSelf; i += 2 {
			out.Rune = append(out.Rune, re.Rune[i], min(re.Rune[i+1], utf8.RuneSelf-1))
		}
		if len(out.Rune) == 0 {
			return none
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if a := asciiOnly(sub); a.Op != syntax.OpNoMatch {
				out.Sub = append(out.Sub, a)
			}
		}
		switch len(out.Sub) {
		case 0:
			return none
		case 1:
			return out.Sub[0]
		}
	default:
		for _, sub := range re.Sub {
			a := asciiOnly(sub)
			if a.Op != syntax.OpNoMatch {
				out.Sub = append(out.Sub, a)
				continue
			}
			// Nothing matches the part: a repeat of it matches the empty
			// string, if it may repeat it no times; all else nothing.
			if re.Op == syntax.OpStar || re.Op == syntax.OpQuest || re.Op == syntax.OpRepeat && re.Min == 0 {
				return &syntax.Regexp{Op: syntax.OpEmptyMatch, Flags: re.Flags}
			}
			return none
		}
	}
	return &out
}

// asciiLiteral is asciiOnly for a literal. A case-folded character with
// case variants beyond ASCII (k, the Kelvin sign) becomes the class of
// its ASCII ones, so that the ASCII form's literals fold to ASCII alone.
func asciiLiteral(re *syntax.Regexp) *syntax.Regexp {
	fold := re.Flags&syntax.FoldCase != 0
	var parts []*syntax.Regexp
	var run []rune
	flush := func() {
		if len(run) > 0 {
			parts = append(parts, &syntax.Regexp{Op: syntax.OpLiteral, Flags: re.Flags, Rune: run})
			run = nil
		}
	}
	for _, r := range re.Rune {
		if r < utf8.RuneSelf && (!fold || asciiFoldClosed(r)) {
			run = append(run, r)
			continue
		}
		var class []rune
		if fold {
			for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
				if f < utf8.RuneSelf {
					class = append(class, f, f)
				}
				if f == r {
					break
				}
			}
		}
		if len(class) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
		flush()
		slices.Sort(class) // pairs of one rune each: sorted, they stay pairs
		parts = append(parts, &syntax.Regexp{Op: syntax.OpCharClass, Flags: re.Flags &^ syntax.FoldCase, Rune: class})
	}
	flush()
	if len(parts) == 1 {
		return parts[0]
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: parts}
}

// bytesPrefilter sets up the search of a pattern without literals for
// its bytes of fixed width: the one whose set has fewest members is
// searched for, the others and the assertions checked around it.
func (m *Matcher) bytesPrefilter(re *syntax.Regexp) {
	if m.classPrefilter(re) {
		return
	}
	var seq []part
	flatten(re, &seq)
	at := -1
	for i, p := range seq {
		if p.set != nil && !p.approx && (at < 0 || p.set.size() < seq[at].set.size()) {
			at = i
		}
	}
	// A pattern that ends at the end of its line, after bytes of fixed
	// width or a run reaching back to the line's start (\s+$, ^\s*$), is
	// found from its line breaks, unless one byte is rarer than they are.
	if last := len(seq) - 1; last > 0 && seq[last].op == syntax.OpEndLine && (at < 0 || seq[at].set.size() > 1) {
		if w, exact := windowsAt(seq[:last], last, 0); len(w) > 0 {
			m.eol, m.around, m.pure = true, w, exact
			return
		}
	}
	if m.runAnchor(seq, at) {
		return
	}
	if at < 0 {
		m.widePrefilter(seq)
		return
	}
	// A run of bytes of one set is looked for by its length: a byte not of
	// the set rules out every start of a run that would hold it. So is a
	// long run ([0-9a-f]{40}), and a short one of a set too large for a
	// table search to skip much that no vector kernel serves
	// ([[:punct:]]{3,}).
	ri, rn := longestRun(seq, func(p part) bool { return p.set != nil && !p.approx })
	if rn >= minRun {
		at, m.run = ri, rn
	}
	m.bytes = seq[at].set.table()
	if m.run == 0 {
		for c := range 256 {
			if m.bytes[c] {
				m.few = append(m.few, byte(c))
			}
		}
		if len(m.few) > maxFew || slices.ContainsFunc(m.few, func(c byte) bool { return byteRank[c] > maxFewRank }) {
			m.few = nil // looked for with the table, all at once
			m.ranges = rangesAround(seq, at)
			if m.ranges == nil && rn >= 3 && seq[ri].set.size() >= 16 {
				at, m.run = ri, rn
				m.bytes = seq[at].set.table()
			}
		}
	}
	m.around, m.pure = windowsAt(seq, at, max(m.run, 1)) // a run found is not checked again
}

// runAnchor sets up the search of a pattern by a repeat of a set, at
// least once ([0-9]+ in [a-z]+[0-9]+[a-z]+), when that set has fewer
// members than the part of fixed width at (-1 for none) and none in
// common with the parts next to it: the repeat is then the whole run of
// its bytes found, and the checks are made before its start and after
// its end.
func (m *Matcher) runAnchor(seq []part, at int) bool {
	best := -1
	for i := range seq {
		if anchorable(seq, i) && (best < 0 || seq[i].star.size() < seq[best].star.size()) {
			best = i
		}
	}
	if best < 0 || at >= 0 && seq[best].star.size() >= seq[at].set.size() {
		return false
	}
	m.runAnchorAt(seq, best)
	return true
}

// anchorable reports whether seq[i] is a repeat at least once with parts
// on both sides that share none of its bytes, so that a match's repeat is
// a whole run of its bytes.
func anchorable(seq []part, i int) bool {
	return i >= 1 && i+1 < len(seq) && seq[i].star != nil && seq[i].min > 0 &&
		apartFrom(seq[i].star, seq[i-1]) && apartFrom(seq[i].star, seq[i+1])
}

// runAnchorAt sets up the search by the repeat seq[i], anchorable.
func (m *Matcher) runAnchorAt(seq []part, i int) {
	set := seq[i].star
	m.bytes = set.table()
	if lo, w, ok := set.interval(); ok && havePair {
		m.span = &[2]byte{lo, w}
	}
	before, exact1 := windowsAt(seq[:i], i, 0)
	after, exact2 := windowsAt(seq[i+1:], 0, 0)
	m.around, m.pure = before, exact1 && exact2
	m.anchor = &anchorRun{after: after}
}

// repeatOf sets up the search of re, whose only literal is the byte c,
// by runs of c, when c is the byte of a repeat runAnchor takes.
func (m *Matcher) repeatOf(re *syntax.Regexp, c byte) bool {
	var seq []part
	flatten(re, &seq)
	var only byteSet
	only.add(c)
	for i, p := range seq {
		if p.star != nil && *p.star == only && anchorable(seq, i) {
			m.runAnchorAt(seq, i)
			return true
		}
	}
	return false
}

// apartFrom reports whether set shares no byte with p's bytes, p a part
// of fixed width or a repeat; or p is the start or the end of the line,
// which a whole run reaches when a match's does; or a word boundary, when
// set is not mixed: no place inside a run of its bytes is one.
func apartFrom(set *byteSet, p part) bool {
	switch {
	case p.star != nil:
		return set.disjoint(p.star)
	case p.set != nil:
		return set.disjoint(p.set)
	}
	return p.op == syntax.OpBeginLine || p.op == syntax.OpEndLine || p.op == syntax.OpWordBoundary && !mixed(set)
}

// anchorRun is the repeat a pattern is found by: a run of bytes of
// Matcher.bytes, Matcher.around checked before it and after after it.
type anchorRun struct {
	after []window
}

// classPrefilter sets up the search of a pattern that is one class with
// members beyond ASCII, unless it holds every character beyond ASCII
// (.), whose bytes alone find it. A character is found by its first
// byte; the regular expression reads each byte that is not UTF-8 as
// U+FFFD, so with U+FFFD in the class, every byte beyond ASCII may start
// one.
func (m *Matcher) classPrefilter(re *syntax.Regexp) bool {
	if re.Op != syntax.OpCharClass || len(re.Rune) == 0 || re.Rune[len(re.Rune)-1] < utf8.RuneSelf {
		return false
	}
	set := new(byteSet)
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
			set.add(byte(c))
		}
		if re.Rune[i] <= utf8.RuneSelf && re.Rune[i+1] == unicode.MaxRune {
			return false // every character beyond ASCII: see widePrefilter
		}
	}
	high := new(byteSet)
	if inRanges(re.Rune, utf8.RuneError) {
		for c := utf8.RuneSelf; c < 256; c++ {
			high.add(byte(c))
		}
	} else {
		for i := 0; i+1 < len(re.Rune); i += 2 {
			addLeads(high, max(re.Rune[i], utf8.RuneSelf), re.Rune[i+1])
		}
	}
	m.class = re.Rune
	first := *set // the bytes a character of the class may start with
	for i := range first {
		first[i] |= high[i]
	}
	m.bytes = first.table()
	// Without ASCII members, the first bytes are looked for by the range
	// of values they span.
	if set.size() == 0 && havePair {
		lo, hi := 255, 0
		for c := range 256 {
			if high.has(byte(c)) {
				lo, hi = min(lo, c), c
			}
		}
		m.span = &[2]byte{byte(lo), byte(hi - lo)}
	}
	return true
}

// addLeads adds to set the first bytes of the characters lo to hi, all
// beyond ASCII, in UTF-8.
func addLeads(set *byteSet, lo, hi rune) {
	for _, b := range [...]struct {
		lo, hi rune
		shift  int
		mark   byte
	}{{0x80, 0x7ff, 6, 0xc0}, {0x800, 0xffff, 12, 0xe0}, {0x10000, unicode.MaxRune, 18, 0xf0}} {
		from, to := max(lo, b.lo), min(hi, b.hi)
		for c := from >> b.shift; from <= to && c <= to>>b.shift; c++ {
			set.add(b.mark | byte(c))
		}
	}
}

// inRanges reports whether r is in one of the [lo, hi] pairs of ranges,
// sorted.
func inRanges(ranges []rune, r rune) bool {
	i, _ := slices.BinarySearch(ranges, r) // the first bound >= r
	return i < len(ranges) && (i%2 == 1 || ranges[i] == r)
}

// classAt reports whether the character at text[at], a byte of m.bytes,
// is of m.class, and returns its width.
func (m *Matcher) classAt(text []byte, at int) (bool, int) {
	if text[at] < utf8.RuneSelf {
		return true, 1
	}
	r, w := utf8.DecodeRune(text[at:])
	return inRanges(m.class, r), w
}

// findSpan returns the offset of the first byte of m.bytes at or after
// pos, or -1, looking for the range of values m.span. A byte of the range
// not of m.bytes (the first byte of a Chinese character in a search for
// Greek ones) is often followed by others: the next bytes are looked at
// one by one before the range is looked for again.
func (m *Matcher) findSpan(text []byte, pos int) int {
	lo, w := m.span[0], m.span[1]
	for pos < len(text) {
		i, found := indexRanges(text[pos:], 0, 0, lo, lo, w, w)
		if !found {
			// The kernel stops short of the last bytes.
			for j := pos + i; j < len(text); j++ {
				if m.bytes[text[j]] {
					return j
				}
			}
			return -1
		}
		end := min(pos+i+spanAhead, len(text))
		for j := pos + i; j < end; j++ {
			if m.bytes[text[j]] {
				return j
			}
		}
		pos = end
	}
	return -1
}

// spanAhead is how many bytes findSpan looks at one by one from a byte
// of its range.
const spanAhead = 64

// widePrefilter sets up the search of a pattern whose parts of fixed
// width are all characters of classes that hold every character beyond
// ASCII (., [^"]), whose bytes are then all of the class's set: a pattern
// that is one such part is found by its bytes alone (.: a line not
// empty), and n of them in a row need n bytes of the set in a row at least
// (.{81,}: a line of 81 bytes or more), which the regular expression then
// checks.
func (m *Matcher) widePrefilter(seq []part) {
	at, n := longestRun(seq, func(p part) bool { return p.wide })
	switch {
	case n == 1 && len(seq) == 1:
		m.pure = true
	case n >= 2:
		m.run = n
	default:
		return
	}
	m.bytes = seq[at].set.table()
}

// minRun is the shortest run of bytes of one set looked for by its
// length.
const minRun = 8

// longestRun returns where seq's longest run of parts of one byte set,
// each of them a part of, starts, and its length.
func longestRun(seq []part, of func(part) bool) (at, n int) {
	for i := 0; i < len(seq); {
		j := i
		for j < len(seq) && of(seq[j]) && *seq[j].set == *seq[i].set {
			j++
		}
		if j-i > n {
			at, n = i, j-i
		}
		i = max(j, i+1)
	}
	return at, n
}

// findRun returns the offset of the first run of m.run bytes of m.bytes
// at or after pos, or -1. It looks at the last byte a run from pos would
// hold, and back from it: a byte not of the set moves the search past it,
// since no run holds it. Each byte is looked at twice at most.
func (m *Matcher) findRun(text []byte, pos int) int {
	set, n := m.bytes, m.run
	for pos+n <= len(text) {
		end := pos + n - 1
		if !set[text[end]] {
			pos = end + 1
			continue
		}
		start := end
		for start > pos && set[text[start-1]] {
			start--
		}
		if start == pos {
			return pos
		}
		pos = start
	}
	return -1
}

// exactRanges sets up the search of re by a pair of ranges (see
// rangesAround) at the first part of fixed width whose checks are all of
// re, so that no regular expression runs, and reports whether there is
// one.
func (m *Matcher) exactRanges(re *syntax.Regexp) bool {
	var seq []part
	flatten(re, &seq)
	for at, p := range seq {
		if p.set == nil || p.approx {
			continue
		}
		r := rangesAround(seq, at)
		if r == nil {
			continue
		}
		if w, exact := windowsAt(seq, at, 1); exact {
			m.bytes, m.ranges, m.around, m.pure = p.set.table(), r, w, true
			return true
		}
	}
	return false
}

// rangesAround returns the pair of seq's part at, if its set is a range
// of values, with the byte next to it, if its set is a range too: a part
// of fixed width or a repeat at least once (the [a-z]+ of [a-z]+[A-Z]),
// the smaller if both are; or nil.
func rangesAround(seq []part, at int) *rangePair {
	lo, w, ok := seq[at].set.interval()
	if !havePair || !ok {
		return nil
	}
	var best *rangePair
	bestW := 256
	for _, j := range []int{at - 1, at + 1} {
		if j < 0 || j >= len(seq) || seq[j].approx {
			continue
		}
		set := seq[j].set
		if set == nil && seq[j].min > 0 {
			set = seq[j].star
		}
		if set == nil {
			continue
		}
		nlo, nw, ok := set.interval()
		if !ok || int(nw) >= bestW {
			continue
		}
		bestW = int(nw)
		if j < at {
			best = &rangePair{lead: 1, lo1: nlo, w1: nw, lo2: lo, w2: w}
		} else {
			best = &rangePair{lead: 0, lo1: lo, w1: w, lo2: nlo, w2: nw}
		}
	}
	return best
}

// findRanges returns the offset of the first byte of m.bytes at or after
// pos whose neighbour is in m.ranges too, or -1.
func (m *Matcher) findRanges(text []byte, pos int) int {
	r := m.ranges
	q := max(pos-r.lead, 0) // the pairs' first bytes
	if q+2 > len(text) {
		return -1
	}
	i, found := indexRanges(text[q:], 0, 1, r.lo1, r.lo2, r.w1, r.w2)
	if found {
		return q + i + r.lead
	}
	// The kernel stops short of the text's last bytes.
	for s := q + i; s+2 <= len(text); s++ {
		if text[s]-r.lo1 <= r.w1 && text[s+1]-r.lo2 <= r.w2 {
			return s + r.lead
		}
	}
	return -1
}

// commonRank is the rank of the commonest sixty-four bytes of source code,
// which a prefilter of one of them alone finds on most lines.
const commonRank = 192

// maxFew bounds the bytes of a set looked for one by one with IndexByte,
// faster than a table while they are few and rare: none among the commonest
// sixteen of source code (maxFewRank), where IndexByte stops too often.
const (
	maxFew     = 3
	maxFewRank = 239
)

// findFew returns the offset of the first byte of m.few at or after pos,
// or -1. next caches where each occurs next, as findAny's does.
func (m *Matcher) findFew(text []byte, pos int, next *[maxFew]int) int {
	at := -1
	for i, c := range m.few {
		if next[i] != -1 && next[i] < pos {
			next[i] = indexFrom(text, pos, c)
		}
		if n := next[i]; n >= 0 && (at < 0 || n < at) {
			at = n
		}
	}
	return at
}

// findByte returns the offset of the first byte of m.bytes at or after
// pos, or -1.
func (m *Matcher) findByte(text []byte, pos int) int {
	set := m.bytes
	for i, c := range text[pos:] {
		if set[c] {
			return pos + i
		}
	}
	return -1
}

// lineCore returns a pattern that matches in the same lines as re: at
// its ends, parts that may match nothing (x*, x?) are dropped and x+ is
// x, since a line holding a match of the rest holds one of re.
func lineCore(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture || re.Op == syntax.OpPlus {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return re
	}
	subs := re.Sub
	for len(subs) > 1 {
		if sub, ok := trimEnd(subs[0]); !ok {
			subs = subs[1:]
		} else if sub != subs[0] {
			subs = append([]*syntax.Regexp{sub}, subs[1:]...)
			break
		} else {
			break
		}
	}
	for len(subs) > 1 {
		last := len(subs) - 1
		if sub, ok := trimEnd(subs[last]); !ok {
			subs = subs[:last]
		} else if sub != subs[last] {
			subs = append(subs[:last:last], sub)
			break
		} else {
			break
		}
	}
	core := *re
	core.Sub = subs
	return &core
}

// trimEnd returns what part stands for at an end of a pattern, by
// lineCore's rule: ok is false for a part that may match nothing.
func trimEnd(part *syntax.Regexp) (*syntax.Regexp, bool) {
	switch part.Op {
	case syntax.OpStar, syntax.OpQuest, syntax.OpEmptyMatch:
		return nil, false
	case syntax.OpPlus:
		return part.Sub[0], true
	case syntax.OpCapture:
		return trimEnd(part.Sub[0])
	}
	return part, true
}

// setPrefilter sets up the search for any of several literals, one of
// which every match holds; with fold, each in any mix of cases, by its
// longest run of characters whose case variants are all ASCII. The
// pattern is pure when it matches exactly the literals themselves.
func (m *Matcher) setPrefilter(set [][]byte, fold, pure bool) {
	if fold {
		// A literal without a run has no prefilter.
		if set = minimize(foldRuns(set)); set == nil {
			return
		}
	}
	m.any = make([]finder, len(set))
	for i, lit := range set {
		m.any[i] = newFinder(lit, fold)
		m.any[i].exact = pure
	}
	m.pure = pure
}

// maxBranches bounds the branches a pattern is spelled out as.
const maxBranches = 16

// branchPrefilter sets up the search of a pattern spelled out as a few
// branches of single bytes, assertions and other parts (\b(if|for)\b is
// \bif\b or \bfor\b), each by its longest literal with the checks
// around it, if every branch has a literal of two bytes or more, and at
// least as long as the shortest of set, the literals every match holds
// one of. It reports
// whether it did. With onlyExact, it does only if every branch is found
// exactly: a single literal of the pattern does as well otherwise.
func (m *Matcher) branchPrefilter(re *syntax.Regexp, set [][]byte, onlyExact bool) bool {
	seqs, ok := branches(re)
	if !ok || len(seqs) < 2 {
		return false
	}
	var fs []finder
	for _, seq := range seqs {
		at, n := longestLiteral(seq)
		if n < 2 || (set != nil && n < minLen(set)) {
			return false // a byte alone is too common
		}
		lit := make([]byte, n)
		for j := range lit {
			lit[j], _ = seq[at+j].set.single()
		}
		f := newFinder(lit, false)
		f.around, f.exact = windowsAt(seq, at, n)
		if onlyExact && !f.exact {
			return false
		}
		fs = append(fs, f)
	}
	m.any = fs
	m.pure = true
	for _, f := range fs {
		m.pure = m.pure && f.exact
	}
	return true
}

// longestLiteral returns where seq's longest run of single bytes starts
// and its length.
func longestLiteral(seq []part) (at, n int) {
	for i := 0; i < len(seq); {
		j := i
		for j < len(seq) && seq[j].set != nil && seq[j].set.size() == 1 {
			j++
		}
		if j-i > n {
			at, n = i, j-i
		}
		i = j + 1
	}
	return at, n
}

// branches spells re out as at most maxBranches sequences of parts, one
// for each way through its alternations and optional parts.
func branches(re *syntax.Regexp) ([][]part, bool) {
	switch re.Op {
	case syntax.OpCapture:
		return branches(re.Sub[0])
	case syntax.OpEmptyMatch:
		return [][]part{nil}, true
	case syntax.OpQuest:
		b, ok := branches(re.Sub[0])
		return append(b, nil), ok && len(b) < maxBranches
	case syntax.OpAlternate:
		var all [][]part
		for _, sub := range re.Sub {
			b, ok := branches(sub)
			if !ok || len(all)+len(b) > maxBranches {
				return nil, false
			}
			all = append(all, b...)
		}
		return all, true
	case syntax.OpCharClass, syntax.OpLiteral:
		// A small class, or one case-folded character, is a branch
		// for each of its bytes, as exact spells it out.
		if ex, ok := exact(re, false); ok && len(ex) > 1 {
			var all [][]part
			for _, b := range ex {
				if len(b) != 1 {
					break
				}
				s := new(byteSet)
				s.add(b[0])
				all = append(all, []part{{set: s}})
			}
			if len(all) == len(ex) {
				return all, true
			}
		}
	case syntax.OpConcat:
		all := [][]part{nil}
		for _, sub := range re.Sub {
			b, ok := branches(sub)
			if !ok || len(all)*len(b) > maxBranches {
				return nil, false
			}
			var next [][]part
			for _, x := range all {
				for _, y := range b {
					next = append(next, append(x[:len(x):len(x)], y...))
				}
			}
			all = next
		}
		return all, true
	}
	var seq []part
	flatten(re, &seq)
	return [][]part{seq}, true
}

// newFinder returns the finder of lit, in lower case with fold.
func newFinder(lit []byte, fold bool) finder {
	cost := rankCost
	if fold {
		cost = foldCost
	}
	f := finder{lit: lit, fold: fold}
	for i := range lit {
		if cost(lit[i]) < cost(lit[f.pivot]) {
			f.pivot = i
		}
	}
	if havePair && len(lit) >= 2 {
		f.usePair = true
		f.pair = choosePair(lit, f.pivot, cost, fold)
	}
	return f
}

// find returns the offset of the first occurrence of f.lit at or after
// pos, or -1.
func (f *finder) find(text []byte, pos int) int {
	if f.usePair {
		return findPair(text, pos, &f.pair, f.lit, f.fold)
	}
	c1, c2 := f.lit[f.pivot], f.lit[f.pivot]
	if f.fold {
		c2 = byte(unicode.ToUpper(rune(c1)))
	}
	for {
		from := pos + f.pivot
		if from >= len(text) {
			return -1
		}
		i := indexFrom(text, from, c1)
		if c2 != c1 {
			if j := indexFrom(text, from, c2); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 {
			return -1
		}
		s := i - f.pivot
		if s+len(f.lit) <= len(text) && equalAt(text, s, f.lit, f.fold) {
			return s
		}
		pos = s + 1
	}
}

// findAny returns the offset of the first occurrence at or after pos of
// any literal of m.any, or -1, and which literal. next caches where each occurs next: -1
// nowhere, below pos not looked for since.
func (m *Matcher) findAny(text []byte, pos int, next []int) (at, k int) {
	at = -1
	for i := range m.any {
		if next[i] != -1 && next[i] < pos {
			next[i] = m.any[i].find(text, pos)
		}
		if n := next[i]; n >= 0 && (at < 0 || n < at) {
			at, k = n, i
		}
	}
	return at, k
}

// foldPrefilter sets up the search for a case-insensitive literal: its
// longest run of characters whose case variants are all single ASCII
// bytes (not k or s, which also fold to K and ſ), looked for by its
// rarest byte in either case.
func (m *Matcher) foldPrefilter(re *syntax.Regexp, lit []byte) {
	best := foldRun(lit)
	if len(best) == 0 {
		return
	}
	defer func() { m.around, m.pure = windowAround(re, best, true) }()
	m.fold, m.seg = true, best
	for i := range best {
		if foldCost(best[i]) < foldCost(best[m.pivot]) {
			m.pivot = i
		}
	}
	m.b1, m.b2 = best[m.pivot], byte(unicode.ToUpper(rune(best[m.pivot])))
	if havePair && len(best) >= 2 {
		m.usePair = true
		m.pair = choosePair(best, m.pivot, foldCost, true)
	}
}

// unlessClass returns set, or nil if it is several single bytes: that is a
// class, searched for with the rest of the pattern by bytesPrefilter
// (\s+$ is a blank at the end of a line, not every blank).
func unlessClass(set [][]byte) [][]byte {
	if len(set) < 2 {
		return set
	}
	for _, lit := range set {
		if len(lit) > 1 {
			return set
		}
	}
	return nil
}

// foldRuns returns the foldRun of every literal of set, or nil if one has
// none.
func foldRuns(set [][]byte) [][]byte {
	var runs [][]byte
	for _, lit := range set {
		run := foldRun(lit)
		if len(run) == 0 {
			return nil
		}
		runs = append(runs, run)
	}
	return runs
}

// foldRun returns, in lower case, lit's longest run of characters whose
// case variants are all single ASCII bytes, or nil.
func foldRun(lit []byte) []byte {
	var best, run []byte
	for _, r := range string(lit) {
		if !asciiFoldClosed(r) {
			run = nil
			continue
		}
		run = append(run, byte(unicode.ToLower(r)))
		if len(run) > len(best) {
			best = run
		}
	}
	return best
}

// rankCost is the cost of searching for byte c: its rank.
func rankCost(c byte) int { return int(byteRank[c]) }

// foldCost is the cost of searching for c, in lower case, in either case:
// the commoner case's rank counts double.
func foldCost(c byte) int {
	u := byte(unicode.ToUpper(rune(c)))
	return int(max(byteRank[c], byteRank[u]))*2 + int(min(byteRank[c], byteRank[u]))
}

// asciiFoldClosed reports whether r and all its case variants are ASCII.
func asciiFoldClosed(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// noNewline rewrites re so that nothing in it matches "\n": "." and
// character classes lose it. A literal line break is an error, since no
// line holds one.
func noNewline(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return fmt.Errorf("the pattern holds a line break (\\n), but matches are found within single lines")
			}
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		re.Rune = dropNewline(re.Rune)
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	}
	for _, sub := range re.Sub {
		if err := noNewline(sub); err != nil {
			return err
		}
	}
	return nil
}

// replacementClass rewrites each U+FFFD of a literal as a class of that
// one character. The regular expression reads a byte that is not UTF-8 as
// U+FFFD, so its three bytes are not all that may match it: a literal
// holding it is no literal of a line's bytes.
func replacementClass(re *syntax.Regexp) {
	for _, sub := range re.Sub {
		replacementClass(sub)
	}
	if re.Op != syntax.OpLiteral || !slices.Contains(re.Rune, utf8.RuneError) {
		return
	}
	var parts []*syntax.Regexp
	literal := func(rs []rune) {
		if len(rs) > 0 {
			// A copy: the runes may be in re's own array, which *re =
			// clears below.
			parts = append(parts, &syntax.Regexp{Op: syntax.OpLiteral, Flags: re.Flags, Rune: slices.Clone(rs)})
		}
	}
	start := 0
	for i, r := range re.Rune {
		if r == utf8.RuneError {
			literal(re.Rune[start:i])
			parts = append(parts, &syntax.Regexp{Op: syntax.OpCharClass, Flags: re.Flags, Rune: []rune{r, r}})
			start = i + 1
		}
	}
	literal(re.Rune[start:])
	if len(parts) == 1 {
		*re = *parts[0]
		return
	}
	*re = syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: parts}
}

// dropNewline removes '\n' from a class given as [lo, hi] pairs.
func dropNewline(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo > '\n' || hi < '\n' {
			out = append(out, lo, hi)
			continue
		}
		if lo < '\n' {
			out = append(out, lo, '\n'-1)
		}
		if hi > '\n' {
			out = append(out, '\n'+1, hi)
		}
	}
	return out
}

// maxLiterals bounds the literals of a set searched for at once, and the
// strings an alternation is spelled out as; maxExact bounds those of a
// product (a concatenation) or an optional part.
const (
	maxLiterals = 64
	maxExact    = 16
)

// requiredSet returns a set of literals every match of re holds one of,
// or nil: the set whose shortest literal is longest, then the smallest.
// Case-folded literals count only with fold set; their runes are returned
// as written.
func requiredSet(re *syntax.Regexp, fold bool) [][]byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 && !fold {
			return nil
		}
		return [][]byte{appendRunes(nil, re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSet(re.Sub[0], fold)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredSet(re.Sub[0], fold)
		}
	case syntax.OpAlternate:
		var set [][]byte
		for _, sub := range re.Sub {
			s := requiredSet(sub, fold)
			if s == nil || len(set)+len(s) > 4*maxLiterals {
				return nil // too many to search for, or to minimize
			}
			set = append(set, s...)
		}
		return minimize(set)
	case syntax.OpConcat:
		// A run of parts spelled out exactly (literals, small classes)
		// is the product of their strings: [Ff]oo is Foo or foo.
		var best, run [][]byte
		for _, sub := range re.Sub {
			ex, ok := exact(sub, fold)
			if !ok {
				run = nil
				if s := requiredSet(sub, fold); better(s, best) {
					best = s
				}
				continue
			}
			if p, ok := product(run, ex); ok && run != nil {
				run = p
			} else {
				run = ex
			}
			if s := minimize(run); better(s, best) {
				best = s
			}
		}
		return best
	}
	return nil
}

// exact returns every string re matches, if they are few: at most
// maxLiterals for an alternation, maxExact for a product or an optional
// part. Case-folded literals count only with fold set, as written.
func exact(re *syntax.Regexp, fold bool) ([][]byte, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return [][]byte{{}}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 || fold {
			return [][]byte{appendRunes(nil, re.Rune)}, true
		}
		if len(re.Rune) != 1 {
			return nil, false
		}
		// One case-folded character, as [Ff] is parsed: its variants.
		set := [][]byte{utf8.AppendRune(nil, re.Rune[0])}
		for f := unicode.SimpleFold(re.Rune[0]); f != re.Rune[0]; f = unicode.SimpleFold(f) {
			set = append(set, utf8.AppendRune(nil, f))
		}
		return set, true
	case syntax.OpCharClass:
		var set [][]byte
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(set) == 4 {
					return nil, false // too common to search for
				}
				if r == utf8.RuneError {
					return nil, false // also every byte that is not UTF-8
				}
				set = append(set, utf8.AppendRune(nil, r))
			}
		}
		return set, len(set) > 0
	case syntax.OpCapture:
		return exact(re.Sub[0], fold)
	case syntax.OpQuest:
		ex, ok := exact(re.Sub[0], fold)
		return append(ex, []byte{}), ok && len(ex) < maxExact
	case syntax.OpAlternate:
		// Branches add up rather than multiply: as many as a set may
		// hold, so that a list of words is matched by its hits alone.
		var set [][]byte
		for _, sub := range re.Sub {
			ex, ok := exact(sub, fold)
			if !ok || len(set)+len(ex) > maxLiterals {
				return nil, false
			}
			set = append(set, ex...)
		}
		return set, true
	case syntax.OpConcat:
		set := [][]byte{{}}
		for _, sub := range re.Sub {
			ex, ok := exact(sub, fold)
			if !ok {
				return nil, false
			}
			if set, ok = product(set, ex); !ok {
				return nil, false
			}
		}
		return set, true
	}
	return nil, false
}

// product returns every string of a followed by one of b, if there are
// at most maxExact.
func product(a, b [][]byte) ([][]byte, bool) {
	if len(a)*len(b) > maxExact {
		return nil, false
	}
	var p [][]byte
	for _, x := range a {
		for _, y := range b {
			p = append(p, append(x[:len(x):len(x)], y...))
		}
	}
	return p, true
}

// minimize returns set without repeats and without the literals that hold
// another (a line holding those holds the other), or nil when an empty
// literal leaves nothing to search for or more than maxLiterals are left.
func minimize(set [][]byte) [][]byte {
	if len(set) > 4*maxLiterals {
		return nil // each is compared with each
	}
	var out [][]byte
	for i, lit := range set {
		if len(lit) == 0 {
			return nil
		}
		redundant := false
		for j, other := range set {
			if j != i && bytes.Contains(lit, other) && (len(other) < len(lit) || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, lit)
		}
	}
	if len(out) > maxLiterals {
		return nil
	}
	return out
}

// better reports whether s is the better set to search for than t: a
// longer shortest literal makes for fewer false hits, each more literal
// for one more pass over the text; as good, the smaller set. nil is
// worst.
func better(s, t [][]byte) bool {
	switch {
	case s == nil:
		return false
	case t == nil:
		return true
	}
	score := func(set [][]byte) int { return 2*minLen(set) - len(set) }
	if a, b := score(s), score(t); a != b {
		return a > b
	}
	if len(s) != len(t) {
		return len(s) < len(t)
	}
	return rarity(s) < rarity(t) // (ctx, not func, in func.*\(ctx
}

// rarity is how common in source code the commonest literal of set is, by
// the ranks of its two rarest bytes, which the search looks for.
func rarity(set [][]byte) int {
	worst := 0
	for _, lit := range set {
		a, b := 256, 256 // the two lowest ranks
		for _, c := range lit {
			switch r := int(byteRank[c]); {
			case r < a:
				a, b = r, a
			case r < b:
				b = r
			}
		}
		worst = max(worst, a+min(b, 255))
	}
	return worst
}

func minLen(set [][]byte) int {
	n := len(set[0])
	for _, lit := range set[1:] {
		n = min(n, len(lit))
	}
	return n
}

// sameSet reports whether a and b hold the same literals.
func sameSet(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y []byte) bool { return bytes.Equal(x, y) }) {
			return false
		}
	}
	return true
}

func appendRunes(b []byte, rs []rune) []byte {
	for _, r := range rs {
		b = utf8.AppendRune(b, r)
	}
	return b
}

// Literal returns the literal the matcher looks for first, if any.
func (m *Matcher) Literal() string { return string(m.lit) }

// Lines calls fn for every line of text holding a match, in order, with
// the line's 1-based number and its bounds: text[start:end] is the line
// without its "\n". It stops early when fn returns false.
func (m *Matcher) Lines(text []byte, fn func(n, start, end int) bool) {
	if m.every {
		for n, start := 1, 0; start < len(text); n++ {
			end := lineEnd(text, start)
			if !fn(n, start, end) {
				return
			}
			start = end + 1
		}
		return
	}
	if m.ascii != nil || m.asciiNever {
		m.splitLines(text, fn)
		return
	}
	m.lines(text, fn)
}

// lines is Lines with m's own prefilter.
func (m *Matcher) lines(text []byte, fn func(n, start, end int) bool) {
	n, counted := 1, 0 // line n starts at offset counted
	st := foldState{-2, -2}
	few := [maxFew]int{-2, -2, -2}
	var next []int
	if m.any != nil {
		var buf [8]int
		next = buf[:0]
		for range m.any {
			next = append(next, -2)
		}
	}
	for pos := 0; pos < len(text); {
		var at int
		matched := m.pure // the line holds a match, without the regexp
		switch {
		case m.lit != nil:
			if at = m.findLiteral(text, pos); at < 0 {
				if at = m.lastLine(text, pos); at < 0 {
					return
				}
			}
			if !m.fits(text, at) {
				pos = at + 1
				continue
			}
		case m.fold:
			if at = m.findFold(text, pos, &st); at < 0 {
				return
			}
			if !m.fits(text, at) {
				pos = at + 1
				continue
			}
		case m.any != nil:
			var k int
			if at, k = m.findAny(text, pos, next); at < 0 {
				return
			}
			f := &m.any[k]
			if !fits(f.around, text, at) {
				// Only this literal moves on: another may be here too.
				next[k] = f.find(text, at+1)
				continue
			}
			matched = f.exact
		case m.bytes != nil || m.eol:
			if m.eol {
				at = len(text) // the last line's end, without a line break
				if i := bytes.IndexByte(text[pos:], '\n'); i >= 0 {
					at = pos + i
				}
			} else if m.few != nil {
				if at = m.findFew(text, pos, &few); at < 0 {
					return
				}
			} else if m.run > 0 {
				if at = m.findRun(text, pos); at < 0 {
					return
				}
			} else if m.ranges != nil {
				if at = m.findRanges(text, pos); at < 0 {
					return
				}
			} else if m.span != nil {
				if at = m.findSpan(text, pos); at < 0 {
					return
				}
			} else if at = m.findByte(text, pos); at < 0 {
				return
			}
			if m.class != nil {
				if ok, w := m.classAt(text, at); !ok {
					pos = at + w
					continue
				}
				matched = true
			} else if m.anchor != nil {
				end := at
				for end < len(text) && m.bytes[text[end]] {
					end++
				}
				if !m.fits(text, at) || !fits(m.anchor.after, text, end) {
					pos = end
					continue
				}
			} else if !m.fits(text, at) {
				pos = at + 1
				continue
			}
		default:
			loc := m.re.FindIndex(text[pos:])
			if loc == nil {
				return
			}
			at, matched = pos+loc[0], true
		}
		start := counted + bytes.LastIndexByte(text[counted:at], '\n') + 1
		if start == len(text) {
			return // the empty "line" after a final "\n" is not a line
		}
		n += bytes.Count(text[counted:start], newline)
		counted = start
		end := len(text)
		if i := bytes.IndexByte(text[at:], '\n'); i >= 0 {
			end = at + i
		}
		if (matched || m.re.Match(text[start:end])) && !fn(n, start, end) {
			return
		}
		pos = end + 1
	}
}

// splitLines is Lines for a matcher with an ASCII form. A stretch of
// lines of ASCII alone is searched by m.ascii, unless no such line holds a
// match; the lines between two stretches, each holding a byte beyond
// ASCII, with m's own prefilter. A stretch shorter than minASCII bytes is
// left to that prefilter, if m has one, rather than cost a search of its
// own: a file with a character beyond ASCII every few lines is searched
// whole with it.
func (m *Matcher) splitLines(text []byte, fn func(n, start, end int) bool) {
	gap := 1
	if m.prefiltered() {
		gap = minASCII
	}
	n := 1 // the number of the line at pos
	// search searches text[from:to], whole lines, with s, and counts
	// them; it reports whether fn asked for more.
	search := func(s *Matcher, from, to int) bool {
		more := true
		if s != nil {
			s.lines(text[from:to], func(k, start, end int) bool {
				more = fn(n+k-1, from+start, from+end)
				return more
			})
		}
		n += bytes.Count(text[from:to], newline)
		return more
	}
	// asciiEnd returns where the lines of ASCII alone from pos end: the
	// start of the line holding the first byte beyond ASCII at or after
	// pos, or len(text), and that byte's offset, or -1.
	asciiEnd := func(pos int) (stop, high int) {
		if high = indexHigh(text, pos); high < 0 {
			return len(text), -1
		}
		return pos + bytes.LastIndexByte(text[pos:high], '\n') + 1, high
	}
	for pos := 0; pos < len(text); {
		stop, high := asciiEnd(pos)
		if stop-pos >= gap || high < 0 {
			if !search(m.ascii, pos, stop) || high < 0 {
				return
			}
			pos = stop
		}
		// From pos, the lines up to the last byte beyond ASCII that is
		// followed by another in fewer than gap bytes.
		last := high
		for {
			from := last + 1
			l := lastHigh(text[from:min(from+gap, len(text))])
			if l < 0 {
				break
			}
			last = from + l
		}
		end := lineEnd(text, last)
		if end < len(text) {
			end++ // the line break, counted
		}
		if !search(m, pos, end) {
			return
		}
		pos = end
	}
}

// minASCII is the fewest bytes of lines of ASCII alone that splitLines
// searches with the ASCII form of a pattern that has a prefilter of its
// own. (A variable for the tests.)
var minASCII = 4 << 10

// lastHigh returns the offset of the last byte beyond ASCII in b, or -1.
func lastHigh(b []byte) int {
	i := len(b)
	for ; i >= 8; i -= 8 {
		if w := binary.LittleEndian.Uint64(b[i-8:]) & 0x8080808080808080; w != 0 {
			return i - 8 + (63-bits.LeadingZeros64(w))/8
		}
	}
	for i--; i >= 0; i-- {
		if b[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

// lineEnd returns the offset of the line break that ends the line holding
// offset i, or len(text).
func lineEnd(text []byte, i int) int {
	if j := bytes.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// indexHigh returns the offset of the first byte beyond ASCII at or after
// pos, or -1.
func indexHigh(text []byte, pos int) int {
	if havePair {
		i, found := indexRanges(text[pos:], 0, 0, utf8.RuneSelf, utf8.RuneSelf, 0x7f, 0x7f)
		if found {
			return pos + i
		}
		pos += i
	}
	return indexHighWords(text, pos)
}

// indexHighWords is indexHigh eight bytes at a time.
func indexHighWords(text []byte, pos int) int {
	for ; pos+8 <= len(text); pos += 8 {
		if w := binary.LittleEndian.Uint64(text[pos:]) & 0x8080808080808080; w != 0 {
			return pos + bits.TrailingZeros64(w)/8
		}
	}
	for ; pos < len(text); pos++ {
		if text[pos] >= utf8.RuneSelf {
			return pos
		}
	}
	return -1
}

// lastLine returns, with eolLit, where m.lit but its line break ends the
// text, at or after pos, on a last line without a line break; or -1. (A
// text ending in a line break does not end so: m.lit holds no other.)
func (m *Matcher) lastLine(text []byte, pos int) int {
	at := len(text) - (len(m.lit) - 1)
	if !m.eolLit || at < pos || !bytes.Equal(text[at:], m.lit[:len(m.lit)-1]) {
		return -1
	}
	return at
}

// findLiteral returns the offset of the first occurrence of m.lit at or
// after pos, or -1. It looks for the literal's rarest byte and checks the
// rest around it.
func (m *Matcher) findLiteral(text []byte, pos int) int {
	if m.usePair {
		return findPair(text, pos, &m.pair, m.lit, false)
	}
	for {
		from := pos + m.pivot
		if from >= len(text) {
			return -1
		}
		i := bytes.IndexByte(text[from:], m.lit[m.pivot])
		if i < 0 {
			return -1
		}
		s := from + i - m.pivot
		if s+len(m.lit) <= len(text) && bytes.Equal(text[s:s+len(m.lit)], m.lit) {
			return s
		}
		pos = s + 1
	}
}

// findPair returns the offset of the first occurrence of lit at or after
// pos, or -1, in any mix of cases with fold (lit then in lower case). The
// kernel finds where both bytes of p are; only there is lit compared.
func findPair(text []byte, pos int, p *pair, lit []byte, fold bool) int {
	for pos+len(lit) <= len(text) {
		i, found := indexPair(text[pos:], p.off1, p.off2, p.want1, p.want2, p.mask1, p.mask2)
		s := pos + i
		if !found {
			// The kernel stops short of the text's last bytes.
			for ; s+len(lit) <= len(text); s++ {
				if text[s+p.off1]|p.mask1 == p.want1 && text[s+p.off2]|p.mask2 == p.want2 && equalAt(text, s, lit, fold) {
					return s
				}
			}
			return -1
		}
		if s+len(lit) <= len(text) && equalAt(text, s, lit, fold) {
			return s
		}
		pos = s + 1
	}
	return -1
}

// equalAt reports whether text holds lit at s, which it fits, in any mix
// of cases with fold.
func equalAt(text []byte, s int, lit []byte, fold bool) bool {
	if fold {
		return equalFoldASCII(text[s:s+len(lit)], lit)
	}
	return bytes.Equal(text[s:s+len(lit)], lit)
}

// foldState caches where b1 and b2 occur next during one search: -2 not
// looked for yet, -1 nowhere.
type foldState struct{ next1, next2 int }

// findFold returns the offset of the first occurrence of m.seg, in any
// mix of cases, at or after pos, or -1.
func (m *Matcher) findFold(text []byte, pos int, st *foldState) int {
	if m.usePair {
		return findPair(text, pos, &m.pair, m.seg, true)
	}
	for {
		from := pos + m.pivot
		if from >= len(text) {
			return -1
		}
		if st.next1 != -1 && st.next1 < from {
			st.next1 = indexFrom(text, from, m.b1)
		}
		i := st.next1
		if m.b2 != m.b1 {
			if st.next2 != -1 && st.next2 < from {
				st.next2 = indexFrom(text, from, m.b2)
			}
			if i < 0 || (st.next2 >= 0 && st.next2 < i) {
				i = st.next2
			}
		}
		if i < 0 {
			return -1
		}
		s := i - m.pivot
		if s+len(m.seg) <= len(text) && equalFoldASCII(text[s:s+len(m.seg)], m.seg) {
			return s
		}
		pos = s + 1
	}
}

// equalFoldASCII reports whether b equals lower, a lower-case ASCII
// string, when ASCII upper-case letters in b are taken as lower case.
func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// indexFrom returns the offset of the first c at or after pos, or -1.
func indexFrom(text []byte, pos int, c byte) int {
	if i := bytes.IndexByte(text[pos:], c); i >= 0 {
		return pos + i
	}
	return -1
}

var newline = []byte{'\n'}

// byteSet is a set of byte values.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// disjoint reports whether s and t have no member in common.
func (s *byteSet) disjoint(t *byteSet) bool {
	return s[0]&t[0] == 0 && s[1]&t[1] == 0 && s[2]&t[2] == 0 && s[3]&t[3] == 0
}

// interval returns the set as the range of values [lo, lo+w], if its
// members are one.
func (s *byteSet) interval() (lo, w byte, ok bool) {
	n, first, last := 0, -1, -1
	for c := range 256 {
		if s.has(byte(c)) {
			n++
			if first < 0 {
				first = c
			}
			last = c
		}
	}
	return byte(first), byte(last - first), n > 0 && n == last-first+1
}

// within reports whether every member of s is one of t.
func (s *byteSet) within(t *byteSet) bool {
	for i := range s {
		if s[i]&^t[i] != 0 {
			return false
		}
	}
	return true
}

// table returns the members of s as a table indexed by byte.
func (s *byteSet) table() *[256]bool {
	t := new([256]bool)
	for c := range t {
		t[c] = s.has(byte(c))
	}
	return t
}

// size returns the number of members.
func (s *byteSet) size() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// single returns the set's one member, if it has exactly one.
func (s *byteSet) single() (byte, bool) {
	n, b := 0, byte(0)
	for c := range 256 {
		if s.has(byte(c)) {
			n++
			b = byte(c)
		}
	}
	return b, n == 1
}

// window is one check of a match at a fixed offset from its literal: its
// byte there is one of set or, with op set, the assertion op holds before
// that byte (a word boundary or not, the start or the end of the line).
//
// With runs set, the check is of runs of bytes, one of each run's set
// after another (at least min of each), reaching from off to the edge of
// the line op names: leftward to its start for OpBeginLine, rightward to
// its end for OpEndLine (^\s* before a literal, \s*$ after it); or, with
// then set, to a byte of then ([a-z]*\( after a literal, \s*\w+\( after
// :=). No two of the runs' sets and then share a byte, so each run ends
// exactly where the next begins. Past the byte of then, the bytes of
// beyond follow, one of each set (the \w before the dot of \w\.\w+\(\)).
// With need set instead, the runs go in op's direction to no edge: the
// last is where a byte of need, one of its own set, stands, with at least
// its min of the run's bytes after it ([a-z_][a-z0-9_]*\(: back from the
// parenthesis, a run of letters, digits and underscores holding a letter
// or an underscore). With bound, the runs reach a word boundary instead
// of an edge (\b[a-z]+ before a literal); with head too, the last run's
// far byte, one of head, is one of its own set, past its min of the
// run's bytes (\b[A-Z]\w+\.: back from the dot, a word of two bytes or
// more whose first is a capital).
type window struct {
	off    int // from the literal's first byte
	set    byteSet
	op     syntax.Op
	runs   []run
	then   *byteSet
	beyond []*byteSet
	need   *byteSet
	bound  bool
	head   *byteSet
	gap    *gap
}

// gap is a check of a repeat of a set, then a literal, in the direction
// of its window's op: the literal stands further on in the line, with at
// least min bytes between, all of set (func.*\(ctx: func before the
// parenthesis, anywhere in the line).
type gap struct {
	set  *byteSet
	full bool // set holds every byte but a line break: the bytes between need no look
	min  int
	lit  []byte
}

// run is a repeat of the bytes of set, at least min of them.
type run struct {
	set *byteSet
	min int
}

// maxWindow bounds the bytes checked on each side of a literal.
const maxWindow = 16

// part is one part of a pattern read as a sequence of single bytes: a byte
// of set, a zero-width assertion op, or, with neither, a part of no fixed
// single-byte width.
//
// A part of no fixed width that is a repeat of one byte of a set (\s*,
// [a-z]+) has that set as star, and min the fewest repeats, 0 or 1.
//
// A character that may take several bytes (é, or k, which folds to the
// Kelvin sign) is a part with approx set: set holds its one-byte forms
// and every byte beyond ASCII, so it stands for the byte next to its
// neighbour on either side, but not for a place further on.
//
// A class that holds every character beyond ASCII ([^"], .) is wide: its
// characters are then the bytes of its approx set, one or more, so a
// repeat of it is a run of those bytes ("[^"]*" is a quote, bytes other
// than a quote, a quote).
type part struct {
	set    *byteSet
	op     syntax.Op
	star   *byteSet
	min    int
	approx bool
	wide   bool
}

// windowAround returns the checks around lit that every match of re
// passes: re read as a sequence of single bytes (literal bytes, ASCII
// classes, case-folded ASCII letters), assertions and parts of no fixed
// width, the bytes of fixed width and the assertions next to the first
// place where the sequence spells lit. Every match has lit there, so a hit
// of lit that fails a check is not that place of any match: the search
// moves on to the next hit, which may be. When the checks cover the whole
// pattern, a hit that passes them is a match: exact is true. With fold,
// lit is a run of a case-insensitive literal in lower case, its letters
// spelled in either case. Like the other prefilters, it takes the line
// core of the pattern, as Compile passes it.
func windowAround(re *syntax.Regexp, lit []byte, fold bool) (w []window, exact bool) {
	var seq []part
	flatten(re, &seq)
	spells := func(p part, c byte) bool {
		var want byteSet
		want.add(c)
		if fold {
			want.add(byte(unicode.ToUpper(rune(c))))
		}
		return p.set != nil && *p.set == want
	}
	for at := 0; at+len(lit) <= len(seq); at++ {
		k := 0
		for k < len(lit) && spells(seq[at+k], lit[k]) {
			k++
		}
		if k == len(lit) {
			return windowsAt(seq, at, len(lit))
		}
	}
	return nil, false
}

// windowsAt returns the checks of the parts of seq around its parts at to
// at+n, and whether they are all of seq.
func windowsAt(seq []part, at, width int) (w []window, exact bool) {
	exact = true
	off, n := 0, 0
	for i := at - 1; i >= 0; i-- {
		p := seq[i]
		switch {
		case p.op != 0:
			w = append(w, window{off: off, op: p.op})
			continue
		case p.star != nil:
			rw, ok, last := runWindow(seq, i, -1, off)
			if ok {
				w = append(w, rw)
			}
			exact = exact && last
		case p.approx && n < maxWindow:
			w = append(w, window{off: off - 1, set: *p.set})
			// A character of a wide class ends in a byte of its set;
			// only the parts past it are out of reach.
			exact = exact && p.wide && i == 0
		case p.set != nil && n < maxWindow:
			off--
			n++
			w = append(w, window{off: off, set: *p.set})
			continue
		default:
			exact = false
		}
		break
	}
	off, n = width, 0
	for i := at + width; i < len(seq); i++ {
		p := seq[i]
		switch {
		case p.op != 0:
			w = append(w, window{off: off, op: p.op})
			continue
		case p.star != nil:
			rw, ok, last := runWindow(seq, i, +1, off)
			if ok {
				w = append(w, rw)
			}
			exact = exact && last
		case p.approx && n < maxWindow:
			w = append(w, window{off: off, set: *p.set})
			exact = exact && p.wide && i == len(seq)-1 // it starts with a byte of its set
		case p.set != nil && n < maxWindow:
			w = append(w, window{off: off, set: *p.set})
			off++
			n++
			continue
		default:
			exact = false
		}
		break
	}
	return w, exact
}

// runWindow returns the check, at off, of the runs of seq from its part i
// on in the direction step (+1 rightward, -1 leftward) to the edge of the
// line or to a byte none of them holds, if they reach either; and whether
// that edge or byte is the last part of seq on that side, so that nothing
// is left unchecked there.
func runWindow(seq []part, i, step, off int) (w window, ok, last bool) {
	runs, k := chain(seq, i, step)
	edge, end := syntax.OpEndLine, len(seq)-1
	if step < 0 {
		edge, end = syntax.OpBeginLine, 0
	}
	switch {
	case k < 0 || k >= len(seq):
	case seq[k].op == edge:
		return window{off: off, op: edge, runs: runs}, true, k == end
	case seq[k].op == syntax.OpWordBoundary && !slices.ContainsFunc(runs, func(r run) bool { return mixed(r.set) }):
		// No place inside a run of word bytes alone, or of other bytes
		// alone, is a word boundary: the runs' far end is the only one to
		// look at.
		return window{off: off, op: edge, runs: runs, bound: true}, true, k == end
	case len(runs) == 1 && !mixed(runs[0].set) && seq[k].set != nil && !seq[k].approx && seq[k].set.within(runs[0].set) &&
		k+step >= 0 && k+step < len(seq) && seq[k+step].op == syntax.OpWordBoundary:
		// A part within the run before a word boundary must be its
		// far byte: nowhere else inside the run is a boundary.
		return window{off: off, op: edge, runs: runs, bound: true, head: seq[k].set}, true, k+step == end
	case k == end && len(runs) > 0 && seq[k].set != nil && !seq[k].approx && seq[k].set.within(runs[len(runs)-1].set):
		return window{off: off, op: edge, runs: runs, need: seq[k].set}, true, true
	case len(runs) == 1 && seq[k].set != nil && !seq[k].approx && seq[k].set.size() == 1 && !apart(seq[k].set, runs):
		// A repeat the literal after it may stand in (.*\(ctx): the
		// literal is looked for, the bytes between checked.
		g := &gap{set: runs[0].set, min: runs[0].min, full: runs[0].set.size() == 255 && !runs[0].set.has('\n')}
		j := k
		for ; j >= 0 && j < len(seq) && seq[j].set != nil && !seq[j].approx && seq[j].set.size() == 1; j += step {
			c, _ := seq[j].set.single()
			g.lit = append(g.lit, c)
		}
		if step < 0 {
			slices.Reverse(g.lit)
		}
		return window{off: off, op: edge, gap: g}, true, j < 0 || j >= len(seq)
	case seq[k].set != nil && apart(seq[k].set, runs):
		w := window{off: off, op: edge, runs: runs, then: seq[k].set}
		if seq[k].approx {
			return w, true, false // of a width not known
		}
		j := k + step
		for ; j >= 0 && j < len(seq) && seq[j].set != nil && !seq[j].approx && len(w.beyond) < maxWindow; j += step {
			w.beyond = append(w.beyond, seq[j].set)
		}
		return w, true, j < 0 || j >= len(seq)
	}
	return window{}, false, false
}

// chain returns the runs of seq from its part i on, in the direction step
// (+1 rightward, -1 leftward), as long as each is a repeat of a set that
// shares no byte with those before it, and the index of the part after.
func chain(seq []part, i, step int) ([]run, int) {
	var runs []run
	for ; i >= 0 && i < len(seq) && seq[i].star != nil && apart(seq[i].star, runs); i += step {
		runs = append(runs, run{seq[i].star, seq[i].min})
	}
	return runs, i
}

// mixed reports whether set holds both word bytes (\w) and others.
func mixed(set *byteSet) bool {
	word, other := false, false
	for c := range 256 {
		if set.has(byte(c)) {
			if isWordByte(byte(c)) {
				word = true
			} else {
				other = true
			}
		}
	}
	return word && other
}

// apart reports whether set shares no byte with the sets of runs.
func apart(set *byteSet, runs []run) bool {
	for _, r := range runs {
		if !set.disjoint(r.set) {
			return false
		}
	}
	return true
}

// flatten appends re as a sequence of parts to seq.
func flatten(re *syntax.Regexp, seq *[]part) {
	switch re.Op {
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			flatten(sub, seq)
		}
	case syntax.OpCapture:
		flatten(re.Sub[0], seq)
	case syntax.OpEmptyMatch:
	case syntax.OpBeginLine, syntax.OpBeginText:
		// The regular expression runs on single lines: the start of
		// the text is the start of the line.
		*seq = append(*seq, part{op: syntax.OpBeginLine})
	case syntax.OpEndLine, syntax.OpEndText:
		*seq = append(*seq, part{op: syntax.OpEndLine})
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		*seq = append(*seq, part{op: re.Op})
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				if !asciiFoldClosed(r) {
					*seq = append(*seq, approxPart(r))
					continue
				}
				s := new(byteSet)
				s.add(byte(r))
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					s.add(byte(f))
				}
				*seq = append(*seq, part{set: s})
				continue
			}
			for _, c := range utf8.AppendRune(nil, r) {
				s := new(byteSet)
				s.add(c)
				*seq = append(*seq, part{set: s})
			}
		}
	case syntax.OpCharClass:
		if set := classBytes(re); set != nil {
			*seq = append(*seq, part{set: set})
			break
		}
		set := new(byteSet)
		wide := false
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
				set.add(byte(c))
			}
			wide = wide || re.Rune[i] <= utf8.RuneSelf && re.Rune[i+1] == unicode.MaxRune
		}
		p := approxPart(-1, set)
		p.wide = wide
		*seq = append(*seq, p)
	case syntax.OpAnyCharNotNL:
		set := new(byteSet)
		for c := range utf8.RuneSelf {
			if c != '\n' {
				set.add(byte(c))
			}
		}
		p := approxPart(-1, set)
		p.wide = true
		*seq = append(*seq, p)
	case syntax.OpStar, syntax.OpPlus:
		var one []part
		flatten(re.Sub[0], &one)
		if len(one) != 1 || one[0].set == nil || one[0].approx && !one[0].wide {
			*seq = append(*seq, part{})
			return
		}
		min := 0
		if re.Op == syntax.OpPlus {
			min = 1
		}
		*seq = append(*seq, part{star: one[0].set, min: min})
	default:
		*seq = append(*seq, part{})
	}
}

// approxPart returns the part of a character that may take several bytes:
// the case variants of r that are ASCII, if r is not -1, the bytes of
// ascii, if given, and every byte beyond ASCII.
func approxPart(r rune, ascii ...*byteSet) part {
	s := new(byteSet)
	if len(ascii) > 0 {
		*s = *ascii[0]
	}
	if r >= 0 {
		for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf {
				s.add(byte(f))
			}
			if f == r {
				break
			}
		}
	}
	s[2], s[3] = ^uint64(0), ^uint64(0)
	return part{set: s, approx: true}
}

// classBytes returns the bytes of an ASCII class, or nil for a class that
// may match a character of several bytes.
func classBytes(re *syntax.Regexp) *byteSet {
	s := new(byteSet)
	for i := 0; i+1 < len(re.Rune); i += 2 {
		if re.Rune[i+1] >= utf8.RuneSelf {
			return nil
		}
		for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
			s.add(byte(c))
		}
	}
	return s
}

// spanToEdge reports whether the bytes from j leftward (left) or
// rightward make up w's runs, one after another, each of its set's bytes
// and at least its min long, then reach the start (left) or the end of
// the line; or, with then, a byte of then; with bound, a word boundary.
// Since no set holds a line break, and no two of the
// sets and then share a byte, each run of a set's bytes from where the one
// before ended must end exactly there.
func spanToEdge(text []byte, j int, w *window, left bool) bool {
	if j < 0 || j > len(text) {
		return false
	}
	runs, then, beyond, need := w.runs, w.then, w.beyond, w.need
	k := j
	for i, r := range runs {
		from := k
		if left {
			for k > 0 && r.set.has(text[k-1]) {
				k--
			}
			if w.head != nil && (from-k < r.min+1 || !w.head.has(text[k])) {
				return false
			}
			if need != nil && i == len(runs)-1 {
				return slices.ContainsFunc(text[k:max(k, from-r.min)], need.has)
			}
			if from-k < r.min {
				return false
			}
			continue
		}
		for k < len(text) && r.set.has(text[k]) {
			k++
		}
		if w.head != nil && (k-from < r.min+1 || !w.head.has(text[k-1])) {
			return false
		}
		if need != nil && i == len(runs)-1 {
			return slices.ContainsFunc(text[min(from+r.min, k):k], need.has)
		}
		if k-from < r.min {
			return false
		}
	}
	switch {
	case w.bound:
		return (k > 0 && isWordByte(text[k-1])) != (k < len(text) && isWordByte(text[k]))
	case left && then != nil:
		return k > 0 && then.has(text[k-1]) && follow(text, k-1, beyond, -1)
	case left:
		return k == 0 || text[k-1] == '\n'
	case then != nil:
		return k < len(text) && then.has(text[k]) && follow(text, k, beyond, +1)
	}
	return k == len(text) || text[k] == '\n'
}

// fits reports whether g's literal stands in the line of text leftward
// (left) or rightward from j, the bytes between of g's set and min of
// them at least. The nearest place of the literal that leaves min bytes is
// the one to check: the bytes between are fewest there.
func (g *gap) fits(text []byte, j int, left bool) bool {
	if j < 0 || j > len(text) {
		return false
	}
	var between []byte
	if left {
		start := bytes.LastIndexByte(text[:j], '\n') + 1
		if j-g.min < start {
			return false
		}
		q := bytes.LastIndex(text[start:j-g.min], g.lit)
		if q < 0 {
			return false
		}
		between = text[start+q+len(g.lit) : j]
	} else {
		end := lineEnd(text, j)
		if j+g.min > end {
			return false
		}
		q := bytes.Index(text[j+g.min:end], g.lit)
		if q < 0 {
			return false
		}
		between = text[j : j+g.min+q]
	}
	return g.full || !slices.ContainsFunc(between, func(c byte) bool { return !g.set.has(c) })
}

// follow reports whether the bytes from p on in the direction step (+1
// rightward, -1 leftward), p left out, are one of each of sets.
func follow(text []byte, p int, sets []*byteSet, step int) bool {
	for _, set := range sets {
		if p += step; p < 0 || p >= len(text) || !set.has(text[p]) {
			return false
		}
	}
	return true
}

// isWordByte reports whether c is an ASCII word character, as \b takes
// them; every byte of a character beyond ASCII is not.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// fits reports whether the text around a hit of m.lit at s passes
// m.around. Outside the text, and at a line break, is no word character
// and the edge of a line.
func (m *Matcher) fits(text []byte, s int) bool { return fits(m.around, text, s) }

// fits reports whether the text around a hit at s passes the checks of
// around.
func fits(around []window, text []byte, s int) bool {
	for i := range around {
		w := &around[i]
		j := s + w.off
		var ok bool
		switch {
		case w.gap != nil:
			ok = w.gap.fits(text, j, w.op == syntax.OpBeginLine)
		case w.runs != nil:
			ok = spanToEdge(text, j, w, w.op == syntax.OpBeginLine)
		case w.op == 0:
			ok = j >= 0 && j < len(text) && w.set.has(text[j])
		case w.op == syntax.OpBeginLine:
			ok = j == 0 || 0 < j && j <= len(text) && text[j-1] == '\n'
		case w.op == syntax.OpEndLine:
			ok = j == len(text) || 0 <= j && j < len(text) && text[j] == '\n'
		default:
			before := 0 < j && j <= len(text) && isWordByte(text[j-1])
			after := 0 <= j && j < len(text) && isWordByte(text[j])
			ok = (before != after) == (w.op == syntax.OpWordBoundary)
		}
		if !ok {
			return false
		}
	}
	return true
}
