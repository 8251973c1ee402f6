package praxis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

func (e *Engine) fileTools() []Tool {
	return []Tool{
		NewTool("read_file", describe("read_file"), Annotations{ReadOnly: true, Idempotent: true}, e.readFile),
		NewTool("write_file", describe("write_file"), Annotations{Destructive: true, Idempotent: true}, e.writeFile),
		NewTool("list_dir", describe("list_dir"), Annotations{ReadOnly: true, Idempotent: true}, e.listDir),
		e.editTool(),
	}
}

// loadText reads rel as text: it must be a regular file within the size
// limit, hold no NUL byte in its first 8 KiB and be valid UTF-8.
func (e *Engine) loadText(rel string) (*hashline.Doc, fs.FileInfo, error) {
	data, fi, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
	if err != nil {
		return nil, nil, err
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, nil, Errorf(EBinary, "%s looks binary (%d bytes, a NUL byte in its first 8 KiB); it is not shown", rel, len(data))
	}
	if !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		return nil, nil, Errorf(ENotUTF8, "%s is not valid UTF-8 (%d bytes, first invalid byte at offset %d); it is not shown", rel, len(data), off)
	}
	return hashline.Parse(data), fi, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

type readArgs struct {
	Path   string `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
	Offset int    `json:"offset,omitempty" jsonschema:"First line to show, 1-based." minimum:"1" default:"1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Number of lines to show." minimum:"1" default:"2000"`
}

func (e *Engine) readFile(ctx context.Context, a readArgs) (fileInfo, error) {
	rel, err := e.ws.Rel(a.Path)
	if err != nil {
		return fileInfo{}, err
	}
	doc, fi, err := e.loadText(rel)
	if err != nil {
		return fileInfo{}, err
	}
	version := hashline.Version(doc.Bytes())
	e.history.served(rel, version)

	total := doc.Lines()
	from, limit := a.Offset, a.Limit
	if total > 0 && from > total {
		return fileInfo{}, Errorf(EInvalidArgs, "offset %d is past the end of %s, which has %d lines", from, rel, total)
	}
	to := min(total, from+limit-1)
	if total == 0 {
		from = 0
	}
	info := fileInfo{
		Path: rel, Version: version, From: from, To: to, Total: total,
		EOL: doc.Style(), BOM: doc.BOM(), FinalNewline: doc.FinalNewline(), Size: fi.Size(),
	}
	buf := make([]byte, 0, len(doc.Bytes())+16*(to-from+1)+256)
	buf = info.appendHeader(buf)
	buf = doc.AppendRender(buf, max(from, 1), to, lineClip)
	if to < total {
		buf = fmt.Appendf(buf, "# %d more lines: read_file with offset=%d to continue\n", total-to, to+1)
	}
	info.text = string(buf)
	return info, nil
}

// fileInfo is read_file's structured result and the source of its header.
type fileInfo struct {
	Path         string `json:"path"`
	Version      string `json:"version"`
	From         int    `json:"from"`
	To           int    `json:"to"`
	Total        int    `json:"total_lines"`
	EOL          string `json:"eol"`
	BOM          bool   `json:"bom"`
	FinalNewline bool   `json:"final_newline"`
	Size         int64  `json:"size"`

	text string // the header and the lines shown
}

func (f fileInfo) Text() string { return f.text }

func (f fileInfo) appendHeader(b []byte) []byte {
	b = append(b, "# "...)
	b = append(b, f.Path...)
	b = append(b, " version="...)
	b = append(b, f.Version...)
	if f.Total == 0 {
		b = append(b, " empty (0 lines)"...)
	} else {
		b = fmt.Appendf(b, " lines=%d-%d of %d", f.From, f.To, f.Total)
	}
	b = append(b, " eol="...)
	b = append(b, f.EOL...)
	if f.BOM {
		b = append(b, " bom"...)
	}
	if !f.FinalNewline {
		b = append(b, " no-final-newline"...)
	}
	return append(b, '\n')
}

// checkWritable refuses writes to the engine's state directory and to
// protected files, whatever path reaches them (see checkProtected). Every
// file the workspace's committer writes, and every target of a recovered
// intent record, passes it.
func (e *Engine) checkWritable(rel string) error {
	if rel == StateDir || strings.HasPrefix(rel, StateDir+"/") {
		return Errorf(EPolicy, "%s is in %s, the engine's own state: the file tools may not change it", rel, StateDir)
	}
	return e.checkProtected(e.ws.real, rel)
}

// writeTarget resolves a caller's path to the file a write replaces:
// inside the workspace, neither the engine's state nor protected (see
// checkWritable), with symlinks followed.
func (e *Engine) writeTarget(p string) (string, error) {
	rel, err := e.ws.Rel(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", Errorf(EIsDir, "%s is the workspace root, a directory", p)
	}
	target, err := e.ws.resolveLinks(rel)
	if err != nil {
		return "", err
	}
	if err := e.checkWritable(target); err != nil {
		return "", err
	}
	return target, nil
}

type writeArgs struct {
	Path          string `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
	Content       string `json:"content" jsonschema:"The whole new content of the file."`
	ExpectVersion string `json:"expect_version,omitempty" jsonschema:"Write only if the file is still at this version (from read_file or an earlier write)."`
}

type writeInfo struct {
	Path            string `json:"path"`
	Version         string `json:"version"`
	PreviousVersion string `json:"previous_version,omitempty"`
	Created         bool   `json:"created"`
	Lines           int    `json:"lines"`
	Bytes           int    `json:"bytes"`

	text string
}

func (w writeInfo) Text() string { return w.text }

func (e *Engine) writeFile(ctx context.Context, a writeArgs) (writeInfo, error) {
	rel, err := e.writeTarget(a.Path)
	if err != nil {
		return writeInfo{}, err
	}
	if int64(len(a.Content)) > e.opts.MaxFileBytes {
		return writeInfo{}, Errorf(ETooLarge, "content for %s is %d bytes, over the limit of %d bytes", rel, len(a.Content), e.opts.MaxFileBytes).
			WithDetail("Nothing was written. The engine could not read a file that large back.")
	}
	data := []byte(a.Content)
	version := hashline.Version(data)
	var prev string
	err = e.commits.commit(ctx, func() ([]fileWrite, error) {
		w := fileWrite{Path: rel, Data: data, Perm: 0o644, Check: true, Version: version}
		prev = ""
		old, fi, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
		switch {
		case err == nil:
			prev = hashline.Version(old)
			w.Perm, w.Base, w.BaseVersion = fi.Mode().Perm(), old, prev
			if err := e.checkWriteBudget(rel, old, data); err != nil {
				return nil, err
			}
		case CodeOf(err) == ETooLarge && fi != nil:
			w.Perm, w.Check = fi.Mode().Perm(), false // too large to hash: only a write without expect_version may replace it
			prev = "(too large to hash)"
		case CodeOf(err) == ENotFound:
			w.Absent = true
		default:
			return nil, err
		}
		if a.ExpectVersion != "" && a.ExpectVersion != prev {
			if prev == "" {
				return nil, Errorf(EConflict, "%s does not exist, but expect_version %s was given", rel, a.ExpectVersion)
			}
			return nil, Errorf(EConflict, "%s is at version %s, not the expected %s", rel, prev, a.ExpectVersion).
				WithDetail("Read the file again before writing it.")
		}
		if dir := path.Dir(rel); dir != "." {
			if err := e.ws.root.MkdirAll(dir, 0o755); err != nil {
				return nil, e.ws.fail(dir, err)
			}
		}
		return []fileWrite{w}, nil
	})
	if err != nil {
		return writeInfo{}, err
	}
	e.history.replaced(rel, version)
	info := writeInfo{Path: rel, Version: version, PreviousVersion: prev, Created: prev == "",
		Lines: hashline.Parse(data).Lines(), Bytes: len(data)}
	verb := "replaced " + rel + " (was version " + prev + ")"
	if info.Created {
		verb = "created " + rel
	}
	info.text = fmt.Sprintf("%s: version %s, %d lines, %d bytes", verb, version, info.Lines, info.Bytes)
	return info, nil
}

type listArgs struct {
	Path  string `json:"path,omitempty" jsonschema:"Directory, relative to the workspace root or absolute inside it. Default: the workspace root."`
	Depth int    `json:"depth,omitempty" jsonschema:"How many levels to descend." minimum:"1" maximum:"10" default:"1"`
	Limit int    `json:"limit,omitempty" jsonschema:"Most entries to show." minimum:"1" maximum:"10000" default:"500"`
}

// listInfo is list_dir's structured result.
type listInfo struct {
	Path      string `json:"path"`
	Total     int    `json:"total"`
	Shown     int    `json:"shown"`
	Truncated bool   `json:"truncated"`

	text string
}

func (l listInfo) Text() string { return l.text }

const listCountCap = 100_000 // entries counted past the limit before giving up

func (e *Engine) listDir(ctx context.Context, a listArgs) (listInfo, error) {
	rel, err := e.ws.Rel(a.Path)
	if err != nil {
		return listInfo{}, err
	}
	depth, limit := a.Depth, a.Limit
	fi, err := e.ws.root.Stat(rel)
	if err != nil {
		return listInfo{}, e.ws.fail(rel, err)
	}
	if !fi.IsDir() {
		return listInfo{}, Errorf(ENotDir, "%s is not a directory", rel).WithDetail("Use read_file to read a file.")
	}
	var body []byte
	shown, total := 0, 0
	var walk func(dir, prefix string, level int) error
	walk = func(dir, prefix string, level int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := e.ws.root.Open(dir)
		if err != nil {
			return e.ws.fail(dir, err)
		}
		entries, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return e.ws.fail(dir, err)
		}
		sortEntries(entries)
		for _, de := range entries {
			if total >= listCountCap {
				return nil
			}
			total++
			name := prefix + de.Name()
			child := path.Join(dir, de.Name())
			if shown < limit {
				shown++
				body = appendEntry(body, e.ws.root, child, name, de)
			}
			if de.IsDir() && level < depth {
				if err := walk(child, name+"/", level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(rel, "", 1); err != nil {
		if ctx.Err() != nil {
			return listInfo{}, Errorf(ECancelled, "list_dir cancelled")
		}
		return listInfo{}, err
	}
	head := fmt.Sprintf("# %s: %d entries, depth %d\n", rel, total, depth)
	if shown < total {
		more := strconv.Itoa(total - shown)
		if total >= listCountCap {
			more = "at least " + more
		}
		body = fmt.Appendf(body, "# truncated: %s more entries; raise limit (max 10000) or list a subdirectory\n", more)
	}
	return listInfo{Path: rel, Total: total, Shown: shown, Truncated: shown < total, text: head + string(body)}, nil
}

// sortEntries sorts directory entries by name.
func sortEntries(entries []fs.DirEntry) {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

func appendEntry(b []byte, root *os.Root, child, name string, de fs.DirEntry) []byte {
	switch {
	case de.IsDir():
		return append(append(b, name...), "/\n"...)
	case de.Type()&fs.ModeSymlink != 0:
		target, err := root.Readlink(child)
		if err != nil {
			target = "?"
		}
		return fmt.Appendf(b, "%s -> %s\n", name, target)
	case de.Type().IsRegular():
		info, err := de.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return b // removed while listing
			}
			return fmt.Appendf(b, "%s  ?\n", name)
		}
		return fmt.Appendf(b, "%s  %d\n", name, info.Size())
	}
	return fmt.Appendf(b, "%s  (%s)\n", name, fileKind(de.Type()))
}
