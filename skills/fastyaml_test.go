package skills

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var fastSeeds = []string{
	"name: a\ndescription: b\n",
	"name: pdf-tools\ndescription: Extract text. Use when: never\n",
	"name: x\ndescription: \"quoted: yes\"\nlicense: 'MIT'\n",
	"name: x\r\ndescription: crlf\r\n",
	"# comment\nname: x\n\ndescription: d\n",
	"metadata:\n  author: me\n  version: \"1.0\"\nname: x\n",
	"allowed_tools:\n  - read_file\n  - edit_file\nname: x\n",
	"allowed_tools:\n- read_file\n- edit_file\nname: x\n",
	"tags:\n  - a\n\n  - b\n\nname: x\n",
	"user_invocable: false\ndisable_model_invocation: True\nversion: 1.2\ndate: 2024-01-01\n",
	"name: ~\ndescription: null\n",
	"name: x\ndescription: a #not a comment? \n",
	"name: x\n  description: indented\n",
	"name: [x]\n",
	"name: x\nname: y\n",
	"metadata:\n  a: b\n    c: d\n",
	"metadata:\n  a: b\n # c\n",
	"name: \"a\\\"b\"\n",
	"name: 'it''s'\n",
	"key:\n",
	"k: v\tw\n",
	"k: ...\nl: a,b\nm: x-y\n",
	"true: 1\nnull: 2\n",
	"- a\n- b\n",
	"tags: [style, example]\nempty: []\nspaced: [ a ,b ]\n",
	"tags: [a,, b]\n",
	"tags: [a b, c-d, 1.5, true]\n",
	"k: \u2028\n",
	"k: trailing   \nl: 'q'  \nm:   \nn: v\n",
	"tags:   \n  - a  \n  - b\nx: [a, b]  \n",
	"k: a\u0085b\n",
}

// FuzzFastNode checks the fast path against the YAML parser: wherever the
// fast path decodes a frontmatter, the parser must accept it and produce
// the same tree.
func FuzzFastNode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := fastNode([]byte(s))
		if !ok {
			return
		}
		var want yaml.Node
		if err := yaml.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("the fast path accepted what the parser refuses (%v):\n%q", err, s)
		}
		if len(want.Content) != len(fast.Content) {
			t.Fatalf("documents differ:\n%q\nparser %d nodes, fast %d", s, len(want.Content), len(fast.Content))
		}
		if len(want.Content) > 0 {
			if diff := nodeDiff(want.Content[0], fast.Content[0], ""); diff != "" {
				t.Fatalf("trees differ at %s:\n%q", diff, s)
			}
		}
	})
}

func TestFastNodeSeeds(t *testing.T) {
	// The seeds are also a table: the fast path must agree with the
	// parser, and take the common shapes.
	taken := 0
	for _, s := range fastSeeds {
		fast, ok := fastNode([]byte(s))
		if !ok {
			continue
		}
		taken++
		var want yaml.Node
		if err := yaml.Unmarshal([]byte(s), &want); err != nil {
			t.Errorf("%q: fast path accepted, parser: %v", s, err)
			continue
		}
		if len(want.Content) > 0 {
			if diff := nodeDiff(want.Content[0], fast.Content[0], ""); diff != "" {
				t.Errorf("%q: trees differ at %s", s, diff)
			}
		}
	}
	if taken < 10 {
		t.Errorf("the fast path took only %d of %d seeds", taken, len(fastSeeds))
	}
}

func TestFastNodeTakesTheValidFixtures(t *testing.T) {
	for _, dir := range []string{"pdf-tools", "snake-case", "kebab-extensions"} {
		data, err := os.ReadFile(filepath.Join("testdata", "valid", dir, "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		fm, _, _, _ := splitFrontmatter(data, true)
		if _, ok := fastNode(fm); !ok {
			t.Errorf("%s: the fast path declined", dir)
		}
	}
}

func tagClass(tag string) string {
	switch tag {
	case "!!null", "!!bool":
		return tag
	}
	return "other"
}

func nodeDiff(a, b *yaml.Node, at string) string {
	switch {
	case a.Kind != b.Kind:
		return at + ": kind"
	case tagClass(a.Tag) != tagClass(b.Tag):
		return at + ": tag " + a.Tag + " vs " + b.Tag
	case a.Kind == yaml.ScalarNode && (a.Value != b.Value || a.Line != b.Line):
		return at + ": scalar " + strings.Join([]string{a.Value, b.Value}, " vs ")
	case len(a.Content) != len(b.Content):
		return at + ": content length"
	}
	for i := range a.Content {
		if d := nodeDiff(a.Content[i], b.Content[i], at+"/"+a.Value+"["+string(rune('0'+i%10))+"]"); d != "" {
			return d
		}
	}
	return ""
}

// TestFastNodeAgreesOnGeneratedFrontmatter builds many frontmatters from
// tricky pieces and compares the fast path with the parser on each one it
// takes.
func TestFastNodeAgreesOnGeneratedFrontmatter(t *testing.T) {
	keys := []string{"name", "description", "tags", "metadata", "a-b", "x_1", "true", "null", "Key", "y", "n", "on", "No", "a-", "Z9"}
	values := []string{
		"plain", "two words", "yes", "no", "on", "true", "False", "~", "null", "", "1", "0x1F", "1e3", ".inf",
		"2024-01-01", "a: b", "a:b", "a #c", "a#c", "#c", "'single'", "'it''s'", "\"double\"", "\"a\\\"b\"", "\"a: b\"",
		"[a, b]", "[]", "[a, [b]]", "{a: b}", "-x", "- x", "?x", ":x", "x:", "...", "---", "a,b", "*alias", "&anchor x",
		"!tag x", "|", ">", "%x", "@x", "`x`", "é", "\u00a0x", "x\u00a0", "tab\tx", "trailing ", "trailing  ", " leading", "'q' ", "[a] ",
		"y", "n", "Y", "NO", "On", "=", "<<", "0b101", "1_000", "1:20", "12:30:00", "+1", "0o17", ".5", "1.", "nan", ".NaN",
		"a [b]", "a{b}", "a,", "[a,b],", "[a]x", "[ ]", "[,]", "['a']", "[a: b]", "[~, null, true]",
	}
	indents := []string{"", " ", "  ", "    "}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	taken := 0
	for range 30000 {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			switch r.IntN(5) {
			case 0: // a nested block
				b.WriteString(pick(keys) + ":\n")
				ind := pick(indents)
				seq := r.IntN(2) == 0
				for range 1 + r.IntN(3) {
					if r.IntN(6) == 0 {
						ind = pick(indents)
					}
					if seq {
						b.WriteString(ind + "- " + pick(values) + "\n")
					} else {
						b.WriteString(ind + pick(keys) + ": " + pick(values) + "\n")
					}
					if r.IntN(8) == 0 {
						b.WriteString("\n")
					}
				}
			case 1:
				b.WriteString("# " + pick(values) + "\n")
			default:
				sep := ": "
				if r.IntN(10) == 0 {
					sep = pick([]string{":", ":  ", " : "})
				}
				b.WriteString(pick(indents[:1+r.IntN(2)]) + pick(keys) + sep + pick(values) + "\n")
			}
		}
		s := b.String()
		fast, ok := fastNode([]byte(s))
		if !ok {
			continue
		}
		taken++
		var want yaml.Node
		if err := yaml.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("the fast path accepted what the parser refuses (%v):\n%s", err, s)
		}
		if len(want.Content) != len(fast.Content) {
			t.Fatalf("documents differ:\n%s", s)
		}
		if len(want.Content) > 0 {
			if diff := nodeDiff(want.Content[0], fast.Content[0], ""); diff != "" {
				t.Fatalf("trees differ at %s:\n%s", diff, s)
			}
		}
	}
	if taken < 1000 {
		t.Errorf("the fast path took only %d generated frontmatters", taken)
	}
	t.Logf("the fast path took %d of 30000", taken)
}
