package praxis

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// numbered returns lines "line 1" .. "line n", each ended by a newline.
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d\n", i+1)
	}
	return out
}

// TestRelocation edits a file with the anchors of a read after someone
// else changed it: the edit lands on its lines when they and their
// neighbours are unchanged, and is refused with fresh anchors otherwise.
func TestRelocation(t *testing.T) {
	base := numbered(20)
	join := func(ls ...[]string) string {
		var b strings.Builder
		for _, l := range ls {
			b.WriteString(strings.Join(l, ""))
		}
		return b.String()
	}
	with := func(i int, s string) []string { // base with line i (1-based) replaced
		out := append([]string(nil), base...)
		out[i-1] = s
		return out
	}
	for _, tc := range []struct {
		name  string
		other string // the file as someone else left it
		ops   func(a []string) []map[string]any
		want  string // "" when refused
		why   string // a fragment of the refusal
	}{
		{"lines inserted above", join([]string{"new 1\n", "new 2\n"}, base),
			func(a []string) []map[string]any {
				return []map[string]any{op("replace_line", "tag", a[9], "new_text", "TEN")}
			},
			join([]string{"new 1\n", "new 2\n"}, with(10, "TEN\n")), ""},
		{"lines deleted above and inserted below", join(base[3:], []string{"tail\n"}),
			func(a []string) []map[string]any {
				return []map[string]any{op("replace_range", "start_tag", a[9], "end_tag", a[11], "new_text", "X")}
			},
			join(base[3:9], []string{"X\n"}, base[12:], []string{"tail\n"}), ""},
		{"insert and delete ops", join(base[:2], base[4:]),
			func(a []string) []map[string]any {
				return []map[string]any{op("insert_after", "tag", a[14], "new_text", "after 15"),
					op("insert_before", "tag", a[5], "new_text", "before 6"), op("delete_line", "tag", a[17])}
			},
			join(base[:2], base[4:5], []string{"before 6\n"}, base[5:15], []string{"after 15\n"}, base[15:17], base[18:]), ""},
		{"the line itself changed", join(with(10, "changed\n")),
			func(a []string) []map[string]any {
				return []map[string]any{op("replace_line", "tag", a[9], "new_text", "TEN")}
			},
			"", "changed since"},
		{"a neighbour changed", join([]string{"top\n"}, with(11, "changed\n")),
			func(a []string) []map[string]any {
				return []map[string]any{op("replace_line", "tag", a[9], "new_text", "TEN")}
			},
			"", "or a line next to them"},
		{"a line inserted inside the range", join([]string{"top\n"}, base[:12], []string{"inside\n"}, base[12:]),
			func(a []string) []map[string]any {
				return []map[string]any{op("delete_range", "start_tag", a[9], "end_tag", a[14])}
			},
			"", "lines 10-15"},
		{"a line inserted right after an insertion point", join([]string{"top\n"}, base[:10], []string{"theirs\n"}, base[10:]),
			func(a []string) []map[string]any {
				return []map[string]any{op("insert_after", "tag", a[9], "new_text", "mine")}
			},
			"", "the place after line 10"},
		{"first line, lines added at the end", join(base, []string{"end\n"}),
			func(a []string) []map[string]any {
				return []map[string]any{op("replace_line", "tag", a[0], "new_text", "FIRST")}
			},
			join(with(1, "FIRST\n"), []string{"end\n"}), ""},
		{"first line, lines added at the start", join([]string{"start\n"}, base),
			func(a []string) []map[string]any {
				return []map[string]any{op("replace_line", "tag", a[0], "new_text", "FIRST")}
			},
			"", "line 1 of that version"},
		{"last line, lines added at the start", join([]string{"start\n"}, base),
			func(a []string) []map[string]any { return []map[string]any{op("delete_line", "tag", a[19])} },
			join([]string{"start\n"}, base[:19]), ""},
		{"last line, a line added at the end, base_version given", join(base, []string{"end\n"}),
			func(a []string) []map[string]any {
				return []map[string]any{op("insert_after", "tag", a[19], "new_text", "mine")}
			},
			"", "the place after line 20"},
		{"append and prepend go where the file ends now", join([]string{"start\n"}, base),
			func(a []string) []map[string]any {
				return []map[string]any{op("append", "new_text", "end"), op("replace_line", "tag", a[4], "new_text", "FIVE")}
			},
			join([]string{"start\n"}, with(5, "FIVE\n"), []string{"end\n"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, dir := newTestEngine(t, map[string]string{"f.txt": join(base)})
			a := anchors(t, e, "f.txt")
			writeTestFile(t, filepath.Join(dir, "f.txt"), tc.other)
			args := map[string]any{"path": "f.txt", "ops": tc.ops(a)}
			if strings.Contains(tc.name, "base_version") {
				args["base_version"] = hashline.Version([]byte(join(base)))
			}
			res := call(t, e, "edit_file", args)
			got := readTestFile(t, filepath.Join(dir, "f.txt"))
			if tc.want == "" {
				mustFail(t, res, EAnchorStale, tc.why, "now version "+hashline.Version([]byte(tc.other)))
				if got != tc.other {
					t.Errorf("a refused edit wrote the file: %q", got)
				}
				return
			}
			mustOK(t, res)
			if got != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			from := hashline.Version([]byte(join(base)))
			if !strings.Contains(res.Text, "relocated: the anchors were read from version "+from) {
				t.Errorf("the result does not say it was relocated:\n%s", res.Text)
			}
			raw, err := json.Marshal(res.Structured)
			var s struct {
				Files []struct {
					RelocatedFrom string `json:"relocated_from"`
				} `json:"files"`
			}
			if err == nil {
				err = json.Unmarshal(raw, &s)
			}
			if err != nil || len(s.Files) != 1 || s.Files[0].RelocatedFrom != from {
				t.Errorf("structured result: %s (%v)", raw, err)
			}
		})
	}
}

// TestRelocationDuplicates: an edit whose lines and neighbours occur more
// than once is never placed by guessing which copy is meant.
func TestRelocationDuplicates(t *testing.T) {
	block := "func f() {\n\treturn nil\n}\n"
	base := "package p\n\n" + block + "\n" + block
	e, dir := newTestEngine(t, map[string]string{"f.go": base})
	a := anchors(t, e, "f.go")
	// The second copy's "return nil" is line 8; someone deletes the first copy.
	writeTestFile(t, filepath.Join(dir, "f.go"), "package p\n\n"+block)
	mustFail(t, call(t, e, "edit_file", edit("f.go", op("replace_line", "tag", a[7], "new_text", "\treturn err"))),
		EAnchorStale, "occurs more than once")
	if got := readTestFile(t, filepath.Join(dir, "f.go")); got != "package p\n\n"+block {
		t.Errorf("written: %q", got)
	}
}

// TestRelocationBaseVersion: base_version names the version the anchors
// were read from. An anchor that happens to match a line of the current
// version which is not the line it named is refused, not applied there.
func TestRelocationBaseVersion(t *testing.T) {
	lines := numbered(20)
	lines[8], lines[11] = "\n", "\n" // blank lines 9 and 12
	base := strings.Join(lines, "")
	other := "a\nb\nc\n" + base // line 12 is now base's blank line 9
	setup := func(t *testing.T) (*Engine, string, []string) {
		e, dir := newTestEngine(t, map[string]string{"f.txt": base})
		a := anchors(t, e, "f.txt")
		writeTestFile(t, filepath.Join(dir, "f.txt"), other)
		return e, dir, a
	}
	bv := hashline.Version([]byte(base))
	t.Run("known base", func(t *testing.T) {
		e, dir, a := setup(t)
		mustFail(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "base_version": bv,
			"ops": []any{op("replace_line", "tag", a[11], "new_text", "twelve")}}), EAnchorStale, "which is line 15 now")
		if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != other {
			t.Errorf("written: %q", got)
		}
		res := mustOK(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "base_version": bv,
			"ops": []any{op("replace_line", "tag", a[14], "new_text", "fifteen")}}))
		if want := strings.Replace(other, "line 15\n", "fifteen\n", 1); readTestFile(t, filepath.Join(dir, "f.txt")) != want {
			t.Errorf("got %q", readTestFile(t, filepath.Join(dir, "f.txt")))
		}
		if !strings.Contains(res.Text, "relocated") {
			t.Errorf("not said relocated:\n%s", res.Text)
		}
	})
	t.Run("the file changed since it was shown", func(t *testing.T) {
		// No base_version, and the anchor names a line of the current
		// version; but the engine never showed that version, so the
		// anchor is from the one it did show, where it names another line.
		e, dir, a := setup(t)
		mustFail(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a[11], "new_text", "twelve"))),
			EAnchorStale, "which is line 15 now")
		if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != other {
			t.Errorf("written: %q", got)
		}
		// Once it has been shown, the anchors of the current version apply as they are.
		a = anchors(t, e, "f.txt")
		mustOK(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a[11], "new_text", "twelve"))))
	})
	t.Run("another anchor of the call is stale", func(t *testing.T) {
		e, _, a := setup(t)
		mustFail(t, call(t, e, "edit_file", edit("f.txt",
			op("replace_line", "tag", a[11], "new_text", "twelve"), op("replace_line", "tag", a[4], "new_text", "five"))),
			EAnchorStale, "op 0", "which is line 15 now")
	})
	t.Run("unknown base", func(t *testing.T) {
		e, _, a := setup(t)
		mustFail(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "base_version": "0123456789abcdef",
			"ops": []any{op("replace_line", "tag", a[14], "new_text", "fifteen")}}), EAnchorStale, "base_version 0123456789abcdef is not a version of it the engine knows")
	})
	t.Run("malformed base", func(t *testing.T) {
		e, _, a := setup(t)
		mustFail(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "base_version": "../../x",
			"ops": []any{op("replace_line", "tag", a[14], "new_text", "fifteen")}}), EInvalidArgs, "is not a version")
	})
}

// TestRelocationAmbiguousVersions: two versions the engine served both
// have the anchored line, in places the current version holds apart: the
// edit is refused.
func TestRelocationAmbiguousVersions(t *testing.T) {
	v1 := "x\nT\ny\n"
	v2 := "p\nT\nq\n"
	e, dir := newTestEngine(t, map[string]string{"f.txt": v1})
	a1 := anchors(t, e, "f.txt")
	writeTestFile(t, filepath.Join(dir, "f.txt"), v2)
	a2 := anchors(t, e, "f.txt")
	if a1[1] != a2[1] {
		t.Fatalf("the anchors of T differ: %s %s", a1[1], a2[1])
	}
	now := "p\nT\nq\nmiddle\nx\nT\ny\n"
	writeTestFile(t, filepath.Join(dir, "f.txt"), "top\n"+now)
	mustFail(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a1[1], "new_text", "U"))),
		EAnchorStale, "place the edit differently")
	// Naming the version settles it.
	mustOK(t, call(t, e, "edit_file", map[string]any{"path": "f.txt", "base_version": hashline.Version([]byte(v1)),
		"ops": []any{op("replace_line", "tag", a1[1], "new_text", "U")}}))
	if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != "top\np\nT\nq\nmiddle\nx\nU\ny\n" {
		t.Errorf("got %q", got)
	}
}

// TestRelocationBatch: in an edit of several files, each file relocates on
// its own; one that cannot stops all.
func TestRelocationBatch(t *testing.T) {
	files := map[string]string{"a.txt": strings.Join(numbered(10), ""), "b.txt": strings.Join(numbered(10), "")}
	e, dir := newTestEngine(t, files)
	a, b := anchors(t, e, "a.txt"), anchors(t, e, "b.txt")
	writeTestFile(t, filepath.Join(dir, "a.txt"), "new\n"+files["a.txt"])
	res := mustOK(t, call(t, e, "edit_file", map[string]any{"files": []any{
		edit("a.txt", op("replace_line", "tag", a[4], "new_text", "A5")),
		edit("b.txt", op("replace_line", "tag", b[4], "new_text", "B5")),
	}}))
	if !strings.Contains(res.Text, "relocated") || strings.Count(res.Text, "relocated:") != 1 {
		t.Errorf("want one relocated file:\n%s", res.Text)
	}
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != "new\n"+strings.Replace(files["a.txt"], "line 5\n", "A5\n", 1) {
		t.Errorf("a.txt: %q", got)
	}
	a, b = anchors(t, e, "a.txt"), anchors(t, e, "b.txt")
	writeTestFile(t, filepath.Join(dir, "b.txt"), strings.Replace(readTestFile(t, filepath.Join(dir, "b.txt")), "line 3\n", "three\n", 1))
	bv := hashline.Version([]byte(files["b.txt"]))
	mustFail(t, call(t, e, "edit_file", map[string]any{"files": []any{
		edit("a.txt", op("replace_line", "tag", a[0], "new_text", "A1")),
		map[string]any{"path": "b.txt", "base_version": bv, "ops": []any{op("replace_line", "tag", b[1], "new_text", "B2")}},
	}}), EAnchorStale, "files[1] (b.txt)", "or a line next to them")
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); strings.HasPrefix(got, "A1") {
		t.Error("a.txt written although b.txt was refused")
	}
}

// FuzzRelocation checks the line mapping of relocation on random files of
// few distinct lines (so that lines repeat), random outside changes and a
// random edit. The oracle: the change is built with provenance (each line
// of C knows the line of B it came from), so the edit has a true place in
// C when its lines and one neighbour on each side came through in a row.
// A relocated edit must give exactly the edit applied at that true place,
// or, when the change's own history could be told differently, at the one
// place where those lines occur in C exactly as in B (once in each):
// otherwise it landed on a wrong line. A refusal is always allowed, except
// when C is B and the lines occur once: then the edit must apply in place.
func FuzzRelocation(f *testing.F) {
	for i := range uint64(8) {
		f.Add(i, i*7+1)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		r := rand.New(rand.NewPCG(s1, s2))
		alphabet := 2 + r.IntN(5)
		line := func() string { return fmt.Sprintf("l%d\n", r.IntN(alphabet)) }
		b := make([]string, 1+r.IntN(30))
		for i := range b {
			b[i] = line()
		}
		c := plines(b)
		for range r.IntN(5) {
			at := r.IntN(len(c) + 1)
			switch r.IntN(3) {
			case 0:
				var ins []pline
				for range 1 + r.IntN(4) {
					ins = append(ins, pline{line(), 0})
				}
				c = slices.Insert(c, at, ins...)
			case 1:
				c = slices.Delete(c, min(at, len(c)), min(len(c), at+1+r.IntN(4)))
			default: // move a run of lines elsewhere, keeping their provenance
				end := min(len(c), at+1+r.IntN(4))
				run := slices.Clone(c[min(at, len(c)):end])
				c = slices.Delete(c, min(at, len(c)), end)
				c = slices.Insert(c, r.IntN(len(c)+1), run...)
			}
		}
		x := relocEdit{op: []string{"replace_line", "replace_range", "insert_after", "insert_before", "delete_line"}[r.IntN(5)], line: 1 + r.IntN(len(b))}
		x.end = x.line
		if x.op == "replace_range" {
			x.end = min(len(b), x.line+r.IntN(3))
		}
		var text []string
		if x.op != "delete_line" {
			text = []string{"new\n"}
		}
		from, to := x.span()
		he := hashline.Edit{From: from, To: to}
		for _, l := range text {
			he.Lines = append(he.Lines, strings.TrimSuffix(l, "\n"))
		}
		anchor := 0
		if to < from {
			anchor = x.line
		}
		cur := hashline.Parse([]byte(strings.Join(texts(c), "")))
		src := &relocSource{version: "b", doc: hashline.Parse([]byte(strings.Join(b, "")))}
		moved, ok := src.relocate(he, anchor, cur)
		byText, hasText := textPlacement(b, texts(c), x, text)
		if !ok {
			if strings.Join(texts(c), "") == strings.Join(b, "") && hasText {
				t.Fatalf("refused an edit of an unchanged file: B=%q %+v", b, x)
			}
			return
		}
		out, _, err := hashline.Apply(cur, []hashline.Edit{moved})
		if err != nil {
			t.Fatalf("the relocated edit %+v does not apply: %v", moved, err)
		}
		truth, hasTruth := truthByProvenance(b, c, x, text)
		if !(hasTruth && string(out) == truth) && !(hasText && string(out) == byText) {
			t.Fatalf("wrong line: B=%q C=%q edit %+v relocated to %+v\ngot  %q\ntruth %q (%v)\ntext %q (%v)",
				b, texts(c), x, moved, out, truth, hasTruth, byText, hasText)
		}
	})
}

// TestRelocationOwnEdits: through the engine's own edits, whose hunks it
// knows, an op relocates when the lines it touches are untouched, whatever
// changed next to them; a range with a line the engine changed inside it
// is refused.
func TestRelocationOwnEdits(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": strings.Join(numbered(20), "")})
	a := anchors(t, e, "f.txt")
	mustOK(t, call(t, e, "edit_file", edit("f.txt", op("prepend", "new_text", "top"))))
	res := mustOK(t, call(t, e, "edit_file", edit("f.txt", op("replace_line", "tag", a[9], "new_text", "TEN"))))
	if !strings.Contains(res.Text, "the engine's own edits since left the lines the edit touches unchanged") {
		t.Errorf("not said relocated through the engine's edits:\n%s", res.Text)
	}
	// Line 11 is next to the line just changed: still fine through the hunks.
	mustOK(t, call(t, e, "edit_file", edit("f.txt", op("insert_before", "tag", a[10], "new_text", "before 11"))))
	mustFail(t, call(t, e, "edit_file", edit("f.txt", op("delete_range", "start_tag", a[8], "end_tag", a[11]))),
		EAnchorStale, "changed or removed by an edit")
	want := "top\n" + strings.Join(numbered(9), "") + "TEN\nbefore 11\n" + strings.Join(numbered(20)[10:], "")
	if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
