package praxis

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

type readSkillFileArgs struct {
	Name   string `json:"name" minLength:"1" jsonschema:"The skill's name."`
	Path   string `json:"path" minLength:"1" jsonschema:"The file's path relative to the skill's directory, as load_skill lists it (e.g. references/FORMS.md)."`
	Offset int    `json:"offset,omitempty" minimum:"1" default:"1" jsonschema:"First line to show, 1-based."`
	Limit  int    `json:"limit,omitempty" minimum:"1" default:"2000" jsonschema:"Number of lines to show."`
}

// skillFileInfo is read_skill_file's structured result.
type skillFileInfo struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Total int    `json:"total_lines"`

	text string
}

func (f skillFileInfo) Text() string { return f.text }

func (e *Engine) readSkillFile(ctx context.Context, a readSkillFileArgs) (skillFileInfo, error) {
	data, _, err := e.skills.ReadFile(ctx, a.Name, a.Path, e.opts.MaxFileBytes)
	if err != nil {
		return skillFileInfo{}, e.skillNotFound(ctx, err, a.Name)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return skillFileInfo{}, Errorf(EBinary, "%s of skill %s looks binary (%d bytes, a NUL byte in its first 8 KiB); it is not shown", a.Path, a.Name, len(data))
	}
	if !utf8.Valid(data) {
		return skillFileInfo{}, Errorf(ENotUTF8, "%s of skill %s is not valid UTF-8 (%d bytes, first invalid byte at offset %d); it is not shown", a.Path, a.Name, len(data), firstInvalidUTF8(data))
	}
	lines := splitLines(data)
	total := len(lines)
	from, limit := a.Offset, a.Limit
	if total > 0 && from > total {
		return skillFileInfo{}, Errorf(EInvalidArgs, "offset %d is past the end of %s, which has %d lines", from, a.Path, total)
	}
	to := min(total, from+limit-1)
	var b strings.Builder
	if total == 0 {
		fmt.Fprintf(&b, "# %s/%s: empty\n", a.Name, a.Path)
	} else {
		fmt.Fprintf(&b, "# %s/%s lines %d-%d of %d\n", a.Name, a.Path, from, to, total)
	}
	for _, l := range lines[min(from, total+1)-1 : to] {
		b.Write(clipLine(l, lineClip))
		b.WriteByte('\n')
	}
	if to < total {
		fmt.Fprintf(&b, "# %d more lines: read_skill_file with offset=%d to continue\n", total-to, to+1)
	}
	return skillFileInfo{Name: a.Name, Path: a.Path, From: from, To: to, Total: total, text: b.String()}, nil
}

// splitLines splits data into lines without their terminators (LF or
// CRLF); a final line end does not start another line.
func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// clipLine cuts a line longer than clip bytes at a character boundary and
// says how much was left out.
func clipLine(l []byte, clip int) []byte {
	if len(l) <= clip {
		return l
	}
	cut := clip
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return fmt.Appendf(l[:cut:cut], " …[clipped %d bytes]", len(l)-cut)
}
