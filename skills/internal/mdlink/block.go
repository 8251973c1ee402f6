package mdlink

import (
	"bytes"
	"strconv"
)

// kind is the kind of a block, and the block parser that opens it. The
// parsers are tried in the order of the constants, those that need a
// trigger character first.
type kind uint8

const (
	setextHeading kind = iota
	thematicBreak
	list
	listItem
	atxHeading
	fencedCode
	blockquote
	htmlBlock
	codeBlock // tried on any line
	paragraph // tried on any line
	document
	linkRefDef // what a paragraph's link reference definitions become
)

// triggeredBy reports whether the parser of k is tried on a line whose
// first character after the indentation is c.
func (k kind) triggeredBy(c byte) bool {
	switch k {
	case setextHeading:
		return c == '-' || c == '='
	case thematicBreak:
		return c == '-' || c == '*' || c == '_'
	case list, listItem:
		return c == '-' || c == '+' || c == '*' || '0' <= c && c <= '9'
	case atxHeading:
		return c == '#'
	case fencedCode:
		return c == '`' || c == '~'
	case blockquote:
		return c == '>'
	case htmlBlock:
		return c == '<'
	}
	return true
}

// A node is a block of the document tree.
type node struct {
	kind                            kind
	parent, first, last, prev, next *node
	// children counts the children as goldmark's ast does, which counts one
	// too many when a block is inserted after the last child.
	children int
	lines    []segment
	marker   byte // of a list
	ordered  bool // of a list
	offset   int  // of a list item: the indentation of its content
	htmlType int  // of an HTML block, 1 to 7
}

// appendChild appends the new block c to the children of n.
func (n *node) appendChild(c *node) {
	c.parent, c.prev = n, n.last
	if n.last != nil {
		n.last.next = c
	} else {
		n.first = c
	}
	n.last = c
	n.children++
}

// removeChild removes the child c of n.
func (n *node) removeChild(c *node) {
	if c.parent != n {
		return
	}
	n.children--
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		n.first = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		n.last = c.prev
	}
	c.parent, c.prev, c.next = nil, nil, nil
}

// insertBefore inserts the new block c before the child at, or appends it
// if at is nil, when goldmark's ast counts it twice.
func (n *node) insertBefore(at, c *node) {
	n.children++
	if at == nil {
		n.appendChild(c)
		return
	}
	c.parent, c.prev, c.next = n, at.prev, at
	if at.prev != nil {
		at.prev.next = c
	} else {
		n.first = c
	}
	at.prev = c
}

// state says what a block parser did with a line.
type state uint8

const (
	cont state = 1 << iota
	closed
	hasChildren
	noChildren
	requireParagraph
)

// fence is the opening fence of a fenced code block.
type fence struct {
	char   byte
	length int
	node   *node
}

// parser is the state of one parse: goldmark's parser and parse context.
type parser struct {
	src  []byte
	r    docReader
	open []*node // the open blocks, outermost first
	refs map[string][]byte
	work *budget

	blockOffset int    // where the line's text starts, -1 if it is blank
	fence       *fence // of the last fenced code block opened
	setextPara  *node  // the paragraph a setext heading underlines
	skipList    bool   // a list item closed on a line that starts another
	emptyItem   bool   // a list's empty last item has had blank lines
	tbStop      int    // the end of the last line checked for a thematic break in a list

	htmlMiss [4]int // where searches for the end of raw HTML last failed
}

// lastOpen returns the innermost open block, nil if there is none.
func (p *parser) lastOpen() *node {
	if len(p.open) == 0 {
		return nil
	}
	return p.open[len(p.open)-1]
}

// openResult says what openBlocks did with a line.
type openResult uint8

const (
	paragraphContinuation openResult = iota + 1
	newBlocksOpened
	noBlocksOpened
)

// parseBlocks builds the block tree under doc.
func (p *parser) parseBlocks(doc *node) {
	p.open = nil
	for { // runs of lines between blank lines
		if !p.r.skipBlankLines() {
			return
		}
		if p.openBlocks(doc) != newBlocksOpened {
			return
		}
		p.r.advanceLine()
		for { // line by line
			opened := p.open
			if len(opened) == 0 {
				break
			}
			lastIndex := len(opened) - 1
			for i := range opened {
				b := opened[i]
				if line, _ := p.r.peekLine(); line == nil {
					p.closeBlocks(lastIndex, 0)
					p.r.advanceLine()
					return
				}
				// A paragraph continues when no block interrupts it, which
				// openBlocks decides.
				if b.kind != paragraph {
					st := p.continueBlock(b)
					if st&cont != 0 {
						if st&hasChildren != 0 && i == lastIndex {
							p.openBlocks(b)
							break
						}
						continue
					}
				}
				// b ends here, or the line is a paragraph's lazy continuation
				parent := doc
				if i != 0 {
					parent = opened[i-1]
				}
				lastNode := opened[lastIndex]
				if p.openBlocks(parent) != paragraphContinuation {
					// opened shares its array with p.open: a paragraph made
					// a setext heading has been replaced there.
					if opened[lastIndex] != lastNode {
						lastIndex--
					}
					p.closeBlocks(lastIndex, i)
				}
				break
			}
			p.r.advanceLine()
		}
	}
}

// openBlocks opens the blocks that start on the line, under parent.
func (p *parser) openBlocks(parent *node) openResult {
	result := noBlocksOpened
	lastBlock := p.lastOpen()
	continuable := lastBlock != nil && lastBlock.kind == paragraph
retry:
	for {
		line, _ := p.r.peekLine()
		w, pos := indentWidth(line, p.r.lineOffset())
		p.blockOffset = pos
		if w >= len(line) {
			p.blockOffset = -1
		}
		if line == nil || line[0] == '\n' {
			break
		}
		var c byte
		if pos < len(line) {
			c = line[pos]
		}
		for k := setextHeading; k <= paragraph; k++ {
			if !k.triggeredBy(c) ||
				continuable && result == noBlocksOpened && (k == codeBlock || k == paragraph) ||
				w > 3 && k != codeBlock {
				continue
			}
			lastBlock = p.lastOpen()
			last := lastBlock
			n, st := p.openBlock(k, parent)
			if n == nil {
				continue
			}
			if st&requireParagraph != 0 && last == parent.last {
				p.closeBlock(last)
				p.open = p.open[:len(p.open)-1]
				if p.transformParagraph(last) {
					// the paragraph was all link reference definitions:
					// there is nothing to underline
					continuable = false
					continue retry
				}
			}
			if last != nil && last.parent == nil {
				i := len(p.open) - 1
				p.closeBlocks(i, i)
			}
			parent.appendChild(n)
			result = newBlocksOpened
			p.open = append(p.open, n)
			if st&hasChildren != 0 {
				if len(p.open) > MaxNesting {
					panic(ErrTooComplex)
				}
				parent = n
				continue retry
			}
			break retry
		}
		break
	}
	if result == noBlocksOpened && continuable && p.continueBlock(lastBlock)&cont != 0 {
		result = paragraphContinuation
	}
	return result
}

// closeBlocks closes the open blocks from index from down to index to.
func (p *parser) closeBlocks(from, to int) {
	blocks := p.open
	for i := from; i >= to; i-- {
		n := blocks[i]
		if n.kind == paragraph && n.parent != nil {
			p.transformParagraph(n)
		}
		if n.parent != nil { // not if it became link reference definitions
			p.closeBlock(n)
		}
	}
	if from == len(blocks)-1 {
		blocks = blocks[:to]
	} else {
		blocks = append(blocks[:to], blocks[from+1:]...)
	}
	p.open = blocks
}

// openBlock opens a block of kind k under parent if the line starts one,
// moving past what it takes of the line.
func (p *parser) openBlock(k kind, parent *node) (*node, state) {
	switch k {
	case setextHeading:
		return p.openSetextHeading(parent)
	case thematicBreak:
		line, _ := p.r.peekLine()
		if isThematicBreak(line, p.r.lineOffset()) {
			p.r.advanceToEOL()
			return &node{kind: thematicBreak}, noChildren
		}
	case list:
		return p.openList(parent)
	case listItem:
		return p.openListItem(parent)
	case atxHeading:
		return p.openATXHeading()
	case fencedCode:
		return p.openFencedCode()
	case blockquote:
		if p.blockquoteMarker() {
			return &node{kind: blockquote}, hasChildren
		}
	case htmlBlock:
		return p.openHTMLBlock()
	case codeBlock:
		line, seg := p.r.peekLine()
		if pos, _ := indentPosition(line, p.r.lineOffset(), seg.padding, 4); pos >= 0 && !isBlank(line) {
			p.r.advanceToEOL()
			return &node{kind: codeBlock}, noChildren
		}
	case paragraph:
		line, seg := p.r.peekLine()
		if !isBlank(line) {
			p.r.advanceToEOL()
			return &node{kind: paragraph, lines: []segment{seg}}, noChildren
		}
	}
	return nil, noChildren
}

// continueBlock reports whether the open block n goes on on the line,
// moving past its markers and indentation there.
func (p *parser) continueBlock(n *node) state {
	switch n.kind {
	case paragraph:
		line, seg := p.r.peekLine()
		if isBlank(line) {
			return closed
		}
		n.lines = append(n.lines, seg)
		p.r.advanceToEOL()
		return cont | noChildren
	case blockquote:
		if p.blockquoteMarker() {
			return cont | hasChildren
		}
	case list:
		return p.continueList(n)
	case listItem:
		return p.continueListItem(n)
	case codeBlock:
		line, seg := p.r.peekLine()
		if pos, _ := indentPosition(line, p.r.lineOffset(), seg.padding, 4); pos < 0 && !isBlank(line) {
			return closed
		}
		p.r.advanceToEOL()
		return cont | noChildren
	case fencedCode:
		return p.continueFencedCode()
	case htmlBlock:
		return p.continueHTMLBlock(n)
	}
	return closed
}

// closeBlock closes the block n: a paragraph's lines are trimmed, a setext
// heading takes the lines of the paragraph it underlines.
func (p *parser) closeBlock(n *node) {
	switch n.kind {
	case paragraph:
		for i, l := range n.lines {
			n.lines[i] = segment{start: l.start + leadingSpaces(p.src[l.start:l.stop]), stop: l.stop}
		}
		if len(n.lines) == 0 {
			n.parent.removeChild(n)
			return
		}
		l := &n.lines[len(n.lines)-1]
		if t := trailingSpaces(p.src[l.start:l.stop]); t == l.stop-l.start {
			*l = segment{start: l.start, stop: l.start}
		} else {
			l.stop -= t
		}
	case setextHeading:
		p.closeSetextHeading(n)
	case fencedCode:
		if p.fence != nil && p.fence.node == n {
			p.fence = nil
		}
	}
}

// leadingSpaces returns the length of the white space b starts with.
func leadingSpaces(b []byte) int {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// trailingSpaces returns the length of the white space b ends with.
func trailingSpaces(b []byte) int {
	i := len(b)
	for i > 0 && isSpace(b[i-1]) {
		i--
	}
	return len(b) - i
}

// blockquoteMarker reads a block quote marker and the space after it.
func (p *parser) blockquoteMarker() bool {
	line, _ := p.r.peekLine()
	w, pos := indentWidth(line, p.r.lineOffset())
	if w > 3 || pos >= len(line) || line[pos] != '>' {
		return false
	}
	pos++
	p.r.advance(pos)
	if pos >= len(line) || line[pos] == '\n' {
		return true
	}
	if line[pos] == ' ' || line[pos] == '\t' {
		padding := 0
		if line[pos] == '\t' {
			padding = tabWidth(p.r.lineOffset()) - 1
		}
		p.r.advanceAndSetPadding(1, padding)
	}
	return true
}

// isThematicBreak reports whether line, starting at column col, is a
// thematic break: three or more *, - or _ alike, maybe between spaces.
func isThematicBreak(line []byte, col int) bool {
	w, pos := indentWidth(line, col)
	if w > 3 {
		return false
	}
	var mark byte
	count := 0
	for _, c := range line[pos:] {
		switch {
		case isSpace(c):
		case mark == 0 && (c == '*' || c == '-' || c == '_'):
			mark, count = c, 1
		case c != mark:
			return false
		default:
			count++
		}
	}
	return count > 2
}

// openATXHeading opens a heading of one to six #s; its line is the text
// between them and any closing sequence of #s.
func (p *parser) openATXHeading() (*node, state) {
	line, seg := p.r.peekLine()
	pos := p.blockOffset
	if pos < 0 {
		return nil, noChildren
	}
	i := pos
	for i < len(line) && line[i] == '#' {
		i++
	}
	if level := i - pos; level == 0 || level > 6 {
		return nil, noChildren
	}
	n := &node{kind: atxHeading}
	if i == len(line) {
		return n, noChildren
	}
	l := leadingSpaces(line[i:])
	if l == 0 {
		return nil, noChildren
	}
	p.r.advanceToEOL()
	start := seg.start + min(i+l, len(line)-1) - seg.padding
	stop := seg.start + len(line) - seg.padding
	stop -= trailingSpaces(p.src[start:stop])
	if stop == start {
		return n, noChildren
	}
	// the closing sequence of #s
	text := p.src[start:stop]
	j := len(text) - 1
	for text[j] == '#' && j > 0 {
		j--
	}
	if j == 0 && text[0] == '#' {
		return n, noChildren
	}
	if j != len(text)-1 && isSpace(text[j]) {
		stop = start + j - trailingSpaces(text[:j])
	}
	n.lines = []segment{{start: start, stop: stop}}
	return n, noChildren
}

// openSetextHeading opens a setext heading on an underline of = or -
// after a paragraph of parent.
func (p *parser) openSetextHeading(parent *node) (*node, state) {
	last := p.lastOpen()
	if last == nil || last.kind != paragraph || last.parent != parent {
		return nil, noChildren
	}
	line, seg := p.r.peekLine()
	if _, ok := setextUnderline(line); !ok {
		return nil, noChildren
	}
	p.setextPara = last
	return &node{kind: setextHeading, lines: []segment{seg}}, noChildren | requireParagraph
}

// setextUnderline reports whether line underlines a setext heading, and
// with which character.
func setextUnderline(line []byte) (byte, bool) {
	start := 0
	for start < len(line) && line[start] == ' ' {
		start++
	}
	if start > 3 {
		return 0, false
	}
	end := len(line)
	if isSpace(line[end-1]) {
		end -= trailingSpaces(line[start:end])
	}
	c := line[start]
	if c != '=' && c != '-' {
		return 0, false
	}
	n := 0
	for start+n < len(line) && line[start+n] == c {
		n++
	}
	return c, start+n == end
}

// closeSetextHeading gives the heading the lines of the paragraph it
// underlines, which leaves the tree.
func (p *parser) closeSetextHeading(n *node) {
	underline := n.lines[0]
	n.lines = nil
	para := p.setextPara
	p.setextPara = nil
	if len(para.lines) == 0 {
		underline.start += leadingSpaces(p.src[underline.start:underline.stop])
		underline.padding = 0
		if next := n.next; next == nil || next.kind != paragraph {
			n.parent.insertBefore(n.next, &node{kind: paragraph, lines: []segment{underline}})
		} else {
			next.lines = append([]segment{underline}, next.lines...)
		}
		n.parent.removeChild(n)
		return
	}
	n.lines = para.lines
	if para.parent != nil {
		para.parent.removeChild(para)
	}
}

// openFencedCode opens a fenced code block on three or more ` or ~.
func (p *parser) openFencedCode() (*node, state) {
	line, _ := p.r.peekLine()
	pos := p.blockOffset
	if pos < 0 || line[pos] != '`' && line[pos] != '~' {
		return nil, noChildren
	}
	c := line[pos]
	i := pos
	for i < len(line) && line[i] == c {
		i++
	}
	if i-pos < 3 {
		return nil, noChildren
	}
	if i < len(line)-1 && c == '`' && bytes.IndexByte(line[i:], '`') >= 0 {
		return nil, noChildren // a backtick in the info string
	}
	n := &node{kind: fencedCode}
	p.fence = &fence{char: c, length: i - pos, node: n}
	return n, noChildren
}

// continueFencedCode closes the fenced code block on a closing fence.
func (p *parser) continueFencedCode() state {
	line, _ := p.r.peekLine()
	if w, pos := indentWidth(line, p.r.lineOffset()); w < 4 {
		i := pos
		for i < len(line) && line[i] == p.fence.char {
			i++
		}
		if i-pos >= p.fence.length && isBlank(line[i:]) {
			p.r.advanceToEOL()
			return closed
		}
	}
	p.r.advanceToEOL()
	return cont | noChildren
}

// listMarker is what parseListItem finds at the start of a line: the
// marker from start to end, the content from content (-1 if there is
// none) to stop.
type listMarker struct {
	start, end, content, stop int
	ordered                   bool
}

// parseListItem reads a list item's marker at the start of line.
func parseListItem(line []byte) (m listMarker, ok bool) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i > 3 || i == len(line) {
		return m, false
	}
	m.start = i
	if c := line[i]; c == '-' || c == '*' || c == '+' {
		i++
	} else {
		for i < len(line) && '0' <= line[i] && line[i] <= '9' {
			i++
		}
		if i == m.start || i-m.start > 9 || i == len(line) || line[i] != '.' && line[i] != ')' {
			return m, false
		}
		i++
		m.ordered = true
	}
	m.end = i
	if i < len(line) && line[i] != '\n' {
		if w, _ := indentWidth(line[i:], 0); w == 0 {
			return m, false
		}
	}
	if i >= len(line) {
		m.content, m.stop = -1, -1
		return m, true
	}
	m.content, m.stop = i, len(line)
	if line[m.stop-1] == '\n' && line[i] != '\n' {
		m.stop--
	}
	return m, true
}

// empty reports whether the item has nothing on the marker's line.
func (m listMarker) empty(line []byte) bool {
	return m.content < 0 || isBlank(line[m.content:m.stop])
}

// lastOffset is the content indentation of the list's last item.
func lastOffset(l *node) int {
	if l.last != nil {
		return l.last.offset
	}
	return 0
}

// openList opens a list on a list item's marker; the item itself is
// opened next, as the list's child.
func (p *parser) openList(parent *node) (*node, state) {
	last := p.lastOpen()
	if last != nil && last.kind == list || p.skipList {
		p.skipList = false
		return nil, noChildren
	}
	line, _ := p.r.peekLine()
	m, ok := parseListItem(line)
	if !ok {
		return nil, noChildren
	}
	if last != nil && last.kind == paragraph && last.parent == parent {
		// only a non-empty item of a bullet list or one starting at 1
		// interrupts a paragraph
		if m.ordered {
			if n, _ := strconv.Atoi(string(line[m.start : m.end-1])); n != 1 {
				return nil, noChildren
			}
		}
		if m.empty(line) {
			return nil, noChildren
		}
	}
	p.emptyItem = false
	return &node{kind: list, marker: line[m.end-1], ordered: m.ordered}, hasChildren
}

// continueList reports whether the list l goes on: on blank lines, on a
// new item of the same kind, and on lines indented into its last item.
func (p *parser) continueList(l *node) state {
	line, seg := p.r.peekLine()
	if isBlank(line) {
		if l.last.children == 0 {
			p.emptyItem = true
		}
		return cont | hasChildren
	}
	offset := lastOffset(l)
	lastIsEmpty := l.last.children == 0
	indent, _ := indentWidth(line, p.r.lineOffset())
	if indent < offset || lastIsEmpty {
		if indent < 4 {
			if m, ok := parseListItem(line); ok && m.start-offset < 4 {
				if line[m.end-1] != l.marker || m.ordered != l.ordered {
					return closed
				}
				// a thematic break is no list item
				isBreak := false
				if seg.stop > p.tbStop {
					isBreak = isThematicBreak(line[m.end-1:], 0)
					p.tbStop = seg.stop
				}
				if isBreak {
					last := p.lastOpen()
					if c, ok := setextUnderline(line[m.end-1:]); last == nil || last.kind != paragraph || !ok || c != '-' {
						return closed
					}
				}
				return cont | hasChildren
			}
		}
		if !lastIsEmpty {
			return closed
		}
	}
	if lastIsEmpty && indent < offset || p.emptyItem {
		return closed
	}
	return cont | hasChildren
}

// openListItem opens an item of the list parent and moves to its content.
func (p *parser) openListItem(parent *node) (*node, state) {
	if parent.kind != list {
		return nil, noChildren
	}
	line, _ := p.r.peekLine()
	m, ok := parseListItem(line)
	if !ok || m.start-lastOffset(parent) > 3 {
		return nil, noChildren
	}
	p.emptyItem = false
	itemOffset := 1
	if m.content >= 0 && !isBlank(line[m.content:]) {
		if itemOffset, _ = indentWidth(line[m.content:], m.content); itemOffset > 4 {
			itemOffset = 1 // the content is indented code
		}
	}
	n := &node{kind: listItem, offset: m.end + itemOffset}
	if m.empty(line) {
		return n, noChildren
	}
	pos, padding := indentPosition(line[m.content:], m.content, 0, itemOffset)
	p.r.advanceAndSetPadding(m.end+pos, padding)
	return n, hasChildren
}

// continueListItem reports whether the list item n goes on: on blank lines
// and on lines indented to its content, whose indentation it takes.
func (p *parser) continueListItem(n *node) state {
	line, _ := p.r.peekLine()
	if isBlank(line) {
		p.r.advanceToEOL()
		return cont | hasChildren
	}
	offset := lastOffset(n.parent)
	isEmpty := n.children == 0 && p.emptyItem
	indent, _ := indentWidth(line, p.r.lineOffset())
	if (isEmpty || indent < offset) && indent < 4 {
		if _, ok := parseListItem(line); ok {
			p.skipList = true
			return closed
		}
		if !isEmpty {
			return closed
		}
	}
	pos, padding := indentPosition(line, p.r.lineOffset(), 0, offset)
	p.r.advanceAndSetPadding(pos, padding)
	return cont | hasChildren
}

// transformParagraph takes the link reference definitions off the start of
// paragraph n, as goldmark's LinkReferenceParagraphTransformer does. It
// reports whether nothing was left of the paragraph.
func (p *parser) transformParagraph(n *node) bool {
	lines := n.lines
	r := newLineReader(p.src, lines, p.work)
	var removes [][2]int
	for {
		start, end := p.parseLinkRefDef(r)
		if start < 0 {
			break
		}
		n.parent.insertBefore(n, &node{kind: linkRefDef})
		if start == end {
			end++
		}
		removes = append(removes, [2]int{start, end})
	}
	offset := 0
	for _, rm := range removes {
		if len(lines) == 0 {
			break
		}
		if rm[0] == offset {
			lines = lines[rm[1]-offset:] // the usual case, without copying
		} else {
			lines = append(lines[:rm[0]-offset], lines[rm[1]-offset:]...)
		}
		offset = rm[1]
	}
	if len(lines) == 0 {
		n.parent.removeChild(n)
		return true
	}
	n.lines = lines
	return false
}

// parseLinkRefDef reads a link reference definition at the position of r
// and records it. It returns the lines it takes, from start to before
// end; -1, -1 if there is none.
func (p *parser) parseLinkRefDef(r *lineReader) (start, end int) {
	r.skipSpaces()
	line, _ := r.peekLine()
	if line == nil || line[0] != '[' {
		return -1, -1
	}
	start, _ = r.position()
	r.advance(1)
	label, ok := r.findClosure('[', ']')
	if !ok || isBlank(label) || r.peek() != ':' {
		return -1, -1
	}
	r.advance(1)
	r.skipSpaces()
	dest, ok := parseLinkDestination(r)
	if !ok {
		return -1, -1
	}
	line, _ = r.peekLine()
	atLineEnd := line == nil || isBlank(line)
	endLine, _ := r.position()
	define := func() {
		if key := normalizeLabel(label); p.refs[key] == nil {
			p.refs[key] = append([]byte{}, dest...)
		}
	}
	spaces := r.skipSpaces()
	opener := r.peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		if !atLineEnd {
			return -1, -1
		}
		define()
		return start, endLine + 1
	}
	if spaces == 0 {
		return -1, -1
	}
	r.advance(1)
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	if _, ok := r.findClosure(opener, closer); !ok {
		if !atLineEnd {
			return -1, -1
		}
		define()
		r.advanceLine()
		return start, endLine + 1
	}
	if line, _ := r.peekLine(); line != nil && !isBlank(line) {
		if !atLineEnd {
			return -1, -1
		}
		define()
		return start, endLine
	}
	define()
	endLine, _ = r.position()
	return start, endLine + 1
}
