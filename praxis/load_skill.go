package praxis

import (
	"context"
	"fmt"
	"strings"
)

type loadSkillArgs struct {
	Name string `json:"name" minLength:"1" jsonschema:"The skill's name, as list_skills shows it."`
}

// loadSkillInfo is load_skill's structured result.
type loadSkillInfo struct {
	Name      string   `json:"name"`
	Dir       string   `json:"dir"`
	BodyBytes int64    `json:"body_bytes"`
	Truncated bool     `json:"truncated"`
	Files     []string `json:"files"`
	Missing   []string `json:"missing"`

	text string
}

func (l loadSkillInfo) Text() string { return l.text }

func (e *Engine) loadSkill(ctx context.Context, a loadSkillArgs) (loadSkillInfo, error) {
	l, err := e.skills.Load(ctx, a.Name)
	if err != nil {
		return loadSkillInfo{}, e.skillNotFound(ctx, err, a.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# skill %s, directory %s\n", l.Skill.Name, l.Skill.Dir)
	b.WriteString(l.Body)
	if !strings.HasSuffix(l.Body, "\n") {
		b.WriteByte('\n')
	}
	if l.Truncated {
		next := l.BodyLine + strings.Count(l.Body, "\n")
		fmt.Fprintf(&b, "# the body stops here: %d of %d bytes shown; read_skill_file {name: %q, path: \"SKILL.md\", offset: %d} for the rest\n",
			len(l.Body), l.BodyBytes, l.Skill.Name, next)
	}
	files := make([]string, 0, len(l.Files))
	if len(l.Files) > 0 {
		b.WriteString("# files of the skill (read_skill_file {name, path}):\n")
		for _, f := range l.Files {
			files = append(files, f.Path)
			fmt.Fprintf(&b, "%s  %d\n", f.Path, f.Size)
		}
		if l.FilesTruncated {
			b.WriteString("# more files not listed\n")
		}
	}
	missing := []string{}
	for _, link := range l.Links {
		switch {
		case link.Outside:
			fmt.Fprintf(&b, "# the body links to %s, outside the skill's directory: it cannot be read\n", link.Target)
		case !link.Exists:
			missing = append(missing, link.Path)
			fmt.Fprintf(&b, "# the body links to %s, which does not exist\n", link.Path)
		}
	}
	return loadSkillInfo{Name: l.Skill.Name, Dir: l.Skill.Dir, BodyBytes: l.BodyBytes,
		Truncated: l.Truncated, Files: files, Missing: missing, text: b.String()}, nil
}
