package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Root is one directory the catalog searches for skills.
type Root struct {
	// Dir is the directory's absolute path.
	Dir string
	// Origin says where the directory comes from, for reports:
	// "--skills-dir", "workspace" or "user".
	Origin string
	// Explicit is true for a directory someone named on purpose: when it
	// is missing, that is reported as a warning. The default directories
	// are usually absent, and that is not reported.
	Explicit bool
}

// SearchPath returns the directories searched for skills, in order: the
// dirs given (relative ones are taken from the current directory), then in
// workspace .praxis/skills, .agents/skills and .claude/skills, then in home
// .agents/skills and .claude/skills. An empty workspace or home leaves its
// directories out. A directory listed twice is kept at its first place.
func SearchPath(dirs []string, workspace, home string) []Root {
	var roots []Root
	seen := map[string]bool{}
	add := func(dir, origin string, explicit bool) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if !seen[dir] {
			seen[dir] = true
			roots = append(roots, Root{Dir: dir, Origin: origin, Explicit: explicit})
		}
	}
	for _, d := range dirs {
		if d != "" {
			add(d, "--skills-dir", true)
		}
	}
	if workspace != "" {
		for _, d := range []string{".praxis/skills", ".agents/skills", ".claude/skills"} {
			add(filepath.Join(workspace, d), "workspace", false)
		}
	}
	if home != "" {
		for _, d := range []string{".agents/skills", ".claude/skills"} {
			add(filepath.Join(home, d), "user", false)
		}
	}
	return roots
}

// DefaultMaxDepth is how many directory levels below a search directory a
// skill directory may be: 1 is DIR/NAME/SKILL.md, the usual layout.
const DefaultMaxDepth = 3

// maxDirs bounds the directories one search visits, so that a search
// directory pointed at a large tree by mistake stays cheap.
const maxDirs = 20_000

// stamp is what change detection compares: a path's modification time and
// size, or its absence.
type stamp struct {
	mtime time.Time
	size  int64
	gone  bool
}

func stampOf(fi fs.FileInfo) stamp { return stamp{mtime: fi.ModTime(), size: fi.Size()} }

// scan is the result of one discovery: every candidate skill in search
// order, the problems met, and the stamps of every path whose change would
// change the result.
type scan struct {
	found    []Skill
	problems []Problem
	stamps   map[string]stamp
}

// walker searches one root.
type walker struct {
	ctx      context.Context
	root     Root
	r        *os.Root
	maxDepth int
	dirs     int
	s        *scan
}

// discover searches roots in order.
func discover(ctx context.Context, roots []Root, maxDepth int) (*scan, error) {
	s := &scan{stamps: map[string]stamp{}}
	for _, root := range roots {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fi, err := os.Stat(root.Dir)
		if err != nil {
			s.stamps[root.Dir] = stamp{gone: true}
			if root.Explicit || !errors.Is(err, fs.ErrNotExist) {
				s.warn(root.Dir, "the skills directory could not be read: %s", osReason(err))
			}
			continue
		}
		s.stamps[root.Dir] = stampOf(fi)
		if !fi.IsDir() {
			s.warn(root.Dir, "the skills directory is not a directory")
			continue
		}
		r, err := os.OpenRoot(root.Dir)
		if err != nil {
			s.warn(root.Dir, "the skills directory could not be opened: %s", osReason(err))
			continue
		}
		w := &walker{ctx: ctx, root: root, r: r, maxDepth: maxDepth, s: s}
		err = w.walk(".", 0, []fs.FileInfo{fi})
		r.Close()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *scan) warn(file, format string, args ...any) {
	s.problems = append(s.problems, Problem{Severity: Warning, File: file, Rule: fmt.Sprintf(format, args...)})
}

// abs returns the absolute path of rel in the walker's root.
func (w *walker) abs(rel string) string {
	if rel == "." {
		return w.root.Dir
	}
	return filepath.Join(w.root.Dir, filepath.FromSlash(rel))
}

// walk looks at directory rel, depth levels below the root: if it holds
// SKILL.md it is a skill and is not descended; otherwise its
// subdirectories are, up to the depth limit. ancestors are the directories
// on the way, to refuse symlink cycles.
func (w *walker) walk(rel string, depth int, ancestors []fs.FileInfo) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if w.dirs++; w.dirs > maxDirs {
		if w.dirs == maxDirs+1 {
			w.s.warn(w.root.Dir, "the search stopped after %d directories", maxDirs)
		}
		return nil
	}
	if found, err := w.trySkill(rel); found || err != nil {
		return err
	}
	if depth >= w.maxDepth {
		return nil
	}
	f, err := w.r.Open(rel)
	if err != nil {
		w.s.warn(w.abs(rel), "the directory could not be read: %s", osReason(err))
		return nil
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		w.s.warn(w.abs(rel), "the directory could not be read: %s", osReason(err))
		return nil
	}
	sortEntries(entries)
	for _, de := range entries {
		name := de.Name()
		if name[0] == '.' || name == "node_modules" {
			continue
		}
		child := path.Join(rel, name)
		var fi fs.FileInfo
		switch {
		case de.IsDir():
			if fi, err = de.Info(); err != nil {
				continue // removed while we looked
			}
		case de.Type()&fs.ModeSymlink != 0:
			fi, err = w.r.Stat(child) // follows the link only inside the root
			if err != nil {
				if isEscape(err) {
					w.s.warn(w.abs(child), "the symlink leads outside the skills directory %s; not followed", w.root.Dir)
				} else {
					w.s.warn(w.abs(child), "the symlink could not be followed: %s", osReason(err))
				}
				continue
			}
			if !fi.IsDir() {
				continue
			}
			if cyclic(fi, ancestors) {
				w.s.warn(w.abs(child), "the symlink leads back to a directory above it; not followed")
				continue
			}
		default:
			continue
		}
		w.s.stamps[w.abs(child)] = stampOf(fi)
		if err := w.walk(child, depth+1, append(ancestors, fi)); err != nil {
			return err
		}
	}
	return nil
}

func cyclic(fi fs.FileInfo, ancestors []fs.FileInfo) bool {
	for _, a := range ancestors {
		if os.SameFile(fi, a) {
			return true
		}
	}
	return false
}

// trySkill parses rel/SKILL.md if there is one, and reports whether there
// was.
func (w *walker) trySkill(rel string) (bool, error) {
	file := path.Join(rel, "SKILL.md")
	abs := w.abs(file)
	f, err := w.r.Open(file)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return false, nil
		case isEscape(err):
			w.s.add(Error, abs, "", "SKILL.md is a symlink leading outside the skills directory %s", w.root.Dir)
		default:
			w.s.add(Error, abs, "", "SKILL.md could not be read: %s", osReason(err))
		}
		w.s.stamps[abs] = stamp{gone: true}
		return true, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		w.s.add(Error, abs, "", "SKILL.md could not be read: %s", osReason(err))
		return true, nil
	}
	w.s.stamps[abs] = stampOf(fi)
	if fi.IsDir() {
		w.s.add(Error, abs, "", "SKILL.md is a directory, not a file")
		return true, nil
	}
	if !fi.Mode().IsRegular() {
		w.s.add(Error, abs, "", "SKILL.md is not a regular file")
		return true, nil
	}
	head := make([]byte, min(fi.Size(), maxFrontmatterBytes))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		w.s.add(Error, abs, "", "SKILL.md could not be read: %s", osReason(err))
		return true, nil
	}
	head = head[:n]
	dirName := path.Base(rel)
	if rel == "." {
		dirName = filepath.Base(w.root.Dir)
	}
	s, problems := parseHead(abs, head, fi.Size() <= int64(n), dirName)
	w.s.problems = append(w.s.problems, problems...)
	if HasErrors(problems) {
		return true, nil
	}
	s.Dir = w.abs(rel)
	s.File = abs
	s.Root = w.root
	s.rel = rel
	w.s.found = append(w.s.found, s)
	return true, nil
}

func (s *scan) add(sev Severity, file, field, format string, args ...any) {
	s.problems = append(s.problems, Problem{Severity: sev, File: file, Field: field, Rule: fmt.Sprintf(format, args...)})
}

// isEscape reports whether err is os.Root's refusal of a path that leaves
// the root. The os package does not export that error, so it is recognised
// by its text.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// osReason is the operating system's words for err, without the path.
func osReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sortEntries sorts entries by name: ReadDir of an *os.File does not, and
// discovery order must be stable.
func sortEntries(entries []fs.DirEntry) {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
