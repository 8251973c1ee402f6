package praxis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/praxis-tools/praxis/skills"
)

// newSkills returns the catalog of the skills the engine offers, searching
// opts.SkillsDirs, then the workspace's and the user's skills directories.
func newSkills(opts Options, ws *Workspace) *skills.Catalog {
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return skills.New(skills.Options{
		Roots:  skills.SearchPath(opts.SkillsDirs, ws.Dir(), home),
		Logger: opts.Logger,
	})
}

// Skills returns the engine's skills catalog: the skills found in
// Options.SkillsDirs, the workspace's .praxis/skills, .agents/skills and
// .claude/skills, and the user's ~/.agents/skills and ~/.claude/skills, the
// first of a name winning. Front ends other than the tools use it directly:
// an MCP server lists Skills().List(ctx) as prompts (leaving out those with
// UserInvocable false) and as resources named skills.URI(name), and serves
// a prompt or resource from Skills().Load(ctx, name), whose Body is the
// instructions; Skills().ReadFile reads a file a skill ships. Every call
// sees changes on disk.
func (e *Engine) Skills() *skills.Catalog { return e.skills }

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

type readSkillFileArgs struct {
	Name   string `json:"name" minLength:"1" jsonschema:"The skill's name."`
	Path   string `json:"path" minLength:"1" jsonschema:"The file's path relative to the skill's directory, as load_skill lists it (e.g. references/FORMS.md)."`
	Offset int    `json:"offset,omitempty" minimum:"1" default:"1" jsonschema:"First line to show, 1-based."`
	Limit  int    `json:"limit,omitempty" minimum:"1" default:"2000" jsonschema:"Number of lines to show."`
}

// skillFileInfo is read_skill_file's structured result.
type skillFileInfo struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Total int    `json:"total_lines"`

	text string
}

func (f skillFileInfo) Text() string { return f.text }

func (e *Engine) readSkillFile(ctx context.Context, a readSkillFileArgs) (skillFileInfo, error) {
	data, _, err := e.skills.ReadFile(ctx, a.Name, a.Path, e.opts.MaxFileBytes)
	if err != nil {
		return skillFileInfo{}, e.skillNotFound(ctx, err, a.Name)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return skillFileInfo{}, Errorf(EBinary, "%s of skill %s looks binary (%d bytes, a NUL byte in its first 8 KiB); it is not shown", a.Path, a.Name, len(data))
	}
	if !utf8.Valid(data) {
		return skillFileInfo{}, Errorf(ENotUTF8, "%s of skill %s is not valid UTF-8 (%d bytes, first invalid byte at offset %d); it is not shown", a.Path, a.Name, len(data), firstInvalidUTF8(data))
	}
	lines := splitLines(data)
	total := len(lines)
	from, limit := a.Offset, a.Limit
	if total > 0 && from > total {
		return skillFileInfo{}, Errorf(EInvalidArgs, "offset %d is past the end of %s, which has %d lines", from, a.Path, total)
	}
	to := min(total, from+limit-1)
	var b strings.Builder
	if total == 0 {
		fmt.Fprintf(&b, "# %s/%s: empty\n", a.Name, a.Path)
	} else {
		fmt.Fprintf(&b, "# %s/%s lines %d-%d of %d\n", a.Name, a.Path, from, to, total)
	}
	for _, l := range lines[min(from, total+1)-1 : to] {
		b.Write(clipLine(l, lineClip))
		b.WriteByte('\n')
	}
	if to < total {
		fmt.Fprintf(&b, "# %d more lines: read_skill_file with offset=%d to continue\n", total-to, to+1)
	}
	return skillFileInfo{Name: a.Name, Path: a.Path, From: from, To: to, Total: total, text: b.String()}, nil
}

// splitLines splits data into lines without their terminators (LF or
// CRLF); a final line end does not start another line.
func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// clipLine cuts a line longer than clip bytes at a character boundary and
// says how much was left out.
func clipLine(l []byte, clip int) []byte {
	if len(l) <= clip {
		return l
	}
	cut := clip
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return fmt.Appendf(l[:cut:cut], " …[clipped %d bytes]", len(l)-cut)
}

// skillNotFound is skillError, naming the skills there are when name is
// not one of them.
func (e *Engine) skillNotFound(ctx context.Context, err error, name string) error {
	if !errors.Is(err, skills.ErrUnknownSkill) {
		return skillError(err, name)
	}
	var names []string
	if list, lerr := e.skills.List(ctx); lerr == nil {
		for _, s := range list {
			names = append(names, s.Name)
		}
	}
	detail := "There are no skills; list_skills says where they are searched for."
	if len(names) > 0 {
		detail = "Skills: " + strings.Join(names, ", ")
	}
	return Errorf(ENotFound, "no skill is called %q", name).WithDetail(detail)
}

// skillError maps an error of the skills package to an *Error.
func skillError(err error, name string) error {
	var pe *fs.PathError
	p := name
	if errors.As(err, &pe) {
		p = pe.Path
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Errorf(ECancelled, "cancelled: %v", err)
	case errors.Is(err, skills.ErrUnknownSkill):
		return Errorf(ENotFound, "no skill is called %q", name)
	case errors.Is(err, skills.ErrOutside):
		return Errorf(EPathOutside, "%s leads outside the directory of skill %s", p, name).
			WithDetail("Give a path relative to the skill's directory, as load_skill lists them.")
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(ENotFound, "%s does not exist in skill %s", p, name).
			WithDetail("load_skill lists the files the skill ships.")
	case errors.Is(err, skills.ErrIsDir):
		return Errorf(EIsDir, "%s is a directory in skill %s", p, name).
			WithDetail("load_skill lists the files the skill ships.")
	case errors.Is(err, skills.ErrNotRegular):
		return Errorf(ENotRegular, "%s in skill %s is not a regular file", p, name)
	case errors.Is(err, skills.ErrTooLarge):
		reason := err
		if pe != nil {
			reason = pe.Err
		}
		return Errorf(ETooLarge, "%s in skill %s %v", p, name, reason)
	case errors.Is(err, fs.ErrInvalid):
		return Errorf(EInvalidArgs, "path %q is not valid", p)
	}
	return Errorf(EIO, "skill %s: %v", name, err)
}
