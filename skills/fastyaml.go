package skills

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// fastNode decodes the plainest frontmatter without the YAML parser, which
// costs most of a search: top-level "key: value" lines, and one level of
// "key:" followed by an indented block mapping or a block sequence, with
// values that are plain scalars free of YAML's special characters, or
// quoted strings without escapes. For anything else ok is false and the
// caller uses the YAML parser. Where ok is true the node tree matches the
// parser's in kind, value, line and the tags the fields look at (null,
// bool, other); FuzzFastNode checks this against the parser.
func fastNode(fm []byte) (doc *yaml.Node, ok bool) {
	lines := strings.Split(string(fm), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	doc = &yaml.Node{Kind: yaml.DocumentNode}
	for i := 0; i < len(lines); i++ {
		line, ok := cleanLine(lines[i])
		if !ok {
			return nil, false
		}
		if skippable(line) {
			continue
		}
		key, rest, ok := keyValue(line)
		if !ok {
			return nil, false
		}
		if root.Line == 0 {
			root.Line, root.Column = i+1, 1
			doc.Line, doc.Column = i+1, 1
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(key), Value: key, Line: i + 1, Column: 1}
		if strings.HasPrefix(rest, "[") {
			v, ok := flowSequence(rest, i+1, len(key)+3)
			if !ok {
				return nil, false
			}
			root.Content = append(root.Content, k, v)
			continue
		}
		if rest != "" {
			v, ok := scalar(rest, i+1, len(key)+3)
			if !ok {
				return nil, false
			}
			root.Content = append(root.Content, k, v)
			continue
		}
		// "key:" alone: a nested block, or null.
		j := i + 1
		for j < len(lines) {
			l, ok := cleanLine(lines[j])
			if !ok {
				return nil, false
			}
			if !skippable(l) {
				break
			}
			j++
		}
		next := ""
		if j < len(lines) {
			next, _ = cleanLine(lines[j])
		}
		indent := len(next) - len(strings.TrimLeft(next, " "))
		switch {
		case j == len(lines) || (indent == 0 && !strings.HasPrefix(next, "- ")):
			return nil, false // null: the parser's position for it is not worth copying
		case strings.HasPrefix(next[indent:], "- "):
			seq, end, ok := blockSequence(lines, j, indent)
			if !ok {
				return nil, false
			}
			root.Content = append(root.Content, k, seq)
			i = end - 1
		default:
			m, end, ok := blockMapping(lines, j, indent)
			if !ok {
				return nil, false
			}
			root.Content = append(root.Content, k, m)
			i = end - 1
		}
	}
	if len(root.Content) > 0 {
		doc.Content = []*yaml.Node{root}
	}
	return doc, true
}

// blockSequence reads "- value" items at indent from lines[start:]; end is
// the first line after them.
func blockSequence(lines []string, start, indent int) (*yaml.Node, int, bool) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: start + 1, Column: indent + 1}
	i := start
	for ; i < len(lines); i++ {
		line, ok := cleanLine(lines[i])
		if !ok {
			return nil, 0, false
		}
		if line == "" {
			continue
		}
		ind := len(line) - len(strings.TrimLeft(line, " "))
		item := strings.HasPrefix(line[ind:], "- ")
		switch {
		case line[ind] == '#':
			return nil, 0, false
		case ind == 0 && !item:
			return seq, trimBlank(lines, start, i), true // the next top-level key
		case ind != indent || !item:
			return nil, 0, false
		}
		v, ok := scalar(line[ind+2:], i+1, ind+3)
		if !ok {
			return nil, 0, false
		}
		seq.Content = append(seq.Content, v)
	}
	return seq, trimBlank(lines, start, i), true
}

// flowSequence decodes "[a, b, c]" whose items are plain words without
// YAML's flow or quoting characters.
func flowSequence(s string, line, column int) (*yaml.Node, bool) {
	inner, ok := strings.CutSuffix(s[1:], "]")
	if !ok || strings.ContainsAny(inner, "[]{}#:'\"") {
		return nil, false
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: column}
	if strings.TrimSpace(inner) == "" {
		return seq, true
	}
	off := column + 1
	for _, item := range strings.Split(inner, ",") {
		word := strings.TrimLeft(item, " ")
		col := off + len(item) - len(word)
		off += len(item) + 1
		word = strings.TrimRight(word, " ")
		if word == "" || strings.ContainsRune("-?!&*|>%@`", rune(word[0])) {
			return nil, false
		}
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(word), Value: word, Line: line, Column: col})
	}
	return seq, true
}

// blockMapping reads "key: value" entries at indent (> 0) from
// lines[start:]; end is the first line after them.
func blockMapping(lines []string, start, indent int) (*yaml.Node, int, bool) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: start + 1, Column: indent + 1}
	i := start
	for ; i < len(lines); i++ {
		line, ok := cleanLine(lines[i])
		if !ok {
			return nil, 0, false
		}
		if line == "" {
			continue
		}
		ind := len(line) - len(strings.TrimLeft(line, " "))
		if line[ind] == '#' {
			return nil, 0, false
		}
		if ind == 0 {
			break
		}
		if ind != indent {
			return nil, 0, false
		}
		key, rest, ok := keyValue(line[ind:])
		if !ok || rest == "" {
			return nil, 0, false
		}
		v, ok := scalar(rest, i+1, ind+len(key)+3)
		if !ok {
			return nil, 0, false
		}
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(key), Value: key, Line: i + 1, Column: ind + 1}, v)
	}
	return m, trimBlank(lines, start, i), true
}

// trimBlank returns end, or the first of the blank lines just before it.
func trimBlank(lines []string, start, end int) int {
	for end > start && strings.TrimRight(lines[end-1], "\r ") == "" {
		end--
	}
	return end
}

// cleanLine drops a CR line end and trailing spaces, and refuses lines
// with characters the fast path does not handle: tabs, controls and YAML's
// other line breaks.
func cleanLine(l string) (string, bool) {
	l = strings.TrimRight(strings.TrimSuffix(l, "\r"), " ") // the parser ignores trailing spaces too
	if !utf8.ValidString(l) {
		return "", false
	}
	for _, r := range l {
		switch {
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return "", false
		}
	}
	return l, true
}

// skippable reports a blank line or a comment at the start of a line.
func skippable(l string) bool { return l == "" || l[0] == '#' }

// keyValue splits "key: value" or "key:" at the start of l.
func keyValue(l string) (key, rest string, ok bool) {
	i := 0
	for i < len(l) {
		c := l[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '-') {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(l) || l[i] != ':' {
		return "", "", false
	}
	key, rest = l[:i], l[i+1:]
	if rest == "" {
		return key, "", true
	}
	if rest[0] != ' ' || len(rest) < 2 || rest[1] == ' ' {
		return "", "", false
	}
	return key, rest[1:], true
}

// scalar decodes a plain or simply quoted scalar on line at column.
func scalar(s string, line, column int) (*yaml.Node, bool) {
	if s == "" || s[0] == ' ' {
		return nil, false
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: line, Column: column}
	switch s[0] {
	case '"':
		inner, ok := strings.CutSuffix(s[1:], `"`)
		if !ok || strings.ContainsAny(inner, `"\`) {
			return nil, false
		}
		n.Tag, n.Value, n.Style = "!!str", inner, yaml.DoubleQuotedStyle
		return n, true
	case '\'':
		inner, ok := strings.CutSuffix(s[1:], `'`)
		if !ok || strings.Contains(inner, `'`) {
			return nil, false
		}
		n.Tag, n.Value, n.Style = "!!str", inner, yaml.SingleQuotedStyle
		return n, true
	}
	if strings.ContainsRune("-?:,[]{}#&*!|>%@`", rune(s[0])) ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return nil, false
	}
	n.Value, n.Tag = s, plainTag(s)
	return n, true
}

// plainTag resolves a plain scalar as far as the fields care: null, bool,
// or text (numbers and dates are read as their text).
func plainTag(s string) string {
	switch s {
	case "~", "null", "Null", "NULL":
		return "!!null"
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	}
	return "!!str"
}
