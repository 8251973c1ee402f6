package praxis

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/praxis-tools/praxis/praxis/internal/walk"
)

type globArgs struct {
	Pattern       string `json:"pattern" minLength:"1" jsonschema:"Doublestar pattern matched against paths relative to path, e.g. **/*.go or src/**/*_test.{ts,tsx}."`
	Path          string `json:"path,omitempty" jsonschema:"Directory to search, relative to the workspace root or absolute inside it. Default: the workspace root."`
	Limit         int    `json:"limit,omitempty" minimum:"1" maximum:"100000" default:"200" jsonschema:"Most paths to return."`
	IncludeHidden bool   `json:"include_hidden,omitempty" default:"false" jsonschema:"Also match files and directories whose names start with a dot."`
	RespectIgnore bool   `json:"respect_ignore,omitempty" default:"true" jsonschema:"Skip what .gitignore and .ignore files exclude. .git/ is always skipped."`
}

type globInfo struct {
	Path      string `json:"path"`
	Total     int    `json:"total"`
	Shown     int    `json:"shown"`
	Truncated bool   `json:"truncated"`

	text string
}

func (g globInfo) Text() string { return g.text }

type globHit struct {
	path  string
	mtime int64
}

func (e *Engine) glob(ctx context.Context, a globArgs) (globInfo, error) {
	pattern := strings.TrimPrefix(a.Pattern, "./")
	if err := checkGlob("pattern", pattern); err != nil {
		return globInfo{}, err
	}
	limit := a.Limit
	base, isDir, err := e.searchDir(a.Path)
	if err != nil {
		return globInfo{}, err
	}
	if !isDir {
		return globInfo{}, Errorf(ENotDir, "%s is not a directory", base).WithDetail("glob searches below a directory; give its parent as path.")
	}
	hits, unreadable, err := e.globWalk(ctx, base, pattern, walkOptions(a.IncludeHidden, a.RespectIgnore))
	if err != nil {
		return globInfo{}, err
	}
	slices.SortFunc(hits, func(x, y globHit) int {
		if c := cmp.Compare(y.mtime, x.mtime); c != 0 {
			return c
		}
		return strings.Compare(x.path, y.path)
	})
	info := globInfo{Path: base, Total: len(hits), Shown: min(limit, len(hits))}
	info.Truncated = info.Shown < info.Total
	var b strings.Builder
	fmt.Fprintf(&b, "# %d files match %s in %s (newest first)\n", info.Total, pattern, base)
	for _, h := range hits[:info.Shown] {
		b.WriteString(h.path)
		b.WriteByte('\n')
	}
	if info.Truncated {
		fmt.Fprintf(&b, "# truncated: showing %d of %d files; narrow the pattern or path, or raise limit\n", info.Shown, info.Total)
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, "# %d directories could not be read (permissions, or removed meanwhile)\n", unreadable)
	}
	info.text = b.String()
	return info, nil
}

// globWalk returns the files below base that match pattern, with their
// modification times, and how many directories could not be read.
func (e *Engine) globWalk(ctx context.Context, base, pattern string, opts walk.Options) ([]globHit, int64, error) {
	// Walk from the pattern's literal leading directories, if any: they
	// cannot match anything elsewhere. Being named, they are searched even
	// if hidden or ignored, like a path given to ripgrep.
	start := base
	if dir, rest := doublestar.SplitPattern(pattern); dir != "." && !strings.ContainsAny(dir, `\`) {
		start, pattern = path.Join(base, dir), rest
		fi, err := e.ws.root.Stat(start)
		if err != nil || !fi.IsDir() {
			return nil, 0, nil
		}
	}
	// "**/NAME" with no further "/" matches on the file name alone.
	nameOnly := ""
	if tail, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.Contains(tail, "/") && !strings.Contains(tail, "**") {
		nameOnly = tail
	}
	prefix := len(start) + 1
	if start == "." {
		prefix = 0
	}
	opts.Workers = runtime.GOMAXPROCS(0)
	found := make([][]globHit, opts.Workers)
	st, err := walk.Walk(ctx, e.ws.root, start, opts, func(w int, f *walk.File) error {
		var ok bool
		p := ""
		if nameOnly != "" {
			ok, _ = doublestar.Match(nameOnly, f.Name)
		} else {
			p = f.Path()
			ok, _ = doublestar.Match(pattern, p[prefix:])
		}
		if !ok {
			return nil
		}
		mtime, err := f.ModTime()
		if err != nil {
			return nil // removed since the directory was read
		}
		if p == "" {
			p = f.Path()
		}
		found[w] = append(found[w], globHit{p, mtime})
		return nil
	})
	if err != nil {
		return nil, 0, e.walkFailure(ctx, "glob", start, err)
	}
	return slices.Concat(found...), st.Unreadable, nil
}
