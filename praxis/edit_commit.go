package praxis

import (
	"fmt"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

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
		b = appendUnifiedDiff(b, r.Path, r.base, hashline.Parse(r.out), r.hunks)
	}
	return editInfo{DryRun: true, Files: rs, text: string(b)}
}

// appendUnifiedDiff renders hunks as a unified diff with three lines of
// context.
func appendUnifiedDiff(b []byte, name string, old, new *hashline.Doc, hunks []hashline.Hunk) []byte {
	const ctx = 3
	b = fmt.Appendf(b, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(hunks); {
		// Group hunks whose context windows touch.
		j := i + 1
		for j < len(hunks) && hunks[j].OldFrom-ctx <= hunks[j-1].OldFrom+hunks[j-1].OldCount+ctx {
			j++
		}
		first, last := hunks[i], hunks[j-1]
		oldFrom := max(1, first.OldFrom-ctx)
		oldTo := min(old.Lines(), last.OldFrom+last.OldCount-1+ctx)
		newFrom := first.NewFrom - (first.OldFrom - oldFrom)
		newTo := last.NewFrom + last.NewCount - 1 + (oldTo - (last.OldFrom + last.OldCount - 1))
		b = fmt.Appendf(b, "@@ -%s +%s @@\n", diffRange(oldFrom, oldTo), diffRange(newFrom, newTo))
		k := oldFrom
		for _, h := range hunks[i:j] {
			for ; k < h.OldFrom; k++ {
				b = appendDiffLine(b, ' ', old.Line(k))
			}
			for ; k < h.OldFrom+h.OldCount; k++ {
				b = appendDiffLine(b, '-', old.Line(k))
			}
			for m := h.NewFrom; m < h.NewFrom+h.NewCount; m++ {
				b = appendDiffLine(b, '+', new.Line(m))
			}
		}
		for ; k <= oldTo; k++ {
			b = appendDiffLine(b, ' ', old.Line(k))
		}
		i = j
	}
	return b
}

func diffRange(from, to int) string {
	count := to - from + 1
	if count == 0 {
		return fmt.Sprintf("%d,0", from-1)
	}
	if count == 1 {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d,%d", from, count)
}

func appendDiffLine(b []byte, mark byte, line []byte) []byte {
	b = append(b, mark)
	b = append(b, line...)
	return append(b, '\n')
}
