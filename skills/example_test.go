package skills_test

import (
	"context"
	"fmt"
	"log"

	"github.com/praxis-tools/praxis/skills"
)

// A catalog over one search directory: the list is what a system prompt
// shows, Load what a model reads when a skill applies, ReadFile one file
// the skill ships.
func Example() {
	ctx := context.Background()
	cat := skills.New(skills.Options{Roots: []skills.Root{{Dir: "testdata/valid"}}})
	list, err := cat.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range list {
		fmt.Printf("%s (%s)\n", s.Name, skills.URI(s.Name))
	}

	l, err := cat.Load(ctx, "pdf-tools")
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range l.Files {
		fmt.Println("file:", f.Path)
	}
	for _, link := range l.Links {
		if !link.Exists {
			fmt.Println("missing:", link.Path)
		}
	}

	data, _, err := cat.ReadFile(ctx, "pdf-tools", "references/FORMS.md", 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", data[:16])
	// Output:
	// kebab-extensions (skill://kebab-extensions)
	// nested-skill (skill://nested-skill)
	// pdf-tools (skill://pdf-tools)
	// snake-case (skill://snake-case)
	// file: assets/logo.txt
	// file: references/FORMS.md
	// file: scripts/extract.py
	// missing: references/TABLES.md
	// # Filling forms
}

// Check validates skills for their authors: every problem names its file,
// line, field and rule.
func ExampleCatalog_Check() {
	cat := skills.New(skills.Options{Roots: []skills.Root{{Dir: "testdata/invalid/wrong-types"}}})
	problems, err := cat.Check(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range problems {
		fmt.Printf("%s line %d: %s: %s\n", p.Severity, p.Line, p.Field, p.Rule)
	}
	// Output:
	// error line 4: license: must be a string, not a list
	// error line 5: metadata: must be a mapping of string keys to string values, not a list
	// error line 6: allowed-tools: must be a space-separated string or a list of strings, not a mapping
	// error line 7: user_invocable: must be true or false, not "yes"
	// error line 8: disable_model_invocation: must be true or false, not "1"
	// error line 9: tags: must be a space-separated string or a list of strings, not a mapping
}
