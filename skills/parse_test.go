package skills

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseInvalidFixtures checks that each kind of invalid frontmatter in
// testdata/invalid is reported with its file, line, field and rule.
func TestParseInvalidFixtures(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		dir   string
		line  int
		field string
		rule  string // a part of the rule
	}{
		{"no-frontmatter", 1, "", "must start with YAML frontmatter"},
		{"unclosed-frontmatter", 1, "", "not closed"},
		{"bad-yaml", 3, "", "must be valid YAML"},
		{"not-a-mapping", 2, "", "must be a YAML mapping"},
		{"empty-frontmatter", 1, "", "frontmatter is empty"},
		{"missing-name", 1, "name", "is required"},
		{"missing-description", 1, "description", "is required"},
		{"empty-description", 3, "description", "must not be empty"},
		{"long-description", 3, "description", "at most 1024 characters (it is 1025)"},
		{"long-compatibility", 4, "compatibility", "1-500 characters when given (it is 501)"},
		{long, 2, "name", "at most 64 characters (it is 65)"},
		{"Bad_Name", 2, "name", "only lowercase letters a-z, digits and hyphens"},
		{"-leading-hyphen", 2, "name", "must not start or end with a hyphen"},
		{"double--hyphen", 2, "name", "two hyphens in a row"},
		{"name-mismatch", 2, "name", `must equal the skill's directory name "name-mismatch"`},
		{"bad-metadata-value", 6, "metadata.versions", "must be a string, not a list"},
		{"duplicate-key", 4, "description", "may appear once (first on line 3)"},
		{"both-allowed-keys", 5, "allowed_tools", "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			file := filepath.Join("testdata", "invalid", tt.dir, "SKILL.md")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, _, problems := Parse(file, data, tt.dir)
			if !HasErrors(problems) {
				t.Fatalf("no error reported; problems: %v", problems)
			}
			for _, p := range problems {
				if p.Severity == Error && p.File == file && p.Line == tt.line && p.Field == tt.field && strings.Contains(p.Rule, tt.rule) {
					return
				}
			}
			t.Errorf("want an error at %s:%d, field %q, rule containing %q; got:\n%s", file, tt.line, tt.field, tt.rule, problemLines(problems))
		})
	}
}

func TestParseWrongTypesReportsEveryField(t *testing.T) {
	file := filepath.Join("testdata", "invalid", "wrong-types", "SKILL.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, _, problems := Parse(file, data, "wrong-types")
	var fields []string
	for _, p := range problems {
		if p.Severity == Error {
			fields = append(fields, p.Field)
		}
	}
	want := []string{"license", "metadata", "allowed-tools", "user_invocable", "disable_model_invocation", "tags"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields with errors = %v, want %v\n%s", fields, want, problemLines(problems))
	}
}

func TestParseValidFixtures(t *testing.T) {
	tests := []struct {
		dir  string
		want Skill
	}{
		{"pdf-tools", Skill{
			Name:          "pdf-tools",
			Description:   "Extract text and tables from PDF files and fill in PDF forms. Use when the user works with PDF documents.",
			License:       "Apache-2.0",
			Compatibility: "Needs Python 3.10+ and the pypdf package.",
			Metadata:      map[string]string{"author": "example-org", "version": "1.2"},
			AllowedTools:  []string{"Bash(python3:*)", "read_file"},
			UserInvocable: true,
		}},
		{"snake-case", Skill{
			Name:                   "snake-case",
			Description:            "A skill written for an engine that uses snake_case keys.",
			AllowedTools:           []string{"read_file", "edit_file"},
			UserInvocable:          false,
			DisableModelInvocation: true,
			Tags:                   []string{"style", "example"},
		}},
		{"kebab-extensions", Skill{
			Name:          "kebab-extensions",
			Description:   "A skill written for an engine that spells its extensions in kebab-case, with one field no engine here knows.",
			UserInvocable: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			file := filepath.Join("testdata", "valid", tt.dir, "SKILL.md")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, body, problems := Parse(file, data, tt.dir)
			if HasErrors(problems) {
				t.Fatalf("errors:\n%s", problemLines(problems))
			}
			if !sameMeta(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if strings.HasPrefix(body, "---") || strings.TrimSpace(body) == "" {
				t.Errorf("body = %q", body)
			}
		})
	}
}

func TestParseUnknownFieldIsAWarning(t *testing.T) {
	file := filepath.Join("testdata", "valid", "kebab-extensions", "SKILL.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, _, problems := Parse(file, data, "kebab-extensions")
	if len(problems) != 1 || problems[0].Severity != Warning || problems[0].Field != "argument-hint" || problems[0].Line != 6 {
		t.Errorf("want one warning for argument-hint on line 6, got:\n%s", problemLines(problems))
	}
}

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantErr  string // a part of the first error's rule; "" for none
		wantBody string
	}{
		{"crlf and bom", "\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n", "", "body\r\n"},
		{"fence with trailing spaces", "---  \nname: x\ndescription: d\n---\t\nbody\n", "", "body\n"},
		{"no body", "---\nname: x\ndescription: d\n---", "", ""},
		{"description in unicode counts runes", "---\nname: x\ndescription: " + strings.Repeat("é", MaxDescriptionLen) + "\n---\n", "", ""},
		{"binary", "---\nname: x\x00\n---\n", "not binary", ""},
		{"not utf-8", "---\nname: \xff\n---\n", "UTF-8", ""},
		{"empty file", "", "must start with YAML frontmatter", ""},
		{"null name", "---\nname:\ndescription: d\n---\n", "must not be empty", ""},
		{"name is a list", "---\nname: [x]\ndescription: d\n---\n", "must be a string", ""},
		{"metadata non-scalar key", "---\nname: x\ndescription: d\nmetadata:\n  [a]: b\n---\n", "keys must be strings", ""},
		{"allowed tools list with a mapping", "---\nname: x\ndescription: d\nallowed_tools: [a, {b: c}]\n---\n", "must be a string", ""},
		{"both invocable spellings", "---\nname: x\ndescription: d\nuser_invocable: true\nuser-invocable: true\n---\n", "not both", ""},
		{"dashes in body kept", "---\nname: x\ndescription: d\n---\na\n---\nb\n", "", "a\n---\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body, problems := Parse("SKILL.md", []byte(tt.data), "x")
			var first string
			for _, p := range problems {
				if p.Severity == Error {
					first = p.Rule
					break
				}
			}
			switch {
			case tt.wantErr == "" && first != "":
				t.Fatalf("unexpected error: %s", first)
			case tt.wantErr != "" && !strings.Contains(first, tt.wantErr):
				t.Fatalf("first error %q, want one containing %q", first, tt.wantErr)
			}
			if tt.wantErr == "" && body != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
}

func TestSplitFrontmatterHead(t *testing.T) {
	// Discovery reads a head of the file; an unclosed frontmatter in an
	// incomplete head says so, and a rune cut in half is not an error.
	head := []byte("---\nname: x\ndescription: " + strings.Repeat("é", 10))
	_, _, _, ok := splitFrontmatter(head[:len(head)-1], false)
	if ok {
		t.Fatal("unclosed frontmatter in an incomplete head accepted")
	}
	fm, _, _, _ := splitFrontmatter(head[:len(head)-1], false)
	if !strings.Contains(string(fm), "within the first 64 KiB") {
		t.Errorf("rule = %q", fm)
	}
}

func TestURI(t *testing.T) {
	if got := URI("pdf-tools"); got != "skill://pdf-tools" {
		t.Errorf("URI = %q", got)
	}
	for uri, want := range map[string]string{"skill://pdf-tools": "pdf-tools", "skill://": "", "skill://a/b": "", "file://x": ""} {
		got, ok := NameFromURI(uri)
		if got != want || ok != (want != "") {
			t.Errorf("NameFromURI(%q) = %q, %v", uri, got, ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, dir := range []string{"valid/pdf-tools", "valid/snake-case", "invalid/wrong-types", "invalid/bad-yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", dir, "SKILL.md"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, body, problems := Parse("SKILL.md", data, "x")
		for _, p := range problems {
			if p.File != "SKILL.md" || p.Rule == "" {
				t.Fatalf("problem without file or rule: %+v", p)
			}
		}
		if !HasErrors(problems) {
			if s.Name != "x" || s.Description == "" {
				t.Fatalf("accepted skill without name or description: %+v", s)
			}
			if len(body) > len(data) {
				t.Fatal("body longer than the file")
			}
		}
	})
}

func sameMeta(a, b Skill) bool {
	return a.Name == b.Name && a.Description == b.Description && a.License == b.License &&
		a.Compatibility == b.Compatibility && mapsEqual(a.Metadata, b.Metadata) &&
		slices.Equal(a.AllowedTools, b.AllowedTools) && a.UserInvocable == b.UserInvocable &&
		a.DisableModelInvocation == b.DisableModelInvocation && slices.Equal(a.Tags, b.Tags)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func problemLines(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}
