package patch

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// ParseUnified reads a unified diff of one or more files, as git diff
// (with or without its a/ and b/ prefixes) or diff -u write it.
func ParseUnified(text string) ([]*File, error) {
	gfs, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return nil, &SyntaxError{Msg: err.Error()}
	}
	strip := traditionalPrefixes(text)
	files := make([]*File, 0, len(gfs))
	for i, g := range gfs {
		f, err := fromGit(g)
		if err != nil {
			return nil, err
		}
		if i < len(strip) && strip[i] {
			f.OldPath = stripComponent(f.OldPath)
			f.NewPath = stripComponent(f.NewPath)
		}
		files = append(files, f)
	}
	return files, checkPaths(files)
}

func fromGit(g *gitdiff.File) (*File, error) {
	name := g.NewName
	if name == "" {
		name = g.OldName
	}
	switch {
	case g.IsBinary:
		return nil, &SyntaxError{Msg: fmt.Sprintf("%s: binary patches are not supported", name)}
	case g.IsCopy:
		return nil, &SyntaxError{Msg: fmt.Sprintf("%s: copies are not supported", name)}
	case !regularMode(g.OldMode) || !regularMode(g.NewMode):
		return nil, &SyntaxError{Msg: fmt.Sprintf("%s: only regular files can be patched (mode %o)", name, g.NewMode)}
	}
	f := &File{}
	if !g.IsNew {
		f.OldPath = g.OldName
	}
	if !g.IsDelete {
		f.NewPath = g.NewName
	}
	if g.NewMode != 0 && !g.IsDelete {
		f.NewMode = 0o644
		if g.NewMode&0o111 != 0 {
			f.NewMode = 0o755
		}
	}
	for _, tf := range g.TextFragments {
		h := Hunk{Numbered: true, OldStart: int(tf.OldPosition), OldLines: int(tf.OldLines), Header: tf.Header()}
		for _, l := range tf.Lines {
			op := byte(' ')
			switch l.Op {
			case gitdiff.OpDelete:
				op = '-'
			case gitdiff.OpAdd:
				op = '+'
			}
			h.Lines = append(h.Lines, Line{Op: op, Text: l.Line})
		}
		f.Hunks = append(f.Hunks, h)
	}
	if f.OldPath == "" && f.NewPath == "" {
		return nil, &SyntaxError{Msg: "a file of the patch has no name"}
	}
	return f, nil
}

// regularMode reports whether a git mode is a regular file's (100644 or
// 100755), or absent.
func regularMode(m fs.FileMode) bool {
	return m == 0 || m&^0o777 == 0o100000
}

// traditionalPrefixes reports, for each file of a unified diff in order,
// whether its names carry a/ and b/ prefixes that git diff would strip: a
// file under a "diff --git" header has them stripped by the parser already;
// a file with only "--- " and "+++ " lines has them when both names start
// with a/ and b/ (or are /dev/null).
func traditionalPrefixes(text string) []bool {
	var out []bool
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	inGit := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inGit = true
			out = append(out, false)
		case strings.HasPrefix(l, "@@ "):
			inGit = false
		case !inGit && strings.HasPrefix(l, "--- ") && i+2 < len(lines) &&
			strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ -"):
			o, n := headerName(l[4:]), headerName(lines[i+1][4:])
			out = append(out, (o == "/dev/null" || strings.HasPrefix(o, "a/")) &&
				(n == "/dev/null" || strings.HasPrefix(n, "b/")) && o != n)
		}
	}
	return out
}

func headerName(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func stripComponent(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
