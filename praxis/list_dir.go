package praxis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

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
