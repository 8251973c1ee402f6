package hashline

import (
	"fmt"
	"strconv"
	"strings"
)

// Anchor names a line: by tag alone ("1a2b3c4d") or by line and tag
// ("12:1a2b3c4d"). Anything from a "|" on is ignored, so a whole rendered
// line ("12:1a2b3c4d|content") is accepted too.
type Anchor struct {
	Line int // 0 when the anchor gives no line number
	Sum  uint32
}

// String renders a in its canonical form.
func (a Anchor) String() string {
	t := string(appendTag(nil, a.Sum))
	if a.Line == 0 {
		return t
	}
	return strconv.Itoa(a.Line) + ":" + t
}

// ParseAnchor parses an anchor. Hex digits may be upper or lower case.
func ParseAnchor(s string) (Anchor, error) {
	orig := s
	if i := strings.IndexByte(s, '|'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	var a Anchor
	if i := strings.IndexByte(s, ':'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 1 {
			return Anchor{}, fmt.Errorf("anchor %q: the line number before ':' must be a positive integer", orig)
		}
		a.Line = n
		s = s[i+1:]
	}
	if len(s) != TagLen {
		return Anchor{}, fmt.Errorf("anchor %q: want TAG or LINE:TAG, where TAG is %d hex characters", orig, TagLen)
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return Anchor{}, fmt.Errorf("anchor %q: tag %q is not hexadecimal", orig, s)
	}
	a.Sum = uint32(v)
	return a, nil
}
