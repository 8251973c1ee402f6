package hashline

import (
	"strconv"
	"unicode/utf8"
)

// AppendRender appends lines from..to (inclusive, 1-based) of d to dst in
// hashline form, one "N:TAG|content\n" per line. When clip > 0, content
// longer than clip bytes is cut at a character boundary and followed by a
// marker saying how many bytes were left out; the tag still covers the whole
// line.
func (d *Doc) AppendRender(dst []byte, from, to, clip int) []byte {
	for n := from; n <= to; n++ {
		dst = AppendLine(dst, n, d.Line(n), clip)
	}
	return dst
}

// AppendLine appends one line in hashline form.
func AppendLine(dst []byte, n int, content []byte, clip int) []byte {
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, ':')
	dst = appendTag(dst, Sum(n, content))
	dst = append(dst, '|')
	if clip > 0 && len(content) > clip {
		cut := clip
		for cut > 0 && !utf8.RuneStart(content[cut]) {
			cut--
		}
		dst = append(dst, content[:cut]...)
		dst = append(dst, " …[clipped "...)
		dst = strconv.AppendInt(dst, int64(len(content)-cut), 10)
		dst = append(dst, " bytes]"...)
	} else {
		dst = append(dst, content...)
	}
	return append(dst, '\n')
}
