package hashline

import (
	"fmt"
	"sort"
	"strings"
)

// Edit replaces lines From..To (inclusive, 1-based) of a Doc with Lines.
// An empty range, To == From-1, inserts Lines before line From (From may be
// Lines()+1: the end of the file). Lines hold no terminators.
type Edit struct {
	Op    int // the index of the op in the caller's batch, for errors
	From  int
	To    int
	Lines []string
}

func (e Edit) empty() bool { return e.To < e.From }

// Hunk is one contiguous changed region: OldCount lines from OldFrom were
// replaced by NewCount lines from NewFrom.
type Hunk struct {
	OldFrom, OldCount int
	NewFrom, NewCount int
}

// ErrorKind classifies an edit batch error.
type ErrorKind int

const (
	// ErrRange: an edit names lines the document does not have, or its end
	// is before its start.
	ErrRange ErrorKind = iota + 1
	// ErrOverlap: two edits touch the same lines, or an insertion falls
	// inside a replaced range.
	ErrOverlap
)

// BatchError reports why a batch cannot be applied, naming the ops.
type BatchError struct {
	Kind ErrorKind
	Ops  []int
	Msg  string
}

func (e *BatchError) Error() string { return e.Msg }

// SplitText splits new text into lines. A single trailing newline ends the
// last line rather than starting an empty one, and a "\r" before a newline
// is dropped: the file's own terminator is used. An empty text is one empty
// line.
func SplitText(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Apply applies edits, all naming lines of d, and returns the new bytes and
// the changed regions in order. Edits are checked before anything is
// built: one out of range or overlapping another fails the whole batch with
// a *BatchError. Insertions at the same place keep their order in edits.
//
// Bytes outside the edited lines are kept exactly, terminators and BOM
// included. New lines take the dominant terminator. Whether the file ends
// with a terminator is kept, except that a last line left empty gets one.
func Apply(d *Doc, edits []Edit) ([]byte, []Hunk, error) {
	n := d.Lines()
	for _, e := range edits {
		if e.From < 1 || e.From > n+1 || e.To > n || e.To < e.From-1 {
			return nil, nil, &BatchError{Kind: ErrRange, Ops: []int{e.Op},
				Msg: fmt.Sprintf("op %d: lines %d-%d are not a range of a %d-line file", e.Op, e.From, e.To, n)}
		}
	}
	sorted := make([]Edit, len(edits))
	copy(sorted, edits)
	// An insertion before line k sorts before a replacement starting at k.
	key := func(e Edit) int {
		if e.empty() {
			return 2 * e.From
		}
		return 2*e.From + 1
	}
	sort.SliceStable(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	lastTo, lastOp := 0, -1
	for _, e := range sorted {
		if e.From <= lastTo {
			return nil, nil, &BatchError{Kind: ErrOverlap, Ops: []int{lastOp, e.Op},
				Msg: fmt.Sprintf("ops %d and %d overlap: op %d touches line %d, inside the lines op %d replaces", lastOp, e.Op, e.Op, e.From, lastOp)}
		}
		if !e.empty() {
			lastTo, lastOp = e.To, e.Op
		}
	}

	b := builder{d: d, dom: []byte(d.Dominant())}
	size := len(d.data)
	for _, e := range sorted {
		for _, l := range e.Lines {
			size += len(l) + 2
		}
	}
	b.out = make([]byte, 0, size)
	if d.bom {
		b.out = append(b.out, bom...)
	}
	var hunks []Hunk
	next := 1 // first line of d not yet copied
	for i, e := range sorted {
		b.copyLines(next, e.From-1)
		if i == 0 || e.From != next || len(hunks) == 0 {
			hunks = append(hunks, Hunk{OldFrom: e.From, NewFrom: b.lines + 1})
		}
		h := &hunks[len(hunks)-1]
		for _, l := range e.Lines {
			b.addLine(l)
		}
		if !e.empty() {
			next = e.To + 1
		} else {
			next = e.From
		}
		h.OldCount = next - h.OldFrom
		h.NewCount = b.lines + 1 - h.NewFrom
	}
	b.copyLines(next, n)
	// Keep a missing final newline missing, unless the last line is empty:
	// an empty line without a terminator would not be a line at all.
	if !d.FinalNewline() && b.lines > 0 && b.lastLen > 0 {
		b.out = b.out[:len(b.out)-b.lastEOL]
	}
	return b.out, hunks, nil
}

// builder accumulates output lines, giving a line that had no terminator
// one when another line follows it.
type builder struct {
	d       *Doc
	dom     []byte
	out     []byte
	lines   int
	lastEOL int  // length of the last line's terminator
	lastLen int  // length of the last line's content
	open    bool // the last line has no terminator yet
}

func (b *builder) terminate() {
	if !b.open {
		return
	}
	eol := b.dom
	if len(b.out) > 0 && b.out[len(b.out)-1] == '\r' {
		// A line whose content ends in "\r" keeps it only before "\r\n";
		// before "\n" the two would read as one CRLF terminator.
		eol = []byte(CRLF)
	}
	b.out = append(b.out, eol...)
	b.lastEOL = len(eol)
	b.open = false
}

// copyLines copies lines from..to of d unchanged.
func (b *builder) copyLines(from, to int) {
	if from > to {
		return
	}
	b.terminate()
	first, last := b.d.spans[from-1], b.d.spans[to-1]
	b.out = append(b.out, b.d.data[first.start:last.next]...)
	b.lines += to - from + 1
	b.lastEOL = last.next - last.end
	b.lastLen = last.end - last.start
	b.open = b.lastEOL == 0
}

func (b *builder) addLine(l string) {
	b.terminate()
	b.out = append(b.out, l...)
	b.out = append(b.out, b.dom...)
	b.lines++
	b.lastEOL = len(b.dom)
	b.lastLen = len(l)
}

// MapLine follows line of the old document through hunks (as Apply returns
// them) and returns its number in the new one. ok is false when a hunk
// replaced or removed the line.
func MapLine(line int, hunks []Hunk) (int, bool) {
	delta := 0
	for _, h := range hunks {
		switch {
		case h.OldFrom+h.OldCount <= line:
			delta += h.NewCount - h.OldCount
		case h.OldFrom <= line:
			return 0, false
		default:
			return line + delta, true
		}
	}
	return line + delta, true
}
