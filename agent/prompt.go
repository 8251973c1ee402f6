package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/praxis-tools/praxis/praxis"
)

// systemTemplate is the default system prompt, in the part of text/template
// that render fills.
//
//go:embed system.md
var systemTemplate string

// PromptInfo is what the default system prompt tells the model.
type PromptInfo struct {
	// Workspace is the workspace root.
	Workspace string
	// Hashline says whether the hashline read and edit tools are present.
	Hashline bool
	// Skills is the skill catalog, one line per skill; empty when there
	// are no skills.
	Skills string
	// Memory lists the memory keys; empty when there are none.
	Memory string
}

// maxPromptSection bounds the skill catalog and memory listing put into the
// system prompt.
const maxPromptSection = 8 << 10

// GatherPromptInfo describes the workspace and the catalog for the system
// prompt. The skill catalog and the memory keys come from the catalog's
// list_skills and list_memory tools, when it has them.
func GatherPromptInfo(ctx context.Context, workspace string, tools *praxis.Catalog) PromptInfo {
	info := PromptInfo{Workspace: workspace}
	_, read := tools.Lookup("read_file")
	_, edit := tools.Lookup("edit_file")
	info.Hashline = read && edit
	info.Skills = listing(ctx, tools, "list_skills")
	info.Memory = listing(ctx, tools, "list_memory")
	return info
}

// listing calls a read-only listing tool with no arguments and returns its
// text, or "" when the tool is absent, fails or lists nothing.
func listing(ctx context.Context, tools *praxis.Catalog, name string) string {
	t, ok := tools.Lookup(name)
	if !ok || !t.Annotations.ReadOnly {
		return ""
	}
	res, err := tools.Call(ctx, name, json.RawMessage(`{}`))
	if err != nil || res.IsError {
		return ""
	}
	text := strings.TrimSpace(res.Text)
	if len(text) > maxPromptSection {
		text = text[:maxPromptSection] + "\n… (cut; call " + name + " for the rest)"
	}
	return text
}

// SystemPrompt renders the default system prompt.
func SystemPrompt(info PromptInfo) string {
	return strings.TrimSpace(render(systemTemplate, info.field)) + "\n"
}

// field returns the text of the PromptInfo field name and whether it is
// set (true, or not empty), as text/template would print and test it.
func (info PromptInfo) field(name string) (text string, set bool) {
	switch name {
	case "Workspace":
		return info.Workspace, info.Workspace != ""
	case "Hashline":
		return strconv.FormatBool(info.Hashline), info.Hashline
	case "Skills":
		return info.Skills, info.Skills != ""
	case "Memory":
		return info.Memory, info.Memory != ""
	}
	panic(fmt.Sprintf("agent: the system prompt has .%s, which is not a field of PromptInfo", name))
}

// render fills tmpl, written in a part of text/template's language: text,
// {{.Field}}, {{if .Field}} ... {{end}} (nested or not), and the markers
// "{{- " and " -}}" that trim the white space before and after an action.
// It panics on anything else, a mistake in the embedded template that
// TestSystemPromptTemplate catches.
//
// text/template is not used because its Execute calls methods by name:
// with it linked, the linker keeps every exported method of every type
// that could reach an interface, 13% of the binary (20.5 → 17.8 MB), all
// of it mapped into every process.
func render(tmpl string, field func(name string) (text string, set bool)) string {
	var b strings.Builder
	emit := true
	var outer []bool // emit of each open if's surroundings
	trimNext := false
	for {
		i := strings.Index(tmpl, "{{")
		if i < 0 {
			i = len(tmpl)
		}
		text := tmpl[:i]
		if trimNext {
			text = strings.TrimLeft(text, " \t\r\n")
		}
		if i == len(tmpl) {
			if len(outer) > 0 {
				panic("agent: the system prompt has an {{if}} without {{end}}")
			}
			if emit {
				b.WriteString(text)
			}
			return b.String()
		}
		j := strings.Index(tmpl[i:], "}}")
		if j < 0 {
			panic("agent: the system prompt has an unclosed {{")
		}
		action := tmpl[i+2 : i+j]
		tmpl = tmpl[i+j+2:]
		if a, ok := strings.CutPrefix(action, "- "); ok {
			text, action = strings.TrimRight(text, " \t\r\n"), a
		}
		action, trimNext = strings.CutSuffix(action, " -")
		if emit {
			b.WriteString(text)
		}
		switch action = strings.TrimSpace(action); {
		case action == "end":
			if len(outer) == 0 {
				panic("agent: the system prompt has an {{end}} without {{if}}")
			}
			emit, outer = outer[len(outer)-1], outer[:len(outer)-1]
		case strings.HasPrefix(action, "if ."):
			_, set := field(action[len("if ."):])
			outer = append(outer, emit)
			emit = emit && set
		case strings.HasPrefix(action, "."):
			if text, _ := field(action[1:]); emit {
				b.WriteString(text)
			}
		default:
			panic(fmt.Sprintf("agent: the system prompt has {{%s}}, which render does not do", action))
		}
	}
}
