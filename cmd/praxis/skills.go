package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/skills"
)

const skillsAbout = `Skills are directories holding a SKILL.md file: YAML frontmatter (name, description,
...) and Markdown instructions. They are searched for in the --skills-dir directories
(default $PRAXIS_SKILLS_DIR, colon-separated), then in the workspace's .praxis/skills,
.agents/skills and .claude/skills, then in ~/.agents/skills and ~/.claude/skills; the
first skill of a name wins.

  list          list the skills, one line each (the default)
  show NAME     print a skill's fields, body, files and missing links
  check [DIR]   validate the skills in DIR, or in the search path: print every
                problem with its file, field and rule; exit 1 if any is an error`

func runSkills(ctx context.Context, args []string, io stdio) int {
	flags := newFlagSet("skills", "[list | show NAME | check [DIR...]] [flags]", skillsAbout, io)
	ef := addEngineFlags(flags)
	asJSON := flags.Bool("json", false, "list: print the skills' fields as JSON")
	if code, ok := parseFlags(flags, args, io); !ok {
		return code
	}
	sub, pos := "list", flags.Args()
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	switch {
	case sub == "list" && len(pos) == 0, sub == "show" && len(pos) == 1, sub == "check":
	case sub == "show":
		return badArgs(flags, io, "show needs one skill name (\"praxis skills\" lists them)")
	case sub == "list":
		return badArgs(flags, io, "list takes no arguments, and was given %q", strings.Join(pos, " "))
	default:
		return badArgs(flags, io, "has no subcommand %q (there are list, show NAME and check [DIR...])", sub)
	}
	var cat *skills.Catalog
	if sub == "check" && len(pos) > 0 {
		var roots []skills.Root
		for _, d := range pos {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				what := "does not exist"
				if err == nil {
					what = "is not a directory"
				} else if !errors.Is(err, os.ErrNotExist) {
					what = "cannot be read"
				}
				fmt.Fprintf(io.err, "praxis skills check: %s %s; give a directory of skills\n", d, what)
				return exitToolError
			}
			roots = append(roots, skills.Root{Dir: d, Origin: "command line", Explicit: true})
		}
		cat = skills.New(skills.Options{Roots: roots})
	} else {
		// Problems are printed, not logged.
		eng, err := praxis.New(ef.options(slog.New(slog.DiscardHandler)))
		if err != nil {
			fmt.Fprintf(io.err, "praxis skills: %v\n", err)
			return exitUsage
		}
		defer eng.Close()
		cat = eng.Skills()
	}
	switch sub {
	case "list":
		return skillsList(ctx, cat, *asJSON, io)
	case "show":
		return skillsShow(ctx, cat, pos[0], io)
	}
	return skillsCheck(ctx, cat, io)
}

func skillsList(ctx context.Context, cat *skills.Catalog, asJSON bool, io stdio) int {
	snap, err := cat.Snapshot(ctx)
	if err != nil {
		fmt.Fprintf(io.err, "praxis skills: %v\n", err)
		return exitToolError
	}
	if asJSON {
		out := make([]map[string]any, len(snap.Skills))
		for i, s := range snap.Skills {
			out[i] = skillJSON(s)
		}
		writeJSON(io.out, out)
	} else {
		for _, s := range snap.Skills {
			fmt.Fprintf(io.out, "%-24s %s\n", s.Name, strings.Join(strings.Fields(s.Description), " "))
		}
	}
	for _, sh := range snap.Shadowed {
		fmt.Fprintf(io.err, "praxis skills: %s\n", sh)
	}
	left := map[string]bool{}
	for _, p := range snap.Problems {
		if p.Severity == skills.Error {
			left[p.File] = true
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(io.err, "praxis skills: %d skills left out because of errors; \"praxis skills check\" lists them\n", len(left))
	}
	if len(snap.Skills) == 0 {
		fmt.Fprintln(io.err, "praxis skills: no skills found in:")
		for _, r := range cat.Roots() {
			fmt.Fprintf(io.err, "  %s (%s)\n", r.Dir, r.Origin)
		}
	}
	return exitOK
}

func skillJSON(s skills.Skill) map[string]any {
	m := map[string]any{
		"name": s.Name, "description": s.Description, "dir": s.Dir, "origin": s.Root.Origin,
		"user_invocable": s.UserInvocable, "disable_model_invocation": s.DisableModelInvocation,
	}
	for k, v := range map[string]string{"license": s.License, "compatibility": s.Compatibility} {
		if v != "" {
			m[k] = v
		}
	}
	if len(s.Metadata) > 0 {
		m["metadata"] = s.Metadata
	}
	if len(s.AllowedTools) > 0 {
		m["allowed_tools"] = s.AllowedTools
	}
	if len(s.Tags) > 0 {
		m["tags"] = s.Tags
	}
	return m
}

func skillsShow(ctx context.Context, cat *skills.Catalog, name string, io stdio) int {
	l, err := cat.Load(ctx, name)
	if errors.Is(err, skills.ErrUnknownSkill) {
		fmt.Fprintf(io.err, "praxis skills: no skill is called %q; \"praxis skills\" lists them\n", name)
		return exitToolError
	}
	if err != nil {
		fmt.Fprintf(io.err, "praxis skills: %v\n", err)
		return exitToolError
	}
	s := l.Skill
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(io.out, "%-15s %s\n", k+":", v)
		}
	}
	field("name", s.Name)
	field("description", strings.Join(strings.Fields(s.Description), " "))
	field("file", s.File)
	field("found in", s.Dir+" ("+s.Root.Origin+")")
	field("license", s.License)
	field("compatibility", s.Compatibility)
	field("allowed tools", strings.Join(s.AllowedTools, " "))
	field("tags", strings.Join(s.Tags, ", "))
	for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
		field("metadata."+k, s.Metadata[k])
	}
	if !s.UserInvocable {
		field("user invocable", "no")
	}
	if s.DisableModelInvocation {
		field("model invocation", "disabled")
	}
	fmt.Fprintln(io.out)
	fmt.Fprint(io.out, l.Body)
	if !strings.HasSuffix(l.Body, "\n") {
		fmt.Fprintln(io.out)
	}
	if l.Truncated {
		fmt.Fprintf(io.out, "[body cut at %d of %d bytes]\n", len(l.Body), l.BodyBytes)
	}
	if len(l.Files) > 0 {
		fmt.Fprintln(io.out, "\nfiles:")
		for _, f := range l.Files {
			fmt.Fprintf(io.out, "  %s  %d\n", f.Path, f.Size)
		}
	}
	for _, p := range l.Problems {
		fmt.Fprintln(io.err, p)
	}
	return exitOK
}

func skillsCheck(ctx context.Context, cat *skills.Catalog, io stdio) int {
	problems, err := cat.Check(ctx)
	if err != nil {
		fmt.Fprintf(io.err, "praxis skills check: %v\n", err)
		return exitToolError
	}
	snap, err := cat.Snapshot(ctx)
	if err != nil {
		fmt.Fprintf(io.err, "praxis skills check: %v\n", err)
		return exitToolError
	}
	for _, p := range problems {
		fmt.Fprintln(io.out, p)
	}
	errs := countErrors(problems)
	fmt.Fprintf(io.out, "%d skills usable, %d errors, %d warnings\n", len(snap.Skills), errs, len(problems)-errs)
	if errs > 0 {
		return exitToolError
	}
	return exitOK
}

func countErrors(ps []skills.Problem) int {
	n := 0
	for _, p := range ps {
		if p.Severity == skills.Error {
			n++
		}
	}
	return n
}
