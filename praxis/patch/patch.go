// Package patch parses patches and applies their hunks to text. It reads two
// formats: the unified diff as git diff and diff -u write it (parsed with
// github.com/bluekeyes/go-gitdiff), and the "*** Begin Patch" envelope. It
// does no I/O: the caller reads and writes the files.
package patch

import (
	"fmt"
	"io/fs"
	"strings"
)

// Line is one line of a hunk. Op is ' ' (context), '-' (removed) or '+'
// (added); Text is the line with its terminator ("\n" or "\r\n"), without
// one for a last line that has none.
type Line struct {
	Op   byte
	Text string
}

// Hunk is a run of context, removed and added lines.
type Hunk struct {
	// Numbered is set for a unified diff's hunk, which states where it
	// applies: OldStart is the 1-based number of its first old line (for a
	// hunk without old lines, of the line it inserts after). An envelope's
	// hunk states no line numbers. OldLines counts the old lines.
	Numbered           bool
	OldStart, OldLines int
	// Header is the text of the hunk's header line ("@@ -1,3 +1,4 @@" or
	// the envelope's "@@ context"), to name the hunk in errors.
	Header string
	// Context, in the envelope, is the text after "@@ ": a line that must
	// come before the hunk's lines. Empty when the hunk has none.
	Context string
	// AtEnd asks that the hunk's old lines end the file (the envelope's
	// "*** End of File").
	AtEnd bool
	Lines []Line
}

// File is the change of one file. OldPath is empty for a new file, NewPath
// for a deleted one; they differ for a rename. Paths are slash-separated
// as the patch names them, with git's a/ and b/ prefixes removed.
type File struct {
	OldPath, NewPath string
	// NewMode is the mode the patch gives the file (0o644 or 0o755), 0
	// when it says none.
	NewMode fs.FileMode
	Hunks   []Hunk
}

// Format is a patch's format.
type Format string

// The formats Parse recognises.
const (
	Unified  Format = "unified"
	Envelope Format = "envelope"
)

// SyntaxError reports a malformed patch.
type SyntaxError struct {
	Line int // 1-based line of the patch text, 0 when unknown
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Parse reads a patch in either format, told apart by the envelope's
// "*** Begin Patch" first line. A patch that changes no file, or that has
// anything Parse does not understand (binary data, symlinks, copies), is a
// *SyntaxError.
func Parse(text string) ([]*File, Format, error) {
	if strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), envBegin) {
		files, err := ParseEnvelope(text)
		return files, Envelope, err
	}
	files, err := ParseUnified(text)
	return files, Unified, err
}

// checkPaths refuses a patch without files or naming a file in two
// sections, unless each only changes the file's content, which git apply
// also accepts: the later section then applies to the earlier's result.
func checkPaths(files []*File) error {
	if len(files) == 0 {
		return &SyntaxError{Msg: "the patch changes no file"}
	}
	const plain, other = 1, 2 // how a path was seen: changed in place, or else
	seen := map[string]int{}
	for _, f := range files {
		if f.OldPath == "" && f.NewPath == "" {
			return &SyntaxError{Msg: "a file of the patch has no name"}
		}
		if f.OldPath == f.NewPath && (seen[f.OldPath] != other) {
			seen[f.OldPath] = plain
			continue
		}
		names := []string{f.NewPath}
		if f.OldPath != f.NewPath {
			names = append(names, f.OldPath)
		}
		for _, p := range names {
			if p == "" {
				continue
			}
			if seen[p] != 0 {
				return &SyntaxError{Msg: fmt.Sprintf("the patch changes %s twice", p)}
			}
			seen[p] = other
		}
	}
	return nil
}
