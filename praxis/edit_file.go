package praxis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

type editOp struct {
	Op       string  `json:"op" enum:"replace_line,insert_after,insert_before,delete_line,replace_range,delete_range,append,prepend"`
	Tag      *string `json:"tag,omitempty" jsonschema:"Anchor of the line: TAG or LINE:TAG, as read_file shows it."`
	StartTag *string `json:"start_tag,omitempty" jsonschema:"Anchor of the first line of a range."`
	EndTag   *string `json:"end_tag,omitempty" jsonschema:"Anchor of the last line of a range (inclusive)."`
	NewText  *string `json:"new_text,omitempty" jsonschema:"The new line or lines, without anchors. One trailing newline is ignored."`
}

// fileEdit is the edit of one file: one entry of files.
type fileEdit struct {
	Path          string   `json:"path" jsonschema:"File to edit, relative to the workspace root or absolute inside it."`
	Ops           []editOp `json:"ops" minItems:"1"`
	ExpectVersion string   `json:"expect_version,omitempty" jsonschema:"Edit only if the file is at this version."`
}

type editArgs struct {
	Path          string     `json:"path,omitempty" jsonschema:"File to edit, relative to the workspace root or absolute inside it."`
	Ops           []editOp   `json:"ops,omitempty" minItems:"1"`
	ExpectVersion string     `json:"expect_version,omitempty" jsonschema:"Edit only if the file is at this version."`
	Files         []fileEdit `json:"files,omitempty" minItems:"1" jsonschema:"Edits for several files, applied all or nothing. Use instead of path and ops."`
	DryRun        bool       `json:"dry_run,omitempty" jsonschema:"Check and show the unified diff without writing."`
}

// editInfo is edit_file's structured result.
type editInfo struct {
	DryRun bool          `json:"dry_run"`
	Files  []*editResult `json:"files"`

	text string
}

func (i editInfo) Text() string { return i.text }

// editResult is one file's outcome, and its part of the structured result.
type editResult struct {
	Path            string `json:"path"`
	Version         string `json:"version"`
	PreviousVersion string `json:"previous_version"`
	Added           int    `json:"lines_added"`
	Removed         int    `json:"lines_removed"`
	Total           int    `json:"total_lines"`

	base  *hashline.Doc
	out   []byte
	hunks []hashline.Hunk
	perm  uint32
}

func (e *Engine) editFile(ctx context.Context, a editArgs) (editInfo, error) {
	edits := a.Files
	switch {
	case len(a.Files) > 0 && (a.Path != "" || len(a.Ops) > 0 || a.ExpectVersion != ""):
		return editInfo{}, Errorf(EInvalidArgs, "give either path and ops, or files, not both")
	case len(a.Files) == 0 && (a.Path == "" || len(a.Ops) == 0):
		return editInfo{}, Errorf(EInvalidArgs, "field path and field ops are required (or files, for several files)")
	case len(a.Files) == 0:
		edits = []fileEdit{{Path: a.Path, Ops: a.Ops, ExpectVersion: a.ExpectVersion}}
	}

	targets := make([]string, len(edits))
	for i, fe := range edits {
		t, err := e.writeTarget(fe.Path)
		if err != nil {
			return editInfo{}, err
		}
		for j := range i {
			if targets[j] == t {
				return editInfo{}, Errorf(EInvalidArgs, "files[%d] and files[%d] both edit %s: put all its ops in one entry", j, i, t)
			}
		}
		targets[i] = t
	}
	var results []*editResult
	prepare := func() ([]fileWrite, error) {
		results = make([]*editResult, len(edits))
		changed := 0
		for i, fe := range edits {
			r, err := e.prepareEdit(targets[i], fe, len(edits) > 1)
			if err != nil {
				if len(edits) > 1 {
					return nil, prefixError(err, fmt.Sprintf("files[%d] (%s): ", i, targets[i]))
				}
				return nil, err
			}
			results[i] = r
			changed += r.Added + r.Removed
		}
		if limit := e.opts.MaxChangedLines; limit > 0 && changed > limit {
			return nil, Errorf(EBudgetExceeded, "the edit changes %d lines (%d added, %d removed in all), over the limit of %d",
				changed, sumField(results, true), sumField(results, false), limit).
				WithDetail("Split the change into smaller edits.")
		}
		if a.DryRun {
			return nil, nil
		}
		ws := make([]fileWrite, len(results))
		for i, r := range results {
			ws[i] = fileWrite{Path: r.Path, Data: r.out, Perm: fs.FileMode(r.perm), Check: true, Base: r.base.Bytes(),
				Version: r.Version, BaseVersion: r.PreviousVersion}
		}
		return ws, nil
	}
	if a.DryRun {
		if _, err := prepare(); err != nil {
			return editInfo{}, err
		}
		return e.dryRunResult(results), nil
	}
	if err := e.commits.commit(ctx, prepare); err != nil {
		return editInfo{}, err
	}
	for _, r := range results {
		e.history.edited(r.Path, r.base.Bytes(), r.PreviousVersion, r.hunks, r.Version)
	}
	return editDoneResult(results), nil
}

func sumField(rs []*editResult, added bool) int {
	n := 0
	for _, r := range rs {
		if added {
			n += r.Added
		} else {
			n += r.Removed
		}
	}
	return n
}

// prepareEdit loads one file, resolves its anchors and applies its ops in
// memory.
func (e *Engine) prepareEdit(rel string, fe fileEdit, batch bool) (*editResult, error) {
	doc, fi, err := e.loadText(rel)
	if err != nil {
		return nil, err
	}
	version := hashline.Version(doc.Bytes())
	if fe.ExpectVersion != "" && fe.ExpectVersion != version {
		return nil, Errorf(EConflict, "%s is at version %s, not the expected %s", rel, version, fe.ExpectVersion).
			WithDetail("Read the file again for fresh anchors.")
	}
	ed := make([]hashline.Edit, 0, len(fe.Ops))
	for i, op := range fe.Ops {
		x, err := e.resolveOp(doc, rel, version, i, op)
		if err != nil {
			return nil, err
		}
		ed = append(ed, x)
	}
	out, hunks, err := hashline.Apply(doc, ed)
	if err != nil {
		var be *hashline.BatchError
		if errors.As(err, &be) && be.Kind == hashline.ErrOverlap {
			return nil, Errorf(EOverlap, "%s", be.Msg).WithDetail("Each line may be replaced or deleted by one op only; merge the ops or use replace_range.")
		}
		return nil, Errorf(EInvalidArgs, "%v", err)
	}
	if bytes.Equal(out, doc.Bytes()) {
		return nil, Errorf(ENoop, "the edit leaves %s unchanged (version %s)", rel, version).
			WithDetail("Nothing was written. Check that new_text differs from the lines it replaces.")
	}
	r := &editResult{Path: rel, PreviousVersion: version, Version: hashline.Version(out),
		base: doc, out: out, hunks: hunks, perm: uint32(fi.Mode().Perm())}
	for _, h := range hunks {
		r.Added += h.NewCount
		r.Removed += h.OldCount
	}
	r.Total = doc.Lines() + r.Added - r.Removed
	return r, nil
}

// resolveOp turns one op into an edit of doc's lines.
func (e *Engine) resolveOp(doc *hashline.Doc, rel, version string, i int, op editOp) (hashline.Edit, error) {
	need := func(field string, v *string) (string, error) {
		if v == nil {
			return "", Errorf(EInvalidArgs, "op %d (%s): field %s is required", i, op.Op, field)
		}
		return *v, nil
	}
	line := func(field string, v *string) (int, error) {
		s, err := need(field, v)
		if err != nil {
			return 0, err
		}
		return e.resolveAnchor(doc, rel, version, i, field, s)
	}
	text := func() ([]string, error) {
		s, err := need("new_text", op.NewText)
		if err != nil {
			return nil, err
		}
		return hashline.SplitText(s), nil
	}
	x := hashline.Edit{Op: i}
	var err error
	switch op.Op {
	case "replace_line", "delete_line", "insert_after", "insert_before":
		var n int
		if n, err = line("tag", op.Tag); err != nil {
			return x, err
		}
		switch op.Op {
		case "replace_line", "delete_line":
			x.From, x.To = n, n
		case "insert_after":
			x.From, x.To = n+1, n
		case "insert_before":
			x.From, x.To = n, n-1
		}
		if op.Op != "delete_line" {
			x.Lines, err = text()
		}
	case "replace_range", "delete_range":
		if x.From, err = line("start_tag", op.StartTag); err != nil {
			return x, err
		}
		if x.To, err = line("end_tag", op.EndTag); err != nil {
			return x, err
		}
		if x.To < x.From {
			return x, Errorf(EInvalidArgs, "op %d (%s): end_tag names line %d, before start_tag's line %d", i, op.Op, x.To, x.From)
		}
		if op.Op == "replace_range" {
			x.Lines, err = text()
		}
	case "append":
		x.From, x.To = doc.Lines()+1, doc.Lines()
		x.Lines, err = text()
	case "prepend":
		x.From, x.To = 1, 0
		x.Lines, err = text()
	default:
		err = Errorf(EInvalidArgs, "op %d: unknown op %q", i, op.Op)
	}
	return x, err
}

// resolveAnchor finds the line an anchor names in doc: directly, or
// through the engine's own edits since the version it was read from.
func (e *Engine) resolveAnchor(doc *hashline.Doc, rel, version string, i int, field, s string) (int, error) {
	a, err := hashline.ParseAnchor(s)
	if err != nil {
		return 0, Errorf(EAnchorSyntax, "op %d %s: %v", i, field, err).WithDetail(anchorCandidates(doc, s))
	}
	switch n := findAnchor(doc, a); {
	case n > 0:
		return n, nil
	case n < 0:
		return 0, Errorf(EAnchorSyntax, "op %d %s: tag %s names more than one line of %s; give it as LINE:TAG", i, field, s, rel).
			WithDetail(anchorCandidates(doc, s))
	}
	o := e.history.resolve(rel, version, a)
	if o.found && !o.changed {
		return o.line, nil
	}
	at := a.Line
	why := "no line of the current version of " + rel + " matches it"
	if o.found {
		at = o.from
		why = "line " + fmt.Sprint(o.from) + " was changed or removed by an edit since that anchor was read"
	}
	return 0, Errorf(EAnchorStale, "op %d %s: anchor %s is stale: %s (now version %s)", i, field, s, why, version).
		WithDetail(staleContext(doc, at))
}

// staleContext shows the current lines around line at with fresh anchors,
// marking the line the stale anchor named with ">".
func staleContext(doc *hashline.Doc, at int) string {
	n := doc.Lines()
	if n == 0 {
		return "The file is now empty; use append or prepend."
	}
	if at < 1 {
		return "Read the file again for fresh anchors; nothing was written."
	}
	from, to := max(1, min(at, n)-3), min(n, at+3)
	var b strings.Builder
	fmt.Fprintf(&b, "Current lines %d-%d (\">\" marks line %d, which no longer matches; nothing was written):\n", from, to, at)
	for k := from; k <= to; k++ {
		mark := "  "
		if k == at {
			mark = "> "
		}
		b.WriteString(mark)
		b.Write(hashline.AppendLine(nil, k, doc.Line(k), lineClip))
	}
	return strings.TrimRight(b.String(), "\n")
}

func editDoneResult(rs []*editResult) editInfo {
	var b []byte
	for i, r := range rs {
		if i > 0 {
			b = append(b, '\n')
		}
		b = fmt.Appendf(b, "edited %s: version %s -> %s, +%d -%d lines, %d lines now\n",
			r.Path, r.PreviousVersion, r.Version, r.Added, r.Removed, r.Total)
		b = appendChangedRegions(b, hashline.Parse(r.out), r.hunks)
	}
	return editInfo{DryRun: false, Files: rs, text: string(b)}
}

// appendChangedRegions renders the new lines of each hunk with two lines of
// context, in hashline form, so that the next edit needs no new read.
func appendChangedRegions(b []byte, doc *hashline.Doc, hunks []hashline.Hunk) []byte {
	const ctx = 2
	n := doc.Lines()
	if n == 0 {
		return append(b, "(the file is now empty)\n"...)
	}
	last := 0
	for _, h := range hunks {
		from := max(1, h.NewFrom-ctx)
		to := min(n, h.NewFrom+h.NewCount-1+ctx)
		if to < from {
			continue
		}
		if from <= last {
			from = last + 1
		} else if last > 0 {
			b = append(b, "...\n"...)
		}
		b = doc.AppendRender(b, from, to, lineClip)
		last = max(last, to)
	}
	return b
}

func (e *Engine) dryRunResult(rs []*editResult) editInfo {
	var b []byte
	for _, r := range rs {
		b = fmt.Appendf(b, "dry run: %s would go from version %s to %s, +%d -%d lines, %d lines; nothing was written\n",
			r.Path, r.PreviousVersion, r.Version, r.Added, r.Removed, r.Total)
		b = appendDiff(b, r.Path, r.Path, r.base.Bytes(), r.out)
	}
	return editInfo{DryRun: true, Files: rs, text: string(b)}
}
