package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
	"text/template"

	"github.com/praxis-tools/praxis/praxis"
)

//go:embed system.md
var systemTemplate string

// systemPrompt is the parsed template, parsed on first use rather than at
// start-up: most commands never build a prompt.
var systemPrompt = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("system").Parse(systemTemplate))
})

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
	var b strings.Builder
	if err := systemPrompt().Execute(&b, info); err != nil {
		panic("agent: system prompt template: " + err.Error()) // a build-time mistake
	}
	return strings.TrimSpace(b.String()) + "\n"
}
