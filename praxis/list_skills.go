package praxis

import (
	"context"
	"fmt"
	"strings"

	"github.com/praxis-tools/praxis/skills"
)

type skillEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// listSkillsInfo is list_skills' structured result.
type listSkillsInfo struct {
	Skills   []skillEntry `json:"skills"`
	Shadowed int          `json:"shadowed"`
	Invalid  int          `json:"invalid"`

	text string
}

func (l listSkillsInfo) Text() string { return l.text }

func (e *Engine) listSkills(ctx context.Context, _ noArgs) (listSkillsInfo, error) {
	snap, err := e.skills.Snapshot(ctx)
	if err != nil {
		return listSkillsInfo{}, skillError(err, "")
	}
	entries := make([]skillEntry, 0, len(snap.Skills))
	var b strings.Builder
	hidden := 0
	for _, s := range snap.Skills {
		if s.DisableModelInvocation {
			hidden++
			continue
		}
		desc := strings.Join(strings.Fields(s.Description), " ")
		entries = append(entries, skillEntry{Name: s.Name, Description: desc})
		fmt.Fprintf(&b, "%s: %s\n", s.Name, desc)
	}
	invalid := map[string]bool{}
	for _, p := range snap.Problems {
		if p.Severity == skills.Error {
			invalid[p.File] = true
		}
	}
	head := fmt.Sprintf("# %d skills; load_skill {name} gives one's instructions\n", len(entries))
	if len(entries) == 0 {
		var dirs []string
		for _, r := range e.skills.Roots() {
			dirs = append(dirs, r.Dir)
		}
		head = "# no skills found; a skill is a directory holding SKILL.md, searched for in: " + strings.Join(dirs, ", ") + "\n"
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "# %d more for people to invoke only (disable_model_invocation)\n", hidden)
	}
	if len(snap.Shadowed) > 0 {
		fmt.Fprintf(&b, "# %d shadowed by skills of the same name found first\n", len(snap.Shadowed))
	}
	if len(invalid) > 0 {
		fmt.Fprintf(&b, "# %d left out because of errors; praxis skills check explains\n", len(invalid))
	}
	return listSkillsInfo{Skills: entries, Shadowed: len(snap.Shadowed), Invalid: len(invalid), text: head + b.String()}, nil
}
