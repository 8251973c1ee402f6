package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/praxis-tools/praxis/skills/internal/mdlink"
)

// Errors of Load and ReadFile, wrapped in an *fs.PathError where a path is
// concerned. Test them with errors.Is.
var (
	ErrOutside    = errors.New("the path leads outside the skill's directory")
	ErrIsDir      = errors.New("is a directory")
	ErrNotRegular = errors.New("is not a regular file")
	ErrTooLarge   = errors.New("is too large")
)

// MaxBodyBytes is the most of a body Load returns; a longer body is cut at
// a line end and the rest can be read with ReadFile.
const MaxBodyBytes = 256 << 10

const (
	maxFileDepth   = 6   // directory levels below the skill listed by Load
	maxListedFiles = 500 // files Load lists
)

// Loaded is a skill's body and what it ships.
type Loaded struct {
	Skill Skill
	// Body is the Markdown after the frontmatter, at most MaxBodyBytes of
	// it. BodyBytes is its whole size and BodyLine the line of SKILL.md it
	// starts on; Truncated says Body stops short.
	Body      string
	BodyBytes int64
	BodyLine  int
	Truncated bool
	// Files are the files in the skill's directory other than SKILL.md and
	// hidden ones, sorted by path; FilesTruncated says the listing stopped
	// at its limit.
	Files          []File
	FilesTruncated bool
	// Links are the local links of the body, in order of appearance.
	Links []Link
	// Problems are the body's problems: links to files that do not exist
	// or lead outside the directory (errors), a body longer than the
	// specification recommends (a warning).
	Problems []Problem
}

// File is one file a skill ships.
type File struct {
	// Path is slash-separated, relative to the skill's directory.
	Path string
	Size int64
}

// Link is a link or image in a skill's body that names a file of the skill
// rather than a URL.
type Link struct {
	// Target is the destination as written.
	Target string
	// Path is the file it names, slash-separated and relative to the
	// skill's directory; empty when Outside.
	Path string
	// Exists says the file is there.
	Exists bool
	// Outside says the link leads out of the skill's directory.
	Outside bool
}

// openSkill opens the skill's directory as a root, reached through its
// search directory so that no symlink leads it elsewhere.
func openSkill(sk Skill) (*os.Root, error) {
	sr, err := sk.Root.open()
	if err != nil {
		return nil, err
	}
	if sk.rel == "." || sk.rel == "" {
		return sr, nil
	}
	defer sr.Close()
	return sr.OpenRoot(sk.rel)
}

// Load reads the skill called name: its body, the files in its directory
// and the links of its body.
func (c *Catalog) Load(ctx context.Context, name string) (*Loaded, error) {
	sk, err := c.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return load(ctx, sk)
}

func load(ctx context.Context, sk Skill) (*Loaded, error) {
	r, err := openSkill(sk)
	if err != nil {
		return nil, pathError("open", sk.Dir, err)
	}
	defer r.Close()
	data, size, err := readLimited(r, "SKILL.md", maxFrontmatterBytes+MaxBodyBytes)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return nil, pathError("read", sk.File, err)
	}
	complete := int64(len(data)) >= size
	_, _, body, ok := splitFrontmatter(data, complete)
	if !ok {
		return nil, fmt.Errorf("%s: the frontmatter changed and no longer parses; the catalog will pick up the change", sk.File)
	}
	l := &Loaded{Skill: sk}
	l.BodyLine = bytes.Count(data[:len(data)-len(body)], []byte("\n")) + 1
	l.BodyBytes = int64(len(body)) + size - int64(len(data))
	if int64(len(body)) > MaxBodyBytes || !complete {
		cut := body[:min(len(body), MaxBodyBytes)]
		if i := bytes.LastIndexByte(cut, '\n'); i >= 0 {
			cut = cut[:i+1]
		} else {
			cut = truncateRunes(cut, false)
		}
		body, l.Truncated = cut, true
	}
	l.Body = string(body)
	advice := fmt.Sprintf("the specification recommends under %d lines, with details moved to files the body links to", RecommendedBodyLines)
	if l.Truncated {
		l.Problems = append(l.Problems, Problem{Severity: Warning, File: sk.File, Line: l.BodyLine,
			Rule: fmt.Sprintf("the body is %d bytes, more than the %d a load returns; %s", l.BodyBytes, MaxBodyBytes, advice)})
	} else if n := bytes.Count(body, []byte("\n")); n > RecommendedBodyLines {
		l.Problems = append(l.Problems, Problem{Severity: Warning, File: sk.File, Line: l.BodyLine,
			Rule: fmt.Sprintf("the body has %d lines; %s", n, advice)})
	}
	if err := l.listFiles(ctx, r, ".", 1); err != nil {
		return nil, err
	}
	l.findLinks(r, body)
	return l, nil
}

// listFiles lists the files of directory dir of the skill, depth levels
// down, confined to the skill's directory: SKILL.md and hidden files are
// left out, symlinks are followed only while they stay inside, and
// symlinked directories are not descended.
func (l *Loaded) listFiles(ctx context.Context, r *os.Root, dir string, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := r.Open(dir)
	var entries []fs.DirEntry
	if err == nil {
		entries, err = f.ReadDir(-1)
		f.Close()
	}
	if err != nil {
		l.Problems = append(l.Problems, Problem{Severity: Warning, File: filepath.Join(l.Skill.Dir, filepath.FromSlash(dir)),
			Rule: "the directory could not be read: " + osReason(err)})
		return nil
	}
	sortEntries(entries)
	for _, de := range entries {
		name := de.Name()
		p := path.Join(dir, name)
		if name[0] == '.' || p == "SKILL.md" {
			continue
		}
		fi, err := r.Stat(p) // follows symlinks only inside the skill
		if err != nil {
			if isEscape(err) {
				l.Problems = append(l.Problems, Problem{Severity: Warning, File: filepath.Join(l.Skill.Dir, filepath.FromSlash(p)),
					Rule: "the symlink leads outside the skill's directory; it is not listed and cannot be read"})
			}
			continue
		}
		switch {
		case fi.IsDir():
			if depth < maxFileDepth && de.Type()&fs.ModeSymlink == 0 {
				if err := l.listFiles(ctx, r, p, depth+1); err != nil {
					return err
				}
			}
		case fi.Mode().IsRegular():
			if len(l.Files) >= maxListedFiles {
				l.FilesTruncated = true
				return nil
			}
			l.Files = append(l.Files, File{Path: p, Size: fi.Size()})
		}
	}
	return nil
}

// findLinks collects the local links and images of body and checks that the
// files they name exist inside the skill. The destinations are found by
// mdlink, which parses CommonMark as goldmark's parser does (its tests hold it
// to goldmark) but builds nothing at package initialisation, so that only a
// load pays for it. A body whose Markdown mdlink gives up (nested over
// mdlink.MaxNesting deep, or built to be costly to parse) has its links
// left unchecked, with a warning.
func (l *Loaded) findLinks(r *os.Root, body []byte) {
	dests, err := mdlink.Destinations(body)
	if err != nil {
		l.Problems = append(l.Problems, Problem{Severity: Warning, File: l.Skill.File, Line: l.BodyLine,
			Rule: fmt.Sprintf("the body's links were not checked: %v", err)})
		return
	}
	seen := map[string]bool{}
	for _, target := range dests {
		if seen[target] {
			continue
		}
		seen[target] = true
		link, ok := classify(r, target)
		if !ok {
			continue
		}
		l.Links = append(l.Links, link)
		switch {
		case link.Outside:
			l.Problems = append(l.Problems, Problem{Severity: Error, File: l.Skill.File,
				Rule: fmt.Sprintf("the link %q leads outside the skill's directory", target)})
		case !link.Exists:
			l.Problems = append(l.Problems, Problem{Severity: Error, File: l.Skill.File,
				Rule: fmt.Sprintf("the link %q names a file that does not exist", target)})
		}
	}
}

// classify resolves a link destination; ok is false for URLs and
// fragments, which name no file of the skill.
func classify(r *os.Root, target string) (Link, bool) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return Link{}, false
	}
	p := u.Path
	if p == "" {
		return Link{}, false // "#section" or "?query"
	}
	link := Link{Target: target}
	clean := path.Clean(p)
	if strings.HasPrefix(p, "/") || !filepath.IsLocal(filepath.FromSlash(clean)) {
		link.Outside = true
		return link, true
	}
	link.Path = clean
	_, err = r.Stat(clean)
	switch {
	case err == nil:
		link.Exists = true
	case isEscape(err):
		link.Outside, link.Path = true, ""
	}
	return link, true
}

// ReadFile reads the file at path, slash-separated and relative to the
// directory of the skill called name, confined to that directory: a path
// or symlink leading out of it is ErrOutside. Directories, FIFOs, devices
// and files over max bytes are refused (ErrIsDir, ErrNotRegular,
// ErrTooLarge) without blocking. The size returned is the file's.
func (c *Catalog) ReadFile(ctx context.Context, name, p string, max int64) ([]byte, int64, error) {
	sk, err := c.Lookup(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, 0, &fs.PathError{Op: "read", Path: p, Err: fs.ErrInvalid}
	}
	clean := path.Clean(p)
	if path.IsAbs(clean) || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return nil, 0, &fs.PathError{Op: "read", Path: p, Err: ErrOutside}
	}
	r, err := openSkill(sk)
	if err != nil {
		return nil, 0, pathError("open", sk.Dir, err)
	}
	defer r.Close()
	data, size, err := readLimited(r, clean, max)
	if err != nil {
		return nil, size, pathError("read", clean, err)
	}
	return data, size, nil
}

// readLimited reads the regular file name in r: all of it if it is at
// most limit bytes, else the first limit bytes and ErrTooLarge.
func readLimited(r *os.Root, name string, limit int64) ([]byte, int64, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	switch {
	case fi.IsDir():
		return nil, 0, ErrIsDir
	case !fi.Mode().IsRegular():
		return nil, 0, ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, fi.Size(), err
	}
	if fi.Size() > limit {
		return data, fi.Size(), fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, fi.Size(), limit)
	}
	return data, max(fi.Size(), int64(len(data))), nil
}

// pathError wraps err for path, mapping os.Root's escape error to
// ErrOutside.
func pathError(op, p string, err error) error {
	if isEscape(err) {
		err = ErrOutside
	} else {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// Check validates every skill the catalog finds, deeper than discovery:
// besides the frontmatter problems it loads each usable skill and reports
// its body's problems (links to missing files or out of the directory, a
// body over the recommended length). A skill shadowed by one of the same
// name from the same search directory is an error; from an earlier search
// directory, a warning. The error is non-nil only when ctx ends.
func (c *Catalog) Check(ctx context.Context) ([]Problem, error) {
	snap, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	problems := slices.Clone(snap.Problems)
	for _, sh := range snap.Shadowed {
		p := Problem{Severity: Warning, File: sh.Skill.File, Field: "name",
			Rule: fmt.Sprintf("the name %q is taken by %s, found first; this skill is shadowed", sh.Skill.Name, sh.By.File)}
		if sh.Skill.Root.Dir == sh.By.Root.Dir {
			p.Severity = Error
			p.Rule = fmt.Sprintf("the name %q is already used by %s in the same skills directory", sh.Skill.Name, sh.By.File)
		}
		problems = append(problems, p)
	}
	for _, sk := range snap.Skills {
		l, err := load(ctx, sk)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			problems = append(problems, Problem{Severity: Error, File: sk.File, Rule: err.Error()})
			continue
		}
		problems = append(problems, l.Problems...)
	}
	sortProblems(problems)
	return problems, nil
}
