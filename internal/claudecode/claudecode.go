// Package claudecode maps the tool names of Claude Code's settings files
// (permission rules and hook matchers) to Praxis's tools, so that a
// settings file written for Claude Code means the same under Praxis.
package claudecode

import "slices"

// ruleTools maps a Claude Code tool name, as a permission rule writes it,
// to the Praxis tools the rule governs. Claude applies Read rules to every
// tool that reads files and Edit rules to every tool that edits them. A
// name mapped to nil is a Claude Code tool Praxis does not have.
//
// The tables are slices, which the compiler lays out in the binary, rather
// than maps, which every process would build at start-up; they are short
// and rarely looked up.
var ruleTools = []entry{
	{"Bash", []string{"bash"}},
	{"BashOutput", []string{"job_output"}},
	{"KillShell", []string{"job_kill"}},
	{"KillBash", []string{"job_kill"}},
	{"Read", []string{"read_file", "grep", "glob", "list_dir"}},
	{"Edit", []string{"edit_file", "write_file", "patch_file"}},
	{"MultiEdit", []string{"edit_file"}},
	{"Write", []string{"write_file"}},
	{"Glob", []string{"glob"}},
	{"Grep", []string{"grep"}},
	{"LS", []string{"list_dir"}},
	{"Skill", []string{"load_skill"}},
	{"WebFetch", nil},
	{"WebSearch", nil},
	{"Task", nil},
	{"Agent", nil},
	{"NotebookEdit", nil},
	{"NotebookRead", nil},
	{"TodoWrite", nil},
	{"TodoRead", nil},
	{"ExitPlanMode", nil},
	{"SlashCommand", nil},
	{"ListMcpResourcesTool", nil},
	{"ReadMcpResourceTool", nil},
}

// hookTools maps a Praxis tool to the Claude Code tools it stands for in a
// hook matcher. A matcher names one tool: "Edit" matches Claude's Edit tool
// and not its Write tool.
var hookTools = []entry{
	{"bash", []string{"Bash"}},
	{"job_output", []string{"BashOutput"}},
	{"job_kill", []string{"KillShell", "KillBash"}},
	{"read_file", []string{"Read"}},
	{"edit_file", []string{"Edit", "MultiEdit"}},
	{"write_file", []string{"Write"}},
	{"patch_file", []string{"Edit"}},
	{"glob", []string{"Glob"}},
	{"grep", []string{"Grep"}},
	{"list_dir", []string{"LS"}},
	{"load_skill", []string{"Skill"}},
}

// RuleTools returns the Praxis tools a permission rule naming the Claude
// Code tool name governs. known is false when name is not a Claude Code
// tool; tools is empty when it is one Praxis does not have.
func RuleTools(name string) (tools []string, known bool) {
	t, ok := lookup(ruleTools, name)
	return slices.Clone(t), ok
}

// HookNames returns the Claude Code tool names a hook matcher may use for
// the Praxis tool called tool.
func HookNames(tool string) []string {
	t, _ := lookup(hookTools, tool)
	return slices.Clone(t)
}

// IsTool reports whether name is a Claude Code tool name.
func IsTool(name string) bool {
	_, ok := lookup(ruleTools, name)
	return ok
}

// Names returns every Claude Code tool name the package knows, sorted.
func Names() []string {
	out := make([]string, 0, len(ruleTools))
	for _, e := range ruleTools {
		out = append(out, e.name)
	}
	slices.Sort(out)
	return out
}

// entry is a row of a table: a tool's name and the names it maps to.
type entry struct {
	name  string
	names []string
}

func lookup(table []entry, name string) ([]string, bool) {
	for _, e := range table {
		if e.name == name {
			return e.names, true
		}
	}
	return nil, false
}
