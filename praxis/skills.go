package praxis

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"

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
