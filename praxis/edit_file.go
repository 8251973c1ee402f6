package praxis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
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
	BaseVersion   string   `json:"base_version,omitempty" jsonschema:"The version the anchors were read from (read_file's version), so that they can be relocated if the file changed since."`
}

type editArgs struct {
	Path          string     `json:"path,omitempty" jsonschema:"File to edit, relative to the workspace root or absolute inside it."`
	Ops           []editOp   `json:"ops,omitempty" minItems:"1"`
	ExpectVersion string     `json:"expect_version,omitempty" jsonschema:"Edit only if the file is at this version."`
	BaseVersion   string     `json:"base_version,omitempty" jsonschema:"The version the anchors were read from (read_file's version), so that they can be relocated if the file changed since."`
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
	// RelocatedFrom is the earlier version the edit's anchors were read
	// from, when it was applied to the current version by relocation.
	RelocatedFrom string `json:"relocated_from,omitempty"`

	relocatedExact bool // RelocatedFrom leads here by the engine's own edits

	base  *hashline.Doc
	out   []byte
	hunks []hashline.Hunk
	perm  uint32
}

func (e *Engine) editFile(ctx context.Context, a editArgs) (editInfo, error) {
	edits := a.Files
	switch {
	case len(a.Files) > 0 && (a.Path != "" || len(a.Ops) > 0 || a.ExpectVersion != "" || a.BaseVersion != ""):
		return editInfo{}, Errorf(EInvalidArgs, "give either path and ops, or files, not both")
	case len(a.Files) == 0 && (a.Path == "" || len(a.Ops) == 0):
		return editInfo{}, Errorf(EInvalidArgs, "field path and field ops are required (or files, for several files)")
	case len(a.Files) == 0:
		edits = []fileEdit{{Path: a.Path, Ops: a.Ops, ExpectVersion: a.ExpectVersion, BaseVersion: a.BaseVersion}}
	}
	for i, fe := range edits {
		if fe.BaseVersion != "" && !validVersion(fe.BaseVersion) {
			return editInfo{}, Errorf(EInvalidArgs, "files[%d]: base_version %q is not a version (16 hex digits, as read_file shows it)", i, fe.BaseVersion)
		}
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
			r, err := e.prepareEdit(targets[i], fe)
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
		e.history.edited(r.Path, r.PreviousVersion, r.hunks, r.Version)
		e.served(r.Path, r.Version, r.out)
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

// prepareEdit loads one file, resolves its anchors (relocating them from
// an earlier version when they were read from one) and applies its ops in
// memory.
func (e *Engine) prepareEdit(rel string, fe fileEdit) (*editResult, error) {
	doc, fi, version, err := e.loadText(rel)
	if err != nil {
		return nil, err
	}
	if fe.ExpectVersion != "" && fe.ExpectVersion != version {
		return nil, Errorf(EConflict, "%s is at version %s, not the expected %s", rel, version, fe.ExpectVersion).
			WithDetail("Read the file again for fresh anchors.")
	}
	ed, src, err := e.resolveOps(doc, rel, fe, version)
	if err != nil {
		if c := CodeOf(err); c == EAnchorStale || c == EAnchorSyntax {
			e.served(rel, version, doc.Bytes()) // the error shows fresh anchors
		}
		return nil, err
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
	if src != nil {
		r.RelocatedFrom, r.relocatedExact = src.version, src.exact
	}
	for _, h := range hunks {
		r.Added += h.NewCount
		r.Removed += h.OldCount
	}
	r.Total = doc.Lines() + r.Added - r.Removed
	return r, nil
}

// plannedOp is one op with its fields checked and its anchors parsed.
type plannedOp struct {
	op      editOp
	fields  []string // the anchor fields, in order
	texts   []string // their values
	anchors []hashline.Anchor
	lines   []string // the new lines; nil when the op has none
}

// planOp checks op i's fields and parses its anchors.
func planOp(doc *hashline.Doc, i int, op editOp) (plannedOp, error) {
	p := plannedOp{op: op}
	need := func(field string, v *string) (string, error) {
		if v == nil {
			return "", Errorf(EInvalidArgs, "op %d (%s): field %s is required", i, op.Op, field)
		}
		return *v, nil
	}
	anchor := func(field string, v *string) error {
		s, err := need(field, v)
		if err != nil {
			return err
		}
		a, err := hashline.ParseAnchor(s)
		if err != nil {
			return Errorf(EAnchorSyntax, "op %d %s: %v", i, field, err).WithDetail(anchorCandidates(doc, s))
		}
		p.fields, p.texts, p.anchors = append(p.fields, field), append(p.texts, s), append(p.anchors, a)
		return nil
	}
	text := func() error {
		s, err := need("new_text", op.NewText)
		if err == nil {
			p.lines = hashline.SplitText(s)
		}
		return err
	}
	var err error
	switch op.Op {
	case "replace_line", "delete_line", "insert_after", "insert_before":
		if err = anchor("tag", op.Tag); err == nil && op.Op != "delete_line" {
			err = text()
		}
	case "replace_range", "delete_range":
		if err = anchor("start_tag", op.StartTag); err == nil {
			err = anchor("end_tag", op.EndTag)
		}
		if err == nil && op.Op == "replace_range" {
			err = text()
		}
	case "append", "prepend":
		err = text()
	default:
		err = Errorf(EInvalidArgs, "op %d: unknown op %q", i, op.Op)
	}
	return p, err
}

// edit turns p into an edit of a file of total lines whose anchors name
// lines at. anchor is the line an insertion is anchored to, 0 otherwise.
func (p plannedOp) edit(i int, at []int, total int) (x hashline.Edit, anchor int, err error) {
	x = hashline.Edit{Op: i, Lines: p.lines}
	switch p.op.Op {
	case "replace_line", "delete_line":
		x.From, x.To = at[0], at[0]
	case "insert_after":
		x.From, x.To, anchor = at[0]+1, at[0], at[0]
	case "insert_before":
		x.From, x.To, anchor = at[0], at[0]-1, at[0]
	case "replace_range", "delete_range":
		x.From, x.To = at[0], at[1]
		if x.To < x.From {
			return x, 0, Errorf(EInvalidArgs, "op %d (%s): end_tag names line %d, before start_tag's line %d", i, p.op.Op, x.To, x.From)
		}
	case "append":
		x.From, x.To = total+1, total
	case "prepend":
		x.From, x.To = 1, 0
	}
	return x, anchor, nil
}

// resolveOps turns the ops of fe into edits of doc, the current version
// of rel. Anchors that all name lines of doc resolve there. When some do
// not, or fe names an earlier base_version, the ops are relocated from the
// earlier version the anchors were read from (see relocate.go), which from
// is then.
func (e *Engine) resolveOps(doc *hashline.Doc, rel string, fe fileEdit, version string) (ed []hashline.Edit, from *relocSource, err error) {
	plans := make([]plannedOp, len(fe.Ops))
	for i, op := range fe.Ops {
		if plans[i], err = planOp(doc, i, op); err != nil {
			return nil, nil, err
		}
	}
	// Each anchor in the current version: its line, or 0 when stale.
	direct := make([][]int, len(plans))
	var stale []hashline.Anchor
	firstStale := -1
	for i, p := range plans {
		direct[i] = make([]int, len(p.anchors))
		for k, a := range p.anchors {
			n := findAnchor(doc, a)
			switch {
			case n < 0:
				return nil, nil, Errorf(EAnchorSyntax, "op %d %s: tag %s names more than one line of %s; give it as LINE:TAG", i, p.fields[k], p.texts[k], rel).
					WithDetail(anchorCandidates(doc, p.texts[k]))
			case n == 0:
				stale = append(stale, a)
				if firstStale < 0 {
					firstStale = i
				}
			}
			direct[i][k] = n
		}
	}
	// When the caller names the version its anchors were read from, or
	// the engine never showed this version (so that the anchors must come
	// from an earlier one, and a line that matches may have moved), every
	// op is held to the relocation rule: strict.
	base := fe.BaseVersion
	if base == version {
		base = ""
	}
	alt, _ := e.ws.Rel(fe.Path)
	strict := base != ""
	if !strict && !e.versions.wasServed(rel, version) && (alt == rel || !e.versions.wasServed(alt, version)) {
		strict = true
	}
	directEdits := func() ([]hashline.Edit, *relocSource, error) {
		ed := make([]hashline.Edit, len(plans))
		for i, p := range plans {
			var err error
			if ed[i], _, err = p.edit(i, direct[i], doc.Lines()); err != nil {
				return nil, nil, err
			}
		}
		return ed, nil, nil
	}
	if len(stale) == 0 && !strict {
		return directEdits()
	}
	match := stale
	if len(stale) == 0 {
		for _, p := range plans {
			match = append(match, p.anchors...)
		}
	}
	sources := e.relocationSources(rel, alt, version, base, match)
	if len(stale) == 0 && base == "" && len(sources) == 0 {
		return directEdits() // no earlier version has these lines: they can only be read from this one
	}
	var refusal error
	for _, src := range sources {
		got, relocated, err := relocateOps(src, plans, direct, doc, strict)
		if err != nil {
			if refusal == nil {
				refusal = err
			}
			continue
		}
		if ed == nil {
			ed = got
			if relocated {
				from = src
			}
			continue
		}
		if !slices.EqualFunc(ed, got, sameEdit) {
			return nil, nil, e.staleError(doc, rel, version, plans, direct, firstStale,
				fmt.Sprintf("versions %s and %s the engine served both have its lines, and place the edit differently", sources[0].version, src.version))
		}
	}
	switch {
	case refusal != nil:
		return nil, nil, refusal
	case ed != nil:
		return ed, from, nil
	case base != "":
		why := "no line of the current version of " + rel + " matches it, and base_version " + base + " is not a version of it the engine knows"
		if _, ok := e.versions.get(base); ok {
			why = "no line of the current version of " + rel + " matches it, nor of base_version " + base
		}
		if firstStale < 0 {
			return nil, nil, Errorf(EAnchorStale, "%s is at version %s, and base_version %s is not a version of it the engine knows", rel, version, base).
				WithDetail("Read the file again for fresh anchors; nothing was written.")
		}
		return nil, nil, e.staleError(doc, rel, version, plans, direct, firstStale, why)
	default:
		return nil, nil, e.staleError(doc, rel, version, plans, direct, firstStale, "no line of the current version of "+rel+" matches it")
	}
}

func sameEdit(a, b hashline.Edit) bool {
	return a.From == b.From && a.To == b.To
}

// findAnchorLine is findAnchor's line, 0 when a names none or several.
func findAnchorLine(d *hashline.Doc, a hashline.Anchor) int {
	return max(findAnchor(d, a), 0)
}

// relocateOps resolves plans against the current version cur through src.
// An op whose anchors all name lines of cur resolves there, unless src
// places it elsewhere, or (when the caller named src as the anchors'
// version: strict) cannot place it; any other op must relocate from src.
// relocated reports whether some op did.
func relocateOps(src *relocSource, plans []plannedOp, direct [][]int, cur *hashline.Doc, strict bool) (ed []hashline.Edit, relocated bool, err error) {
	ed = make([]hashline.Edit, len(plans))
	for i, p := range plans {
		inSrc := make([]int, len(p.anchors))
		allSrc, allCur := true, true
		for k, a := range p.anchors {
			inSrc[k] = findAnchorLine(src.doc, a)
			allSrc = allSrc && inSrc[k] > 0
			allCur = allCur && direct[i][k] > 0
		}
		var moved hashline.Edit
		ok := false
		if allSrc && len(p.anchors) > 0 {
			x, anchor, err := p.edit(i, inSrc, src.doc.Lines())
			if err != nil {
				return nil, false, err
			}
			if moved, ok = src.relocate(x, anchor, cur); !ok && (!allCur || strict) {
				return nil, false, staleOpError(cur, i, p, 0, relocationRefusal(src, x, anchor), max(x.From, 1))
			}
		}
		if allCur {
			x, _, err := p.edit(i, direct[i], cur.Lines())
			if err != nil {
				return nil, false, err
			}
			if ok && !sameEdit(x, moved) {
				return nil, false, staleOpError(cur, i, p, 0, fmt.Sprintf(
					"it names line %d now and line %d of version %s, which is line %d now; give base_version, or read the file again",
					direct[i][0], inSrc[0], src.version, moved.From), direct[i][0])
			}
			ed[i] = x
			relocated = relocated || ok
			continue
		}
		if !allSrc {
			k := slices.IndexFunc(inSrc, func(n int) bool { return n == 0 })
			return nil, false, staleOpError(cur, i, p, k, "it names no line of the current version nor of version "+src.version+", which its other anchors are from", p.anchors[k].Line)
		}
		ed[i] = moved
		relocated = true
	}
	return ed, relocated, nil
}

// staleOpError is the E_ANCHOR_STALE error of anchor k of op i.
func staleOpError(cur *hashline.Doc, i int, p plannedOp, k int, why string, at int) *Error {
	return Errorf(EAnchorStale, "op %d %s: anchor %s is stale: %s (now version %s)", i, p.fields[k], p.texts[k], why, hashline.Version(cur.Bytes())).
		WithDetail(staleContext(cur, at))
}

// staleError is the E_ANCHOR_STALE error of the first stale anchor of op
// i.
func (e *Engine) staleError(doc *hashline.Doc, rel, version string, plans []plannedOp, direct [][]int, i int, why string) error {
	if i < 0 {
		i = 0
	}
	p := plans[i]
	k := max(slices.Index(direct[i], 0), 0)
	if len(p.anchors) == 0 {
		return Errorf(EAnchorStale, "%s is at version %s: %s", rel, version, why).WithDetail(staleContext(doc, 0))
	}
	return staleOpError(doc, i, p, k, why, p.anchors[k].Line)
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
		b = appendRelocated(b, r)
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

// appendRelocated says, for an edit relocated from an earlier version,
// which one.
func appendRelocated(b []byte, r *editResult) []byte {
	if r.RelocatedFrom == "" {
		return b
	}
	why := "the lines the edit touches and their neighbours are unchanged since"
	if r.relocatedExact {
		why = "the engine's own edits since left the lines the edit touches unchanged"
	}
	return fmt.Appendf(b, "relocated: the anchors were read from version %s; %s, so it applied to version %s\n",
		r.RelocatedFrom, why, r.PreviousVersion)
}

func (e *Engine) dryRunResult(rs []*editResult) editInfo {
	var b []byte
	for _, r := range rs {
		b = fmt.Appendf(b, "dry run: %s would go from version %s to %s, +%d -%d lines, %d lines; nothing was written\n",
			r.Path, r.PreviousVersion, r.Version, r.Added, r.Removed, r.Total)
		b = appendRelocated(b, r)
		b = appendDiff(b, r.Path, r.Path, r.base.Bytes(), r.out)
	}
	return editInfo{DryRun: true, Files: rs, text: string(b)}
}
