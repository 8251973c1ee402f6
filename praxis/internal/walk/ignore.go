package walk

import (
	"bytes"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// The ignore files a walk honours, by name. Their rules follow gitignore(5);
// rules from .ignore files take precedence over rules from .gitignore files,
// as ripgrep and fd have it.
const (
	gitignoreName = ".gitignore"
	dotignoreName = ".ignore"
)

// rule is one line of an ignore file.
type rule struct {
	glob     string // a doublestar pattern
	negate   bool   // "!pattern": a match re-includes the path
	dirOnly  bool   // "pattern/": matches directories only
	anchored bool   // the pattern holds a "/": matched against the path below the file's directory
}

// parseIgnore parses the rules of an ignore file. Lines that are blank,
// comments or not valid patterns are skipped, as git skips them.
func parseIgnore(data []byte) []rule {
	var rules []rule
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if r, ok := parseRule(string(bytes.TrimSuffix(line, []byte{'\r'}))); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// parseRule parses one line of an ignore file.
func parseRule(line string) (rule, bool) {
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	var r rule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	r.glob = escapeBraces(line)
	if !doublestar.ValidatePattern(r.glob) {
		return rule{}, false
	}
	return r, true
}

// escapeBraces escapes "{" and "}", which doublestar treats as alternatives
// and gitignore as plain characters.
func escapeBraces(p string) string {
	if !strings.ContainsAny(p, "{}") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
			continue
		case c == '{' || c == '}':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// match reports whether r matches sub, a path relative to the directory of
// r's ignore file.
func (r *rule) match(sub string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	name := sub
	if !r.anchored {
		name = path.Base(sub)
	}
	ok, _ := doublestar.Match(r.glob, name)
	return ok
}

// verdict is what the ignore rules say of a path.
type verdict int8

const (
	noRule  verdict = iota // no rule matches
	ignored                // the last matching rule ignores it
	kept                   // the last matching rule re-includes it ("!pattern")
)

// ignores holds the rules in force in one directory: its own ignore files'
// rules and, through parent, those of the directories above it.
type ignores struct {
	parent *ignores
	dir    string // workspace-relative directory the rules belong to ("" for the root)
	git    []rule // from dir/.gitignore
	dot    []rule // from dir/.ignore
}

// push returns the rules in force in dir, given the contents of its ignore
// files (nil when absent). It returns s itself when dir has no rules.
func (s *ignores) push(dir string, gitignore, dotignore []byte) *ignores {
	git, dot := parseIgnore(gitignore), parseIgnore(dotignore)
	if len(git) == 0 && len(dot) == 0 {
		return s
	}
	return &ignores{parent: s, dir: dir, git: git, dot: dot}
}

// check returns the verdict on rel, a workspace-relative path below every
// directory of s. The nearest .ignore rule decides first; failing one, the
// nearest .gitignore rule; within one file the last matching line wins.
func (s *ignores) check(rel string, isDir bool) verdict {
	if v := s.checkKind(rel, isDir, false); v != noRule {
		return v
	}
	return s.checkKind(rel, isDir, true)
}

func (s *ignores) checkKind(rel string, isDir bool, git bool) verdict {
	for l := s; l != nil; l = l.parent {
		rules := l.dot
		if git {
			rules = l.git
		}
		if len(rules) == 0 {
			continue
		}
		sub := rel
		if l.dir != "" {
			sub = rel[len(l.dir)+1:]
		}
		for i := len(rules) - 1; i >= 0; i-- {
			if rules[i].match(sub, isDir) {
				if rules[i].negate {
					return kept
				}
				return ignored
			}
		}
	}
	return noRule
}
