package skills

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestLoad(t *testing.T) {
	c := New(Options{Roots: []Root{{Dir: "testdata/valid"}}})
	l, err := c.Load(context.Background(), "pdf-tools")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.Body, "# PDF tools\n") || l.Truncated || l.BodyLine != 11 || l.BodyBytes != int64(len(l.Body)) {
		t.Errorf("body: line %d, %d bytes, truncated %v:\n%s", l.BodyLine, l.BodyBytes, l.Truncated, l.Body)
	}
	wantFiles := []File{{"assets/logo.txt", 6}, {"references/FORMS.md", 54}, {"scripts/extract.py", 55}}
	if !slices.Equal(l.Files, wantFiles) {
		t.Errorf("files = %v, want %v", l.Files, wantFiles)
	}
	wantLinks := []Link{
		{Target: "scripts/extract.py", Path: "scripts/extract.py", Exists: true},
		{Target: "references/FORMS.md#filling", Path: "references/FORMS.md", Exists: true},
		{Target: "./assets/logo.txt", Path: "assets/logo.txt", Exists: true},
		{Target: "references/TABLES.md", Path: "references/TABLES.md"},
		{Target: "references/FORMS.md", Path: "references/FORMS.md", Exists: true},
	}
	if !slices.Equal(l.Links, wantLinks) {
		t.Errorf("links =\n%v\nwant\n%v", l.Links, wantLinks)
	}
	if len(l.Problems) != 1 || l.Problems[0].Severity != Error || !strings.Contains(l.Problems[0].Rule, `"references/TABLES.md" names a file that does not exist`) {
		t.Errorf("problems:\n%s", problemLines(l.Problems))
	}

	if _, err := c.Load(context.Background(), "no-such-skill"); !errors.Is(err, ErrUnknownSkill) {
		t.Errorf("unknown skill: %v", err)
	}
}

func TestLoadLinksLeavingTheSkill(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "linky")
	writeSkill(t, dir, "Links out.")
	body := "---\nname: linky\ndescription: Links out.\n---\n" +
		"[up](../other/SKILL.md) [abs](/etc/passwd) [esc](out.md) [mail](mailto:a@b.c) `[code](nope.md)`\n" +
		"[space](my%20file.md)\n"
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644)
	os.WriteFile(filepath.Join(dir, "my file.md"), []byte("x"), 0o644)
	os.Symlink("/etc/hostname", filepath.Join(dir, "out.md"))
	c := New(Options{Roots: []Root{{Dir: root}}})
	l, err := c.Load(context.Background(), "linky")
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{Target: "../other/SKILL.md", Outside: true},
		{Target: "/etc/passwd", Outside: true},
		{Target: "out.md", Outside: true},
		{Target: "my%20file.md", Path: "my file.md", Exists: true},
	}
	if !slices.Equal(l.Links, want) {
		t.Errorf("links =\n%v\nwant\n%v", l.Links, want)
	}
	if n := len(l.Problems); n != 4 { // three links out, one symlink out of the listing
		t.Errorf("problems:\n%s", problemLines(l.Problems))
	}
	if slices.ContainsFunc(l.Files, func(f File) bool { return f.Path == "out.md" }) {
		t.Error("a symlink leading out is listed as a file")
	}
}

func TestLoadHugeBody(t *testing.T) {
	c := New(Options{Roots: []Root{{Dir: "testdata/huge"}}})
	fi, err := os.Stat("testdata/huge/huge-body/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Load(context.Background(), "huge-body")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Truncated || len(l.Body) > MaxBodyBytes || len(l.Body) < MaxBodyBytes-200 || !strings.HasSuffix(l.Body, "\n") {
		t.Errorf("body: %d bytes, truncated %v; want a cut at a line end just under %d", len(l.Body), l.Truncated, MaxBodyBytes)
	}
	header := int64(len("---\nname: huge-body\ndescription: A skill whose body is far over the limit a load returns.\n---\n"))
	if l.BodyBytes != fi.Size()-header {
		t.Errorf("BodyBytes = %d, want %d", l.BodyBytes, fi.Size()-header)
	}
	if !slices.ContainsFunc(l.Problems, func(p Problem) bool {
		return p.Severity == Warning && strings.Contains(p.Rule, "recommends under 500 lines")
	}) {
		t.Errorf("no warning about the length:\n%s", problemLines(l.Problems))
	}
	// The rest is there to read.
	data, size, err := c.ReadFile(context.Background(), "huge-body", "SKILL.md", 1<<20)
	if err != nil || size != fi.Size() || int64(len(data)) != size {
		t.Errorf("ReadFile SKILL.md: %d of %d bytes, %v", len(data), size, err)
	}
}

func TestReadFileConfinement(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "conf")
	writeSkill(t, dir, "Confinement.")
	writeSkill(t, filepath.Join(root, "other"), "A neighbour.")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("echo hi\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "big.txt"), make([]byte, 2000), 0o644)
	os.Symlink("scripts/run.sh", filepath.Join(dir, "inside-link"))
	os.Symlink("../other/SKILL.md", filepath.Join(dir, "neighbour-link"))
	os.Symlink("/etc/hostname", filepath.Join(dir, "abs-link"))
	os.Symlink("../other", filepath.Join(dir, "dir-link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Roots: []Root{{Dir: root}}})
	ctx := context.Background()

	tests := []struct {
		path string
		want string // content, when no error
		err  error
	}{
		{"scripts/run.sh", "echo hi\n", nil},
		{"./scripts/../scripts/run.sh", "echo hi\n", nil},
		{"inside-link", "echo hi\n", nil},
		{"../other/SKILL.md", "", ErrOutside},
		{"/etc/hostname", "", ErrOutside},
		{filepath.Join(dir, "scripts/run.sh"), "", ErrOutside},
		{"neighbour-link", "", ErrOutside},
		{"abs-link", "", ErrOutside},
		{"dir-link/SKILL.md", "", ErrOutside},
		{"scripts", "", ErrIsDir},
		{"fifo", "", ErrNotRegular},
		{"big.txt", "", ErrTooLarge},
		{"missing.md", "", fs.ErrNotExist},
		{"a\x00b", "", fs.ErrInvalid},
	}
	for _, tt := range tests {
		data, _, err := c.ReadFile(ctx, "conf", tt.path, 1000)
		switch {
		case tt.err == nil && err != nil:
			t.Errorf("%q: %v", tt.path, err)
		case tt.err == nil && string(data) != tt.want:
			t.Errorf("%q = %q, want %q", tt.path, data, tt.want)
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("%q: error %v, want %v", tt.path, err, tt.err)
		}
	}
	if _, _, err := c.ReadFile(ctx, "nope", "SKILL.md", 1000); !errors.Is(err, ErrUnknownSkill) {
		t.Errorf("unknown skill: %v", err)
	}
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, filepath.Join(root, "a", "same"), "First of two.")
	writeSkill(t, filepath.Join(root, "b", "same"), "Second of two, in the same search directory.")
	c := New(Options{Roots: []Root{{Dir: root}, {Dir: abs(t, "testdata/valid")}, {Dir: abs(t, "testdata/user")}}})
	problems, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		sev  Severity
		file string
		rule string
	}{
		{Error, filepath.Join(root, "b", "same", "SKILL.md"), "already used by"},
		{Warning, abs(t, "testdata/user/pdf-tools/SKILL.md"), "this skill is shadowed"},
		{Error, abs(t, "testdata/valid/pdf-tools/SKILL.md"), "does not exist"},
		{Warning, abs(t, "testdata/valid/kebab-extensions/SKILL.md"), "not a field"},
	}
	for _, w := range want {
		if !slices.ContainsFunc(problems, func(p Problem) bool {
			return p.Severity == w.sev && p.File == w.file && strings.Contains(p.Rule, w.rule)
		}) {
			t.Errorf("no %v for %s containing %q:\n%s", w.sev, w.file, w.rule, problemLines(problems))
		}
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(want), problemLines(problems))
	}
}

// TestLoadCostlyBody loads a skill whose body is built to make a Markdown
// parser read it again from each of its link openers: its links are left
// unchecked, with a warning, instead of the load taking seconds.
func TestLoadCostlyBody(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "costly")
	writeSkill(t, dir, "Costly.")
	body := "---\nname: costly\ndescription: Costly.\n---\n[fine](missing.md)\n\n" + strings.Repeat("[a](", 60000) + "\n"
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644)
	c := New(Options{Roots: []Root{{Dir: root}}})
	l, err := c.Load(context.Background(), "costly")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Links) != 0 || !slices.ContainsFunc(l.Problems, func(p Problem) bool {
		return p.Severity == Warning && strings.Contains(p.Rule, "links were not checked")
	}) {
		t.Errorf("links %v, problems:\n%s", l.Links, problemLines(l.Problems))
	}
}
