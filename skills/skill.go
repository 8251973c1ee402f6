package skills

import (
	"fmt"
	"strconv"
	"strings"
)

// Skill is the metadata of one skill, read from its SKILL.md frontmatter.
// The body is not part of it: Catalog.Load reads it on demand.
type Skill struct {
	// Name is the skill's name: 1-64 lowercase letters, digits and
	// hyphens, equal to the name of its directory.
	Name string
	// Description says what the skill does and when to use it (1-1024
	// characters).
	Description string
	// License, Compatibility and Metadata are the optional fields of the
	// specification.
	License       string
	Compatibility string
	Metadata      map[string]string
	// AllowedTools lists the tools the skill expects to use, from
	// allowed-tools (space-separated) or allowed_tools (a list).
	AllowedTools []string
	// UserInvocable is false when the skill says it is not meant to be
	// invoked by a person (user_invocable: false). Default true.
	UserInvocable bool
	// DisableModelInvocation is true when the skill asks not to be picked
	// by the model on its own (disable_model_invocation: true).
	DisableModelInvocation bool
	// Tags are free-form labels.
	Tags []string

	// Dir is the absolute path of the skill's directory, as found under
	// its search directory (symlinks inside that directory not resolved).
	Dir string
	// File is the absolute path of the skill's SKILL.md.
	File string
	// Root is the search directory the skill was found in.
	Root Root
	// rel is Dir relative to Root.Dir, slash-separated ("." when the
	// search directory is the skill itself).
	rel string
}

// URI returns the URI that names the skill called name as a resource:
// "skill://" followed by the name.
func URI(name string) string { return "skill://" + name }

// NameFromURI returns the skill name a URI made by URI names, and false if
// uri is not such a URI.
func NameFromURI(uri string) (string, bool) {
	name, ok := strings.CutPrefix(uri, "skill://")
	if !ok || name == "" || strings.ContainsAny(name, "/?#") {
		return "", false
	}
	return name, true
}

// Severity says whether a Problem stops a skill from loading.
type Severity int

const (
	// Warning: the skill still loads (or, for a directory, discovery goes
	// on without it).
	Warning Severity = iota
	// Error: the skill is left out of the catalog.
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Problem is one finding of discovery or validation.
type Problem struct {
	Severity Severity
	// File is the path of the file or directory concerned.
	File string
	// Line is the 1-based line in File, 0 when it does not apply.
	Line int
	// Field is the frontmatter field concerned (such as "name" or
	// "metadata.owner"), "" when the problem is not about one field.
	Field string
	// Rule states the rule that was broken, or what went wrong.
	Rule string
}

// String renders p on one line: "error: FILE:LINE: FIELD: RULE".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Severity.String())
	b.WriteString(": ")
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
	}
	if p.Field != "" {
		b.WriteString(": " + p.Field)
	}
	b.WriteString(": " + p.Rule)
	return b.String()
}

// HasErrors reports whether any of problems is an Error.
func HasErrors(problems []Problem) bool {
	for _, p := range problems {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// Shadowed is a skill left out because a skill of the same name was found
// first.
type Shadowed struct {
	// Skill is the skill left out.
	Skill Skill
	// By is the skill that is used instead.
	By Skill
}

func (s Shadowed) String() string {
	return fmt.Sprintf("%s in %s is shadowed by %s", s.Skill.Name, s.Skill.Dir, s.By.Dir)
}
