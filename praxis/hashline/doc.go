package hashline

import (
	"bytes"
)

// EOL is a line terminator.
type EOL string

// The line terminators Praxis distinguishes. A lone "\r" is content.
const (
	NoEOL EOL = ""
	LF    EOL = "\n"
	CRLF  EOL = "\r\n"
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// Doc is a file's bytes split into lines. Line numbers are 1-based. A Doc
// refers to the bytes it was parsed from; they must not change.
type Doc struct {
	data  []byte
	bom   bool
	spans []span
}

// span locates one line: content is data[start:end], its terminator
// data[end:next].
type span struct{ start, end, next int }

// Parse splits data into lines. A UTF-8 byte order mark is not part of the
// first line. A final line without a terminator is a line; a file ending in
// a terminator has no empty line after it.
func Parse(data []byte) *Doc {
	d := &Doc{data: data}
	pos := 0
	if bytes.HasPrefix(data, bom) {
		d.bom = true
		pos = len(bom)
	}
	d.spans = make([]span, 0, bytes.Count(data[pos:], []byte{'\n'})+1)
	for pos < len(data) {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			d.spans = append(d.spans, span{pos, len(data), len(data)})
			break
		}
		end := pos + i
		next := end + 1
		if end > pos && data[end-1] == '\r' {
			end--
		}
		d.spans = append(d.spans, span{pos, end, next})
		pos = next
	}
	return d
}

// Bytes returns the bytes d was parsed from.
func (d *Doc) Bytes() []byte { return d.data }

// Lines returns the number of lines.
func (d *Doc) Lines() int { return len(d.spans) }

// BOM reports whether the file starts with a UTF-8 byte order mark.
func (d *Doc) BOM() bool { return d.bom }

// Line returns the content of line n, without its terminator.
func (d *Doc) Line(n int) []byte {
	s := d.spans[n-1]
	return d.data[s.start:s.end:s.end]
}

// EOL returns the terminator of line n.
func (d *Doc) EOL(n int) EOL {
	s := d.spans[n-1]
	return EOL(d.data[s.end:s.next])
}

// Sum returns the tag of line n as a number.
func (d *Doc) Sum(n int) uint32 { return Sum(n, d.Line(n)) }

// Tag returns the rendered tag of line n.
func (d *Doc) Tag(n int) string { return Tag(n, d.Line(n)) }

// FinalNewline reports whether the last line ends with a terminator. An
// empty file reports true: text added to it ends with a newline.
func (d *Doc) FinalNewline() bool {
	if len(d.spans) == 0 {
		return true
	}
	return d.EOL(len(d.spans)) != NoEOL
}

// Dominant returns the terminator most lines use: CRLF if more lines end in
// CRLF than in LF, else LF.
func (d *Doc) Dominant() EOL {
	lf, crlf := d.countEOLs()
	if crlf > lf {
		return CRLF
	}
	return LF
}

// Style names the line-ending style: "lf", "crlf", "mixed" or "none" (no
// terminator at all).
func (d *Doc) Style() string {
	lf, crlf := d.countEOLs()
	switch {
	case crlf > 0 && lf > 0:
		return "mixed"
	case crlf > 0:
		return "crlf"
	case lf > 0:
		return "lf"
	}
	return "none"
}

// countEOLs counts the lines ending in LF and in CRLF.
func (d *Doc) countEOLs() (lf, crlf int) {
	for _, s := range d.spans {
		switch s.next - s.end {
		case 2:
			crlf++
		case 1:
			lf++
		}
	}
	return lf, crlf
}
