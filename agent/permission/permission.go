// Package permission decides whether an agent may make a tool call, from
// allow, ask and deny rules.
//
// A rule names a tool, optionally with a pattern for its argument:
//
//	read_file                 every read_file call
//	mcp__github__*            every tool of the github MCP server
//	bash(git push*)           bash commands that run "git push..."
//	edit_file(**/*.lock)      edit_file calls on a .lock file anywhere
//	Bash(npm run test:*)      Claude Code's spelling: the same as bash(npm run test*)
//	Edit(src/**)              edit_file, write_file and patch_file calls under src/
//
// The tool part is a glob over the tool name ('*' any run of characters,
// '?' one), or one of Claude Code's tool names (Bash, Read, Edit, Write,
// MultiEdit, Glob, Grep, LS, ...), which stands for the Praxis tools that
// Claude Code's rule governs: Read for every tool that reads files, Edit for
// every tool that edits them.
//
// The pattern is matched against the call's subject. A "command" argument
// is read as a bash program (see below) and the pattern is a glob over each
// simple command it runs, in which '*' also matches '/' and spaces (a
// trailing ":*" is read as "*"). Path arguments ("path", "file_path",
// "paths", the "path" of each of "edits" and "files", and every file a
// "patch" names) are matched by doublestar
// globs in the way of Claude Code and .gitignore: a pattern is relative to
// the workspace ("src/**", "./.env" and "/src/**" alike); "//abs/**" is an
// absolute path and "~/x" one under the home directory; a pattern without
// a slash ("*.lock") matches in every directory. A path that is a symbolic
// link is matched both as written and as the file it leads to. For any
// other tool, the pattern is a command glob over the call's arguments as
// compact JSON.
//
// A command is parsed, not split: every simple command in lists,
// pipelines, subshells, command and process substitutions, functions and
// the strings of sh -c, bash -c, su -c, env -S, watch, trap and alias is
// matched on its own, with leading assignments dropped, quotes removed,
// white space made single, argv[0] compared by base name (/usr/bin/git is
// git), commands that run another (env, sudo, nice, timeout, xargs, exec,
// command, find -exec, ...) unwrapped, and git's global options (-C dir,
// -c k=v, --git-dir=...) dropped before the subcommand. A program whose
// commands cannot be known without running it (eval, "$cmd push", a shell
// that reads its commands from its input, a string that does not parse)
// meets every deny and ask rule of its tool; a command whose later words
// are only known at run time ("git $sub") meets every deny and ask rule
// that some completion of its known words would meet.
//
// Deny wins over ask, ask over allow; a call no rule names is allowed (the
// sandbox policy still governs what commands can do). An allow rule with a
// command pattern allows a program only when it matches every one of its
// commands. An ask rule asks a Prompter; without one (no terminal, --json
// runs) it refuses, naming the rule.
//
// Rules are a guard for a cooperative model, not a boundary: a program can
// always do what a rule denies in a way no static reading sees (a script
// file, python -c, a git alias in the repository's config). The sandbox
// policy is what confines commands.
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
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"

	"github.com/praxis-tools/praxis/internal/claudecode"
	"github.com/praxis-tools/praxis/internal/jsonerr"
	"github.com/praxis-tools/praxis/praxis/patch"
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
	// Tool is the tool-name glob, or a Claude Code tool name, as written.
	Tool string
	// Pattern is the argument pattern; HasPattern tells "x()" from "x".
	Pattern    string
	HasPattern bool

	tool   *regexp.Regexp
	tools  []string // the Praxis tools of a Claude Code tool name
	claude bool     // Tool is a Claude Code tool name
	cmd    glob     // Pattern as a command glob
	path   string   // Pattern as a doublestar glob
	abs    bool     // path is absolute
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
		if strings.TrimSpace(r.Pattern) == "" {
			return r, fmt.Errorf("permission: rule %q: empty pattern (write the tool name alone to match every call)", s)
		}
		if !doublestar.ValidatePattern(r.Pattern) {
			return r, fmt.Errorf("permission: rule %q: malformed pattern", s)
		}
		r.cmd = commandGlob(r.Pattern)
		r.path, r.abs = pathGlob(r.Pattern)
	}
	r.Tool = strings.TrimSpace(name)
	if r.Tool == "" || strings.ContainsAny(r.Tool, " \t()") {
		return r, fmt.Errorf("permission: rule %q: no valid tool name", s)
	}
	if tools, ok := claudecode.RuleTools(r.Tool); ok {
		r.claude, r.tools = true, tools
	} else {
		r.tool = globRegexp(r.Tool)
	}
	return r, nil
}

// commandGlob normalises a command pattern: white space made single, a
// trailing ":*" read as "*", and a first word with a directory reduced to
// its base name, as commands are.
func commandGlob(p string) glob {
	p = strings.Join(strings.Fields(p), " ")
	if q, ok := strings.CutSuffix(p, ":*"); ok {
		p = q + "*"
	}
	first, rest, _ := strings.Cut(p, " ")
	if strings.Contains(first, "/") && !strings.ContainsAny(first, "*?") {
		p = strings.TrimSpace(path.Base(first) + " " + rest)
	}
	return glob(p)
}

// pathGlob reads a path pattern the way Claude Code does: "//x" is the
// absolute path /x, "~/x" is under the home directory, "/x" and "./x" are
// relative to the workspace, and a pattern without a slash matches in every
// directory.
func pathGlob(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "//"):
		return path.Clean(p[1:]), true
	case strings.HasPrefix(p, "~/"):
		if home, err := os.UserHomeDir(); err == nil {
			return path.Join(filepath.ToSlash(home), p[2:]), true
		}
		return p, false
	}
	if !strings.Contains(strings.TrimSuffix(p, "/"), "/") {
		return "**/" + p, false
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/"), false
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

// names reports whether r's tool part names the tool called tool.
func (r *Rule) names(tool string) bool {
	if r.claude {
		return slices.Contains(r.tools, tool)
	}
	return r.tool.MatchString(tool)
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
		if err := yaml.Unmarshal(b, &s); err != nil {
			return s.Permissions, fmt.Errorf("the permissions of %s are not valid YAML: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
		}
	} else if err := json.Unmarshal(b, &s); err != nil {
		return s.Permissions, fmt.Errorf("the permissions of %s are not valid JSON: %s", name, jsonerr.Describe(err))
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

// Unused returns a message for each rule whose tool part names none of
// tools (the tools of the session), saying what it names: a rule for a
// Claude Code tool Praxis does not have, or a misspelt name, does nothing,
// and the user should hear of it at start.
func (p *Policy) Unused(tools []string) []string {
	if p == nil {
		return nil
	}
	var out []string
	for i := range p.rules {
		r := &p.rules[i]
		if slices.ContainsFunc(tools, r.names) {
			continue
		}
		switch {
		case r.claude && len(r.tools) == 0:
			out = append(out, fmt.Sprintf("the rule %s names %s, a Claude Code tool Praxis does not have; it does nothing", r, r.Tool))
		case r.claude:
			out = append(out, fmt.Sprintf("the rule %s names %s, whose Praxis tools (%s) this session does not have; it does nothing", r, r.Tool, strings.Join(r.tools, ", ")))
		default:
			out = append(out, fmt.Sprintf("the rule %s names no tool of this session; it does nothing", r))
		}
	}
	return out
}

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
		if s, ok := r.match(p, tool, subj); ok {
			return Decision{Effect: r.Effect, Rule: r, Subject: s}
		}
	}
	return Decision{Effect: Allow}
}

// subjects is what the argument patterns of a call are matched against.
type subjects struct {
	program  *program // the "command" argument, if any
	paths    []string // workspace-relative (or absolute, outside) paths
	fallback string   // the arguments as compact JSON
}

func (p *Policy) subjects(args json.RawMessage) subjects {
	var s subjects
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		s.fallback = string(args)
		return s
	}
	if c, ok := m["command"].(string); ok && strings.TrimSpace(c) != "" {
		s.program = parseProgram(c)
	}
	addPath := func(v any) {
		str, ok := v.(string)
		if !ok || str == "" {
			return
		}
		s.paths = append(s.paths, p.rel(str))
		if real := p.realRel(str); real != "" && real != p.rel(str) {
			s.paths = append(s.paths, real)
		}
	}
	addPath(m["path"])
	addPath(m["file_path"])
	if ps, ok := m["paths"].([]any); ok {
		for _, v := range ps {
			addPath(v)
		}
	}
	for _, key := range []string{"edits", "files"} {
		if es, ok := m[key].([]any); ok {
			for _, e := range es {
				if em, ok := e.(map[string]any); ok {
					addPath(em["path"])
				}
			}
		}
	}
	if text, ok := m["patch"].(string); ok {
		// patch_file's paths are in its patch, read by the parser the
		// tool uses; a patch it cannot read is refused by the tool.
		if files, _, err := patch.Parse(text); err == nil {
			for _, f := range files {
				addPath(f.OldPath)
				addPath(f.NewPath)
			}
		}
	}
	if s.program == nil && len(s.paths) == 0 {
		b, _ := json.Marshal(m) // sorted keys, compact
		s.fallback = string(b)
	}
	return s
}

// rel returns name relative to the workspace, cleaned, with '/' separators;
// a path outside the workspace stays absolute.
func (p *Policy) rel(name string) string {
	name = filepath.Clean(name)
	if p.root != "" && filepath.IsAbs(name) {
		if r, err := filepath.Rel(p.root, name); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			name = r
		}
	}
	return path.Clean(filepath.ToSlash(name))
}

// realRel returns the path name leads to once symbolic links are
// resolved, in the form rel gives; "" when it cannot be resolved.
func (p *Policy) realRel(name string) string {
	if p.root == "" {
		return ""
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(p.root, name)
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return ""
	}
	if root, err := filepath.EvalSymlinks(p.root); err == nil {
		if r, err := filepath.Rel(root, real); err == nil && filepath.IsLocal(r) {
			return path.Clean(filepath.ToSlash(r))
		}
	}
	return p.rel(real)
}

// abs returns a subject path as an absolute one.
func (p *Policy) abs(rel string) string {
	if path.IsAbs(rel) || p.root == "" {
		return rel
	}
	return path.Join(filepath.ToSlash(p.root), rel)
}

// match reports whether r matches a call of tool with subjects s, and the
// subject that matched.
func (r *Rule) match(p *Policy, tool string, s subjects) (string, bool) {
	if !r.names(tool) {
		return "", false
	}
	if !r.HasPattern {
		return "", true
	}
	if prog := s.program; prog != nil {
		if r.Effect == Allow {
			// Allowing a part does not allow the whole.
			if prog.undecidable != "" || len(prog.commands) == 0 {
				return "", false
			}
			for _, c := range prog.commands {
				if c.open || !r.cmd.match(c.text) {
					return "", false
				}
			}
			return prog.whole, true
		}
		if prog.undecidable != "" {
			return prog.whole + " (" + prog.undecidable + ")", true
		}
		if r.cmd.match(prog.whole) {
			return prog.whole, true
		}
		for _, c := range prog.commands {
			if c.open && r.cmd.matchPrefix(c.text+" ") || r.cmd.match(c.text) {
				return c.text, true
			}
		}
	}
	for _, sp := range s.paths {
		subj := sp
		if r.abs {
			subj = p.abs(sp)
		}
		if ok, _ := doublestar.Match(r.path, subj); ok {
			return sp, true
		}
	}
	if s.fallback != "" && r.cmd.match(s.fallback) {
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
