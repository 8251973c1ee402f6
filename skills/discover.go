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
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// Within, when set, is a directory Dir must stay inside, symlinks
	// followed: the workspace, for the workspace's skills directories. A
	// root that resolves outside it is skipped with a warning naming it.
	// Dir must then be spelt as a path below Within.
	Within string
}

// open opens the root's directory: through an os.Root of Within when that
// is set, so that no symlink on the way leads outside it.
func (r Root) open() (*os.Root, error) {
	if r.Within == "" {
		return os.OpenRoot(r.Dir)
	}
	rel, err := filepath.Rel(r.Within, r.Dir)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s is not below %s", r.Dir, r.Within)
	}
	wr, err := os.OpenRoot(r.Within)
	if err != nil {
		return nil, err
	}
	defer wr.Close()
	return wr.OpenRoot(rel)
}

// SearchPath returns the directories searched for skills, in order: the
// dirs given (relative ones are taken from the current directory), then in
// workspace .praxis/skills, .agents/skills and .claude/skills, then in home
// .agents/skills and .claude/skills. An empty workspace or home leaves its
// directories out. A directory listed twice is kept at its first place.
// The workspace's directories must stay inside the workspace (Within); the
// user's, in the home directory, are outside it by design.
func SearchPath(dirs []string, workspace, home string) []Root {
	var roots []Root
	seen := map[string]bool{}
	add := func(dir, origin string, explicit bool, within string) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if !seen[dir] {
			seen[dir] = true
			roots = append(roots, Root{Dir: dir, Origin: origin, Explicit: explicit, Within: within})
		}
	}
	for _, d := range dirs {
		if d != "" {
			add(d, "--skills-dir", true, "")
		}
	}
	if workspace != "" {
		if abs, err := filepath.Abs(workspace); err == nil {
			workspace = abs
		}
		for _, d := range []string{".praxis/skills", ".agents/skills", ".claude/skills"} {
			add(filepath.Join(workspace, d), "workspace", false, workspace)
		}
	}
	if home != "" {
		for _, d := range []string{".agents/skills", ".claude/skills"} {
			add(filepath.Join(home, d), "user", false, "")
		}
	}
	return roots
}

// DefaultMaxDepth is how many directory levels below a search directory a
// skill directory may be: 1 is DIR/NAME/SKILL.md, the usual layout.
const DefaultMaxDepth = 3

// DefaultMaxDirs bounds the directories one search of a root looks at, so
// that a search directory pointed at a large tree by mistake stays cheap.
const DefaultMaxDirs = 20_000

// stamp is what change detection compares: a path's modification time,
// size and mode, or its absence.
type stamp struct {
	mtime time.Time
	size  int64
	mode  fs.FileMode
	gone  bool
}

func (s stamp) equal(t stamp) bool {
	return s.gone == t.gone && s.size == t.size && s.mode == t.mode && s.mtime.Equal(t.mtime)
}

// statStamp stats p, following symlinks, as change detection does.
func statStamp(p string) (stamp, error) {
	fi, err := os.Stat(p)
	switch {
	case err == nil:
		return stampOf(fi), nil
	case errors.Is(err, fs.ErrNotExist):
		return stamp{gone: true}, nil
	}
	return stamp{}, err
}

func stampOf(fi fs.FileInfo) stamp {
	return stamp{mtime: fi.ModTime(), size: fi.Size(), mode: fi.Mode()}
}

// scan is the result of one discovery: every candidate skill in search
// order, the problems met, and the stamps of every path whose change would
// change the result.
type scan struct {
	found    []Skill
	problems []Problem
	stamps   map[string]stamp
	// parsed holds each SKILL.md's probe, for the next search to reuse
	// while the file's stamp is unchanged.
	parsed map[string]probe
}

// walker searches one root.
type walker struct {
	ctx      context.Context
	prev     map[string]probe // the last search's parsed, read-only
	now      map[string]stamp // stamps just taken, read-only
	root     Root
	r        *os.Root
	maxDepth int
	maxDirs  int
	dirs     int  // directories looked at
	capped   bool // dirs reached maxDirs
	s        *scan
}

// discover searches roots in order. prev is the last search's result, or
// nil: a SKILL.md whose stamp has not changed since is not parsed again.
// now holds stamps taken a moment ago, or nil: a SKILL.md whose stamp there
// equals its stamp in prev is not even opened again.
func discover(ctx context.Context, roots []Root, opts Options, prev *scan, now map[string]stamp) (*scan, error) {
	s := &scan{stamps: map[string]stamp{}, parsed: map[string]probe{}}
	var parsed map[string]probe
	if prev != nil {
		parsed = prev.parsed
	}
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
		r, err := root.open()
		if isEscape(err) {
			s.warn(root.Dir, "the skills directory leads outside %s (through a symlink); skipped", root.Within)
			continue
		}
		if err != nil {
			s.warn(root.Dir, "the skills directory could not be opened: %s", osReason(err))
			continue
		}
		w := &walker{ctx: ctx, prev: parsed, now: now, root: root, r: r, maxDepth: opts.MaxDepth, maxDirs: opts.MaxDirs, s: s}
		if p := w.probe("."); p.found {
			w.merge(p)
		} else {
			err = w.walk(".", 0, nil)
		}
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

// walk reads directory rel, which is not a skill, depth levels below the
// root. Each subdirectory holding SKILL.md is a skill and is not descended;
// the others are, up to the depth limit. ancestors are the directories on
// the way, to refuse symlink cycles.
func (w *walker) walk(rel string, depth int, ancestors []fs.FileInfo) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	f, err := w.r.Open(rel)
	if err != nil {
		w.s.warn(w.abs(rel), "the directory could not be read: %s", osReason(err))
		return nil
	}
	fi, err := f.Stat()
	if err == nil {
		w.s.stamps[w.abs(rel)] = stampOf(fi)
		ancestors = append(ancestors, fi)
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		w.s.warn(w.abs(rel), "the directory could not be read: %s", osReason(err))
		return nil
	}
	sortEntries(entries)
	var children []string
	for _, de := range entries {
		name := de.Name()
		if name[0] == '.' || name == "node_modules" {
			continue
		}
		child := path.Join(rel, name)
		switch {
		case de.IsDir():
		case de.Type()&fs.ModeSymlink != 0:
			fi, err := w.r.Stat(child) // follows the link only inside the root
			switch {
			case isEscape(err):
				w.s.warn(w.abs(child), "the symlink leads outside the skills directory %s; not followed", w.root.Dir)
				continue
			case err != nil:
				w.s.warn(w.abs(child), "the symlink could not be followed: %s", osReason(err))
				continue
			case !fi.IsDir():
				continue
			case cyclic(fi, ancestors):
				w.s.warn(w.abs(child), "the symlink leads back to a directory above it; not followed")
				continue
			}
		default:
			continue
		}
		children = append(children, child)
	}
	if room := w.maxDirs - w.dirs; len(children) > room {
		if !w.capped {
			w.capped = true
			w.s.warn(w.root.Dir, "the search stopped after %d directories", w.maxDirs)
		}
		children = children[:room]
	}
	w.dirs += len(children)
	for i, p := range w.probeAll(children) {
		if p.found {
			w.merge(p)
			continue
		}
		child := children[i]
		if depth+1 >= w.maxDepth {
			// Not read, but SKILL.md may appear in it.
			if fi, err := w.r.Stat(child); err == nil {
				w.s.stamps[w.abs(child)] = stampOf(fi)
			}
			continue
		}
		if err := w.walk(child, depth+1, ancestors); err != nil {
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

// probeAll probes dirs, several at a time when there are many: opening and
// parsing a thousand SKILL.md files is most of a search's work.
func (w *walker) probeAll(dirs []string) []probe {
	out := make([]probe, len(dirs))
	workers := min(len(dirs)/16, 2*runtime.GOMAXPROCS(0))
	if workers < 2 {
		for i, d := range dirs {
			out[i] = w.probe(d)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(dirs) || w.ctx.Err() != nil {
					return
				}
				out[i] = w.probe(dirs[i])
			}
		})
	}
	wg.Wait()
	return out
}

// probe is what looking for a skill in one directory found.
type probe struct {
	found    bool // the directory holds SKILL.md (usable or not)
	parsed   bool // SKILL.md was read and parsed
	skill    *Skill
	problems []Problem
	file     string // SKILL.md's absolute path
	stamp    stamp  // SKILL.md's
}

func (w *walker) merge(p probe) {
	w.s.problems = append(w.s.problems, p.problems...)
	if p.file != "" {
		w.s.stamps[p.file] = p.stamp
	}
	if p.parsed {
		w.s.parsed[p.file] = p
	}
	if p.skill != nil {
		w.s.found = append(w.s.found, *p.skill)
	}
}

// probe parses rel/SKILL.md if there is one. It only reads: it is called
// from several goroutines at once.
func (w *walker) probe(rel string) (p probe) {
	file := path.Join(rel, "SKILL.md")
	abs := w.abs(file)
	if old, ok := w.prev[abs]; ok {
		if st, ok := w.now[abs]; ok && st.equal(old.stamp) {
			return old
		}
	}
	fail := func(format string, args ...any) probe {
		p.problems = append(p.problems, Problem{Severity: Error, File: abs, Rule: fmt.Sprintf(format, args...)})
		return p
	}
	f, err := w.r.Open(file)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return probe{}
		case errors.Is(err, fs.ErrPermission) && !w.readable(rel):
			// Stamped, so that a change of its mode is noticed.
			p.found, p.file = true, w.abs(rel)
			p.stamp, _ = statStamp(p.file)
			p.problems = append(p.problems, Problem{Severity: Warning, File: w.abs(rel),
				Rule: "the directory could not be read: " + osReason(err)})
			return p
		}
		// Stamped as change detection will see it: a symlink leading
		// outside is followed there.
		p.found, p.file = true, abs
		p.stamp, _ = statStamp(abs)
		if isEscape(err) {
			return fail("SKILL.md is a symlink leading outside the skills directory %s", w.root.Dir)
		}
		return fail("SKILL.md could not be read: %s", osReason(err))
	}
	defer f.Close()
	p.found, p.file = true, abs
	fi, err := f.Stat()
	if err != nil {
		return fail("SKILL.md could not be read: %s", osReason(err))
	}
	p.stamp = stampOf(fi)
	if old, ok := w.prev[abs]; ok && old.stamp.equal(p.stamp) {
		return old
	}
	if fi.IsDir() {
		return fail("SKILL.md is a directory, not a file")
	}
	if !fi.Mode().IsRegular() {
		return fail("SKILL.md is not a regular file")
	}
	head := make([]byte, min(fi.Size(), maxFrontmatterBytes))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fail("SKILL.md could not be read: %s", osReason(err))
	}
	head = head[:n]
	dirName := path.Base(rel)
	if rel == "." {
		dirName = filepath.Base(w.root.Dir)
	}
	s, problems := parseHead(abs, head, fi.Size() <= int64(n), dirName)
	p.parsed = true
	p.problems = append(p.problems, problems...)
	if HasErrors(problems) {
		return p
	}
	s.Dir = w.abs(rel)
	s.File = abs
	s.Root = w.root
	s.rel = rel
	p.skill = &s
	return p
}

// readable reports whether directory rel can be opened.
func (w *walker) readable(rel string) bool {
	f, err := w.r.Open(rel)
	if err != nil {
		return false
	}
	f.Close()
	return true
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
