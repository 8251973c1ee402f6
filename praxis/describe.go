package praxis

import (
	"embed"
	"strings"
)

// Tool descriptions are prose for a model, kept in one Markdown file per
// tool beside its code so that they are reviewed like code.
//
//go:embed *.md
var descriptions embed.FS

// describe returns the description of the tool called name.
func describe(name string) string {
	b, err := descriptions.ReadFile(name + ".md")
	if err != nil {
		panic("praxis: no description file for tool " + name) // a build-time mistake
	}
	return strings.TrimSpace(string(b))
}
