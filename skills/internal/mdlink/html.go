package mdlink

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// blockTags are the tag names of HTML blocks of the sixth kind.
var blockTags = [...]string{
	"address", "article", "aside", "base", "basefont", "blockquote", "body",
	"caption", "center", "col", "colgroup", "dd", "details", "dialog", "dir",
	"div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
	"frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header",
	"hr", "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem",
	"meta", "nav", "noframes", "ol", "optgroup", "option", "p", "param",
	"search", "section", "summary", "table", "tbody", "td", "tfoot", "th",
	"thead", "title", "tr", "track", "ul",
}

// isBlockTag reports whether name is one of blockTags, in any case.
func isBlockTag(name []byte) bool {
	for _, t := range blockTags {
		if len(t) == len(name) && bytes.EqualFold(name, []byte(t)) {
			return true
		}
	}
	return false
}

// rawTags are the tag names of HTML blocks of the first kind.
var rawTags = [...]string{"script", "pre", "style", "textarea"}

// foldPrefix reports whether b starts with the ASCII word w, case folded
// as a regular expression's (?i) folds (ſ is an s), and its length in b.
func foldPrefix(b []byte, w string) (int, bool) {
	n := 0
	for i := 0; i < len(w); i++ {
		r, size := utf8.DecodeRune(b[n:])
		if size == 0 {
			return 0, false
		}
		f := rune(w[i])
		for f != r {
			if f = unicode.SimpleFold(f); f == rune(w[i]) {
				return 0, false
			}
		}
		n += size
	}
	return n, true
}

// htmlStart returns the line after up to three spaces and a "<"; ok is
// false if it does not start so.
func htmlStart(line []byte) (rest []byte, ok bool) {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	if i < len(line) && line[i] == '<' {
		return line[i+1:], true
	}
	return nil, false
}

// openHTMLBlock opens an HTML block of one of the seven kinds.
func (p *parser) openHTMLBlock() (*node, state) {
	line, seg := p.r.peekLine()
	rest, ok := htmlStart(line)
	if !ok {
		return nil, noChildren
	}
	t := 0
	switch {
	case startsRawBlock(rest):
		t = 1
	case bytes.HasPrefix(rest, []byte("!--")):
		t = 2
	case bytes.HasPrefix(rest, []byte("?")):
		t = 3
	case len(rest) > 1 && rest[0] == '!' && 'A' <= rest[1] && rest[1] <= 'Z':
		t = 4
	case bytes.HasPrefix(rest, []byte("![CDATA[")):
		t = 5
	default:
		if name, closing, attrs, ok := completeTagLine(rest); ok {
			last := p.lastOpen()
			switch {
			case isBlockTag(name):
				t = 6
			case !bytes.EqualFold(name, []byte("script")) && !bytes.EqualFold(name, []byte("style")) &&
				!bytes.EqualFold(name, []byte("pre")) && (last == nil || last.kind != paragraph) && !(closing && attrs):
				t = 7 // which cannot interrupt a paragraph
			}
		}
	}
	if t == 0 && startsBlockTag(rest) {
		t = 6
	}
	if t == 0 {
		return nil, noChildren
	}
	p.r.advanceToEOL()
	return &node{kind: htmlBlock, htmlType: t, lines: []segment{seg}}, noChildren
}

// startsRawBlock reports whether rest, after a "<", opens an HTML block of
// the first kind: script, pre, style or textarea, in any case.
func startsRawBlock(rest []byte) bool {
	for _, tag := range rawTags {
		if n, ok := foldPrefix(rest, tag); ok {
			r := rest[n:]
			if len(r) == 0 || bytes.IndexByte([]byte("\t\n\f\r >"), r[0]) >= 0 || bytes.HasPrefix(r, []byte("/>")) {
				return true
			}
		}
	}
	return false
}

// endsRawBlock reports whether line holds the end tag of an HTML block of
// the first kind.
func endsRawBlock(line []byte) bool {
	for i := bytes.Index(line, []byte("</")); i >= 0; {
		r := line[i+2:]
		for _, tag := range rawTags {
			if n, ok := foldPrefix(r, tag); ok && n < len(r) && r[n] == '>' {
				return true
			}
		}
		j := bytes.Index(r, []byte("</"))
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return false
}

// startsBlockTag reports whether rest, after a "<", is an opening or
// closing tag of an HTML block of the sixth kind.
func startsBlockTag(rest []byte) bool {
	if len(rest) > 0 && rest[0] == '/' {
		rest = bytes.TrimLeft(rest[1:], " ")
	}
	n := tagName(rest)
	if n == 0 || !isBlockTag(rest[:n]) {
		return false
	}
	r := rest[n:]
	return len(r) == 0 || string(r) == "\n" || string(r) == "\r\n" || r[0] == ' ' || r[0] == '>' || bytes.HasPrefix(r, []byte("/>"))
}

// tagName returns the length of the tag name b starts with, 0 if none.
func tagName(b []byte) int {
	if len(b) == 0 || !isLetter(b[0]) {
		return 0
	}
	i := 1
	for i < len(b) && (isAlnum(b[i]) || b[i] == '-') {
		i++
	}
	return i
}

// completeTagLine reads rest, after a "<", as a whole opening or closing
// tag alone on its line, which opens an HTML block of the seventh kind. It
// returns the tag name, whether it is a closing tag ("/" right before the
// name) and whether it has attributes.
func completeTagLine(rest []byte) (name []byte, closing, attrs, ok bool) {
	i := 0
	if len(rest) > 0 && rest[0] == '/' {
		i++
		closing = len(rest) > 1 && rest[1] != ' '
		for i < len(rest) && rest[i] == ' ' {
			i++
		}
	}
	n := tagName(rest[i:])
	if n == 0 {
		return nil, false, false, false
	}
	name = rest[i : i+n]
	c := &cursor{r: *newLineReader(rest, []segment{{start: i + n, stop: len(rest)}}, &budget{left: workBase})}
	start := c.n
	if !c.attributes() {
		return nil, false, false, false
	}
	attrs = c.n != start
	for c.peek() == ' ' {
		c.next()
	}
	if c.peek() == '/' {
		c.next()
	}
	if c.peek() != '>' {
		return nil, false, false, false
	}
	c.next()
	for c.peek() == ' ' {
		c.next()
	}
	if c.peek() == '\r' {
		if c.next(); c.peek() != '\n' {
			return nil, false, false, false
		}
	}
	if c.peek() == '\n' {
		c.next()
	}
	return name, closing, attrs, c.peek() < 0
}

// continueHTMLBlock reports whether the HTML block n goes on: the first
// five kinds end on a line holding their end, the line included, the other
// two before a blank line.
func (p *parser) continueHTMLBlock(n *node) state {
	line, seg := p.r.peekLine()
	switch n.htmlType {
	case 1:
		if len(n.lines) == 1 && endsRawBlock(n.lines[0].value(p.src)) {
			return closed
		}
		if endsRawBlock(line) {
			p.r.advanceToEOL()
			return closed
		}
	case 2, 3, 4, 5:
		end := [...]string{2: "-->", 3: "?>", 4: ">", 5: "]]>"}[n.htmlType]
		if len(n.lines) == 1 && bytes.Contains(n.lines[0].value(p.src), []byte(end)) {
			return closed
		}
		if bytes.Contains(line, []byte(end)) {
			p.r.advanceToEOL()
			return closed
		}
	default:
		if isBlank(line) {
			return closed
		}
	}
	n.lines = append(n.lines, seg)
	p.r.advanceToEOL()
	return cont | noChildren
}

// A cursor reads raw HTML byte by byte, across the lines of a block. With
// stopAtBadRune, it ends at invalid UTF-8 and at U+FFFD, as goldmark's
// reading of inline HTML with a regular expression over runes does.
type cursor struct {
	r             lineReader
	n             int // bytes read
	stopAtBadRune bool
	checked       int // bytes of a checked rune still to read
}

// peek returns the next byte, or -1 at the end.
func (c *cursor) peek() int {
	line, _ := c.r.peekLine()
	if len(line) == 0 {
		return -1
	}
	if c.stopAtBadRune && line[0] >= utf8.RuneSelf && c.checked == 0 {
		r, size := utf8.DecodeRune(line)
		if r == utf8.RuneError {
			return -1
		}
		c.checked = size
	}
	return int(line[0])
}

// next moves past a byte.
func (c *cursor) next() {
	c.r.advance(1)
	c.n++
	if c.checked > 0 {
		c.checked--
	}
}

// skip reads the bytes in set and returns how many.
func (c *cursor) skip(set string) int {
	n := 0
	for b := c.peek(); b >= 0 && bytes.IndexByte([]byte(set), byte(b)) >= 0; b = c.peek() {
		c.next()
		n++
	}
	return n
}

// attributes reads the attributes of a tag; it reports false if one has a
// value that does not parse, for then the tag does not.
func (c *cursor) attributes() bool {
	for {
		saved := *c
		if c.skip("\r\n \t") == 0 || !isAttrNameStart(c.peek()) {
			*c = saved
			return true
		}
		for b := c.peek(); isAttrNameStart(b) || b >= 0 && (isAlnum(byte(b)) || b == '.' || b == '-'); b = c.peek() {
			c.next()
		}
		saved = *c
		c.skip("\r\n \t")
		if c.peek() != '=' {
			*c = saved
			continue
		}
		c.next()
		c.skip("\r\n \t")
		switch q := c.peek(); q {
		case '"', '\'':
			c.next()
			for b := c.peek(); b != q; b = c.peek() {
				if b < 0 {
					return false
				}
				c.next()
			}
			c.next()
		default:
			n := 0
			for b := c.peek(); b > ' ' && bytes.IndexByte([]byte("\"'=<>`"), byte(b)) < 0; b = c.peek() {
				c.next()
				n++
			}
			if n == 0 {
				return false
			}
		}
	}
}

// isAttrNameStart reports whether b may start an attribute name.
func isAttrNameStart(b int) bool {
	return b >= 0 && (isLetter(byte(b)) || b == '_' || b == ':')
}

// skipTagSpace reads the white space before the end of a tag: spaces,
// tabs and line ends, but no carriage return alone.
func (c *cursor) skipTagSpace() {
	for {
		switch c.peek() {
		case ' ', '\t', '\n':
			c.next()
		case '\r':
			saved := *c
			c.next()
			if c.peek() != '\n' {
				*c = saved
				return
			}
			c.next()
		default:
			return
		}
	}
}

// rawHTML reads inline raw HTML at the "<" at the position of r.
func (p *parser) rawHTML(r *lineReader) bool {
	line, _ := r.peekLine()
	switch {
	case len(line) > 1 && isAlnum(line[1]), len(line) > 2 && line[1] == '/' && isAlnum(line[2]):
		c := &cursor{r: *r, stopAtBadRune: true}
		c.next() // <
		closing := c.peek() == '/'
		if closing {
			c.next()
		}
		if b := c.peek(); b < 0 || !isLetter(byte(b)) {
			return false
		}
		for b := c.peek(); b >= 0 && (isAlnum(byte(b)) || b == '-'); b = c.peek() {
			c.next()
		}
		if !closing && !c.attributes() {
			return false
		}
		c.skipTagSpace()
		if !closing && c.peek() == '/' {
			c.next()
		}
		if c.peek() != '>' {
			return false
		}
		c.next()
		*r = c.r
		return true
	case bytes.HasPrefix(line, []byte("<!--")):
		return p.htmlComment(r)
	case bytes.HasPrefix(line, []byte("<?")):
		return p.htmlUntil(r, "?>", 1)
	case len(line) > 2 && line[1] == '!' && 'A' <= line[2] && line[2] <= 'Z':
		return p.htmlUntil(r, ">", 2)
	case bytes.HasPrefix(line, []byte("<![CDATA[")):
		return p.htmlUntil(r, "]]>", 3)
	}
	return false
}

// htmlComment reads an HTML comment.
func (p *parser) htmlComment(r *lineReader) bool {
	line, seg := r.peekLine()
	for _, empty := range [...]string{"<!-->", "<!--->"} {
		if bytes.HasPrefix(line, []byte(empty)) {
			r.advance(len(empty))
			return true
		}
	}
	// an earlier search found no end from before here to the block's end
	if seg.start < p.htmlMiss[0] {
		return false
	}
	savedLine, savedPos := r.position()
	offset := len("<!--")
	line = line[offset:]
	stop := 0
	for {
		if i := bytes.Index(line, []byte("-->")); i >= 0 {
			r.advance(offset + i + len("-->"))
			return true
		}
		offset = 0
		stop = seg.stop
		r.advanceLine()
		if line, seg = r.peekLine(); line == nil {
			break
		}
	}
	p.htmlMiss[0] = stop
	r.setPosition(savedLine, savedPos)
	return false
}

// htmlUntil reads raw HTML that ends at the first end after its start:
// a processing instruction, a declaration or a CDATA section. miss is its
// entry in p.htmlMiss.
func (p *parser) htmlUntil(r *lineReader, end string, miss int) bool {
	savedLine, savedPos := r.position()
	stop := 0
	for {
		line, seg := r.peekLine()
		if line == nil {
			break
		}
		if seg.start < p.htmlMiss[miss] {
			r.setPosition(savedLine, savedPos)
			return false
		}
		if i := bytes.Index(line, []byte(end)); i >= 0 {
			r.advance(i + len(end))
			return true
		}
		stop = seg.stop
		r.advanceLine()
	}
	p.htmlMiss[miss] = stop
	r.setPosition(savedLine, savedPos)
	return false
}

// autolink reads an autolink, <scheme:...> or <local@domain>, at the "<"
// at the position of r.
func autolink(r *lineReader) bool {
	line, _ := r.peekLine()
	stop := emailEnd(line[1:])
	if stop < 0 {
		stop = urlEnd(line[1:])
	}
	if stop < 0 {
		return false
	}
	stop++
	if stop >= len(line) || line[stop] != '>' {
		return false
	}
	r.advance(stop + 1)
	return true
}

// urlEnd returns where the absolute URI b starts with ends, -1 if none.
func urlEnd(b []byte) int {
	if len(b) == 0 || !isLetter(b[0]) {
		return -1
	}
	i := 1
	for i < len(b) && (isAlnum(b[i]) || b[i] == '+' || b[i] == '-' || b[i] == '.') {
		i++
	}
	if i == 1 || i > 33 || i >= len(b) || b[i] != ':' {
		return -1
	}
	i++
	for i < len(b) && b[i] > ' ' && b[i] != '<' && b[i] != '>' {
		i++
	}
	return i
}

// emailEnd returns where the email address b starts with ends, -1 if none.
func emailEnd(b []byte) int {
	i := 0
	for i < min(len(b), 64) && (isAlnum(b[i]) || bytes.IndexByte([]byte(".!#$%&'*+/=?^_`{|}~-"), b[i]) >= 0) {
		i++
	}
	if i == 0 || i >= len(b) || b[i] != '@' {
		return -1
	}
	i++
	if i >= len(b) {
		return -1
	}
	end := domainEnd(b[i:min(len(b), i+256)])
	if end < 0 || end > 255 {
		return -1
	}
	return i + end
}

// domainEnd returns where the domain name d starts with ends: labels of
// letters, digits and inner hyphens, at most 63 long, separated by dots.
// The longest label is taken, as by goldmark's greedy regular expression.
func domainEnd(d []byte) int {
	label := func(j int) int { // d[j] is a letter or digit
		k := j + 1
		run := 0
		for k+run < len(d) && run < 61 && (isAlnum(d[k+run]) || d[k+run] == '-') {
			run++
		}
		for n := run; n >= 0; n-- {
			if k+n < len(d) && isAlnum(d[k+n]) {
				return k + n + 1
			}
		}
		return k
	}
	if len(d) == 0 || !isAlnum(d[0]) {
		return -1
	}
	end := label(0)
	for end+1 < len(d) && d[end] == '.' && isAlnum(d[end+1]) {
		end = label(end + 1)
	}
	return end
}
