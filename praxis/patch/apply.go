package patch

import (
	"fmt"
	"strings"
)

// HunkError reports a hunk that does not apply.
type HunkError struct {
	Hunk   int    // 1-based index of the hunk in its file
	Header string // the hunk's header
	Msg    string
	// Near and Len are the 0-based first line and the number of lines of
	// the region of the text closest to the hunk's old lines (Len 0 when
	// the text is empty).
	Near, Len int
}

func (e *HunkError) Error() string {
	return fmt.Sprintf("hunk %d (%s): %s", e.Hunk, e.Header, e.Msg)
}

// Apply applies hunks to src, in order, and returns the new text.
//
// A hunk's old lines (context and removed) are looked for exactly at the
// line it states, then at the nearest offset from there (no earlier than
// the end of the previous hunk); only when no exact match exists, the same
// search runs again comparing lines without their trailing whitespace.
// Every context line must match: no line of a hunk is ever dropped to make
// it fit. As git apply does, a hunk stating line 1 or 0 must match at the
// start of the text and a unified hunk without trailing context at its end.
// An envelope hunk (not Numbered) is looked for from the end of the
// previous one, after its Context line if it has one, and must be found at
// one place only.
//
// Lines copied from src keep their bytes; added lines take the patch's,
// changed to CRLF when a hunk matched a CRLF text only by ignoring the
// line ends. A hunk that does not apply is a *HunkError.
func Apply(src []byte, hunks []Hunk) ([]byte, error) {
	lines := SplitLines(string(src))
	var out strings.Builder
	out.Grow(len(src))
	next := 0   // first line of src not yet copied
	offset := 0 // where the previous hunk landed minus where it said
	for hi, h := range hunks {
		old := make([]string, 0, len(h.Lines))
		for _, l := range h.Lines {
			if l.Op != '+' {
				old = append(old, l.Text)
			}
		}
		fail := func(msg string) error {
			near, n := closest(lines, old, next)
			return &HunkError{Hunk: hi + 1, Header: h.Header, Msg: msg, Near: near, Len: n}
		}
		at, loose := -1, false
		if !h.Numbered {
			from := next
			if h.Context != "" {
				c := findContext(lines, h.Context, next)
				if c < 0 {
					return nil, fail(fmt.Sprintf("the context line %q is not in the file", h.Context))
				}
				from = c + 1
			}
			var second int
			at, second, loose = findForward(lines, old, from, h.AtEnd)
			if second >= 0 {
				return nil, &HunkError{Hunk: hi + 1, Header: h.Header, Near: at, Len: len(old),
					Msg: fmt.Sprintf("its lines are at line %d and again at line %d: add context lines, or an @@ line before it, to tell them apart", at+1, second+1)}
			}
		} else {
			want := h.OldStart - 1 + offset
			if len(old) == 0 {
				want = h.OldStart + offset
			}
			_, trailing := contextRuns(h.Lines)
			atStart := h.OldStart <= 1
			atEnd := trailing == 0 && len(old) > 0
			at, loose = findNear(lines, old, want, next, atStart, atEnd)
		}
		if at < 0 {
			return nil, fail("its context and removed lines are not in the file")
		}
		if h.Numbered {
			want := h.OldStart - 1
			if len(old) == 0 {
				want = h.OldStart
			}
			offset = at - want
		}
		crlf := loose && at < len(lines) && strings.HasSuffix(lines[at], "\r\n")
		for _, l := range lines[next:at] {
			out.WriteString(l)
		}
		i := at
		for _, l := range h.Lines {
			switch l.Op {
			case '+':
				t := l.Text
				if crlf && strings.HasSuffix(t, "\n") && !strings.HasSuffix(t, "\r\n") {
					t = t[:len(t)-1] + "\r\n"
				}
				out.WriteString(t)
			case ' ':
				out.WriteString(lines[i])
				i++
			default:
				i++
			}
		}
		next = i
	}
	for _, l := range lines[next:] {
		out.WriteString(l)
	}
	return []byte(out.String()), nil
}

// SplitLines splits text into lines that keep their terminators; the
// last has none when text does not end with a newline.
func SplitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// contextRuns counts the context lines before the first and after the last
// change of a hunk.
func contextRuns(ls []Line) (leading, trailing int) {
	for _, l := range ls {
		if l.Op != ' ' {
			break
		}
		leading++
	}
	if leading == len(ls) {
		return leading, 0
	}
	for i := len(ls) - 1; i >= 0 && ls[i].Op == ' '; i-- {
		trailing++
	}
	return leading, trailing
}

// findNear looks for old in lines at want, then at growing distances from
// it, never before min: exactly first, then ignoring trailing whitespace.
func findNear(lines, old []string, want, min int, atStart, atEnd bool) (int, bool) {
	for _, loose := range []bool{false, true} {
		if atStart {
			if min == 0 && matchAt(lines, old, 0, loose) && (!atEnd || len(old) == len(lines)) {
				return 0, loose
			}
			continue
		}
		if atEnd {
			at := len(lines) - len(old)
			if at >= min && matchAt(lines, old, at, loose) {
				return at, loose
			}
			continue
		}
		last := len(lines) - len(old)
		for d := 0; want-d >= min || want+d <= last; d++ {
			if p := want - d; p >= min && p <= last && matchAt(lines, old, p, loose) {
				return p, loose
			}
			if p := want + d; d > 0 && p >= min && p <= last && matchAt(lines, old, p, loose) {
				return p, loose
			}
		}
	}
	return -1, false
}

// findForward looks for old in lines from min on; exactly first, then
// ignoring trailing whitespace. With atEnd the match must end the text.
// Without old lines, the hunk goes at the end of the text. A hunk whose
// lines are at two places is ambiguous: it returns the two, second >= 0.
func findForward(lines, old []string, min int, atEnd bool) (at, second int, loose bool) {
	if len(old) == 0 {
		return len(lines), -1, false
	}
	for _, loose := range []bool{false, true} {
		if atEnd {
			if at := len(lines) - len(old); at >= min && matchAt(lines, old, at, loose) {
				return at, -1, loose
			}
			continue
		}
		at := -1
		for p := min; p+len(old) <= len(lines); p++ {
			if matchAt(lines, old, p, loose) {
				if at >= 0 {
					return at, p, loose
				}
				at = p
			}
		}
		if at >= 0 {
			return at, -1, loose
		}
	}
	return -1, -1, false
}

// findContext returns the first line at or after min equal to ctx, ignoring
// surrounding whitespace, or -1.
func findContext(lines []string, ctx string, min int) int {
	for i := min; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == ctx {
			return i
		}
	}
	return -1
}

func matchAt(lines, old []string, at int, loose bool) bool {
	if at < 0 || at+len(old) > len(lines) {
		return false
	}
	for i, o := range old {
		l := lines[at+i]
		if loose {
			if !looseEqual(l, o) {
				return false
			}
		} else if l != o {
			return false
		}
	}
	return true
}

// looseEqual compares two lines ignoring trailing whitespace (CR
// included), but not whether they end with a newline.
func looseEqual(a, b string) bool {
	na, nb := strings.HasSuffix(a, "\n"), strings.HasSuffix(b, "\n")
	return na == nb && strings.TrimRight(a, " \t\r\n") == strings.TrimRight(b, " \t\r\n")
}

// closest returns the region of lines sharing the most lines
// (ignoring trailing whitespace) with old at the same positions.
func closest(lines, old []string, from int) (at, n int) {
	if len(lines) == 0 {
		return 0, 0
	}
	n = min(max(len(old), 1), len(lines))
	best, bestScore := min(from, len(lines)-n), -1
	const budget = 4 << 20 // line comparisons before settling for the best so far
	work := 0
	for p := 0; p+n <= len(lines) && work < budget; p++ {
		score := 0
		for i := 0; i < n && i < len(old); i++ {
			if looseEqual(lines[p+i], old[i]) {
				score++
			}
		}
		work += n
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	return best, n
}
