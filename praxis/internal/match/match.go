// Package match finds the lines of a text that hold a match of a regular
// expression, as a line-oriented grep does. It is pure: no I/O.
//
// A line is the bytes between two "\n" (a "\r" before the "\n" belongs to
// the line, as in ripgrep). Patterns use Go's RE2 syntax; "^" and "$" match
// at the start and end of every line, and no part of a pattern matches a
// line break. Every pattern is searched for the longest literal string all
// its matches contain, which is found with a fast substring search before
// the regular expression looks at the one line around it.
package match

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Matcher finds matching lines. It is safe for concurrent use.
type Matcher struct {
	re   *regexp.Regexp
	lit  []byte // a literal every match holds; nil if there is none
	pure bool   // the pattern is lit itself: every line holding lit matches
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
	re = re.Simplify()
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("compiling %q: %w", pattern, err)
	}
	m := &Matcher{re: compiled}
	if lit := required(re); len(lit) > 0 {
		m.lit = lit
		m.pure = re.Op == syntax.OpLiteral
	}
	return m, nil
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

// required returns the longest literal that every match of re holds, or
// nil. Case-folded literals do not count.
func required(re *syntax.Regexp) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return appendRunes(nil, re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best, run []byte
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run = appendRunes(run, sub.Rune)
				if len(run) > len(best) {
					best = run
				}
				continue
			}
			run = nil
			if lit := required(sub); len(lit) > len(best) {
				best = lit
			}
		}
		return best
	}
	return nil
}

func appendRunes(b []byte, rs []rune) []byte {
	for _, r := range rs {
		b = utf8.AppendRune(b, r)
	}
	return b
}

// Literal returns the literal the matcher looks for first, if any.
func (m *Matcher) Literal() string { return string(m.lit) }

// Match reports whether line, a single line without its "\n", matches.
func (m *Matcher) Match(line []byte) bool {
	if m.pure {
		return bytes.Contains(line, m.lit)
	}
	return m.re.Match(line)
}

// Lines calls fn for every line of text holding a match, in order, with
// the line's 1-based number and its bounds: text[start:end] is the line
// without its "\n". It stops early when fn returns false.
func (m *Matcher) Lines(text []byte, fn func(n, start, end int) bool) {
	n, counted := 1, 0 // line n starts at offset counted
	for pos := 0; pos < len(text); {
		var at int
		if m.lit != nil {
			i := bytes.Index(text[pos:], m.lit)
			if i < 0 {
				return
			}
			at = pos + i
		} else {
			loc := m.re.FindIndex(text[pos:])
			if loc == nil {
				return
			}
			at = pos + loc[0]
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
		if m.lit == nil || m.pure || m.re.Match(text[start:end]) {
			if !fn(n, start, end) {
				return
			}
		}
		pos = end + 1
	}
}

var newline = []byte{'\n'}
