// Package claudecode maps the tool names of Claude Code's settings files
// (permission rules and hook matchers) to Praxis's tools, so that a
// settings file written for Claude Code means the same under Praxis.
package claudecode

import "slices"

// ruleTools maps a Claude Code tool name, as a permission rule writes it,
// to the Praxis tools the rule governs. Claude applies Read rules to every
// tool that reads files and Edit rules to every tool that edits them. A
// name mapped to nil is a Claude Code tool Praxis does not have.
var ruleTools = map[string][]string{
	"Bash":                 {"bash"},
	"BashOutput":           {"job_output"},
	"KillShell":            {"job_kill"},
	"KillBash":             {"job_kill"},
	"Read":                 {"read_file", "grep", "glob", "list_dir"},
	"Edit":                 {"edit_file", "write_file", "patch_file"},
	"MultiEdit":            {"edit_file"},
	"Write":                {"write_file"},
	"Glob":                 {"glob"},
	"Grep":                 {"grep"},
	"LS":                   {"list_dir"},
	"Skill":                {"load_skill"},
	"WebFetch":             nil,
	"WebSearch":            nil,
	"Task":                 nil,
	"Agent":                nil,
	"NotebookEdit":         nil,
	"NotebookRead":         nil,
	"TodoWrite":            nil,
	"TodoRead":             nil,
	"ExitPlanMode":         nil,
	"SlashCommand":         nil,
	"ListMcpResourcesTool": nil,
	"ReadMcpResourceTool":  nil,
}

// hookTools maps a Praxis tool to the Claude Code tools it stands for in a
// hook matcher. A matcher names one tool: "Edit" matches Claude's Edit tool
// and not its Write tool.
var hookTools = map[string][]string{
	"bash":       {"Bash"},
	"job_output": {"BashOutput"},
	"job_kill":   {"KillShell", "KillBash"},
	"read_file":  {"Read"},
	"edit_file":  {"Edit", "MultiEdit"},
	"write_file": {"Write"},
	"patch_file": {"Edit"},
	"glob":       {"Glob"},
	"grep":       {"Grep"},
	"list_dir":   {"LS"},
	"load_skill": {"Skill"},
}

// RuleTools returns the Praxis tools a permission rule naming the Claude
// Code tool name governs. known is false when name is not a Claude Code
// tool; tools is empty when it is one Praxis does not have.
func RuleTools(name string) (tools []string, known bool) {
	t, ok := ruleTools[name]
	return slices.Clone(t), ok
}

// HookNames returns the Claude Code tool names a hook matcher may use for
// the Praxis tool called tool.
func HookNames(tool string) []string { return slices.Clone(hookTools[tool]) }

// IsTool reports whether name is a Claude Code tool name.
func IsTool(name string) bool {
	_, ok := ruleTools[name]
	return ok
}

// Names returns every Claude Code tool name the package knows, sorted.
func Names() []string {
	out := make([]string, 0, len(ruleTools))
	for n := range ruleTools {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
