package hashline

import (
	"bytes"
	"errors"
	"testing"
)

// editsFromBytes derives an edit batch for d from fuzz input: each three
// bytes pick an op kind, a line and a span.
func editsFromBytes(d *Doc, b []byte) []Edit {
	n := d.Lines()
	var edits []Edit
	for i := 0; i+2 < len(b) && len(edits) < 8; i += 3 {
		from := int(b[i+1])%(n+1) + 1 // 1..n+1
		e := Edit{Op: len(edits), From: from}
		switch b[i] % 3 {
		case 0: // insert before from
			e.To = from - 1
		case 1: // replace or delete a range starting at from
			if from > n {
				continue
			}
			e.To = min(n, from+int(b[i+2])%3)
		case 2: // replace a single line
			if from > n {
				continue
			}
			e.To = from
		}
		switch {
		case b[i+2]%4 == 0 && e.To >= e.From:
			// delete: no lines
		default:
			e.Lines = []string{string(rune('A' + len(edits))), "new"}[:1+int(b[i+2])%2]
		}
		edits = append(edits, e)
	}
	return edits
}

// FuzzApply checks the byte-fidelity property: every line outside the
// edited ranges comes through with the same content and terminator, except
// that the old last line gains a terminator when lines follow it and the
// new last line follows the file's final-newline state.
func FuzzApply(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte{1, 1, 0, 0, 3, 1})
	f.Add([]byte("a\r\nb\nc"), []byte{0, 0, 1, 2, 2, 2, 1, 0, 3})
	f.Add([]byte("\xEF\xBB\xBFx\r\ny\r\n"), []byte{2, 0, 1, 0, 2, 5})
	f.Add([]byte(""), []byte{0, 0, 1, 0, 0, 2})
	f.Add([]byte("\n\n\n"), []byte{1, 1, 4, 1, 0, 2})
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		d := Parse(data)
		edits := editsFromBytes(d, ops)
		out, hunks, err := Apply(d, edits)
		if err != nil {
			var be *BatchError
			if !errors.As(err, &be) {
				t.Fatalf("non-batch error %v", err)
			}
			return
		}
		nd := Parse(out)
		if d.BOM() != nd.BOM() {
			t.Fatalf("BOM changed: %q -> %q", data, out)
		}
		added, removed := 0, 0
		for _, h := range hunks {
			added += h.NewCount
			removed += h.OldCount
		}
		if nd.Lines() != d.Lines()+added-removed {
			t.Fatalf("%d lines, want %d (%q -> %q)", nd.Lines(), d.Lines()+added-removed, data, out)
		}
		if nd.Lines() > 0 && d.Lines() > 0 && nd.FinalNewline() != d.FinalNewline() && len(nd.Line(nd.Lines())) > 0 {
			t.Fatalf("final newline changed: %q -> %q", data, out)
		}
		// Walk unchanged lines through the hunks.
		for k := 1; k <= d.Lines(); k++ {
			m, ok := MapLine(k, hunks)
			if !ok {
				continue
			}
			if !bytes.Equal(d.Line(k), nd.Line(m)) {
				t.Fatalf("line %d -> %d content %q -> %q", k, m, d.Line(k), nd.Line(m))
			}
			oldLast, newLast := k == d.Lines(), m == nd.Lines()
			if !oldLast && !newLast && d.EOL(k) != nd.EOL(m) {
				t.Fatalf("line %d -> %d terminator %q -> %q", k, m, d.EOL(k), nd.EOL(m))
			}
		}
		// New lines hold the edit's text.
		for _, h := range hunks {
			for m := h.NewFrom; m < h.NewFrom+h.NewCount; m++ {
				if l := nd.Line(m); !bytes.Equal(l, []byte("new")) && (len(l) != 1 || l[0] < 'A' || l[0] > 'H') {
					t.Fatalf("new line %d = %q", m, l)
				}
			}
		}
	})
}

func FuzzParseAnchor(f *testing.F) {
	for _, s := range []string{"1a2b3c4d", "12:1a2b3c4d", "12:1a2b3c4d|x", "", ":", "0:00000000", "99999999999999999999:1a2b3c4d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAnchor(s)
		if err != nil {
			return
		}
		b, err := ParseAnchor(a.String())
		if err != nil || a != b {
			t.Fatalf("%q parsed to %v, which does not round-trip: %v %v", s, a, b, err)
		}
	})
}
