package skills

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/praxis-tools/praxis/internal/lazyre"
)

// The limits of the Agent Skills specification.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
	// RecommendedBodyLines is the body length the specification
	// recommends staying under; longer bodies get a warning from Check.
	RecommendedBodyLines = 500
)

// maxFrontmatterBytes bounds the part of SKILL.md that discovery reads: the
// frontmatter must close within it.
const maxFrontmatterBytes = 64 << 10

var nameChars = lazyre.New(`^[a-z0-9-]+$`)

// Parse parses the content of a SKILL.md file: the frontmatter into a
// Skill, and the body after it. file names the file in the problems
// returned. dirName, when not empty, is the name of the skill's directory,
// which the skill's name must equal. The skill is usable when no problem is
// an Error; Parse never stops at the first problem.
func Parse(file string, data []byte, dirName string) (Skill, string, []Problem) {
	fm, fmLine, body, ok := splitFrontmatter(data, true)
	p := parser{file: file}
	if !ok {
		p.errorf(fmLine, "", "%s", fm)
		return Skill{}, "", p.problems
	}
	s := p.frontmatter(fm, fmLine, dirName)
	return s, string(body), p.problems
}

// parseHead parses the frontmatter from the first bytes of a SKILL.md of
// size bytes in all; the body is not needed.
func parseHead(file string, head []byte, complete bool, dirName string) (Skill, []Problem) {
	fm, fmLine, _, ok := splitFrontmatter(head, complete)
	p := parser{file: file}
	if !ok {
		p.errorf(fmLine, "", "%s", fm)
		return Skill{}, p.problems
	}
	return p.frontmatter(fm, fmLine, dirName), p.problems
}

// splitFrontmatter splits data into the YAML between the opening and
// closing "---" lines, the 1-based line of the opening one, and the body.
// complete says data is the whole file. When ok is false, fm holds the rule
// that was broken.
func splitFrontmatter(data []byte, complete bool) (fm []byte, line int, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(truncateRunes(data, complete)) {
		return []byte("SKILL.md must be UTF-8 text"), 0, nil, false
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return []byte("SKILL.md must be text, not binary (it holds a NUL byte)"), 0, nil, false
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return []byte("SKILL.md must start with YAML frontmatter: a --- line, the fields, then another --- line"), 1, nil, false
	}
	off := len(data) - len(rest)
	for len(rest) > 0 {
		l, next, found := bytes.Cut(rest, []byte("\n"))
		if isFence(l) && (found || complete) {
			return data[len(first)+1 : off], 1, next, true
		}
		off += len(l) + 1
		rest = next
	}
	if !complete {
		return fmt.Appendf(nil, "the frontmatter must close with a --- line within the first %d KiB", maxFrontmatterBytes>>10), 1, nil, false
	}
	return []byte("the frontmatter is not closed: a --- line must end it"), 1, nil, false
}

// truncateRunes drops a rune cut in half at the end of an incomplete read.
func truncateRunes(b []byte, complete bool) []byte {
	if complete {
		return b
	}
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[len(b)-1-i]) {
			if !utf8.FullRune(b[len(b)-1-i:]) {
				return b[:len(b)-1-i]
			}
			break
		}
	}
	return b
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

type parser struct {
	file     string
	problems []Problem
}

func (p *parser) add(sev Severity, line int, field, format string, args ...any) {
	p.problems = append(p.problems, Problem{Severity: sev, File: p.file, Line: line, Field: field, Rule: fmt.Sprintf(format, args...)})
}

func (p *parser) errorf(line int, field, format string, args ...any) {
	p.add(Error, line, field, format, args...)
}

func (p *parser) warnf(line int, field, format string, args ...any) {
	p.add(Warning, line, field, format, args...)
}

var yamlLine = lazyre.New(`^yaml: line (\d+): `)

// frontmatter decodes and validates the YAML of the frontmatter, which
// starts on the line after fmLine.
func (p *parser) frontmatter(fm []byte, fmLine int, dirName string) Skill {
	s := Skill{UserInvocable: true}
	var doc yaml.Node
	if fast, ok := fastNode(fm); ok {
		doc = *fast
	} else if err := yaml.Unmarshal(fm, &doc); err != nil {
		msg, line := err.Error(), fmLine
		if m := yamlLine.Get().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line, msg = fmLine+n, msg[len(m[0]):]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		p.errorf(line, "", "the frontmatter must be valid YAML: %s", msg)
		return s
	}
	line := func(n *yaml.Node) int { return fmLine + n.Line }
	if len(doc.Content) == 0 {
		p.errorf(fmLine, "", "the frontmatter is empty: name and description are required")
		return s
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		p.errorf(line(m), "", "the frontmatter must be a YAML mapping of fields, not a %s", kindName(m))
		return s
	}
	seen := map[string]*yaml.Node{}
	var allowedDash, allowedSnake *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		if prev, dup := seen[key]; dup {
			p.errorf(line(k), key, "a field may appear once (first on line %d)", line(prev))
			continue
		}
		seen[key] = k
		switch key {
		case "name":
			s.Name, _ = p.str(v, key, line)
		case "description":
			s.Description, _ = p.str(v, key, line)
		case "license":
			s.License, _ = p.str(v, key, line)
		case "compatibility":
			var ok bool
			if s.Compatibility, ok = p.str(v, key, line); ok {
				if n := utf8.RuneCountInString(s.Compatibility); n < 1 || n > MaxCompatibilityLen {
					p.errorf(line(v), key, "must be 1-%d characters when given (it is %d)", MaxCompatibilityLen, n)
				}
			}
		case "metadata":
			s.Metadata = p.stringMap(v, key, line)
		case "allowed-tools":
			allowedDash = v
			s.AllowedTools = p.words(v, key, line)
		case "allowed_tools":
			allowedSnake = v
			s.AllowedTools = p.words(v, key, line)
		case "user_invocable", "user-invocable":
			if b, ok := p.boolean(v, key, line); ok {
				s.UserInvocable = b
			}
		case "disable_model_invocation", "disable-model-invocation":
			s.DisableModelInvocation, _ = p.boolean(v, key, line)
		case "tags":
			s.Tags = p.words(v, key, line)
		default:
			p.warnf(line(k), key, "not a field of the Agent Skills specification or a known extension; ignored")
		}
	}
	if allowedDash != nil && allowedSnake != nil {
		p.errorf(line(allowedSnake), "allowed_tools", "give allowed-tools or allowed_tools, not both")
	}
	for _, pair := range [][2]string{{"user_invocable", "user-invocable"}, {"disable_model_invocation", "disable-model-invocation"}} {
		if seen[pair[0]] != nil && seen[pair[1]] != nil {
			p.errorf(line(seen[pair[1]]), pair[1], "give %s or %s, not both", pair[0], pair[1])
		}
	}

	nameLine := fmLine
	if k := seen["name"]; k != nil {
		nameLine = line(k)
	}
	p.checkName(s.Name, seen["name"] != nil, nameLine, dirName)
	descLine := fmLine
	if k := seen["description"]; k != nil {
		descLine = line(k)
	}
	switch n := utf8.RuneCountInString(s.Description); {
	case seen["description"] == nil:
		p.errorf(descLine, "description", "is required: 1-%d characters saying what the skill does and when to use it", MaxDescriptionLen)
	case strings.TrimSpace(s.Description) == "":
		p.errorf(descLine, "description", "must not be empty (1-%d characters)", MaxDescriptionLen)
	case n > MaxDescriptionLen:
		p.errorf(descLine, "description", "must be at most %d characters (it is %d)", MaxDescriptionLen, n)
	}
	return s
}

// checkName applies the specification's rules for name.
func (p *parser) checkName(name string, given bool, line int, dirName string) {
	const field = "name"
	switch n := utf8.RuneCountInString(name); {
	case !given:
		p.errorf(line, field, "is required: 1-%d lowercase letters, digits and hyphens, equal to the directory name", MaxNameLen)
		return
	case n == 0:
		p.errorf(line, field, "must not be empty (1-%d characters)", MaxNameLen)
		return
	case n > MaxNameLen:
		p.errorf(line, field, "must be at most %d characters (it is %d)", MaxNameLen, n)
	}
	if !nameChars.Get().MatchString(name) {
		p.errorf(line, field, "may hold only lowercase letters a-z, digits and hyphens (%q does not)", name)
	} else if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		p.errorf(line, field, "must not start or end with a hyphen (%q)", name)
	} else if strings.Contains(name, "--") {
		p.errorf(line, field, "must not hold two hyphens in a row (%q)", name)
	}
	if dirName != "" && name != dirName {
		p.errorf(line, field, "must equal the skill's directory name %q (it is %q)", dirName, name)
	}
}

// str returns a scalar field's text.
func (p *parser) str(v *yaml.Node, field string, line func(*yaml.Node) int) (string, bool) {
	if v.Kind != yaml.ScalarNode {
		p.errorf(line(v), field, "must be a string, not a %s", kindName(v))
		return "", false
	}
	if v.Tag == "!!null" {
		return "", true
	}
	return v.Value, true
}

func (p *parser) boolean(v *yaml.Node, field string, line func(*yaml.Node) int) (bool, bool) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		var b bool
		if err := v.Decode(&b); err == nil {
			return b, true
		}
	}
	p.errorf(line(v), field, "must be true or false, not %s", describeNode(v))
	return false, false
}

// words accepts a space-separated string or a list of strings.
func (p *parser) words(v *yaml.Node, field string, line func(*yaml.Node) int) []string {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil
		}
		return strings.Fields(v.Value)
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for i, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				p.errorf(line(item), fmt.Sprintf("%s[%d]", field, i), "must be a string, not %s", describeNode(item))
				continue
			}
			out = append(out, item.Value)
		}
		return out
	}
	p.errorf(line(v), field, "must be a space-separated string or a list of strings, not a %s", kindName(v))
	return nil
}

// stringMap accepts a mapping of strings to strings.
func (p *parser) stringMap(v *yaml.Node, field string, line func(*yaml.Node) int) map[string]string {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		p.errorf(line(v), field, "must be a mapping of string keys to string values, not a %s", kindName(v))
		return nil
	}
	out := make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		sub := field + "." + k.Value
		if k.Kind != yaml.ScalarNode {
			p.errorf(line(k), field, "keys must be strings, not a %s", kindName(k))
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.errorf(line(k), sub, "a key may appear once")
			continue
		}
		if val.Kind != yaml.ScalarNode {
			p.errorf(line(val), sub, "must be a string, not a %s", kindName(val))
			continue
		}
		out[k.Value] = val.Value
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "document"
}

func describeNode(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!null" {
			return "an empty value"
		}
		return strconv.Quote(n.Value)
	}
	return "a " + kindName(n)
}

// sortProblems orders problems by file, then line.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
}
