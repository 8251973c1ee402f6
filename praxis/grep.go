package praxis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/praxis-tools/praxis/praxis/hashline"
	"github.com/praxis-tools/praxis/praxis/internal/match"
	"github.com/praxis-tools/praxis/praxis/internal/walk"
)

const grepProgressEvery = 1000 // files searched between progress reports

type grepArgs struct {
	Pattern       string `json:"pattern" minLength:"1" jsonschema:"Regular expression (Go RE2 syntax), or plain text with literal."`
	Path          string `json:"path,omitempty" jsonschema:"File or directory to search, relative to the workspace root or absolute inside it. Default: the workspace root."`
	Glob          string `json:"glob,omitempty" jsonschema:"Only search files matching this doublestar pattern: without a / it matches file names (*.go), with one, paths relative to path (cmd/**/*_test.go)."`
	IgnoreCase    bool   `json:"ignore_case,omitempty" default:"false" jsonschema:"Match letters in either case."`
	Literal       bool   `json:"literal,omitempty" default:"false" jsonschema:"Treat pattern as plain text, not a regular expression."`
	Context       int    `json:"context,omitempty" minimum:"0" maximum:"20" default:"0" jsonschema:"Lines to show before and after each match (content output)."`
	Output        string `json:"output,omitempty" enum:"content,files,count" default:"content" jsonschema:"content: matching lines in hashline form; files: paths of matching files; count: matching lines per file and in total."`
	Limit         int    `json:"limit,omitempty" minimum:"1" maximum:"100000" default:"200" jsonschema:"Most matching lines shown (content) or files listed (files, count)."`
	IncludeHidden bool   `json:"include_hidden,omitempty" default:"false" jsonschema:"Also search files and directories whose names start with a dot."`
	RespectIgnore bool   `json:"respect_ignore,omitempty" default:"true" jsonschema:"Skip what .gitignore and .ignore files exclude. .git/ is always skipped."`
}

// grepInfo is grep's structured result.
type grepInfo struct {
	Path         string `json:"path"`
	Matches      int    `json:"matches"` // matching lines in all files
	Files        int    `json:"files"`   // files with a matching line
	Shown        int    `json:"shown"`   // matching lines (content) or files (files, count) shown
	Truncated    bool   `json:"truncated"`
	SkippedLarge int64  `json:"skipped_large,omitempty"` // files over the size limit, not searched

	text string
}

func (g grepInfo) Text() string { return g.text }

// grepHit is a file with matching lines.
type grepHit struct {
	path  string
	lines int
}

func (e *Engine) grep(ctx context.Context, a grepArgs) (grepInfo, error) {
	m, err := match.Compile(a.Pattern, a.Literal, a.IgnoreCase)
	if err != nil {
		return grepInfo{}, Errorf(EInvalidArgs, "pattern %q: %v", a.Pattern, err).
			WithDetail("Patterns use Go RE2 syntax; set literal to true to search for plain text.")
	}
	opts := walkOptions(a.IncludeHidden, a.RespectIgnore)
	if a.Glob != "" {
		g := strings.TrimPrefix(a.Glob, "./")
		if err := checkGlob("glob", g); err != nil {
			return grepInfo{}, err
		}
		opts.Select = globSelect(g)
	}
	rel, isDir, err := e.searchDir(a.Path)
	if err != nil {
		return grepInfo{}, err
	}

	var scan grepScan
	if isDir {
		if scan, err = e.grepWalk(ctx, m, rel, opts); err != nil {
			return grepInfo{}, err
		}
	} else {
		data, _, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
		if err != nil {
			return grepInfo{}, err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			scan.binary = true
		} else if n := countLines(m, data); n > 0 {
			scan.hits = []grepHit{{rel, n}}
		}
	}
	hits := scan.hits
	slices.SortFunc(hits, func(x, y grepHit) int { return strings.Compare(x.path, y.path) })

	info := grepInfo{Path: rel, Files: len(hits), SkippedLarge: scan.large}
	for _, h := range hits {
		info.Matches += h.lines
	}
	var b []byte
	switch a.Output {
	case "files", "count":
		b = fmt.Appendf(b, "# %d matching lines in %d files\n", info.Matches, info.Files)
		for _, h := range hits[:min(a.Limit, len(hits))] {
			b = append(b, h.path...)
			if a.Output == "count" {
				b = append(b, ':')
				b = strconv.AppendInt(b, int64(h.lines), 10)
			}
			b = append(b, '\n')
		}
		info.Shown = min(a.Limit, len(hits))
		info.Truncated = info.Shown < len(hits)
		if info.Truncated {
			b = fmt.Appendf(b, "# truncated: showing %d of %d files; narrow path or glob, or raise limit\n", info.Shown, len(hits))
		}
	default:
		b = fmt.Appendf(b, "# %d matching lines in %d files\n", info.Matches, info.Files)
		b, info.Shown = e.grepContent(b, m, hits, a.Context, a.Limit)
		info.Truncated = info.Shown < info.Matches
		if info.Truncated {
			b = fmt.Appendf(b, "# truncated: showing %d of %d matching lines in %d files; narrow path or glob, or raise limit\n", info.Shown, info.Matches, info.Files)
		}
	}
	if scan.binary {
		b = fmt.Appendf(b, "# %s is binary (it holds a NUL byte) and was not searched\n", rel)
	}
	if scan.large > 0 {
		b = fmt.Appendf(b, "# %d files over %d bytes were not searched\n", scan.large, e.opts.MaxFileBytes)
	}
	if scan.unreadable > 0 {
		b = fmt.Appendf(b, "# %d directories could not be read (permissions, or removed meanwhile)\n", scan.unreadable)
	}
	info.text = string(b)
	return info, nil
}

// grepScan is what a search found.
type grepScan struct {
	hits       []grepHit // files with matching lines, unsorted
	large      int64     // files over the size limit, not searched
	unreadable int64     // directories that could not be read
	binary     bool      // the one file searched is binary
}

// grepWalk searches the files below dir in parallel.
func (e *Engine) grepWalk(ctx context.Context, m *match.Matcher, dir string, opts walk.Options) (grepScan, error) {
	opts.Workers = runtime.GOMAXPROCS(0)
	workers := make([]*grepWorker, opts.Workers)
	var skipped, searched atomic.Int64
	var progress struct {
		sync.Mutex
		reported int64
	}
	st, err := walk.Walk(ctx, e.ws.root, dir, opts, func(w int, f *walk.File) error {
		if n := searched.Add(1); n%grepProgressEvery == 0 {
			progress.Lock()
			if n > progress.reported { // reports must increase
				progress.reported = n
				ReportProgress(ctx, float64(n), 0, fmt.Sprintf("searched %d files", n))
			}
			progress.Unlock()
		}
		gw := workers[w]
		if gw == nil {
			gw = &grepWorker{buf: make([]byte, 0, grepBuffer)}
			workers[w] = gw
		}
		gw.lineCounter = lineCounter{m: m, ctx: ctx}
		buf, err := f.Scan(gw.buf, e.opts.MaxFileBytes, &gw.lineCounter)
		if err != nil {
			if errors.Is(err, walk.ErrTooLarge) {
				skipped.Add(1)
			}
			return nil // vanished or unreadable: skipped, as ripgrep does
		}
		gw.buf = buf
		if c := gw.lineCounter; !c.binary && c.n > 0 {
			gw.found = append(gw.found, grepHit{f.Path(), c.n})
		}
		return nil
	})
	if err != nil {
		return grepScan{}, e.walkFailure(ctx, "grep", dir, err)
	}
	var hits []grepHit
	for _, gw := range workers {
		if gw != nil {
			hits = append(hits, gw.found...)
		}
	}
	return grepScan{hits: hits, large: skipped.Load(), unreadable: st.Unreadable}, nil
}

// grepWorker is one walk worker's state: the buffer it reads into, the
// count of the file it is searching and the files it found.
type grepWorker struct {
	buf []byte
	lineCounter
	found []grepHit
}

// globSelect returns the walk selection for grep's glob argument. As with
// ripgrep's --glob, the glob overrides the hidden and ignore rules: a file
// that matches is searched and one that does not is skipped; a directory
// that matches is read even if hidden or ignored, and one that does not is
// left to the rules. A glob without "/" matches names, one with "/" paths
// relative to the directory searched.
func globSelect(g string) func(sub, name string, isDir bool) walk.Choice {
	byName := !strings.Contains(g, "/")
	return func(sub, name string, isDir bool) walk.Choice {
		target := sub
		if byName {
			target = name
		}
		if ok, _ := doublestar.Match(g, target); ok {
			return walk.Include
		}
		if isDir {
			return walk.Default
		}
		return walk.Exclude
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// grepBuffer is the memory each worker of a search reads files into; a
// larger file is read and searched in pieces of whole lines.
const grepBuffer = 256 << 10

// countLines returns the number of matching lines in a file's bytes, or 0
// for a binary file (one holding a NUL byte).
func countLines(m *match.Matcher, data []byte) int {
	c := lineCounter{m: m}
	c.Piece(data, true)
	if c.binary {
		return 0
	}
	return c.n
}

// lineCounter counts the lines of a file that m matches, the file read in
// pieces (it is a walk.Pieces). A file holding a NUL byte anywhere is
// binary and has none: a file read whole is looked at for one only once it
// has a match, one read in pieces in every piece, so that the search stops
// at the first. A search cancelled (ctx, if not nil) stops before the
// next piece: a large file is not read to its end.
type lineCounter struct {
	m      *match.Matcher
	ctx    context.Context
	n      int
	binary bool
	begun  bool // past the first piece
}

// Piece counts the lines of the next piece; it returns false once the
// file is known to be binary, or the search is cancelled.
func (c *lineCounter) Piece(p []byte, whole bool) bool {
	if c.ctx != nil && c.ctx.Err() != nil {
		return false
	}
	text := p
	if !c.begun {
		text = bytes.TrimPrefix(p, utf8BOM)
		c.begun = true
	}
	if !whole && bytes.IndexByte(p, 0) >= 0 {
		c.binary = true
		return false
	}
	n := c.n
	c.m.Lines(text, func(_, _, _ int) bool {
		if whole && n == 0 && bytes.IndexByte(p, 0) >= 0 {
			c.binary = true
			return false
		}
		n++
		return true
	})
	c.n = n
	return !c.binary
}

// Long looks at the start of a line too long for the buffer: a NUL byte
// there makes the file binary, without reading on, and a cancelled search
// reads no further either.
func (c *lineCounter) Long(start []byte) bool {
	if c.ctx != nil && c.ctx.Err() != nil {
		return false
	}
	if bytes.IndexByte(start, 0) >= 0 {
		c.binary = true
		return false
	}
	return true
}

// grepContent appends the matching lines of hits, in hashline form with
// context lines around them, until limit matching lines are shown. Each
// file is read again for display, so its lines and version are those of
// one read, exactly as read_file would show them.
func (e *Engine) grepContent(b []byte, m *match.Matcher, hits []grepHit, context, limit int) ([]byte, int) {
	shown := 0
	var lines []int
	for _, h := range hits {
		if shown >= limit {
			break
		}
		data, _, err := e.ws.ReadFile(h.path, e.opts.MaxFileBytes)
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			continue // changed since the search
		}
		doc := hashline.Parse(data)
		lines = lines[:0]
		total := 0
		m.Lines(bytes.TrimPrefix(data, utf8BOM), func(n, _, _ int) bool {
			if shown+len(lines) < limit {
				lines = append(lines, n)
			}
			total++
			return true
		})
		if len(lines) == 0 {
			continue
		}
		version := hashline.Version(data)
		e.served(h.path, version, data) // its lines are shown with anchors
		b = fmt.Appendf(b, "# %s version=%s matches=%d", h.path, version, total)
		if len(lines) < total {
			b = fmt.Appendf(b, " showing=%d", len(lines))
		}
		if context > 0 {
			b = append(b, " lines="...)
			for i, n := range lines {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(n), 10)
			}
		}
		b = append(b, '\n')
		last := 0 // last line rendered
		for i := 0; i < len(lines); {
			from, to := max(1, lines[i]-context), min(doc.Lines(), lines[i]+context)
			for i++; i < len(lines) && lines[i]-context <= to+1; i++ {
				to = min(doc.Lines(), lines[i]+context)
			}
			if last > 0 && from > last+1 && context > 0 {
				b = append(b, "--\n"...)
			}
			from = max(from, last+1)
			b = doc.AppendRender(b, from, to, lineClip)
			last = to
		}
		shown += len(lines)
	}
	return b, shown
}
