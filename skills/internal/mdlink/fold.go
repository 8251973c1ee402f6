package mdlink

import (
	"bytes"
	"slices"
	"unicode"
	"unicode/utf8"
)

// normalizeLabel returns the key a link label is matched by: trimmed of
// white space (vertical tabs and form feeds too), case folded, runs of
// white space made one space, as goldmark's util.ToLinkReference makes it.
func normalizeLabel(label []byte) string {
	v := bytes.Trim(label, " \t\n\v\f\r")
	out := make([]byte, 0, len(v))
	space := false
	for i := 0; i < len(v); {
		c := v[i]
		if isSpace(c) {
			if !space {
				out = append(out, ' ')
			}
			space = true
			i++
			continue
		}
		space = false
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError {
			out = append(out, v[i:i+size]...)
		} else {
			out = appendFolded(out, r)
		}
		i += size
	}
	return string(out)
}

// appendFolded appends the full case folding of r: the mappings of status C
// and F of Unicode 15.0's CaseFolding.txt, which goldmark applies. Those of
// status C are the lower case of the upper case but for the two exceptions
// below; TestCaseFolding holds every rune to goldmark's table.
func appendFolded(b []byte, r rune) []byte {
	if i, ok := slices.BinarySearchFunc(fullFoldings[:], r, func(f fullFolding, r rune) int { return int(f.r - r) }); ok {
		return append(b, fullFoldings[i].s...)
	}
	switch {
	case r == 0x0131: // dotless i has no folding of status C
		return utf8.AppendRune(b, r)
	case 0x13A0 <= r && r <= 0x13FD || 0xAB70 <= r && r <= 0xABBF:
		return utf8.AppendRune(b, unicode.ToUpper(r)) // Cherokee folds to its upper case
	}
	return utf8.AppendRune(b, unicode.ToLower(unicode.ToUpper(r)))
}

// fullFoldings are the foldings of status F, which make more than one
// rune of one; sorted.
var fullFoldings = [...]fullFolding{
	{0x00DF, "ss"}, {0x0130, "i\u0307"}, {0x0149, "\u02bcn"}, {0x01F0, "j\u030c"},
	{0x0390, "\u03b9\u0308\u0301"}, {0x03B0, "\u03c5\u0308\u0301"}, {0x0587, "\u0565\u0582"}, {0x1E96, "h\u0331"},
	{0x1E97, "t\u0308"}, {0x1E98, "w\u030a"}, {0x1E99, "y\u030a"}, {0x1E9A, "a\u02be"},
	{0x1E9E, "ss"}, {0x1F50, "\u03c5\u0313"}, {0x1F52, "\u03c5\u0313\u0300"}, {0x1F54, "\u03c5\u0313\u0301"},
	{0x1F56, "\u03c5\u0313\u0342"}, {0x1F80, "\u1f00\u03b9"}, {0x1F81, "\u1f01\u03b9"}, {0x1F82, "\u1f02\u03b9"},
	{0x1F83, "\u1f03\u03b9"}, {0x1F84, "\u1f04\u03b9"}, {0x1F85, "\u1f05\u03b9"}, {0x1F86, "\u1f06\u03b9"},
	{0x1F87, "\u1f07\u03b9"}, {0x1F88, "\u1f00\u03b9"}, {0x1F89, "\u1f01\u03b9"}, {0x1F8A, "\u1f02\u03b9"},
	{0x1F8B, "\u1f03\u03b9"}, {0x1F8C, "\u1f04\u03b9"}, {0x1F8D, "\u1f05\u03b9"}, {0x1F8E, "\u1f06\u03b9"},
	{0x1F8F, "\u1f07\u03b9"}, {0x1F90, "\u1f20\u03b9"}, {0x1F91, "\u1f21\u03b9"}, {0x1F92, "\u1f22\u03b9"},
	{0x1F93, "\u1f23\u03b9"}, {0x1F94, "\u1f24\u03b9"}, {0x1F95, "\u1f25\u03b9"}, {0x1F96, "\u1f26\u03b9"},
	{0x1F97, "\u1f27\u03b9"}, {0x1F98, "\u1f20\u03b9"}, {0x1F99, "\u1f21\u03b9"}, {0x1F9A, "\u1f22\u03b9"},
	{0x1F9B, "\u1f23\u03b9"}, {0x1F9C, "\u1f24\u03b9"}, {0x1F9D, "\u1f25\u03b9"}, {0x1F9E, "\u1f26\u03b9"},
	{0x1F9F, "\u1f27\u03b9"}, {0x1FA0, "\u1f60\u03b9"}, {0x1FA1, "\u1f61\u03b9"}, {0x1FA2, "\u1f62\u03b9"},
	{0x1FA3, "\u1f63\u03b9"}, {0x1FA4, "\u1f64\u03b9"}, {0x1FA5, "\u1f65\u03b9"}, {0x1FA6, "\u1f66\u03b9"},
	{0x1FA7, "\u1f67\u03b9"}, {0x1FA8, "\u1f60\u03b9"}, {0x1FA9, "\u1f61\u03b9"}, {0x1FAA, "\u1f62\u03b9"},
	{0x1FAB, "\u1f63\u03b9"}, {0x1FAC, "\u1f64\u03b9"}, {0x1FAD, "\u1f65\u03b9"}, {0x1FAE, "\u1f66\u03b9"},
	{0x1FAF, "\u1f67\u03b9"}, {0x1FB2, "\u1f70\u03b9"}, {0x1FB3, "\u03b1\u03b9"}, {0x1FB4, "\u03ac\u03b9"},
	{0x1FB6, "\u03b1\u0342"}, {0x1FB7, "\u03b1\u0342\u03b9"}, {0x1FBC, "\u03b1\u03b9"}, {0x1FC2, "\u1f74\u03b9"},
	{0x1FC3, "\u03b7\u03b9"}, {0x1FC4, "\u03ae\u03b9"}, {0x1FC6, "\u03b7\u0342"}, {0x1FC7, "\u03b7\u0342\u03b9"},
	{0x1FCC, "\u03b7\u03b9"}, {0x1FD2, "\u03b9\u0308\u0300"}, {0x1FD3, "\u03b9\u0308\u0301"}, {0x1FD6, "\u03b9\u0342"},
	{0x1FD7, "\u03b9\u0308\u0342"}, {0x1FE2, "\u03c5\u0308\u0300"}, {0x1FE3, "\u03c5\u0308\u0301"}, {0x1FE4, "\u03c1\u0313"},
	{0x1FE6, "\u03c5\u0342"}, {0x1FE7, "\u03c5\u0308\u0342"}, {0x1FF2, "\u1f7c\u03b9"}, {0x1FF3, "\u03c9\u03b9"},
	{0x1FF4, "\u03ce\u03b9"}, {0x1FF6, "\u03c9\u0342"}, {0x1FF7, "\u03c9\u0342\u03b9"}, {0x1FFC, "\u03c9\u03b9"},
	{0xFB00, "ff"}, {0xFB01, "fi"}, {0xFB02, "fl"}, {0xFB03, "ffi"},
	{0xFB04, "ffl"}, {0xFB05, "st"}, {0xFB06, "st"}, {0xFB13, "\u0574\u0576"},
	{0xFB14, "\u0574\u0565"}, {0xFB15, "\u0574\u056b"}, {0xFB16, "\u057e\u0576"}, {0xFB17, "\u0574\u056d"},
}

type fullFolding struct {
	r rune
	s string
}
