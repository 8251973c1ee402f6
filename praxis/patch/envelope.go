package patch

import (
	"fmt"
	"strings"
)

const (
	envBegin  = "*** Begin Patch"
	envEnd    = "*** End Patch"
	envAdd    = "*** Add File: "
	envDelete = "*** Delete File: "
	envUpdate = "*** Update File: "
	envMove   = "*** Move to: "
	envEOF    = "*** End of File"
)

// ParseEnvelope reads a patch in the envelope format:
//
//	*** Begin Patch
//	*** Add File: path          then the file's lines, each after '+'
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path       (optional, renames the updated file)
//	@@ optional context line    then ' ', '-' and '+' lines
//	*** End of File             (optional: the hunk ends the file)
//	*** End Patch
//
// An empty line inside a hunk is an empty context line. Every line of the
// result ends with a newline.
func ParseEnvelope(text string) ([]*File, error) {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || marker(lines[i]) != envBegin {
		return nil, &SyntaxError{Line: i + 1, Msg: "the envelope must start with " + envBegin}
	}
	i++
	var files []*File
	var cur *File
	ended := false
	for ; i < len(lines); i++ {
		raw, m := lines[i], marker(lines[i])
		errf := func(format string, args ...any) error {
			return &SyntaxError{Line: i + 1, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case m == envEnd:
			ended = true
		case strings.HasPrefix(m, envAdd):
			cur = &File{NewPath: strings.TrimSpace(m[len(envAdd):])}
			cur.Hunks = []Hunk{{Header: m}}
			files = append(files, cur)
		case strings.HasPrefix(m, envDelete):
			files = append(files, &File{OldPath: strings.TrimSpace(m[len(envDelete):])})
			cur = nil
		case strings.HasPrefix(m, envUpdate):
			p := strings.TrimSpace(m[len(envUpdate):])
			cur = &File{OldPath: p, NewPath: p}
			files = append(files, cur)
		case strings.HasPrefix(m, envMove):
			if cur == nil || cur.OldPath == "" || cur.OldPath != cur.NewPath || len(cur.Hunks) > 0 {
				return nil, errf("%s must follow an %s line", strings.TrimSpace(envMove), strings.TrimSpace(envUpdate))
			}
			cur.NewPath = strings.TrimSpace(m[len(envMove):])
		case m == envEOF:
			if cur == nil || cur.OldPath == "" || len(cur.Hunks) == 0 {
				return nil, errf("%s must end a hunk of an updated file", envEOF)
			}
			cur.Hunks[len(cur.Hunks)-1].AtEnd = true
		case strings.HasPrefix(m, "***"):
			return nil, errf("unknown line %q", m)
		case cur == nil:
			return nil, errf("a line outside any file: %q", raw)
		case cur.OldPath == "": // an added file: every line is '+'
			if raw == "" || raw[0] != '+' {
				return nil, errf("each line of an added file starts with '+'")
			}
			cur.Hunks[0].Lines = append(cur.Hunks[0].Lines, Line{Op: '+', Text: raw[1:] + "\n"})
		case strings.HasPrefix(raw, "@@"):
			h := Hunk{Header: strings.TrimRight(raw, "\r"), Context: strings.TrimSpace(strings.TrimPrefix(raw, "@@"))}
			cur.Hunks = append(cur.Hunks, h)
		default:
			if len(cur.Hunks) == 0 || cur.Hunks[len(cur.Hunks)-1].AtEnd {
				cur.Hunks = append(cur.Hunks, Hunk{Header: "@@"})
			}
			h := &cur.Hunks[len(cur.Hunks)-1]
			switch {
			case raw == "" || raw == "\r":
				h.Lines = append(h.Lines, Line{Op: ' ', Text: raw + "\n"})
			case raw[0] == ' ' || raw[0] == '-' || raw[0] == '+':
				h.Lines = append(h.Lines, Line{Op: raw[0], Text: raw[1:] + "\n"})
			default:
				return nil, errf("a hunk line must start with ' ', '-' or '+': %q", raw)
			}
		}
		if ended {
			break
		}
	}
	if !ended {
		return nil, &SyntaxError{Line: len(lines), Msg: "the envelope must end with " + envEnd}
	}
	for i = i + 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			return nil, &SyntaxError{Line: i + 1, Msg: "text after " + envEnd}
		}
	}
	for _, f := range files {
		if f.OldPath == "" || f.NewPath == "" {
			continue
		}
		for j, h := range f.Hunks {
			changes := 0
			for _, l := range h.Lines {
				if l.Op != ' ' {
					changes++
				}
			}
			if changes == 0 && f.OldPath == f.NewPath {
				return nil, &SyntaxError{Msg: fmt.Sprintf("%s: hunk %d changes no line", f.OldPath, j+1)}
			}
			f.Hunks[j].OldLines = countOld(h.Lines)
		}
		if len(f.Hunks) == 0 && f.OldPath == f.NewPath {
			return nil, &SyntaxError{Msg: fmt.Sprintf("%s: the update has no hunk", f.OldPath)}
		}
	}
	return files, checkPaths(files)
}

// marker is line without its line end and trailing blanks.
func marker(line string) string { return strings.TrimRight(line, " \t\r") }

func countOld(ls []Line) int {
	n := 0
	for _, l := range ls {
		if l.Op != '+' {
			n++
		}
	}
	return n
}
