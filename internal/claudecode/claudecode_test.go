package claudecode

import (
	"slices"
	"testing"
)

func TestRuleTools(t *testing.T) {
	for _, c := range []struct {
		name  string
		tools []string
		known bool
	}{
		{"Read", []string{"read_file", "grep", "glob", "list_dir"}, true},
		{"Bash", []string{"bash"}, true},
		{"WebFetch", nil, true},
		{"ReadMcpResourceTool", nil, true},
		{"read", nil, false},
		{"", nil, false},
	} {
		tools, known := RuleTools(c.name)
		if !slices.Equal(tools, c.tools) || known != c.known {
			t.Errorf("RuleTools(%q) = %q, %v; want %q, %v", c.name, tools, known, c.tools, c.known)
		}
		if known != IsTool(c.name) {
			t.Errorf("IsTool(%q) = %v, RuleTools says %v", c.name, !known, known)
		}
	}
	// What the caller gets is its own.
	tools, _ := RuleTools("Read")
	tools[0] = "changed"
	if again, _ := RuleTools("Read"); again[0] != "read_file" {
		t.Errorf("changing a result changed the table: %q", again)
	}
}

func TestHookNames(t *testing.T) {
	for tool, want := range map[string][]string{
		"edit_file": {"Edit", "MultiEdit"},
		"job_kill":  {"KillShell", "KillBash"},
		"read_file": {"Read"},
		"delete":    nil,
	} {
		if got := HookNames(tool); !slices.Equal(got, want) {
			t.Errorf("HookNames(%q) = %q, want %q", tool, got, want)
		}
	}
	// Every hook name is a Claude Code tool name.
	for _, e := range hookTools {
		for _, n := range e.names {
			if !IsTool(n) {
				t.Errorf("hook name %q of %s is not a known tool name", n, e.name)
			}
		}
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if len(names) != len(ruleTools) || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("Names() = %q: want every name of the table once, sorted", names)
	}
	for _, n := range names {
		if !IsTool(n) {
			t.Errorf("Names() has %q, which IsTool refuses", n)
		}
	}
}
