package hooks

import (
	"os"
	"testing"
)

// FuzzParse parses arbitrary configurations, JSON and YAML: nothing
// panics, and what parses can be matched against.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/hooks.json", "testdata/hooks.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, name == "testdata/hooks.yaml")
	}
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"matcher":"(a|","hooks":[]}]}}`), false)
	f.Fuzz(func(t *testing.T, data []byte, isYAML bool) {
		c, err := Parse(data, isYAML)
		if err != nil {
			return
		}
		for _, ev := range knownEvents {
			for _, cmd := range c.commands(ev, "bash") {
				if cmd.Command == "" {
					t.Fatalf("%s: a hook without a command", ev)
				}
			}
		}
	})
}
