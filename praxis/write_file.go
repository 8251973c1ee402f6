package praxis

import (
	"context"
	"fmt"
	"path"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

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
