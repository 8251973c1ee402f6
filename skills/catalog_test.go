package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func names(skills []Skill) []string {
	out := make([]string, len(skills))
	for i, s := range skills {
		out[i] = s.Name
	}
	return out
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// writeSkill writes dir/SKILL.md for a skill named after dir.
func writeSkill(t testing.TB, dir, description string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\nBody of %s.\n", filepath.Base(dir), description, filepath.Base(dir))
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func snapshot(t *testing.T, c *Catalog) *Snapshot {
	t.Helper()
	s, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOneBadSkillNeverStopsTheOthers(t *testing.T) {
	c := New(Options{Roots: []Root{{Dir: "testdata/invalid", Explicit: true}}})
	s := snapshot(t, c)
	if got := names(s.Skills); !slices.Equal(got, []string{"still-fine"}) {
		t.Errorf("skills = %v, want only still-fine", got)
	}
	// Every invalid directory is reported with an error naming its file.
	entries, err := os.ReadDir("testdata/invalid")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "still-fine" || e.Name() == "escaped" {
			continue
		}
		file := filepath.Join(abs(t, "testdata/invalid"), e.Name(), "SKILL.md")
		if !slices.ContainsFunc(s.Problems, func(p Problem) bool { return p.Severity == Error && p.File == file }) {
			t.Errorf("no error for %s", file)
		}
	}
}

func TestSymlinkOutOfTheRootIsNotFollowed(t *testing.T) {
	root := abs(t, "testdata/invalid")
	c := New(Options{Roots: []Root{{Dir: root}}})
	s := snapshot(t, c)
	if _, ok := s.Lookup("escaped"); ok {
		t.Fatal("the skill behind a symlink leading out of the root was found")
	}
	if again := snapshot(t, c); again != s {
		t.Error("nothing changed, but the catalog searched again")
	}
	want := map[string]string{
		filepath.Join(root, "escaped"):                        "leads outside the skills directory",
		filepath.Join(root, "symlinked-skill-md", "SKILL.md"): "symlink leading outside",
	}
	for file, rule := range want {
		if !slices.ContainsFunc(s.Problems, func(p Problem) bool { return p.File == file && strings.Contains(p.Rule, rule) }) {
			t.Errorf("no problem for %s containing %q:\n%s", file, rule, problemLines(s.Problems))
		}
	}
}

func TestSearchOrderAndShadowing(t *testing.T) {
	valid, user := abs(t, "testdata/valid"), abs(t, "testdata/user")
	c := New(Options{Roots: []Root{{Dir: valid, Origin: "workspace"}, {Dir: user, Origin: "user"}}})
	s := snapshot(t, c)
	want := []string{"kebab-extensions", "nested-skill", "pdf-tools", "snake-case", "user-only"}
	if got := names(s.Skills); !slices.Equal(got, want) {
		t.Errorf("skills = %v, want %v", got, want)
	}
	pdf, _ := s.Lookup("pdf-tools")
	if pdf.Dir != filepath.Join(valid, "pdf-tools") || pdf.Root.Origin != "workspace" {
		t.Errorf("pdf-tools from %s (%s), want the first search directory's", pdf.Dir, pdf.Root.Origin)
	}
	if len(s.Shadowed) != 1 || s.Shadowed[0].Skill.Dir != filepath.Join(user, "pdf-tools") || s.Shadowed[0].By.Dir != pdf.Dir {
		t.Errorf("shadowed = %v", s.Shadowed)
	}

	// In the other order, the user's copy wins.
	s = snapshot(t, New(Options{Roots: []Root{{Dir: user}, {Dir: valid}}}))
	if pdf, _ := s.Lookup("pdf-tools"); pdf.Dir != filepath.Join(user, "pdf-tools") {
		t.Errorf("pdf-tools from %s, want the user's", pdf.Dir)
	}
}

func TestSearchPath(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	got := SearchPath([]string{"/opt/skills", "", "/opt/skills", filepath.Join(ws, ".agents/skills")}, ws, home)
	want := []Root{
		{Dir: "/opt/skills", Origin: "--skills-dir", Explicit: true},
		{Dir: filepath.Join(ws, ".agents/skills"), Origin: "--skills-dir", Explicit: true},
		{Dir: filepath.Join(ws, ".praxis/skills"), Origin: "workspace", Within: ws},
		{Dir: filepath.Join(ws, ".claude/skills"), Origin: "workspace", Within: ws},
		{Dir: filepath.Join(home, ".agents/skills"), Origin: "user"},
		{Dir: filepath.Join(home, ".claude/skills"), Origin: "user"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("SearchPath =\n%v\nwant\n%v", got, want)
	}
	if got := SearchPath(nil, "", ""); len(got) != 0 {
		t.Errorf("SearchPath with nothing = %v", got)
	}
}

// A workspace skills directory, or a directory on its way, that resolves
// outside the workspace is skipped with a warning naming it, as is a skill
// in it that does; the user's directories in the home, outside the
// workspace by design, are followed wherever they lead.
func TestWorkspaceSkillsStayInTheWorkspace(t *testing.T) {
	ws, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeSkill(t, filepath.Join(outside, "a", "escaped-dir"), "Behind a symlinked skills directory.")
	writeSkill(t, filepath.Join(outside, "b", "skills", "escaped-parent"), "Behind a symlinked parent.")
	writeSkill(t, filepath.Join(outside, "c", "escaped-skill"), "Behind a symlinked skill.")
	writeSkill(t, filepath.Join(outside, "d", "user-skill"), "The user's, through a symlink.")
	writeSkill(t, filepath.Join(ws, ".claude", "skills", "inside"), "Where it belongs.")
	links := map[string]string{
		filepath.Join(ws, ".praxis"):                      "", // made a directory below
		filepath.Join(ws, ".praxis", "skills"):            filepath.Join(outside, "a"),
		filepath.Join(ws, ".agents"):                      filepath.Join(outside, "b"),
		filepath.Join(ws, ".claude", "skills", "escaped"): filepath.Join(outside, "c", "escaped-skill"),
		filepath.Join(home, ".agents"):                    "",
		filepath.Join(home, ".agents", "skills"):          filepath.Join(outside, "d"),
	}
	for _, link := range []string{filepath.Join(ws, ".praxis"), filepath.Join(ws, ".praxis", "skills"), filepath.Join(ws, ".agents"),
		filepath.Join(ws, ".claude", "skills", "escaped"), filepath.Join(home, ".agents"), filepath.Join(home, ".agents", "skills")} {
		var err error
		if target := links[link]; target == "" {
			err = os.Mkdir(link, 0o755)
		} else {
			err = os.Symlink(target, link)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s := snapshot(t, New(Options{Roots: SearchPath(nil, ws, home)}))
	if got, want := names(s.Skills), []string{"inside", "user-skill"}; !slices.Equal(got, want) {
		t.Errorf("skills = %v, want %v", got, want)
	}
	for file, rule := range map[string]string{
		filepath.Join(ws, ".praxis", "skills"):            "leads outside " + ws,
		filepath.Join(ws, ".agents", "skills"):            "leads outside " + ws,
		filepath.Join(ws, ".claude", "skills", "escaped"): "leads outside the skills directory",
	} {
		if !slices.ContainsFunc(s.Problems, func(p Problem) bool { return p.File == file && strings.Contains(p.Rule, rule) }) {
			t.Errorf("no warning for %s containing %q:\n%s", file, rule, problemLines(s.Problems))
		}
	}
}

func TestMissingDirectories(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	s := snapshot(t, New(Options{Roots: []Root{{Dir: missing, Explicit: true}, {Dir: missing + "2"}}}))
	if len(s.Problems) != 1 || s.Problems[0].File != missing || s.Problems[0].Severity != Warning {
		t.Errorf("want one warning for the explicit missing directory, got:\n%s", problemLines(s.Problems))
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	s = snapshot(t, New(Options{Roots: []Root{{Dir: file}}}))
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Rule, "not a directory") {
		t.Errorf("a file as search directory: %s", problemLines(s.Problems))
	}
}

func TestDepthLimit(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, filepath.Join(root, "a", "b", "c", "deep"), "Four levels down.")
	writeSkill(t, filepath.Join(root, "a", "b", "three"), "Three levels down.")
	writeSkill(t, filepath.Join(root, ".hidden", "secret"), "In a hidden directory.")
	// A skill's own subdirectories are files of the skill, not skills.
	writeSkill(t, filepath.Join(root, "top"), "One level down.")
	writeSkill(t, filepath.Join(root, "top", "references", "inner"), "Inside another skill.")

	s := snapshot(t, New(Options{Roots: []Root{{Dir: root}}}))
	if got := names(s.Skills); !slices.Equal(got, []string{"three", "top"}) {
		t.Errorf("default depth: skills = %v", got)
	}
	s = snapshot(t, New(Options{Roots: []Root{{Dir: root}}, MaxDepth: 4}))
	if got := names(s.Skills); !slices.Equal(got, []string{"deep", "three", "top"}) {
		t.Errorf("depth 4: skills = %v", got)
	}
	// The search directory itself may be one skill.
	s = snapshot(t, New(Options{Roots: []Root{{Dir: filepath.Join(root, "top")}}}))
	if got := names(s.Skills); !slices.Equal(got, []string{"top"}) {
		t.Errorf("a skill as search directory: skills = %v", got)
	}
}

func TestMaxDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a1", "a2", "a3", "b/b1", "b/b2", "c"} {
		writeSkill(t, filepath.Join(root, d), "One of several.")
	}
	s := snapshot(t, New(Options{Roots: []Root{{Dir: root}}, MaxDirs: 5}))
	// a1 a2 a3 b c are looked at (5); b's children are not.
	if got := names(s.Skills); !slices.Equal(got, []string{"a1", "a2", "a3", "c"}) {
		t.Errorf("skills = %v", got)
	}
	var warnings []string
	for _, p := range s.Problems {
		warnings = append(warnings, p.Rule)
	}
	if !slices.Equal(warnings, []string{"the search stopped after 5 directories"}) {
		t.Errorf("problems:\n%s", problemLines(s.Problems))
	}
}

func TestSymlinksInsideTheRoot(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, filepath.Join(root, "store", "linked"), "Reached through a symlink inside the root.")
	if err := os.Symlink("store/linked", filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(root, "store", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("self", filepath.Join(root, "self")); err != nil {
		t.Fatal(err)
	}
	s := snapshot(t, New(Options{Roots: []Root{{Dir: root}}}))
	linked, ok := s.Lookup("linked")
	if !ok || linked.Dir != filepath.Join(root, "linked") {
		t.Fatalf("linked = %+v, %v", linked, ok)
	}
	// store/linked is the same skill under the same name: shadowed, once.
	if len(s.Shadowed) != 1 {
		t.Errorf("shadowed = %v", s.Shadowed)
	}
	for file, rule := range map[string]string{
		filepath.Join(root, "store", "loop"): "leads back to a directory above it",
		filepath.Join(root, "dangling"):      "could not be followed",
		filepath.Join(root, "self"):          "could not be followed",
	} {
		if !slices.ContainsFunc(s.Problems, func(p Problem) bool { return p.File == file && strings.Contains(p.Rule, rule) }) {
			t.Errorf("no problem for %s containing %q:\n%s", file, rule, problemLines(s.Problems))
		}
	}
}

func TestChangesArePickedUp(t *testing.T) {
	root := t.TempDir()
	c := New(Options{Roots: []Root{{Dir: filepath.Join(root, "skills")}}})
	s0 := snapshot(t, c)
	if len(s0.Skills) != 0 {
		t.Fatalf("skills = %v", names(s0.Skills))
	}
	if again := snapshot(t, c); again != s0 {
		t.Error("nothing changed, but the catalog searched again")
	}

	steps := []struct {
		name   string
		change func(t *testing.T)
		want   []string
		desc   string // the description of "one", if it exists
	}{
		{"root created with a skill", func(t *testing.T) {
			writeSkill(t, filepath.Join(root, "skills", "one"), "First.")
		}, []string{"one"}, "First."},
		{"skill added", func(t *testing.T) {
			writeSkill(t, filepath.Join(root, "skills", "two"), "Second.")
		}, []string{"one", "two"}, "First."},
		{"description edited", func(t *testing.T) {
			writeSkill(t, filepath.Join(root, "skills", "one"), "First, edited and longer.")
		}, []string{"one", "two"}, "First, edited and longer."},
		{"nested skill added", func(t *testing.T) {
			writeSkill(t, filepath.Join(root, "skills", "group", "three"), "Third.")
		}, []string{"one", "three", "two"}, "First, edited and longer."},
		{"skill broken", func(t *testing.T) {
			os.WriteFile(filepath.Join(root, "skills", "two", "SKILL.md"), []byte("no frontmatter"), 0o644)
		}, []string{"one", "three"}, "First, edited and longer."},
		{"SKILL.md removed", func(t *testing.T) {
			os.Remove(filepath.Join(root, "skills", "one", "SKILL.md"))
		}, []string{"three"}, ""},
		{"directory renamed", func(t *testing.T) {
			os.Rename(filepath.Join(root, "skills", "group"), filepath.Join(root, "skills", "other"))
		}, []string{"three"}, ""},
		{"root removed", func(t *testing.T) {
			os.RemoveAll(filepath.Join(root, "skills"))
		}, nil, ""},
	}
	prev := s0
	for _, st := range steps {
		// Modification times on some file systems are coarse; make sure a
		// change is visible as one.
		time.Sleep(10 * time.Millisecond)
		st.change(t)
		s := snapshot(t, c)
		if got := names(s.Skills); !slices.Equal(got, st.want) {
			t.Fatalf("%s: skills = %v, want %v", st.name, got, st.want)
		}
		one, _ := s.Lookup("one")
		if one.Description != st.desc {
			t.Fatalf("%s: description = %q, want %q", st.name, one.Description, st.desc)
		}
		if s.Generation <= prev.Generation {
			t.Fatalf("%s: generation %d after %d", st.name, s.Generation, prev.Generation)
		}
		prev = s
	}
}

func TestRefreshForcesASearch(t *testing.T) {
	c := New(Options{Roots: []Root{{Dir: "testdata/valid"}}})
	s := snapshot(t, c)
	c.Refresh()
	if s2 := snapshot(t, c); s2 == s || s2.Generation != s.Generation+1 {
		t.Error("Refresh did not force a new search")
	}
}

func TestCancelledSearch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(Options{Roots: []Root{{Dir: "testdata/valid"}}}).Snapshot(ctx); err == nil {
		t.Error("a cancelled search succeeded")
	}
}

// TestUnreadableDirectoryIsAWarning runs as an unprivileged user: as root,
// permissions would not stop the read. When the test runs as root it runs
// itself again as nobody.
func TestUnreadableDirectoryIsAWarning(t *testing.T) {
	root := os.Getenv("SKILLS_TEST_UNREADABLE_ROOT")
	if root == "" {
		root = t.TempDir()
		os.Chmod(root, 0o755)
		writeSkill(t, filepath.Join(root, "readable"), "Readable.")
		writeSkill(t, filepath.Join(root, "locked", "hidden"), "Behind a locked directory.")
		if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
		if os.Geteuid() == 0 {
			// Run a copy of this test binary as nobody, from a directory
			// nobody can reach.
			top := filepath.Dir(root)
			if err := os.Chmod(top, 0o755); err != nil {
				t.Fatal(err)
			}
			for d := filepath.Dir(top); d != "/" && d != "."; d = filepath.Dir(d) {
				if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
					t.Skipf("%s is not searchable by other users", d)
				}
			}
			self, err := os.ReadFile(os.Args[0])
			if err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(top, "skills.test")
			if err := os.WriteFile(bin, self, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "-test.run=^TestUnreadableDirectoryIsAWarning$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "SKILLS_TEST_UNREADABLE_ROOT="+root, "GOCOVERDIR="+os.TempDir())
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Skipf("cannot run the test as nobody: %v", err) // e.g. a noexec temporary directory
			}
			if err != nil {
				t.Fatalf("as nobody: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "--- PASS: TestUnreadableDirectoryIsAWarning") {
				t.Fatalf("as nobody, the test did not pass:\n%s", out)
			}
			return
		}
	}
	s := snapshot(t, New(Options{Roots: []Root{{Dir: root}}}))
	if got := names(s.Skills); !slices.Equal(got, []string{"readable"}) {
		t.Errorf("skills = %v", got)
	}
	locked := filepath.Join(root, "locked")
	if !slices.ContainsFunc(s.Problems, func(p Problem) bool {
		return p.File == locked && p.Severity == Warning && strings.Contains(p.Rule, "permission denied")
	}) {
		t.Errorf("no warning for the locked directory:\n%s", problemLines(s.Problems))
	}
}

// TestConcurrentUse has several readers list and load skills while a
// writer adds, edits and removes them. Run with -race.
func TestConcurrentUse(t *testing.T) {
	root := t.TempDir()
	for i := range 20 {
		writeSkill(t, filepath.Join(root, fmt.Sprintf("s%02d", i)), "Stable.")
	}
	c := New(Options{Roots: []Root{{Dir: root}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for ctx.Err() == nil {
				list, err := c.List(ctx)
				if err != nil {
					break
				}
				if len(list) < 20 {
					errs <- fmt.Errorf("only %d skills listed", len(list))
					return
				}
				if _, err := c.Load(ctx, "s07"); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for i := range 50 {
		dir := filepath.Join(root, fmt.Sprintf("extra%d", i%5))
		if i%2 == 0 {
			writeSkill(t, dir, fmt.Sprintf("Version %d.", i))
		} else {
			os.RemoveAll(dir)
		}
	}
	cancel()
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestBrokenSkillReportedOnce: a skill left out is logged once, in one
// record, however often the catalog is searched again; once more only when
// its errors change.
func TestBrokenSkillReportedOnce(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, "broken", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: Broken Name\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	c := New(Options{Roots: []Root{{Dir: dir, Origin: "test"}}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		if _, err := c.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Refresh()
	}
	if n := strings.Count(logs.String(), "skill left out"); n != 1 {
		t.Fatalf("%d records for one broken skill; want 1:\n%s", n, logs.String())
	}
	if err := os.WriteFile(skill, []byte("---\nname: broken\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Refresh()
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "skill left out"); n != 2 {
		t.Fatalf("%d records after the errors changed; want 2:\n%s", n, logs.String())
	}
}
