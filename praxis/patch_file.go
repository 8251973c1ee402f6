package praxis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/praxis-tools/praxis/praxis/hashline"
	"github.com/praxis-tools/praxis/praxis/patch"
)

type patchArgs struct {
	Patch  string `json:"patch" jsonschema:"The patch: a unified diff (as git diff or diff -u write it) or a *** Begin Patch envelope."`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"Check the patch and show its diff without writing."`
}

// patchInfo is patch_file's structured result.
type patchInfo struct {
	DryRun bool           `json:"dry_run"`
	Format string         `json:"format" enum:"unified,envelope"`
	Files  []*patchedFile `json:"files"`

	text string
}

func (p patchInfo) Text() string { return p.text }

// patchedFile is one file's outcome.
type patchedFile struct {
	// Path is the file's path after the patch; for a deleted file, the
	// path it had.
	Path string `json:"path"`
	// OldPath is the path a renamed file had.
	OldPath         string `json:"old_path,omitempty"`
	Status          string `json:"status" enum:"modified,created,deleted,renamed"`
	Version         string `json:"version,omitempty" jsonschema:"The new version; empty for a deleted file."`
	PreviousVersion string `json:"previous_version,omitempty" jsonschema:"The version before the patch; empty for a created file."`
	Added           int    `json:"lines_added"`
	Removed         int    `json:"lines_removed"`

	oldPath, newPath string // targets in the workspace; "" for none
	// sections are the file's sections of the patch: one, or several
	// that each change the content in place, applied in turn.
	sections []*patch.File
	old, new []byte
	perm     fs.FileMode
}

func (e *Engine) patchFile(ctx context.Context, a patchArgs) (patchInfo, error) {
	files, format, err := patch.Parse(a.Patch)
	if err != nil {
		return patchInfo{}, Errorf(EInvalidArgs, "the patch cannot be read: %v", err).
			WithDetail("Nothing was written. Give a unified diff (---/+++ headers, @@ hunks) or a *** Begin Patch envelope.")
	}
	// Resolve every path before reading any file: a path outside the
	// workspace, protected or in the engine's state refuses the whole patch.
	var results []*patchedFile
	seen := map[string]*patchedFile{} // target -> the file changing it
	for _, f := range files {
		r := &patchedFile{sections: []*patch.File{f}}
		for _, p := range []struct {
			name string
			dst  *string
		}{{f.OldPath, &r.oldPath}, {f.NewPath, &r.newPath}} {
			if p.name == "" {
				continue
			}
			t, err := e.writeTarget(p.name)
			if err != nil {
				return patchInfo{}, err
			}
			*p.dst = t
		}
		if prev := seen[r.oldPath]; prev != nil && r.oldPath == r.newPath && prev.oldPath == prev.newPath {
			prev.sections = append(prev.sections, f) // a later change of the same file's content
			continue
		}
		for _, t := range []string{r.oldPath, r.newPath} {
			if t == "" {
				continue
			}
			if prev := seen[t]; prev != nil && prev != r {
				return patchInfo{}, Errorf(EInvalidArgs, "the patch changes %s in two sections that are not both changes of its content", t).
					WithDetail("Nothing was written. Put all the changes of a file in one section.")
			}
			seen[t] = r
		}
		results = append(results, r)
	}
	prepare := func() ([]fileWrite, error) {
		added, removed := 0, 0
		for _, r := range results {
			if err := e.preparePatch(r, format); err != nil {
				return nil, err
			}
			added, removed = added+r.Added, removed+r.Removed
		}
		if err := e.checkChangeBudget("the patch", added, removed); err != nil {
			return nil, err
		}
		if a.DryRun {
			return nil, nil
		}
		var ws []fileWrite
		for _, r := range results {
			if r.newPath != "" {
				if dir := path.Dir(r.newPath); dir != "." {
					if err := e.ws.root.MkdirAll(dir, 0o755); err != nil {
						return nil, e.ws.fail(dir, err)
					}
				}
				w := fileWrite{Path: r.newPath, Data: r.new, Perm: r.perm, Check: true, Version: r.Version}
				if r.oldPath == r.newPath {
					w.Base, w.BaseVersion = r.old, r.PreviousVersion
				} else {
					w.Absent = true
				}
				ws = append(ws, w)
			}
			if r.oldPath != "" && r.oldPath != r.newPath {
				ws = append(ws, fileWrite{Path: r.oldPath, Delete: true, Check: true, Base: r.old, BaseVersion: r.PreviousVersion})
			}
		}
		return ws, nil
	}
	if a.DryRun {
		if _, err := prepare(); err != nil {
			return patchInfo{}, err
		}
	} else if err := e.commits.commit(ctx, prepare); err != nil {
		return patchInfo{}, err
	} else {
		for _, r := range results {
			if r.newPath != "" {
				e.history.replaced(r.newPath, r.Version)
			}
		}
	}
	return patchResult(a.DryRun, string(format), results), nil
}

// preparePatch reads r's file as it is now and applies its sections' hunks
// to it.
func (e *Engine) preparePatch(r *patchedFile, format patch.Format) error {
	r.old, r.perm, r.PreviousVersion = nil, 0o644, ""
	name := r.newPath
	if r.oldPath != "" {
		name = r.oldPath
		doc, fi, version, err := e.loadText(r.oldPath)
		if err != nil {
			return prefixError(err, "patching "+r.oldPath+": ")
		}
		r.old, r.perm, r.PreviousVersion = doc.Bytes(), fi.Mode().Perm(), version
	}
	if r.newPath != "" && r.newPath != r.oldPath {
		_, err := e.ws.root.Lstat(r.newPath)
		if err == nil {
			return Errorf(EConflict, "the patch creates %s, which already exists", r.newPath).
				WithDetail("Nothing was written. Read the file and patch it as a change, or delete it first.")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return e.ws.fail(r.newPath, err)
		}
	}
	out := r.old
	for _, f := range r.sections {
		if f.NewMode != 0 {
			r.perm = f.NewMode
		}
		in := out
		var err error
		if out, err = patch.Apply(in, f.Hunks); err != nil {
			var he *patch.HunkError
			if !errors.As(err, &he) {
				return Errorf(EInternal, "patching %s: %v", name, err)
			}
			e.served(name, hashline.Version(in), in) // the error shows its lines with anchors
			return patchFailed(name, in, he)
		}
	}
	r.new = out
	if r.newPath == "" && len(out) > 0 && format == patch.Unified {
		return Errorf(EPatchFailed, "%s: the patch deletes the file, but %d lines of it are not in the patch", name,
			len(patch.SplitLines(string(out)))).
			WithDetail("Nothing was written. Read the file again and make the patch from its current content.")
	}
	r.Added, r.Removed = changedLines(r.old, r.new)
	if r.newPath == "" {
		r.Added = 0
		r.Removed = len(patch.SplitLines(string(r.old)))
	} else {
		r.Version = hashline.Version(r.new)
	}
	switch {
	case r.oldPath == "":
		r.Path, r.Status = r.newPath, "created"
	case r.newPath == "":
		r.Path, r.Status = r.oldPath, "deleted"
	case r.oldPath != r.newPath:
		r.Path, r.OldPath, r.Status = r.newPath, r.oldPath, "renamed"
	default:
		r.Path, r.Status = r.newPath, "modified"
	}
	return nil
}

// patchFailed is the E_PATCH_FAILED error of a hunk that does not apply to
// the file name holding src: it shows the closest region with fresh anchors.
func patchFailed(name string, src []byte, he *patch.HunkError) *Error {
	err := Errorf(EPatchFailed, "%s: %v", name, he)
	doc := hashline.Parse(src)
	if doc.Lines() == 0 {
		return err.WithDetail(fmt.Sprintf("Nothing was written. %s is empty.", name))
	}
	const around = 2
	from := max(1, he.Near+1-around)
	to := min(doc.Lines(), he.Near+he.Len+around)
	b := fmt.Appendf(nil, "Nothing was written. The closest region of %s (lines %d-%d), with fresh anchors:\n", name, from, to)
	b = doc.AppendRender(b, from, to, lineClip)
	b = append(b, "Fix the hunk's context and removed lines to match, or change these lines with edit_file."...)
	return err.WithDetail(string(b))
}

func patchResult(dryRun bool, format string, rs []*patchedFile) patchInfo {
	var b []byte
	verb := "patched"
	if dryRun {
		verb = "dry run: would patch"
	}
	for _, r := range rs {
		switch r.Status {
		case "created":
			b = fmt.Appendf(b, "%s %s: created, version %s, +%d lines\n", verb, r.Path, r.Version, r.Added)
		case "deleted":
			b = fmt.Appendf(b, "%s %s: deleted (was version %s, %d lines)\n", verb, r.Path, r.PreviousVersion, r.Removed)
		case "renamed":
			b = fmt.Appendf(b, "%s %s: renamed from %s, version %s -> %s, +%d -%d lines\n", verb, r.Path, r.OldPath,
				r.PreviousVersion, r.Version, r.Added, r.Removed)
		default:
			b = fmt.Appendf(b, "%s %s: version %s -> %s, +%d -%d lines\n", verb, r.Path, r.PreviousVersion, r.Version, r.Added, r.Removed)
		}
	}
	if dryRun {
		b = append(b, "nothing was written\n"...)
	}
	for _, r := range rs {
		b = appendDiff(b, r.oldPath, r.newPath, r.old, r.new)
	}
	return patchInfo{DryRun: dryRun, Format: format, Files: rs, text: string(b)}
}
