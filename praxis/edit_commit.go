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
		b = appendDiff(b, r.Path, r.Path, r.base.Bytes(), r.out)
	}
	return editInfo{DryRun: true, Files: rs, text: string(b)}
}
