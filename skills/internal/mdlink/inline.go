package mdlink

// A link is a link or image found in a block.
type link struct {
	pos  int // where its opening bracket is in the source
	dest []byte
}

// A bracket is an opening bracket, "[" or "![", not yet closed.
type bracket struct {
	start, stop int // where it is in the source
	image       bool
	links       int // the links made before it
}

// inline is the state of the inline parse of one block.
type inline struct {
	*parser
	r        *lineReader
	brackets []bracket
	links    int // links (not images) made so far
	found    []link
}

// parseInline returns the links and images of the block made of lines,
// in the order they are made.
func (p *parser) parseInline(lines []segment) []link {
	in := &inline{parser: p, r: newLineReader(p.src, lines, p.work)}
	in.scan()
	return in.found
}

// scan reads the block, handing the characters that may start an inline
// construct to its parser, as goldmark's parser.parseBlock does.
func (in *inline) scan() {
	r := in.r
	escaped := false
lines:
	for {
		line, _ := r.peekLine()
		if line == nil {
			return
		}
		// A hard line break at the end is not scanned.
		n := len(line)
		if line[n-1] == '\n' {
			switch {
			case n >= 3 && line[n-2] == '\\' && line[n-3] != '\\' || n == 2 && line[0] == '\\':
				n -= 2
			case n >= 4 && line[n-3] == '\\' && line[n-2] == '\r' && line[n-4] != '\\' || n == 3 && line[0] == '\\' && line[1] == '\r':
				n -= 3
			case n >= 3 && line[n-3] == ' ' && line[n-2] == ' ':
				n -= 3
			case n >= 4 && line[n-4] == ' ' && line[n-3] == ' ' && line[n-2] == '\r':
				n -= 4
			}
		}
		l, _ := r.position()
		read := 0
		for i, c := range line[:n] {
			if c == '\n' {
				break
			}
			// After a construct, the next character is at i == 0 again and
			// is tried even if a backslash came before it.
			if isPunct(c) && (!escaped || i == 0) && hasParser(c) {
				r.advance(read)
				read = 0
				savedLine, savedPos := r.position()
				if in.parse(c) {
					continue lines
				}
				r.setPosition(savedLine, savedPos)
			}
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			}
			read++
		}
		r.advance(read)
		if now, _ := r.position(); now != l {
			continue
		}
		r.advanceLine()
	}
}

// hasParser reports whether c may start an inline construct.
func hasParser(c byte) bool {
	switch c {
	case '`', '!', '[', ']', '<', '*', '_':
		return true
	}
	return false
}

// parse reads the construct c starts at the position of the reader, if
// there is one, and moves past it.
func (in *inline) parse(c byte) bool {
	r := in.r
	line, seg := r.peekLine()
	switch c {
	case '`':
		in.codeSpan()
		return true
	case '*', '_': // emphasis does not matter to links, but takes the run
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		r.advance(n)
		return true
	case '[':
		in.brackets = append(in.brackets, bracket{start: seg.start, stop: seg.start + 1, links: in.links})
		r.advance(1)
		return true
	case '!':
		if len(line) > 1 && line[1] == '[' {
			in.brackets = append(in.brackets, bracket{start: seg.start, stop: seg.start + 2, image: true, links: in.links})
			r.advance(2)
			return true
		}
		return false
	case ']':
		return in.closeBracket()
	case '<':
		if autolink(r) {
			return true
		}
		savedLine, savedPos := r.position()
		if in.rawHTML(r) {
			return true
		}
		r.setPosition(savedLine, savedPos)
	}
	return false
}

// codeSpan reads a code span, or the run of backticks that opens none.
func (in *inline) codeSpan() {
	r := in.r
	line, _ := r.peekLine()
	opener := 0
	for opener < len(line) && line[opener] == '`' {
		opener++
	}
	r.advance(opener)
	l, pos := r.position()
	for {
		line, _ := r.peekLine()
		if line == nil {
			r.setPosition(l, pos)
			return
		}
		for i := 0; i < len(line); i++ {
			if line[i] != '`' {
				continue
			}
			j := i
			for i < len(line) && line[i] == '`' {
				i++
			}
			if i-j == opener {
				r.advance(i)
				return
			}
		}
		r.advanceLine()
	}
}

// closeBracket reads a "]" and the rest of the link or image it ends, if
// it ends one.
func (in *inline) closeBracket() bool {
	r := in.r
	if len(in.brackets) == 0 {
		return false
	}
	_, seg := r.peekLine()
	r.advance(1)
	last := in.brackets[len(in.brackets)-1]
	in.brackets = in.brackets[:len(in.brackets)-1]
	// goldmark's bound on the length of a link label: the open brackets
	// left may not span more than 998 bytes
	if k := len(in.brackets); k > 0 && in.brackets[k-1].stop-in.brackets[0].start > 998 {
		return false
	}
	if !last.image && in.links > last.links {
		return false // links do not contain links
	}
	var dest []byte
	found := false
	l, pos := r.position()
	switch r.peek() {
	case '(':
		dest, found = in.inlineLink()
	case '[':
		var labelled bool
		dest, found, labelled = in.fullReference(last)
		if !found && labelled {
			return false
		}
	}
	if !found { // maybe a shortcut reference
		r.setPosition(l, pos)
		label := r.value(last.stop, seg.start)
		if len(label) > 999 {
			return false
		}
		if dest, found = in.refs[normalizeLabel(label)]; !found {
			return false
		}
	}
	in.found = append(in.found, link{pos: last.start, dest: dest})
	if !last.image {
		in.links++
	}
	return true
}

// inlineLink reads the (destination "title") of an inline link.
func (in *inline) inlineLink() ([]byte, bool) {
	r := in.r
	r.advance(1)
	r.skipSpaces()
	if r.peek() == ')' {
		r.advance(1)
		return nil, true
	}
	dest, ok := parseLinkDestination(r)
	if !ok {
		return nil, false
	}
	r.skipSpaces()
	if r.peek() != ')' {
		if !parseLinkTitle(r) {
			return nil, false
		}
		r.skipSpaces()
		if r.peek() != ')' {
			return nil, false
		}
	}
	r.advance(1)
	return dest, true
}

// fullReference reads the [label] of a full or collapsed reference link.
// labelled is false if there is no label, and a shortcut reference may
// still follow.
func (in *inline) fullReference(last bracket) (dest []byte, found, labelled bool) {
	r := in.r
	_, open := r.position()
	r.advance(1)
	label, ok := r.findClosure('[', ']')
	if !ok {
		return nil, false, false
	}
	if isBlank(label) { // collapsed: the link text is the label
		label = r.value(last.stop, open.start-1)
	}
	if len(label) > 999 {
		return nil, false, true
	}
	dest, found = in.refs[normalizeLabel(label)]
	return dest, found, true
}

// parseLinkDestination reads a link destination: <...> or text with
// balanced parentheses up to white space. It returns it as written, less
// the angle brackets.
func parseLinkDestination(r *lineReader) ([]byte, bool) {
	r.skipSpaces()
	line, _ := r.peekLine()
	if r.peek() == '<' {
		r.work.spend(len(line)) // read ahead, and not passed if there is no ">"
		for i := 1; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\\' && i < len(line)-1 && isPunct(line[i+1]):
				i++
			case c == '>':
				r.advance(i + 1)
				return line[1:i], true
			}
		}
		return nil, false
	}
	opened := 0
	i := 0
loop:
	for ; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i < len(line)-1 && isPunct(line[i+1]):
			i++
		case c == '(':
			opened++
		case c == ')':
			if opened--; opened < 0 {
				break loop
			}
		case isSpace(c):
			break loop
		}
	}
	r.advance(i)
	return line[:i], i != 0
}

// parseLinkTitle reads a link title: "...", '...' or (...).
func parseLinkTitle(r *lineReader) bool {
	r.skipSpaces()
	opener := r.peek()
	closer := opener
	switch opener {
	case '(':
		closer = ')'
	case '"', '\'':
	default:
		return false
	}
	r.advance(1)
	_, ok := r.findClosure(opener, closer)
	return ok
}
