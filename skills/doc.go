// Package skills finds, parses and validates agent skills: directories
// holding a SKILL.md file (YAML frontmatter, then a Markdown body) and
// optional files beside it, as the open Agent Skills specification
// describes them.
//
// A Catalog searches an ordered list of directories; the first skill of a
// name wins and later ones are reported as shadowed. Discovery reads only
// each skill's frontmatter; Catalog.Load reads the body and lists the files
// the skill ships, and Catalog.ReadFile reads one of them, confined to the
// skill's directory. The catalog notices changes on disk by checking
// modification times whenever it is asked for, so no restart is needed.
//
// A skill that breaks a rule is reported as a Problem naming the file, the
// field and the rule; one bad skill never stops discovery of the others.
//
// The package imports nothing else of Praxis but its own internal mdlink,
// which finds the links of a CommonMark body.
package skills
