package praxis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The relocation benchmark: anchored edits made against a version B of a
// real source file, applied after the file moved to C by a realistic
// outside change, and compared with the ground truth.
//
// For changes built here, the truth comes from provenance: every line of
// C knows the line of B it came from (or that it is new). The edit has a
// true place in C when the lines it touches, and one line on each side,
// all came through, in a row; the truth is then the edit applied there,
// and an edit refused is "refused". Without a true place (the change
// touched the edit's lines or their neighbours) any application is
// "wrong". For a branch switch (C is another revision of the file from
// this repository's history) the truth is git merge-file's clean merge of
// the edit into C; without one any application is "wrong".
//
//	go test -run '^$' -bench Relocation -benchtime 1x ./praxis

// pline is a line of a changed file and the line of B it came from (0:
// new).
type pline struct {
	text string
	from int
}

// relocEdit is one anchored edit of B: op on line line (and end, for a
// range), in B's numbering.
type relocEdit struct {
	op        string
	line, end int
	target    string // how the line was chosen
}

// span returns the lines the edit touches, as From..To of hashline.Edit
// (To = From-1 for an insertion).
func (x relocEdit) span() (from, to int) {
	switch x.op {
	case "insert_after":
		return x.line + 1, x.line
	case "insert_before":
		return x.line, x.line - 1
	case "replace_range":
		return x.line, x.end
	}
	return x.line, x.line
}

// relocChange is one kind of outside change: it turns B into C, given the
// edit so that it can aim above or below it. ok is false when it does not
// apply to this file or edit.
type relocChange struct {
	name string
	make func(r *rand.Rand, b []string, x relocEdit, pool []string) (c []pline, ok bool)
	// reformat, for a formatter's change, makes B from the file first: it
	// returns that B, the edit in its numbering, and C.
	reformat func(r *rand.Rand, b []string, x relocEdit) (bad []string, bx relocEdit, c []pline, ok bool)
}

func plines(b []string) []pline {
	out := make([]pline, len(b))
	for i, l := range b {
		out[i] = pline{l, i + 1}
	}
	return out
}

func newLines(r *rand.Rand, pool []string, n int) []pline {
	out := make([]pline, n)
	for i := range out {
		out[i] = pline{pool[r.IntN(len(pool))], 0}
	}
	return out
}

// insertAt inserts n pool lines before index at (0-based) of c.
func insertAt(r *rand.Rand, c []pline, at int, pool []string, n int) []pline {
	return slices.Insert(c, at, newLines(r, pool, n)...)
}

// funcBlocks returns the top-level functions of b as 0-based half-open
// line ranges: from "func " at the start of a line to the next "}".
func funcBlocks(b []string) [][2]int {
	var out [][2]int
	for i := 0; i < len(b); i++ {
		if !strings.HasPrefix(b[i], "func ") || strings.HasSuffix(strings.TrimSpace(b[i]), "}") {
			continue
		}
		for j := i + 1; j < len(b); j++ {
			if strings.TrimRight(b[j], "\r\n") == "}" {
				out = append(out, [2]int{i, j + 1})
				i = j
				break
			}
		}
	}
	return out
}

var relocChanges = []relocChange{
	{name: "lines inserted above", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		from, _ := x.span()
		if from < 2 {
			return nil, false
		}
		return insertAt(r, plines(b), r.IntN(from-1), pool, 1+r.IntN(8)), true
	}},
	{name: "lines deleted above", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		from, _ := x.span()
		if from < 3 {
			return nil, false
		}
		at := r.IntN(from - 2)
		return slices.Delete(plines(b), at, at+1+r.IntN(min(8, from-2-at))), true
	}},
	{name: "lines inserted below", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		_, to := x.span()
		if to+1 > len(b) {
			return nil, false
		}
		return insertAt(r, plines(b), to+1+r.IntN(len(b)-to), pool, 1+r.IntN(8)), true
	}},
	{name: "lines deleted below", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		_, to := x.span()
		if to+2 > len(b) {
			return nil, false
		}
		at := to + 1 + r.IntN(len(b)-to-1)
		return slices.Delete(plines(b), at, at+1+r.IntN(min(8, len(b)-at))), true
	}},
	{name: "scattered inserts and deletes", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		c := plines(b)
		for range 2 + r.IntN(5) {
			at := r.IntN(len(c))
			if r.IntN(2) == 0 {
				c = insertAt(r, c, at, pool, 1+r.IntN(4))
			} else {
				c = slices.Delete(c, at, min(len(c), at+1+r.IntN(4)))
			}
		}
		return c, true
	}},
	{name: "a function moved", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		fs := funcBlocks(b)
		if len(fs) < 3 {
			return nil, false
		}
		f := fs[r.IntN(len(fs))]
		c := plines(b)
		block := append(slices.Clone(c[f[0]:f[1]]), pline{"\n", 0})
		c = slices.Delete(c, f[0], f[1])
		at := len(c)
		if rest := funcBlocks(texts(c)); r.IntN(4) != 0 {
			at = rest[r.IntN(len(rest))][0]
		}
		return slices.Insert(c, at, block...), true
	}},
	{name: "a function copied (duplicate lines)", make: func(r *rand.Rand, b []string, x relocEdit, pool []string) ([]pline, bool) {
		fs := funcBlocks(b)
		if len(fs) == 0 {
			return nil, false
		}
		f := fs[r.IntN(len(fs))]
		for _, g := range fs { // the function of the edit, if it is in one
			if g[0] < x.line && x.line <= g[1] {
				f = g
			}
		}
		c := plines(b)
		var cp []pline
		for _, l := range c[f[0]:f[1]] {
			cp = append(cp, pline{l.text, 0})
		}
		if r.IntN(2) == 0 { // before the original, or after it
			return slices.Insert(c, f[0], append(cp, pline{"\n", 0})...), true
		}
		return slices.Insert(c, f[1], append([]pline{{"\n", 0}}, cp...)...), true
	}},
	{name: "gofmt reflowed another function", reformat: misformat},
}

func texts(c []pline) []string {
	out := make([]string, len(c))
	for i, l := range c {
		out[i] = l.text
	}
	return out
}

// misformat returns b with one function that the edit x does not touch
// mis-formatted (spaces for tabs, and a doubled blank line if it has a
// blank line), the edit in that B's numbering, and C: what gofmt makes of
// that B, which is b again. A line of C came through when gofmt left it
// as it was. ok is false when the file does not allow it.
func misformat(r *rand.Rand, b []string, x relocEdit) (bad []string, bx relocEdit, c []pline, ok bool) {
	from, to := x.span()
	fs := slices.DeleteFunc(funcBlocks(b), func(f [2]int) bool { return from-1 <= f[1] && to+1 >= f[0]+1 })
	if len(fs) == 0 {
		return nil, x, nil, false
	}
	f := fs[r.IntN(len(fs))]
	extra := -1 // the index in b of the blank line doubled
	for i := f[0] + 1; i < f[1]; i++ {
		if b[i] == "\n" {
			extra = i
			break
		}
	}
	for i, l := range b {
		if i > f[0] && i < f[1]-1 && strings.HasPrefix(l, "\t") {
			trimmed := strings.TrimLeft(l, "\t")
			l = strings.Repeat("    ", len(l)-len(trimmed)) + trimmed
		}
		bad = append(bad, l)
		if i == extra {
			bad = append(bad, "\n")
		}
	}
	out, err := format.Source([]byte(strings.Join(bad, "")))
	if err != nil || string(out) != strings.Join(b, "") {
		return nil, x, nil, false
	}
	shift := func(n int) int {
		if extra >= 0 && n > extra+1 {
			return n + 1
		}
		return n
	}
	for i, l := range b {
		j := shift(i+1) - 1
		from := j + 1
		if bad[j] != l {
			from = 0
		}
		c = append(c, pline{l, from})
	}
	bx = x
	bx.line, bx.end = shift(x.line), shift(x.end)
	return bad, bx, c, true
}

// relocTally counts the outcomes of a set of cases: applied at the true
// place; applied
// where the text alone places the edit although the change's own history
// puts it elsewhere or nowhere (equivalent); refused; anything else.
type relocTally struct {
	cases, applied, equivalent, refused, wrong int
}

func (t *relocTally) add(o relocTally) {
	t.cases += o.cases
	t.applied += o.applied
	t.equivalent += o.equivalent
	t.refused += o.refused
	t.wrong += o.wrong
}

func (t relocTally) String() string {
	return fmt.Sprintf("%5d cases: %5d relocated correctly (%5.1f%%), %3d where only the text places them, %5d refused, %d wrong",
		t.cases, t.applied, 100*float64(t.applied)/float64(max(t.cases, 1)), t.equivalent, t.refused, t.wrong)
}

// textPlacement returns C with the edit x applied where its lines and
// their neighbours (the file's start and end included) occur in C exactly
// as in B, provided they occur once in B and once in C; false otherwise.
// No history of the change could place the edit elsewhere and keep them.
func textPlacement(b, c []string, x relocEdit, newText []string) (string, bool) {
	from, to := x.span()
	pad := func(ls []string) []string { return append(append([]string{"\x00start"}, ls...), "\x00end") }
	pb, pc := pad(b), pad(c)
	w := pb[from-1 : to+2]
	find := func(s []string) (at, n int) {
		for i := 0; i+len(w) <= len(s); i++ {
			if slices.Equal(s[i:i+len(w)], w) {
				at, n = i, n+1
			}
		}
		return at, n
	}
	if _, n := find(pb); n != 1 {
		return "", false
	}
	q, n := find(pc)
	if n != 1 {
		return "", false
	}
	out := slices.Replace(slices.Clone(c), q, q+to-from+1, newText...)
	return strings.Join(out, ""), true
}

// relocRun drives the real engine through cases: each case a file of its
// own, read (so that B is served), changed on disk to C, edited with B's
// anchors.
type relocRun struct {
	tb    testing.TB
	e     *Engine
	dir   string
	n     int
	kinds map[string]*relocTally
	order []string
	fails []string // descriptions of the wrong cases
}

func newRelocRun(tb testing.TB) *relocRun {
	dir := tb.TempDir()
	e, err := New(Options{Workspace: dir, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return &relocRun{tb: tb, e: e, dir: dir, kinds: map[string]*relocTally{}}
}

func (run *relocRun) tally(kind string) *relocTally {
	if run.kinds[kind] == nil {
		run.kinds[kind] = &relocTally{}
		run.order = append(run.order, kind)
	}
	return run.kinds[kind]
}

// truthByProvenance returns B' (B with x applied) placed in C, or false
// when the edit has no true place in C.
func truthByProvenance(b []string, c []pline, x relocEdit, newText []string) (string, bool) {
	from, to := x.span()
	pos := make(map[int]int, len(c)) // B line -> C line
	for i, l := range c {
		if l.from > 0 {
			pos[l.from] = i + 1
		}
	}
	pos[0], pos[len(b)+1] = 0, len(c)+1
	first, ok := pos[from-1]
	if !ok {
		return "", false
	}
	for k := from - 1; k <= to+1; k++ {
		if p, ok := pos[k]; !ok || p != first+k-(from-1) {
			return "", false
		}
	}
	out := texts(c)
	out = slices.Replace(out, first, first+to-from+1, newText...)
	return strings.Join(out, ""), true
}

// edit applies one case through the engine and returns the file after
// the call and whether the edit applied.
func (run *relocRun) edit(b, c string, x relocEdit, text string) (after string, applied bool) {
	run.n++
	name := fmt.Sprintf("case%05d.go", run.n)
	p := filepath.Join(run.dir, name)
	if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
		run.tb.Fatal(err)
	}
	ctx := context.Background()
	res, err := run.e.Catalog().Call(ctx, "read_file", json.RawMessage(`{"path":"`+name+`","limit":1000000}`))
	if err != nil || res.IsError {
		run.tb.Fatal(err, res.Text)
	}
	anchor := map[int]string{}
	for _, m := range renderedLine.FindAllStringSubmatch(res.Text, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		anchor[n] = m[1] + ":" + m[2]
	}
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		run.tb.Fatal(err)
	}
	o := map[string]any{"op": x.op}
	switch x.op {
	case "replace_range":
		o["start_tag"], o["end_tag"] = anchor[x.line], anchor[x.end]
	default:
		o["tag"] = anchor[x.line]
	}
	if x.op != "delete_line" {
		o["new_text"] = text
	}
	args, _ := json.Marshal(map[string]any{"path": name, "ops": []any{o}})
	res, err = run.e.Catalog().Call(ctx, "edit_file", args)
	if err != nil {
		run.tb.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		run.tb.Fatal(err)
	}
	if res.IsError && res.Code != EAnchorStale {
		run.tb.Fatalf("%s: unexpected error\n%s", name, res.Text)
	}
	return string(got), !res.IsError
}

// record classifies one outcome against the truth ("", false: none) and
// the text's own placement.
func (run *relocRun) record(kind string, after string, applied bool, truth string, hasTruth bool, byText string, hasText bool, what string) {
	t := run.tally(kind)
	t.cases++
	switch {
	case !applied:
		t.refused++
	case hasTruth && after == truth:
		t.applied++
	case hasText && after == byText:
		t.equivalent++
	default:
		t.wrong++
		run.fails = append(run.fails, kind+": "+what)
	}
}

// pickEdit chooses an edit of b: on a random line, a line whose content
// occurs more than once, the first or the last line.
func pickEdit(r *rand.Rand, b []string) relocEdit {
	n := len(b)
	x := relocEdit{target: "random line"}
	switch k := r.IntN(10); {
	case k < 2:
		counts := map[string]int{}
		for _, l := range b {
			counts[l]++
		}
		var dups []int
		for i, l := range b {
			if counts[l] > 1 {
				dups = append(dups, i+1)
			}
		}
		if len(dups) > 0 {
			x.line, x.target = dups[r.IntN(len(dups))], "duplicated line"
		} else {
			x.line = 1 + r.IntN(n)
		}
	case k == 2:
		x.line, x.target = 1, "first line"
	case k == 3:
		x.line, x.target = n, "last line"
	default:
		x.line = 1 + r.IntN(n)
	}
	x.op = []string{"replace_line", "replace_line", "replace_range", "insert_after", "insert_before", "delete_line"}[r.IntN(6)]
	if x.op == "replace_range" {
		x.end = min(n, x.line+1+r.IntN(4))
		if x.end == x.line {
			x.op = "replace_line"
		}
	}
	return x
}

// newTextOf returns the new lines of edit number seq.
func newTextOf(x relocEdit, seq int) []string {
	if x.op == "delete_line" {
		return nil
	}
	return []string{fmt.Sprintf("\t// edited by the agent (%d)\n", seq)}
}

// relocSources returns the source files of the benchmark: files of the Go
// distribution, each split into lines.
func relocSources(tb testing.TB, names []string) [][]string {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("the Go distribution's sources are needed: go env GOROOT: %v", err)
	}
	var out [][]string
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "src", filepath.FromSlash(n)))
		if err != nil {
			tb.Skipf("the Go distribution's sources are needed: %v", err)
		}
		out = append(out, strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n"))
		last := &out[len(out)-1][len(out[len(out)-1])-1]
		*last += "\n"
	}
	return out
}

// runProvenanceCases runs perFile edits for every change kind and source.
func (run *relocRun) runProvenanceCases(r *rand.Rand, sources [][]string, perFile int) {
	pool := sources[0]
	for si, b := range sources {
		for _, ch := range relocChanges {
			for k := 0; k < perFile; k++ {
				x := pickEdit(r, b)
				bText, bLines := strings.Join(b, ""), b
				var c []pline
				var ok bool
				if ch.reformat != nil {
					var bad []string
					if bad, x, c, ok = ch.reformat(r, b, x); ok {
						bLines, bText = bad, strings.Join(bad, "")
					}
				} else {
					c, ok = ch.make(r, b, x, pool)
				}
				if !ok {
					continue
				}
				text := newTextOf(x, run.n+1)
				truth, has := truthByProvenance(bLines, c, x, text)
				byText, hasText := textPlacement(bLines, texts(c), x, text)
				after, applied := run.edit(bText, strings.Join(texts(c), ""), x, strings.Join(text, ""))
				what := fmt.Sprintf("source %d, %s %d-%d (%s)", si, x.op, x.line, x.end, x.target)
				run.record(ch.name, after, applied, truth, has, byText, hasText, what)
				run.record("target: "+x.target, after, applied, truth, has, byText, hasText, what)
			}
		}
	}
}

// runBranchCases edits files of this repository at one revision after
// they were switched to another, judged by git merge-file: the last
// revisions of each file as of commit from ("HEAD" for the newest).
func (run *relocRun) runBranchCases(r *rand.Rand, files []string, from string, revisions, perPair int) bool {
	git, err := exec.LookPath("git")
	if err != nil {
		return false
	}
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return false
	}
	repo := strings.TrimSpace(string(top))
	tmp := run.tb.TempDir()
	for _, f := range files {
		out, err := exec.Command(git, "-C", repo, "log", "--format=%H", "-n", fmt.Sprint(revisions), from, "--", f).Output()
		if err != nil {
			return false
		}
		revs := strings.Fields(string(out))
		for i := 0; i+1 < len(revs); i++ {
			older, errO := exec.Command(git, "-C", repo, "show", revs[i+1]+":"+f).Output()
			newer, errN := exec.Command(git, "-C", repo, "show", revs[i]+":"+f).Output()
			if errO != nil || errN != nil || len(older) == 0 || len(newer) == 0 {
				continue
			}
			for _, pair := range [][2][]byte{{older, newer}, {newer, older}} { // to a later and to an earlier revision
				b := strings.SplitAfter(strings.TrimSuffix(string(pair[0]), "\n"), "\n")
				b[len(b)-1] += "\n"
				for range perPair {
					x := pickEdit(r, b)
					text := newTextOf(x, run.n+1)
					from, to := x.span()
					edited := slices.Replace(slices.Clone(b), from-1, to, text...)
					truth, has := mergeFile(run.tb, git, tmp, strings.Join(edited, ""), string(pair[0]), string(pair[1]))
					c := strings.SplitAfter(strings.TrimSuffix(string(pair[1]), "\n"), "\n")
					c[len(c)-1] += "\n"
					byText, hasText := textPlacement(b, c, x, text)
					after, applied := run.edit(string(pair[0]), string(pair[1]), x, strings.Join(text, ""))
					what := fmt.Sprintf("%s, %s %d-%d (%s)", f, x.op, x.line, x.end, x.target)
					run.record("branch switch", after, applied, truth, has, byText, hasText, what)
				}
			}
		}
	}
	return true
}

// mergeFile merges the change from base to other into current with git
// merge-file; false when it conflicts.
func mergeFile(tb testing.TB, git, dir, current, base, other string) (string, bool) {
	paths := [3]string{filepath.Join(dir, "current"), filepath.Join(dir, "base"), filepath.Join(dir, "other")}
	for i, s := range []string{current, base, other} {
		if err := os.WriteFile(paths[i], []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(git, "merge-file", "-p", "-q", paths[0], paths[1], paths[2])
	cmd.Stdout = &out
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() > 0 {
		return "", false
	} else if err != nil {
		tb.Fatal(err)
	}
	return out.String(), true
}

func (run *relocRun) report(tb testing.TB) relocTally {
	var total relocTally
	for _, targets := range []bool{false, true} {
		for _, k := range run.order {
			if strings.HasPrefix(k, "target: ") != targets {
				continue
			}
			if !targets {
				total.add(*run.kinds[k])
			}
			tb.Logf("%-38s %v", k, *run.kinds[k])
		}
		if !targets {
			tb.Logf("%-38s %v", "all", total)
		}
	}
	for _, f := range run.fails {
		tb.Logf("wrong: %s", f)
	}
	return total
}

var relocBenchSources = []string{
	"strings/strings.go", "bufio/bufio.go", "net/http/server.go", "encoding/json/decode.go",
	"go/ast/ast.go", "sort/sort.go", "fmt/print.go", "os/file.go",
}

var relocBranchFiles = []string{"praxis/engine.go", "praxis/bash.go", "agent/harness.go", "mcpserver/http.go"}

// BenchmarkRelocation prints relocated-correctly / refused / wrong for
// anchored edits after realistic outside changes (see the top of this
// file). It measures outcomes, not time: run it with -benchtime 1x.
func BenchmarkRelocation(b *testing.B) {
	for b.Loop() {
		run := newRelocRun(b)
		r := rand.New(rand.NewPCG(1, 2))
		run.runProvenanceCases(r, relocSources(b, relocBenchSources), 40)
		if !run.runBranchCases(r, relocBranchFiles, "HEAD", 8, 6) {
			b.Log("branch switches skipped: git or this repository's history is not available")
		}
		total := run.report(b)
		b.ReportMetric(100*float64(total.applied)/float64(total.cases), "%applied")
		b.ReportMetric(float64(total.wrong), "wrong")
	}
}

// TestRelocationNeverWrong runs a smaller fixed set of the benchmark's
// cases: no edit may land anywhere but its true place, and most edits
// whose lines an outside change left alone must apply.
func TestRelocationNeverWrong(t *testing.T) {
	run := newRelocRun(t)
	r := rand.New(rand.NewPCG(3, 4))
	run.runProvenanceCases(r, relocSources(t, []string{"strings/strings.go", "sort/sort.go"}), 6)
	// Revisions as of a fixed commit, so that the set stays the same.
	if !run.runBranchCases(r, relocBranchFiles[:1], "610644f", 3, 4) {
		t.Log("branch switches skipped: git or this repository's history (a full clone) is not available")
	}
	total := run.report(t)
	if total.wrong != 0 {
		t.Errorf("%d edits landed where they should not", total.wrong)
	}
	for _, k := range []string{"lines inserted above", "lines deleted above"} {
		if got := run.kinds[k]; got == nil || got.applied*10 < got.cases*6 {
			t.Errorf("%s: %v; want at least 60%% applied", k, got)
		}
	}
}
