package patch

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes either parser panic, that every
// accepted patch names a file and that every parsed hunk applies to its
// own old lines, giving its new lines.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		"diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n",
		"diff --git a/n b/n\nnew file mode 100755\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n",
		"*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ ctx\n x\n-y\n+z\n*** End of File\n*** Add File: c\n+1\n*** Delete File: d\n*** End Patch\n",
		"*** Begin Patch\n*** End Patch",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		files, _, err := Parse(text)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("not a *SyntaxError: %v", err)
			}
			return
		}
		if len(files) == 0 {
			t.Fatal("no file and no error")
		}
		for _, fl := range files {
			if fl.OldPath == "" && fl.NewPath == "" {
				t.Fatal("a file without a name")
			}
			for _, h := range fl.Hunks {
				var old, new strings.Builder
				empty := false
				for _, l := range h.Lines {
					empty = empty || l.Text == ""
					if l.Op != '+' {
						old.WriteString(l.Text)
					}
					if l.Op != '-' {
						new.WriteString(l.Text)
					}
				}
				one := h
				one.Context, one.AtEnd = "", false
				if one.Numbered {
					one.OldStart = 1
					if len(SplitLines(old.String())) == 0 {
						one.OldStart = 0
					}
				}
				if empty || !wellFormed(old.String()) || !wellFormed(new.String()) {
					continue // not the lines of a text (an empty line without newline is none): nothing to compare
				}
				got, err := Apply([]byte(old.String()), []Hunk{one})
				if err != nil {
					t.Fatalf("a hunk does not apply to its own old lines %q: %v", old.String(), err)
				}
				if string(got) != new.String() {
					t.Fatalf("a hunk applied to its own old lines gives\n%q\nnot its new lines\n%q", got, new.String())
				}
			}
		}
	})
}

// wellFormed reports whether every line of s but the last ends with a
// newline, as the lines of a text do.
func wellFormed(s string) bool {
	ls := SplitLines(s)
	for _, l := range ls[:max(0, len(ls)-1)] {
		if !strings.HasSuffix(l, "\n") {
			return false
		}
	}
	return true
}

// FuzzApply checks that Apply never panics and that a hunk it applies
// keeps the lines outside it: the text before the match and after it are
// the input's.
func FuzzApply(f *testing.F) {
	f.Add("a\nb\nc\n", "a\n", "b\n", "B\n", 1)
	f.Add("a\r\nb  \r\nc", "a\n", "b\n", "B\n", 2)
	f.Fuzz(func(t *testing.T, src, ctx, del, add string, start int) {
		h := Hunk{Numbered: true, OldStart: start % 1000, Header: "@@"}
		for _, l := range SplitLines(ctx) {
			h.Lines = append(h.Lines, Line{Op: ' ', Text: l})
		}
		for _, l := range SplitLines(del) {
			h.Lines = append(h.Lines, Line{Op: '-', Text: l})
		}
		for _, l := range SplitLines(add) {
			h.Lines = append(h.Lines, Line{Op: '+', Text: l})
		}
		out, err := Apply([]byte(src), []Hunk{h})
		if err != nil {
			var he *HunkError
			if !errors.As(err, &he) {
				t.Fatalf("not a *HunkError: %v", err)
			}
			return
		}
		// Lines outside the hunk are kept: the output starts with some
		// whole lines of src and ends with the rest.
		lines := SplitLines(src)
		var prefix string
		for i := range len(lines) + 1 {
			prefix = strings.Join(lines[:i], "")
			if !strings.HasPrefix(string(out), prefix) {
				t.Fatalf("output %q does not keep the lines before the hunk", out)
			}
			if i < len(lines) && !strings.HasPrefix(string(out), prefix+lines[i]) {
				break
			}
		}
	})
}

func TestApplyOffsetsAndWhitespace(t *testing.T) {
	tests := []struct {
		name, src string
		hunk      Hunk
		want      string
		fail      bool
	}{
		{name: "exact", src: "a\nb\nc\n", want: "a\nB\nc\n",
			hunk: Hunk{Numbered: true, OldStart: 1, Lines: []Line{{' ', "a\n"}, {'-', "b\n"}, {'+', "B\n"}, {' ', "c\n"}}}},
		{name: "nearest offset wins", src: "x\nb\nc\nx\nx\nb\nc\nx\n", want: "x\nb\nc\nx\nx\nB\nc\nx\n",
			hunk: Hunk{Numbered: true, OldStart: 5, Lines: []Line{{'-', "b\n"}, {'+', "B\n"}, {' ', "c\n"}}}},
		{name: "exact beats loose further away", src: "b \nc\nz\nb\nc\n", want: "b \nc\nz\nB\nc\n",
			hunk: Hunk{Numbered: true, OldStart: 1 + 1, Lines: []Line{{'-', "b\n"}, {'+', "B\n"}, {' ', "c\n"}}}},
		{name: "a context line is never dropped", src: "a\nb\nc\n", fail: true,
			hunk: Hunk{Numbered: true, OldStart: 1, Lines: []Line{{' ', "a\n"}, {'-', "b\n"}, {'+', "B\n"}, {' ', "q\n"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply([]byte(tc.src), []Hunk{tc.hunk})
			if tc.fail {
				if err == nil {
					t.Fatalf("applied: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
