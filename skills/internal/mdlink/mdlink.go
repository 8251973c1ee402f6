// Package mdlink finds the destinations of the links and images of a
// CommonMark document, with the standard library alone.
//
// It parses as github.com/yuin/goldmark v1.8.7 does with its default block
// and inline parsers, reduced to what decides where the links are: the block
// structure (indented and fenced code, the seven kinds of HTML blocks, block
// quotes, lists and their items, ATX and setext headings, thematic breaks,
// paragraphs and their lazy continuation lines), link reference definitions,
// and the inline constructs that take text away from link brackets (code
// spans, autolinks, raw HTML, backslash escapes). Brackets are matched as
// goldmark matches them, by the specification's stack of openers; a link may
// not contain a link; labels match case-folded, their white space collapsed.
// Where goldmark departs from the specification this package departs with
// it: its tests hold it to goldmark on the specification's examples, on
// generated documents and by fuzzing. Emphasis, titles and the text itself
// are not kept.
//
// Nothing is built at package initialisation: a parse costs its call alone.
package mdlink

import (
	"bytes"
	"errors"
	"slices"
)

// Destinations returns the destinations of the links and images of the
// CommonMark document src, in document order (an image's description may
// hold links; they come after the image). A destination is the text as
// written in the link or its reference definition, without the angle
// brackets of the <...> form: backslash escapes and character references
// are left as they are, as goldmark's ast.Link.Destination leaves them. A
// link written with no destination, like [text](), gives "".
//
// CommonMark makes some documents costly: an opener retried at each of n
// starts, each reading to the end of its line or block, is n² work, and
// goldmark takes seconds on a few hundred kilobytes of "[a](" or ">\t".
// Destinations bounds its work: a document that nests blocks more than
// MaxNesting deep, or whose parse reads more than a fixed multiple of its
// length, is given up with ErrTooComplex.
func Destinations(src []byte) (dests []string, err error) {
	p := &parser{src: src, r: docReader{src: src}, refs: map[string][]byte{},
		work: &budget{left: workPerByte*len(src) + workBase}}
	defer func() {
		if r := recover(); r != nil {
			if r != ErrTooComplex {
				panic(r)
			}
			dests, err = nil, ErrTooComplex
		}
	}()
	p.r.advanceLine()
	doc := &node{kind: document}
	p.parseBlocks(doc)
	p.walk(doc, &dests)
	return dests, nil
}

// ErrTooComplex is the error of Destinations for a document it gives up.
var ErrTooComplex = errors.New("the Markdown nests too deep or is too costly to parse")

// MaxNesting is how deep the blocks that hold blocks (block quotes, lists
// and their items) may nest in a document Destinations parses.
const MaxNesting = 100

// The work a parse may do: workPerByte bytes read ahead per byte of the
// document, and workBase besides. A document that is not built to be
// costly reads each of its bytes a few times.
const (
	workPerByte = 64
	workBase    = 1 << 20
)

// A budget is the work a parse has left; readers share it.
type budget struct{ left int }

// spend takes n from b, and gives the parse up when nothing is left.
func (b *budget) spend(n int) {
	if b.left -= n; b.left < 0 {
		panic(ErrTooComplex)
	}
}

// walk parses the inline content of the blocks under n, in document order,
// appending the destinations found to dests.
func (p *parser) walk(n *node, dests *[]string) {
	for c := n.first; c != nil; c = c.next {
		p.walk(c, dests)
	}
	if n.kind != paragraph && n.kind != atxHeading && n.kind != setextHeading {
		return // containers have no lines; code, HTML and definitions are raw
	}
	links := p.parseInline(n.lines)
	// A link or image is made when its closing bracket is read, so one
	// inside an image's description comes first; the tree goldmark builds
	// is walked from the outside in, which is the order of the openers.
	slices.SortStableFunc(links, func(a, b link) int { return a.pos - b.pos })
	for _, l := range links {
		*dests = append(*dests, string(l.dest))
	}
}

// A segment is a part of a line of the source: the bytes from start to
// stop, preceded by padding spaces that stand for the rest of a tab partly
// taken by a container's indentation.
type segment struct {
	start, stop, padding int
}

// value returns the text of s, with its padding.
func (s segment) value(src []byte) []byte {
	if s.padding == 0 {
		return src[s.start:s.stop]
	}
	v := make([]byte, 0, s.padding+s.stop-s.start)
	v = append(v, bytes.Repeat([]byte{' '}, s.padding)...)
	return append(v, src[s.start:s.stop]...)
}

// eof is what the readers' peek returns past the end.
const eof = 0xff

// docReader reads the source line by line for the block parsers; it is
// goldmark's text.reader.
type docReader struct {
	src  []byte
	pos  segment // from the position to the end of its line
	head int     // where the line starts
	// col is the column at colAt, somewhere in the line, kept so that
	// lineOffset need not count from the line's start each time.
	col, colAt int
}

// peekLine returns the rest of the line, with its padding, and its segment;
// nil at the end.
func (r *docReader) peekLine() ([]byte, segment) {
	if r.pos.start >= 0 && r.pos.start < len(r.src) {
		return r.pos.value(r.src), r.pos
	}
	return nil, r.pos
}

// lineOffset is the column of the position in its line, tabs expanded.
func (r *docReader) lineOffset() int {
	if r.colAt < r.head || r.colAt > r.pos.start {
		r.col, r.colAt = 0, r.head
	}
	for ; r.colAt < r.pos.start; r.colAt++ {
		if r.src[r.colAt] == '\t' {
			r.col += tabWidth(r.col)
		} else {
			r.col++
		}
	}
	return r.col - r.pos.padding
}

// advance moves n bytes on, padding first; it passes to the next line at a
// line feed. A negative n moves back, as goldmark's does.
func (r *docReader) advance(n int) {
	if n < r.pos.stop-r.pos.start && r.pos.padding == 0 {
		r.pos.start += n
		return
	}
	for ; n > 0 && r.pos.start < len(r.src); n-- {
		switch {
		case r.pos.padding != 0:
			r.pos.padding--
		case r.src[r.pos.start] == '\n':
			r.advanceLine()
		default:
			r.pos.start++
		}
	}
}

// advanceAndSetPadding advances n bytes and leaves padding spaces of a tab.
func (r *docReader) advanceAndSetPadding(n, padding int) {
	r.advance(n)
	if padding > r.pos.padding {
		r.pos.padding = padding
	}
}

// advanceToEOL moves to the line feed that ends the line, or the end.
func (r *docReader) advanceToEOL() {
	if r.pos.start >= len(r.src) {
		return
	}
	if i := bytes.IndexByte(r.src[r.pos.start:], '\n'); i >= 0 {
		r.pos.start += i
	} else {
		r.pos.start = len(r.src)
	}
	r.pos.padding = 0
}

// advanceLine moves to the start of the next line.
func (r *docReader) advanceLine() {
	r.pos.start = r.pos.stop
	r.head = r.pos.start
	if r.pos.start < 0 || r.pos.start >= len(r.src) {
		return
	}
	r.pos.stop = len(r.src)
	if i := bytes.IndexByte(r.src[r.pos.start:], '\n'); i >= 0 {
		r.pos.stop = r.pos.start + i + 1
	}
	r.pos.padding = 0
}

// skipBlankLines moves to the next line that is not blank; it reports
// whether there is one.
func (r *docReader) skipBlankLines() bool {
	for {
		line, _ := r.peekLine()
		if line == nil {
			return false
		}
		if !isBlank(line) {
			return true
		}
		r.advanceLine()
	}
}

// lineReader reads the lines of one block: a paragraph's for its link
// reference definitions, a paragraph's or heading's for its inline
// content. It is goldmark's text.blockReader.
type lineReader struct {
	src   []byte
	lines []segment
	line  int     // index of the current line in lines
	pos   segment // from the position to the end of its line
	last  int     // where the last line stops
	work  *budget // charged with every byte the reader passes
}

// newLineReader returns a reader at the start of lines.
func newLineReader(src []byte, lines []segment, work *budget) *lineReader {
	r := &lineReader{src: src, lines: lines, line: -1, work: work}
	if len(lines) > 0 {
		r.last = lines[len(lines)-1].stop
	}
	r.advanceLine()
	return r
}

// in reports whether the position is in the block.
func (r *lineReader) in() bool {
	return r.line < len(r.lines) && r.pos.start >= 0 && r.pos.start < r.last
}

// peekLine returns the rest of the line and its segment; nil at the end.
func (r *lineReader) peekLine() ([]byte, segment) {
	if r.in() {
		return r.pos.value(r.src), r.pos
	}
	return nil, r.pos
}

// peek returns the byte at the position, eof at the end.
func (r *lineReader) peek() byte {
	if !r.in() {
		return eof
	}
	if r.pos.padding != 0 {
		return ' '
	}
	return r.src[r.pos.start]
}

// advance moves n bytes on, padding first, passing to the next line after
// the last byte of one.
func (r *lineReader) advance(n int) {
	r.work.spend(n)
	if n < r.pos.stop-r.pos.start && r.pos.padding == 0 {
		r.pos.start += n
		return
	}
	for ; n > 0; n-- {
		switch {
		case r.pos.padding != 0:
			r.pos.padding--
		case r.pos.start >= r.pos.stop-1 && r.pos.stop < r.last:
			r.advanceLine()
		default:
			r.pos.start++
		}
	}
}

// advanceLine moves to the start of the next line.
func (r *lineReader) advanceLine() {
	r.line++
	if r.line < len(r.lines) {
		r.pos = r.lines[r.line]
		r.work.spend(r.pos.stop - r.pos.start)
	}
}

// position returns the position, to go back to with setPosition.
func (r *lineReader) position() (int, segment) { return r.line, r.pos }

func (r *lineReader) setPosition(line int, pos segment) { r.line, r.pos = line, pos }

// skipSpaces skips spaces, line ends included, and returns how many.
func (r *lineReader) skipSpaces() int {
	n := 0
	for {
		line, _ := r.peekLine()
		if line == nil {
			return n
		}
		for _, c := range line {
			if !isSpace(c) {
				return n
			}
			n++
			r.advance(1)
		}
	}
}

// value returns the text of the block from start to stop, its lines joined.
func (r *lineReader) value(start, stop int) []byte {
	// the line start is in: the last that starts at or before it
	i, _ := slices.BinarySearchFunc(r.lines, start+1, func(s segment, t int) int { return s.start - t })
	i = max(i-1, 0)
	var v []byte
	for from := start; i < len(r.lines); i++ {
		s := r.lines[i]
		if from < 0 {
			from = s.start
		}
		if from < min(stop, s.stop) {
			v = append(v, r.src[from:min(stop, s.stop)]...)
		}
		from = -1
		if s.stop > stop {
			break
		}
	}
	return v
}

// findClosure looks for closer, from the position on to the end of the
// block, skipping backslash-escaped punctuation; another opener on the way
// ends the search. It returns the text up to the closer and moves past it;
// it reports false if there is none, leaving the position where the search
// stopped.
func (r *lineReader) findClosure(opener, closer byte) ([]byte, bool) {
	var v []byte
	for {
		line, seg := r.peekLine()
		if line == nil {
			return nil, false
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c == '\\' && i < len(line)-1 && isPunct(line[i+1]):
				i++
			case c == closer:
				v = append(v, r.value(seg.start, seg.start+i-seg.padding)...)
				r.advance(i + 1)
				return v, true
			case c == opener:
				return nil, false
			}
		}
		r.advanceLine()
		v = append(v, r.value(seg.start, seg.stop)...)
	}
}

// tabWidth is the width of a tab at column pos.
func tabWidth(pos int) int { return 4 - pos%4 }

// isSpace reports whether c is white space as goldmark's util.IsSpace has
// it: space, tab, line feed or carriage return.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isBlank reports whether b is all white space.
func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// isPunct reports whether c is ASCII punctuation, which a backslash escapes.
func isPunct(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// indentWidth returns the width of the indentation of b, whose first byte
// is at column col, and its length in bytes.
func indentWidth(b []byte, col int) (width, n int) {
	for _, c := range b {
		switch c {
		case ' ':
			width++
		case '\t':
			width += tabWidth(col + width)
		default:
			return width, n
		}
		n++
	}
	return width, n
}

// indentPosition returns where the indentation of b (at column col, after
// padding virtual spaces) reaches width columns, and the columns of a tab
// left over; -1, -1 if it does not.
func indentPosition(b []byte, col, padding, width int) (pos, rest int) {
	if width == 0 {
		return 0, padding
	}
	w, i, p := 0, 0, padding
loop:
	for ; i < len(b); i++ {
		switch {
		case p > 0:
			p--
			w++
		case b[i] == '\t' && w < width:
			w += tabWidth(col + w)
		case b[i] == ' ' && w < width:
			w++
		default:
			break loop
		}
	}
	if w >= width {
		return i - padding, w - width
	}
	return -1, -1
}
