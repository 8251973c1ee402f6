package praxis

import (
	"fmt"

	"github.com/praxis-tools/praxis/praxis/patch"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is the number of unchanged lines a hunk shows on each side.
const diffContext = 3

// diffLine is one line of a line diff: op is ' ', '-' or '+'; text keeps
// its line end, and has none for a last line without one.
type diffLine struct {
	op   byte
	text string
}

// lineDiff returns the lines of old and new as a line diff computed by
// github.com/sergi/go-diff.
func lineDiff(old, new []byte) []diffLine {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToRunes(string(old), string(new))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(a, b, false), lines)
	var out []diffLine
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range patch.SplitLines(d.Text) {
			out = append(out, diffLine{op: op, text: l})
		}
	}
	return out
}

// changedLines counts the lines a change from old to new adds and removes.
func changedLines(old, new []byte) (added, removed int) {
	for _, l := range lineDiff(old, new) {
		switch l.op {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

// appendDiff renders the change from old to new as a unified diff the way
// git diff writes it: "--- a/oldName" and "+++ b/newName" (/dev/null for a
// created file, oldName "", or a deleted one, newName ""), hunks with three
// lines of context, every line's bytes as they are (CR included), and
// "\ No newline at end of file" after a last line without one. git apply
// and patch -p1 applied to old give new exactly. Identical texts under one
// name give nothing.
func appendDiff(b []byte, oldName, newName string, old, new []byte) []byte {
	lines := lineDiff(old, new)
	changed := false
	for _, l := range lines {
		changed = changed || l.op != ' '
	}
	if !changed && oldName == newName {
		return b
	}
	if oldName == "" {
		b = append(b, "--- /dev/null\n"...)
	} else {
		b = fmt.Appendf(b, "--- a/%s\n", oldName)
	}
	if newName == "" {
		b = append(b, "+++ /dev/null\n"...)
	} else {
		b = fmt.Appendf(b, "+++ b/%s\n", newName)
	}
	// oldAt[i] and newAt[i] are the 1-based numbers of line i in old and
	// new, or of the line before it on the side it is not on.
	oldAt, newAt := make([]int, len(lines)), make([]int, len(lines))
	o, n := 0, 0
	for i, l := range lines {
		if l.op != '+' {
			o++
		}
		if l.op != '-' {
			n++
		}
		oldAt[i], newAt[i] = o, n
	}
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		// A hunk: from diffContext lines before this change to
		// diffContext after the last change closer than 2*diffContext+1
		// unchanged lines.
		from := max(0, i-diffContext)
		for from < i && lines[from].op != ' ' {
			from++
		}
		end := i // one past the last change
		for j := i; j < len(lines); j++ {
			if lines[j].op != ' ' {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		to := min(len(lines), end+diffContext)
		var oldN, newN int
		for _, l := range lines[from:to] {
			if l.op != '+' {
				oldN++
			}
			if l.op != '-' {
				newN++
			}
		}
		oldStart, newStart := hunkStart(lines, oldAt, from, oldN, '+'), hunkStart(lines, newAt, from, newN, '-')
		b = fmt.Appendf(b, "@@ -%s +%s @@\n", hunkRange(oldStart, oldN), hunkRange(newStart, newN))
		for _, l := range lines[from:to] {
			b = append(b, l.op)
			b = append(b, l.text...)
			if len(l.text) == 0 || l.text[len(l.text)-1] != '\n' {
				b = append(b, "\n\\ No newline at end of file\n"...)
			}
		}
		i = to
	}
	return b
}

// hunkStart returns the 1-based number, on one side, of the first line of
// a hunk that starts at lines[from] and has n lines on that side; at holds
// the side's line numbers and other is the op of lines not on it. A side
// without lines in the hunk states the line before it, as unified diffs do.
func hunkStart(lines []diffLine, at []int, from, n int, other byte) int {
	if lines[from].op == other && n > 0 {
		return at[from] + 1
	}
	return at[from]
}

// hunkRange formats a hunk's start and count as unified diffs do: the
// count is left out when it is 1; an empty range states the line before.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
