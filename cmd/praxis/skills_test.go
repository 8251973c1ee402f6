package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSkillFile(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, stdio{strings.NewReader(""), &out, &errb})
	return code, out.String(), errb.String()
}

func TestSkillsCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws, good, bad := t.TempDir(), t.TempDir(), t.TempDir()
	writeSkillFile(t, filepath.Join(good, "alpha"), "---\nname: alpha\ndescription: Alpha does a.\nmetadata:\n  z: last\n  a: first\n---\nAlpha body with [a note](notes.md).\n")
	os.WriteFile(filepath.Join(good, "alpha", "notes.md"), []byte("note\n"), 0o644)
	writeSkillFile(t, filepath.Join(ws, ".claude/skills/beta"), "---\nname: beta\ndescription: Beta does b.\n---\nBeta body.\n")
	writeSkillFile(t, filepath.Join(bad, "gamma"), "---\nname: gamma\ndescription: Gamma links to nothing.\n---\n[gone](gone.md)\n")
	writeSkillFile(t, filepath.Join(bad, "delta"), "---\nname: Delta\ndescription: Bad name.\n---\n")

	tests := []struct {
		name      string
		env       string // PRAXIS_SKILLS_DIR
		args      []string
		code      int
		stdout    []string // parts of the output, in order
		stderr    []string
		notStdout []string
	}{
		{"list", "", []string{"skills", "--workspace", ws, "--skills-dir", good}, 0,
			[]string{"alpha", "Alpha does a.\n", "beta", "Beta does b.\n"}, nil, nil},
		{"list from the environment", good, []string{"skills", "list", "--workspace", ws}, 0,
			[]string{"alpha", "beta"}, nil, nil},
		{"the flag replaces the environment", good, []string{"skills", "--workspace", ws, "--skills-dir", bad}, 0,
			[]string{"beta", "gamma"}, []string{"1 skills left out because of errors"}, []string{"alpha"}},
		{"colon-separated", "", []string{"skills", "--workspace", ws, "--skills-dir", good + string(os.PathListSeparator) + bad}, 0,
			[]string{"alpha", "beta", "gamma"}, nil, nil},
		{"show with flags after the name", "", []string{"skills", "show", "alpha", "--workspace", ws, "--skills-dir", good}, 0,
			[]string{"name:           alpha\n", "metadata.a:     first\n", "metadata.z:     last\n", "Alpha body", "files:\n  notes.md  5\n"}, nil, nil},
		{"show an unknown skill", "", []string{"skills", "show", "nope", "--workspace", ws}, 1,
			nil, []string{`no skill is called "nope"`}, nil},
		{"check a good directory", "", []string{"skills", "check", good}, 0,
			[]string{"1 skills usable, 0 errors, 0 warnings\n"}, nil, nil},
		{"check a bad directory", "", []string{"skills", "check", bad}, 1,
			[]string{
				"error: " + filepath.Join(bad, "delta", "SKILL.md") + ":2: name: may hold only lowercase letters",
				"error: " + filepath.Join(bad, "gamma", "SKILL.md") + `: the link "gone.md" names a file that does not exist`,
				"1 skills usable, 3 errors, 0 warnings\n",
			}, nil, nil},
		{"check the search path", "", []string{"skills", "check", "--workspace", ws, "--skills-dir", good}, 0,
			[]string{"2 skills usable, 0 errors"}, nil, nil},
		{"check a missing directory", "", []string{"skills", "check", filepath.Join(bad, "nope")}, 1,
			nil, []string{filepath.Join(bad, "nope") + " does not exist"}, nil},
		{"unknown subcommand", "", []string{"skills", "frob"}, 2, nil, []string{`no subcommand "frob"`}, nil},
		{"show without a name", "", []string{"skills", "show"}, 2, nil, []string{"show needs one skill name"}, nil},
		{"help", "", []string{"skills", "--help"}, 0, []string{"check [DIR]"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PRAXIS_SKILLS_DIR", tt.env)
			code, out, errs := runCmd(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			inOrder(t, "stdout", out, tt.stdout)
			inOrder(t, "stderr", errs, tt.stderr)
			for _, s := range tt.notStdout {
				if strings.Contains(out, s) {
					t.Errorf("stdout holds %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestSkillsListJSON(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PRAXIS_SKILLS_DIR", "")
	dir := t.TempDir()
	writeSkillFile(t, filepath.Join(dir, "alpha"), "---\nname: alpha\ndescription: Alpha.\nallowed_tools: [read_file]\ntags: [x]\n---\n")
	code, out, errs := runCmd(t, "skills", "--json", "--workspace", t.TempDir(), "--skills-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(got) != 1 || got[0]["name"] != "alpha" || got[0]["dir"] != filepath.Join(dir, "alpha") || got[0]["origin"] != "--skills-dir" {
		t.Errorf("json = %v", got)
	}
}

func TestSkillToolsThroughCall(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PRAXIS_SKILLS_DIR", "")
	dir := t.TempDir()
	writeSkillFile(t, filepath.Join(dir, "alpha"), "---\nname: alpha\ndescription: Alpha.\n---\nAlpha body.\n")
	code, out, errs := runCmd(t, "call", "--workspace", t.TempDir(), "--skills-dir", dir, "load_skill", `{"name": "alpha"}`)
	if code != 0 || !strings.Contains(out, "Alpha body.\n") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// inOrder checks that text holds each of parts, in order.
func inOrder(t *testing.T, what, text string, parts []string) {
	t.Helper()
	rest := text
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("%s lacks %q (in order):\n%s", what, p, text)
			return
		}
		rest = rest[i+len(p):]
	}
}
