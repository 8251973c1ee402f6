package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// skillsEnv is a workspace, a home and a --skills-dir with skills in each.
type skillsEnv struct {
	ws, home, extra string
	eng             *Engine
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, description, extra, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n%s", name, description, extra, body)
}

func newSkillsEnv(t *testing.T) *skillsEnv {
	t.Helper()
	env := &skillsEnv{ws: t.TempDir(), home: t.TempDir(), extra: t.TempDir()}
	t.Setenv("HOME", env.home)
	writeFile(t, filepath.Join(env.extra, "alpha", "SKILL.md"), skillMD("alpha", "Alpha from the command line.", "", "Alpha body.\n"))
	writeFile(t, filepath.Join(env.ws, ".praxis/skills/alpha/SKILL.md"), skillMD("alpha", "Alpha from the workspace, shadowed.", "", "Shadowed.\n"))
	writeFile(t, filepath.Join(env.ws, ".agents/skills/beta/SKILL.md"), skillMD("beta", "Beta,\n  folded over two lines.", "", "Run [the script](scripts/run.sh) and see [notes](references/NOTES.md) and [gone](references/GONE.md).\n"))
	writeFile(t, filepath.Join(env.ws, ".agents/skills/beta/scripts/run.sh"), "echo beta\n")
	writeFile(t, filepath.Join(env.ws, ".agents/skills/beta/references/NOTES.md"), "line 1\nline 2\r\nline 3\n")
	writeFile(t, filepath.Join(env.ws, ".agents/skills/beta/assets/blob.bin"), "a\x00b")
	writeFile(t, filepath.Join(env.ws, ".agents/skills/beta/assets/latin1.txt"), "caf\xe9")
	writeFile(t, filepath.Join(env.ws, "secret.txt"), "workspace secret\n")
	if err := os.Symlink("../../../../secret.txt", filepath.Join(env.ws, ".agents/skills/beta/leak.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(env.ws, ".claude/skills/broken/SKILL.md"), "no frontmatter\n")
	writeFile(t, filepath.Join(env.ws, ".claude/skills/hidden/SKILL.md"), skillMD("hidden", "For people only.", "disable_model_invocation: true\n", "Hidden.\n"))
	writeFile(t, filepath.Join(env.home, ".claude/skills/delta/SKILL.md"), skillMD("delta", "Delta from the user's directory.", "", "Delta.\n"))
	eng, err := New(Options{Workspace: env.ws, SkillsDirs: []string{env.extra}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	env.eng = eng
	return env
}

func TestSkillToolsAreRegistered(t *testing.T) {
	env := newSkillsEnv(t)
	for _, name := range []string{"list_skills", "load_skill", "read_skill_file"} {
		tool, ok := env.eng.Catalog().Lookup(name)
		if !ok {
			t.Fatalf("%s is not in the catalog", name)
		}
		if !tool.Annotations.ReadOnly || tool.Description == "" {
			t.Errorf("%s: annotations %+v, description %q", name, tool.Annotations, tool.Description)
		}
	}
}

func TestListSkills(t *testing.T) {
	env := newSkillsEnv(t)
	res := call(t, env.eng, "list_skills", map[string]any{})
	if res.IsError {
		t.Fatal(res.Text)
	}
	want := "# 3 skills; load_skill {name} gives one's instructions\n" +
		"alpha: Alpha from the command line.\n" +
		"beta: Beta, folded over two lines.\n" +
		"delta: Delta from the user's directory.\n" +
		"# 1 more for people to invoke only (disable_model_invocation)\n" +
		"# 1 shadowed by skills of the same name found first\n" +
		"# 1 left out because of errors; praxis skills check explains\n"
	if res.Text != want {
		t.Errorf("list_skills =\n%s\nwant\n%s", res.Text, want)
	}

	// A new skill shows up without a restart.
	writeFile(t, filepath.Join(env.ws, ".agents/skills/epsilon/SKILL.md"), skillMD("epsilon", "Added later.", "", "New.\n"))
	res = call(t, env.eng, "list_skills", map[string]any{})
	if !strings.Contains(res.Text, "epsilon: Added later.\n") {
		t.Errorf("the new skill is not listed:\n%s", res.Text)
	}
}

func TestListSkillsWhenThereAreNone(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	eng, err := New(Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res := call(t, eng, "list_skills", map[string]any{})
	if !strings.HasPrefix(res.Text, "# no skills found") || !strings.Contains(res.Text, filepath.Join(ws, ".agents/skills")) {
		t.Errorf("list_skills = %s", res.Text)
	}
}

func TestLoadSkill(t *testing.T) {
	env := newSkillsEnv(t)
	res := call(t, env.eng, "load_skill", map[string]any{"name": "beta"})
	if res.IsError {
		t.Fatal(res.Text)
	}
	dir := filepath.Join(env.ws, ".agents/skills/beta")
	for _, want := range []string{
		"# skill beta, directory " + dir + "\n",
		"Run [the script](scripts/run.sh)",
		"scripts/run.sh  10\n",
		"references/NOTES.md  22\n",
		"# the body links to references/GONE.md, which does not exist\n",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("load_skill lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "leak.txt") {
		t.Errorf("a symlink out of the skill is listed:\n%s", res.Text)
	}
	st := res.Structured.(loadSkillInfo)
	if !slices.Equal(st.Missing, []string{"references/GONE.md"}) || st.Dir != dir {
		t.Errorf("structured = %+v", st)
	}

	res = call(t, env.eng, "load_skill", map[string]any{"name": "nope"})
	if !res.IsError || res.Code != ENotFound || !strings.Contains(res.Text, "Skills: alpha, beta, delta") {
		t.Errorf("unknown skill: %s", res.Text)
	}
	res = call(t, env.eng, "load_skill", map[string]any{"name": "broken"})
	if res.Code != ENotFound {
		t.Errorf("a broken skill loads: %s", res.Text)
	}
}

func TestLoadSkillHugeBody(t *testing.T) {
	env := newSkillsEnv(t)
	var body strings.Builder
	for i := 1; body.Len() < 600<<10; i++ {
		fmt.Fprintf(&body, "body line %d\n", i)
	}
	writeFile(t, filepath.Join(env.extra, "huge", "SKILL.md"), skillMD("huge", "Huge.", "", body.String()))
	res := call(t, env.eng, "load_skill", map[string]any{"name": "huge"})
	if res.IsError {
		t.Fatal(res.Text)
	}
	if len(res.Text) > 300<<10 {
		t.Errorf("load_skill returned %d bytes", len(res.Text))
	}
	lines := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")
	last := lines[len(lines)-1]
	var offset int
	if i := strings.Index(last, "offset: "); i < 0 {
		t.Fatalf("no continuation: %s", last)
	} else {
		fmt.Sscanf(last[i:], "offset: %d", &offset)
	}
	lastShown := lines[len(lines)-2]
	next := call(t, env.eng, "read_skill_file", map[string]any{"name": "huge", "path": "SKILL.md", "offset": offset, "limit": 1})
	var n int
	fmt.Sscanf(lastShown, "body line %d", &n)
	if want := fmt.Sprintf("\nbody line %d\n", n+1); n == 0 || !strings.Contains(next.Text, want) {
		t.Errorf("the continuation after %q reads %q, want %q", lastShown, next.Text, want)
	}
}

func TestReadSkillFile(t *testing.T) {
	env := newSkillsEnv(t)
	tests := []struct {
		args map[string]any
		code Code
		text string
	}{
		{map[string]any{"path": "references/NOTES.md"}, "", "# beta/references/NOTES.md lines 1-3 of 3\nline 1\nline 2\nline 3\n"},
		{map[string]any{"path": "references/NOTES.md", "offset": 2, "limit": 1}, "", "# beta/references/NOTES.md lines 2-2 of 3\nline 2\n# 1 more lines: read_skill_file with offset=3 to continue\n"},
		{map[string]any{"path": "references/NOTES.md", "offset": 9}, EInvalidArgs, ""},
		{map[string]any{"path": "../../../secret.txt"}, EPathOutside, ""},
		{map[string]any{"path": filepath.Join(env.ws, "secret.txt")}, EPathOutside, ""},
		{map[string]any{"path": "leak.txt"}, EPathOutside, ""},
		{map[string]any{"path": "assets/blob.bin"}, EBinary, ""},
		{map[string]any{"path": "assets/latin1.txt"}, ENotUTF8, ""},
		{map[string]any{"path": "scripts"}, EIsDir, ""},
		{map[string]any{"path": "references/GONE.md"}, ENotFound, ""},
		{map[string]any{"path": "x", "name": "nope"}, ENotFound, ""},
		{map[string]any{"path": "x", "extra": 1}, EInvalidArgs, ""},
	}
	for _, tt := range tests {
		args := map[string]any{"name": "beta"}
		for k, v := range tt.args {
			args[k] = v
		}
		res := call(t, env.eng, "read_skill_file", args)
		switch {
		case tt.code == "" && (res.IsError || res.Text != tt.text):
			t.Errorf("%v = %q, want %q", tt.args, res.Text, tt.text)
		case tt.code != "" && res.Code != tt.code:
			t.Errorf("%v: code %q, want %q (%s)", tt.args, res.Code, tt.code, res.Text)
		}
		if strings.Contains(res.Text, "workspace secret") {
			t.Errorf("%v leaked the file outside the skill", tt.args)
		}
	}
}

func TestSkillsCancelled(t *testing.T) {
	env := newSkillsEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := env.eng.Catalog().Call(ctx, "list_skills", json.RawMessage(`{}`))
	if err != nil || res.Code != ECancelled {
		t.Errorf("cancelled list_skills: %v %s", err, res.Text)
	}
}
