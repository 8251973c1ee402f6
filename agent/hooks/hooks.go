// Package hooks runs user commands at points of an agent run, in the
// convention Claude Code established, so that existing hook scripts work.
//
// A configuration maps events to matcher groups, each a tool-name regular
// expression and the commands to run:
//
//	{"hooks": {"PreToolUse": [{"matcher": "bash|write_file",
//	    "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]}]}}
//
// The same shape may be written in YAML. A matcher may name Claude Code's
// tools ("Bash", "Edit|Write"), which match the Praxis tools they stand
// for. Each matching command runs with
// "sh -c", gets a JSON description of the event on stdin and the session's
// working directory as its own. Exit status 0 continues (a JSON object on
// stdout may refine the outcome), 2 blocks with stderr as the reason, any
// other status is a non-blocking failure that is reported. A command that
// outlives its timeout is killed with its whole process group and reported;
// it never hangs the run. Processes a command leaves behind in its group are
// killed when it ends.
package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/praxis-tools/praxis/internal/claudecode"
	"github.com/praxis-tools/praxis/internal/jsonerr"
)

// Event names a point of a run where hooks run.
type Event string

// The events.
const (
	SessionStart     Event = "SessionStart"     // a run starts or resumes; matcher against "startup" or "resume"
	UserPromptSubmit Event = "UserPromptSubmit" // the task (or a follow-up prompt) is about to be sent
	PreToolUse       Event = "PreToolUse"       // a tool call is about to run; matcher against the tool name
	PostToolUse      Event = "PostToolUse"      // a tool call has run; matcher against the tool name
	Stop             Event = "Stop"             // the model has answered without calling a tool
)

// knownEvents are the events, in the order a run meets them.
var knownEvents = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// DefaultTimeout bounds a command whose configuration names no timeout.
const DefaultTimeout = 60 * time.Second

// ignoredEvents are events of the Claude Code convention that Praxis does
// not fire; a configuration may name them (a shared settings file does),
// and they are skipped.
var ignoredEvents = []Event{"Notification", "SubagentStop", "PreCompact", "SessionEnd"}

// Config is a hooks configuration.
type Config struct {
	Hooks map[Event][]Group `json:"hooks" yaml:"hooks"`

	// Skipped describes what of the file is not used: events Praxis does
	// not fire and hooks of types other than "command".
	Skipped []string `json:"-" yaml:"-"`
}

// Group is a matcher and the commands it runs.
type Group struct {
	// Matcher is a regular expression that must match the whole tool name
	// (or, for SessionStart, the source). Empty or "*" matches everything;
	// UserPromptSubmit and Stop ignore it.
	Matcher string    `json:"matcher,omitempty" yaml:"matcher,omitempty"`
	Hooks   []Command `json:"hooks" yaml:"hooks"`

	re *regexp.Regexp
}

// Command is one hook command.
type Command struct {
	// Type must be "command" (the only kind there is); empty means it.
	Type    string `json:"type,omitempty" yaml:"type,omitempty"`
	Command string `json:"command" yaml:"command"`
	// Timeout is in seconds; 0 means DefaultTimeout.
	Timeout float64 `json:"timeout,omitempty" yaml:"timeout,omitempty"`
}

// Load reads a configuration file: YAML when its name ends in .yaml or
// .yml, JSON otherwise. Other top-level keys (a settings file's
// "permissions", say) are ignored.
func Load(name string) (*Config, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	ext := strings.ToLower(filepath.Ext(name))
	c, err := Parse(b, ext == ".yaml" || ext == ".yml")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// Parse parses a configuration, YAML if isYAML and JSON otherwise, and
// checks it: known events, compilable matchers, a command in every hook.
// Events of the convention that Praxis does not fire, and hooks of other
// types than "command", are left out and listed in Skipped.
func Parse(b []byte, isYAML bool) (*Config, error) {
	var c Config
	if isYAML {
		if err := yaml.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("not valid YAML for hooks: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
	} else if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("not valid JSON for hooks: %s", jsonerr.Describe(err))
	}
	for _, ev := range ignoredEvents {
		if _, ok := c.Hooks[ev]; ok {
			c.Skipped = append(c.Skipped, fmt.Sprintf("%s hooks (Praxis does not fire %s)", ev, ev))
			delete(c.Hooks, ev)
		}
	}
	for ev, groups := range c.Hooks {
		if !known(ev) {
			return nil, fmt.Errorf("unknown hook event %q (known: %s)", ev, eventList())
		}
		for i := range groups {
			g := &groups[i]
			if g.Matcher != "" && g.Matcher != "*" {
				re, err := regexp.Compile(`^(?:` + g.Matcher + `)$`)
				if err != nil {
					return nil, fmt.Errorf("%s[%d]: matcher: %w", ev, i, err)
				}
				g.re = re
			}
			kept := g.Hooks[:0]
			for j, h := range g.Hooks {
				if h.Type != "" && h.Type != "command" {
					c.Skipped = append(c.Skipped, fmt.Sprintf("%s[%d].hooks[%d]: type %q (only \"command\" hooks run)", ev, i, j, h.Type))
					continue
				}
				kept = append(kept, h)
				if strings.TrimSpace(h.Command) == "" {
					return nil, fmt.Errorf("%s[%d].hooks[%d]: no command", ev, i, j)
				}
				if h.Timeout < 0 {
					return nil, fmt.Errorf("%s[%d].hooks[%d]: negative timeout", ev, i, j)
				}
			}
			g.Hooks = kept
		}
	}
	sort.Strings(c.Skipped)
	return &c, nil
}

// Merge returns one configuration holding the hooks of cs in order: the
// groups of each event from the first, then from the second, and so on.
// Nil configurations are skipped.
func Merge(cs ...*Config) *Config {
	out := &Config{Hooks: map[Event][]Group{}}
	for _, c := range cs {
		if c == nil {
			continue
		}
		for ev, gs := range c.Hooks {
			out.Hooks[ev] = append(out.Hooks[ev], gs...)
		}
		out.Skipped = append(out.Skipped, c.Skipped...)
	}
	return out
}

func known(e Event) bool {
	for _, k := range knownEvents {
		if k == e {
			return true
		}
	}
	return false
}

func eventList() string {
	var b bytes.Buffer
	for i, e := range knownEvents {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(e))
	}
	return b.String()
}

// matches reports whether g applies to subject. A tool matcher may name a
// Praxis tool or, as a settings file written for Claude Code does, the
// Claude Code tool it stands for: "Bash" matches bash, "Edit|Write"
// edit_file and write_file.
func (g *Group) matches(subject string) bool {
	if g.re == nil || g.re.MatchString(subject) {
		return true
	}
	return slices.ContainsFunc(claudecode.HookNames(subject), g.re.MatchString)
}

// Unused returns a message for each PreToolUse and PostToolUse matcher
// that matches none of tools (the tools of the session), so that a matcher
// naming a Claude Code tool Praxis does not have, or a misspelt one, is
// heard of at start.
func (c *Config) Unused(tools []string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, ev := range []Event{PreToolUse, PostToolUse} {
		for i := range c.Hooks[ev] {
			g := &c.Hooks[ev][i]
			if slices.ContainsFunc(tools, g.matches) {
				continue
			}
			var claude []string
			for _, n := range claudecode.Names() {
				if g.re.MatchString(n) {
					claude = append(claude, n)
				}
			}
			if len(claude) > 0 {
				out = append(out, fmt.Sprintf("%s matcher %q names %s, which Praxis does not have; its hooks never run", ev, g.Matcher, strings.Join(claude, ", ")))
			} else {
				out = append(out, fmt.Sprintf("%s matcher %q matches no tool of this session; its hooks never run", ev, g.Matcher))
			}
		}
	}
	return out
}

// commands returns the commands configured for ev that match subject, in
// configuration order.
func (c *Config) commands(ev Event, subject string) []Command {
	if c == nil {
		return nil
	}
	var out []Command
	for i := range c.Hooks[ev] {
		g := &c.Hooks[ev][i]
		// UserPromptSubmit and Stop have nothing to match: their matchers
		// are ignored, as the convention has it.
		if ev == UserPromptSubmit || ev == Stop || g.matches(subject) {
			out = append(out, g.Hooks...)
		}
	}
	return out
}

// Has reports whether any hook is configured for ev.
func (c *Config) Has(ev Event) bool { return c != nil && len(c.Hooks[ev]) > 0 }
