package skills

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrUnknownSkill is returned for a name no skill in the catalog has.
var ErrUnknownSkill = errors.New("no skill by that name")

// Options configure a Catalog.
type Options struct {
	// Roots are the directories searched, in order; SearchPath builds the
	// usual list.
	Roots []Root
	// MaxDepth is how many levels below a root a skill directory may be.
	// Default DefaultMaxDepth.
	MaxDepth int
	// MaxDirs is how many directories one search of a root looks at before
	// it stops with a warning. Default DefaultMaxDirs.
	MaxDirs int
	// Logger receives a line for each skill left out, when it is first
	// seen. Default: discard.
	Logger *slog.Logger
}

// Catalog is the set of skills found in its roots. It searches lazily, on
// the first request, and on every later request checks the modification
// times of the directories and SKILL.md files it saw, searching again only
// when one changed. It is safe for concurrent use.
type Catalog struct {
	opts Options
	log  *slog.Logger

	mu   sync.Mutex
	snap *Snapshot
	last *scan // nil to force a search
	// reported holds what report logged of the last snapshot.
	reported map[string]bool
}

// Snapshot is the catalog at one moment. It is shared and must not be
// modified.
type Snapshot struct {
	// Skills are the usable skills, sorted by name: for each name, the
	// first found in search order.
	Skills []Skill
	// Shadowed are the skills left out because one of the same name came
	// first.
	Shadowed []Shadowed
	// Problems are the errors that left skills out and the warnings met,
	// sorted by file.
	Problems []Problem
	// Generation increases each time the catalog is rebuilt after a change
	// on disk; equal generations mean equal snapshots.
	Generation uint64
}

// Lookup returns the skill called name.
func (s *Snapshot) Lookup(name string) (Skill, bool) {
	i, ok := slices.BinarySearchFunc(s.Skills, name, func(sk Skill, n string) int { return strings.Compare(sk.Name, n) })
	if !ok {
		return Skill{}, false
	}
	return s.Skills[i], true
}

// New returns a catalog searching opts.Roots (relative directories are
// taken from the current directory). It reads nothing yet.
func New(opts Options) *Catalog {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxDirs <= 0 {
		opts.MaxDirs = DefaultMaxDirs
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Roots = slices.Clone(opts.Roots)
	for i, r := range opts.Roots {
		if abs, err := filepath.Abs(r.Dir); err == nil {
			opts.Roots[i].Dir = abs
		}
	}
	return &Catalog{opts: opts, log: opts.Logger}
}

// Roots returns the directories the catalog searches, in order.
func (c *Catalog) Roots() []Root { return slices.Clone(c.opts.Roots) }

// Snapshot returns the catalog as it is on disk now: the last search's
// result if nothing it looked at changed since, else a new search's.
// The error is non-nil only when ctx ends; problems with skills and
// directories are in the snapshot.
func (c *Catalog) Snapshot(ctx context.Context) (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed, now := c.changed()
	if c.snap != nil && !changed {
		return c.snap, nil
	}
	sc, err := discover(ctx, c.opts.Roots, c.opts, c.last, now)
	if err != nil {
		return nil, err
	}
	var gen uint64
	if c.snap != nil {
		gen = c.snap.Generation + 1
	}
	c.snap = build(sc, gen)
	c.last = sc
	c.report(c.snap.Problems)
	return c.snap, nil
}

// report logs each skill left out once for the catalog's life, in one
// record naming its file and every error that left it out; it is logged
// again only if its errors change. Warnings are logged at debug level.
// c.mu is held.
func (c *Catalog) report(problems []Problem) {
	var files []string
	errs := map[string][]string{}
	for _, p := range problems {
		if p.Severity != Error {
			if !c.reported[p.String()] {
				c.log.Debug("skill warning", "problem", p.String())
			}
			continue
		}
		if _, ok := errs[p.File]; !ok {
			files = append(files, p.File)
		}
		what := p.Rule
		if p.Field != "" {
			what = p.Field + ": " + what
		}
		errs[p.File] = append(errs[p.File], what)
	}
	now := map[string]bool{}
	for _, p := range problems {
		if p.Severity != Error {
			now[p.String()] = true
		}
	}
	for _, f := range files {
		key := f + "\x00" + strings.Join(errs[f], "\x00")
		now[key] = true
		if !c.reported[key] {
			c.log.Warn("skill left out", "file", f, "problems", strings.Join(errs[f], "; "))
		}
	}
	c.reported = now
}

// Refresh forgets the last search, so that the next request searches and
// parses everything again even if no modification time changed.
func (c *Catalog) Refresh() {
	c.mu.Lock()
	c.last = nil
	c.mu.Unlock()
}

// changed stats every path the last search looked at and reports whether
// any has changed, appeared or vanished since, with the stamps it saw.
// c.mu is held.
func (c *Catalog) changed() (bool, map[string]stamp) {
	if c.last == nil {
		return true, nil
	}
	now := make(map[string]stamp, len(c.last.stamps))
	changed := false
	for p, old := range c.last.stamps {
		st, err := statStamp(p)
		if err != nil {
			changed = true
			continue
		}
		now[p] = st
		if !st.equal(old) {
			changed = true
		}
	}
	return changed, now
}

// build resolves names: the first skill of a name wins.
func build(sc *scan, gen uint64) *Snapshot {
	s := &Snapshot{Problems: sc.problems, Generation: gen}
	first := map[string]int{}
	for _, sk := range sc.found {
		if i, dup := first[sk.Name]; dup {
			s.Shadowed = append(s.Shadowed, Shadowed{Skill: sk, By: s.Skills[i]})
			continue
		}
		first[sk.Name] = len(s.Skills)
		s.Skills = append(s.Skills, sk)
	}
	slices.SortFunc(s.Skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	sortProblems(s.Problems)
	return s
}

// List returns the usable skills, sorted by name, in a slice of the
// caller's own.
func (c *Catalog) List(ctx context.Context) ([]Skill, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return slices.Clone(s.Skills), nil
}

// Lookup returns the skill called name, or ErrUnknownSkill.
func (c *Catalog) Lookup(ctx context.Context, name string) (Skill, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return Skill{}, err
	}
	sk, ok := s.Lookup(name)
	if !ok {
		return Skill{}, ErrUnknownSkill
	}
	return sk, nil
}
