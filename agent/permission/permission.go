// Package permission decides whether an agent may make a tool call, from
// allow, ask and deny rules.
//
// A rule names a tool, optionally with a pattern for its argument:
//
//	read_file                 every read_file call
//	mcp__github__*            every tool of the github MCP server
//	bash(git push*)           bash calls whose command starts with "git push"
//	edit_file(**/*.lock)      edit_file calls on a .lock file anywhere
//
// The tool part is a glob over the tool name ('*' any run of characters,
// '?' one). The pattern is matched against the call's subject: a "command"
// argument as a glob in which '*' also matches '/' and spaces (a trailing
// ":*" is read as "*"); path arguments ("path", "file_path", "paths", and
// the "path" of each of "edits") as doublestar globs over the
// workspace-relative path; for any other tool, the call's arguments as
// compact JSON, with command glob rules.
//
// Deny wins over ask, ask over allow; a call no rule names is allowed (the
// sandbox policy still governs what commands can do). A deny or ask rule on
// a command also applies to each part of a compound command (split at
// "&&", "||", ";", "|" and newlines), so "cd x && git push" is caught by
// bash(git push*). An ask rule asks a Prompter; without one (no terminal,
// --json runs) it refuses, naming the rule.
package permission

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"
)

// Effect is what a rule does to the calls it matches.
type Effect string

// The effects, weakest first.
const (
	Allow Effect = "allow"
	Ask   Effect = "ask"
	Deny  Effect = "deny"
)

// Rule is one parsed rule.
type Rule struct {
	Effect Effect
	// Tool is the tool-name glob.
	Tool string
	// Pattern is the argument pattern; HasPattern tells "x()" from "x".
	Pattern    string
	HasPattern bool

	tool *regexp.Regexp
	cmd  *regexp.Regexp // Pattern as a command glob
}

// String returns the rule as written, with its effect: "deny(bash(rm -rf*))".
func (r Rule) String() string {
	s := r.Tool
	if r.HasPattern {
		s += "(" + r.Pattern + ")"
	}
	return string(r.Effect) + "(" + s + ")"
}

// ParseRule parses one rule of the given effect.
func ParseRule(effect Effect, s string) (Rule, error) {
	r := Rule{Effect: effect}
	switch effect {
	case Allow, Ask, Deny:
	default:
		return r, fmt.Errorf("permission: unknown effect %q", effect)
	}
	s = strings.TrimSpace(s)
	name, rest, has := strings.Cut(s, "(")
	if has {
		if !strings.HasSuffix(rest, ")") {
			return r, fmt.Errorf("permission: rule %q: missing the closing parenthesis", s)
		}
		r.Pattern, r.HasPattern = strings.TrimSuffix(rest, ")"), true
		if r.Pattern == "" {
			return r, fmt.Errorf("permission: rule %q: empty pattern (write the tool name alone to match every call)", s)
		}
		if !doublestar.ValidatePattern(r.Pattern) {
			return r, fmt.Errorf("permission: rule %q: malformed pattern", s)
		}
		p := r.Pattern
		if q, ok := strings.CutSuffix(p, ":*"); ok {
			p = q + "*"
		}
		r.cmd = globRegexp(p)
	}
	r.Tool = strings.TrimSpace(name)
	if r.Tool == "" || strings.ContainsAny(r.Tool, " \t()") {
		return r, fmt.Errorf("permission: rule %q: no valid tool name", s)
	}
	r.tool = globRegexp(r.Tool)
	return r, nil
}

// globRegexp compiles a glob in which '*' matches any run of characters and
// '?' any one character.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, c := range glob {
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

// Rules are the rules of a settings file or of the command line.
type Rules struct {
	Allow []string `json:"allow,omitempty" yaml:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty" yaml:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty" yaml:"deny,omitempty"`
}

// Load reads the "permissions" object of a settings file, YAML when its
// name ends in .yaml or .yml and JSON otherwise. Other keys are ignored, so
// one file can hold hooks and permissions.
func Load(name string) (Rules, error) {
	var s struct {
		Permissions Rules `json:"permissions" yaml:"permissions"`
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return s.Permissions, fmt.Errorf("permission: %w", err)
	}
	ext := strings.ToLower(filepath.Ext(name))
	if ext == ".yaml" || ext == ".yml" {
		err = yaml.Unmarshal(b, &s)
	} else {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return s.Permissions, fmt.Errorf("permission: %s: %w", name, err)
	}
	return s.Permissions, nil
}

// Policy is a parsed set of rules. It is safe for concurrent use.
type Policy struct {
	rules []Rule
	// root, when set, is the workspace's absolute path: absolute path
	// arguments inside it are matched relative to it.
	root string
}

// New parses rules into a policy. root is the workspace directory ("" when
// paths are to be matched as given).
func New(rules Rules, root string) (*Policy, error) {
	p := &Policy{}
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, fmt.Errorf("permission: %w", err)
		}
		p.root = abs
	}
	for _, set := range []struct {
		e  Effect
		ss []string
	}{{Deny, rules.Deny}, {Ask, rules.Ask}, {Allow, rules.Allow}} {
		for _, s := range set.ss {
			r, err := ParseRule(set.e, s)
			if err != nil {
				return nil, err
			}
			p.rules = append(p.rules, r)
		}
	}
	return p, nil
}

// Rules returns the policy's rules, deny rules first, then ask, then allow.
func (p *Policy) Rules() []Rule { return append([]Rule(nil), p.rules...) }

// Decision is a policy's answer for one call.
type Decision struct {
	Effect Effect
	// Rule is the rule that decided; nil when none matched and the call is
	// allowed by default.
	Rule *Rule
	// Subject is what the rule's pattern matched (a command, a path).
	Subject string
}

// Decide returns the effect for a call of tool with args: the first
// matching deny rule, else the first ask rule, else the first allow rule,
// else Allow by default.
func (p *Policy) Decide(tool string, args json.RawMessage) Decision {
	if p == nil {
		return Decision{Effect: Allow}
	}
	subj := p.subjects(args)
	for i := range p.rules { // in deny, ask, allow order
		r := &p.rules[i]
		if s, ok := r.match(tool, subj); ok {
			return Decision{Effect: r.Effect, Rule: r, Subject: s}
		}
	}
	return Decision{Effect: Allow}
}

// subjects is what the argument patterns of a call are matched against.
type subjects struct {
	command  string   // the "command" argument, if any
	parts    []string // the command's parts, when compound
	paths    []string // workspace-relative paths
	fallback string   // the arguments as compact JSON
}

func (p *Policy) subjects(args json.RawMessage) subjects {
	var s subjects
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		s.fallback = string(args)
		return s
	}
	if c, ok := m["command"].(string); ok {
		s.command = strings.TrimSpace(c)
		s.parts = splitCommand(s.command)
	}
	addPath := func(v any) {
		if str, ok := v.(string); ok && str != "" {
			s.paths = append(s.paths, p.rel(str))
		}
	}
	addPath(m["path"])
	addPath(m["file_path"])
	if ps, ok := m["paths"].([]any); ok {
		for _, v := range ps {
			addPath(v)
		}
	}
	if es, ok := m["edits"].([]any); ok {
		for _, e := range es {
			if em, ok := e.(map[string]any); ok {
				addPath(em["path"])
			}
		}
	}
	if s.command == "" && len(s.paths) == 0 {
		b, _ := json.Marshal(m) // sorted keys, compact
		s.fallback = string(b)
	}
	return s
}

// rel returns name relative to the workspace, cleaned, with '/' separators.
func (p *Policy) rel(name string) string {
	name = filepath.Clean(name)
	if p.root != "" && filepath.IsAbs(name) {
		if r, err := filepath.Rel(p.root, name); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			name = r
		}
	}
	return path.Clean(filepath.ToSlash(name))
}

var commandSeparators = regexp.MustCompile(`&&|\|\||[;|\n]`)

// splitCommand returns the parts of a compound command, or nil for a simple
// one.
func splitCommand(c string) []string {
	parts := commandSeparators.Split(c, -1)
	if len(parts) < 2 {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// match reports whether r matches a call of tool with subjects s, and the
// subject that matched.
func (r *Rule) match(tool string, s subjects) (string, bool) {
	if !r.tool.MatchString(tool) {
		return "", false
	}
	if !r.HasPattern {
		return "", true
	}
	if s.command != "" {
		if r.cmd.MatchString(s.command) {
			return s.command, true
		}
		if r.Effect != Allow { // allowing a part does not allow the whole
			for _, part := range s.parts {
				if r.cmd.MatchString(part) {
					return part, true
				}
			}
		}
	}
	for _, p := range s.paths {
		if ok, _ := doublestar.Match(r.Pattern, p); ok {
			return p, true
		}
	}
	if s.fallback != "" && r.cmd.MatchString(s.fallback) {
		return s.fallback, true
	}
	return "", false
}

// Question is what an ask rule asks.
type Question struct {
	Tool    string
	Args    json.RawMessage
	Rule    Rule
	Subject string
}

// Prompter asks a person whether a call may go ahead.
type Prompter interface {
	Confirm(ctx context.Context, q Question) (bool, error)
}

// Verdict is the final answer for a call, after any question.
type Verdict struct {
	Allowed bool
	// Reason says why a call was refused, naming the rule; it is what the
	// model is told.
	Reason string
	Rule   *Rule
}

// Check decides a call and, for an ask rule, asks pr. A nil pr (no
// terminal) refuses what an ask rule covers.
func (p *Policy) Check(ctx context.Context, pr Prompter, tool string, args json.RawMessage) Verdict {
	d := p.Decide(tool, args)
	v := Verdict{Rule: d.Rule}
	on := ""
	if d.Subject != "" {
		on = fmt.Sprintf(" (on %q)", clip(d.Subject, 200))
	}
	switch d.Effect {
	case Allow:
		v.Allowed = true
	case Deny:
		v.Reason = fmt.Sprintf("%s is denied by the rule %s%s", tool, d.Rule, on)
	case Ask:
		if pr == nil {
			v.Reason = fmt.Sprintf("%s needs confirmation by the rule %s%s, and there is no terminal to ask on, so it is refused", tool, d.Rule, on)
			break
		}
		ok, err := pr.Confirm(ctx, Question{Tool: tool, Args: args, Rule: *d.Rule, Subject: d.Subject})
		switch {
		case err != nil:
			v.Reason = fmt.Sprintf("%s needs confirmation by the rule %s%s, and asking failed: %v", tool, d.Rule, on, err)
		case !ok:
			v.Reason = fmt.Sprintf("%s was refused by the user, asked by the rule %s%s", tool, d.Rule, on)
		default:
			v.Allowed = true
		}
	}
	return v
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Terminal asks on a terminal: the question on Out, a line from In; "y" or
// "yes" allows. One question at a time.
type Terminal struct {
	In  io.Reader
	Out io.Writer

	mu sync.Mutex
	br *bufio.Reader
}

// Confirm asks q. It returns ctx's error if ctx ends first (the pending
// read is abandoned).
func (t *Terminal) Confirm(ctx context.Context, q Question) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.br == nil {
		t.br = bufio.NewReader(t.In)
	}
	fmt.Fprintf(t.Out, "\nAllow %s %s?\n  rule %s\nAllow? [y/N] ", q.Tool, clip(string(q.Args), 500), q.Rule)
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := t.br.ReadString('\n')
		ch <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case a := <-ch:
		if a.err != nil && a.line == "" {
			return false, fmt.Errorf("reading the answer: %w", a.err)
		}
		switch strings.ToLower(strings.TrimSpace(a.line)) {
		case "y", "yes":
			return true, nil
		}
		return false, nil
	}
}
