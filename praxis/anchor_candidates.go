package praxis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// maxCandidates bounds the lines anchorCandidates lists.
const maxCandidates = 10

// anchorCandidates returns, for an anchor s that is ambiguous (a bare tag
// naming several lines) or partial (a short tag, a line number without its
// tag), the lines of doc it could mean, rendered with their full anchors,
// as the detail of the error refusing it; "" when no line fits.
func anchorCandidates(doc *hashline.Doc, s string) string {
	if i := strings.IndexByte(s, '|'); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(strings.TrimSpace(s))
	line, tag := 0, s
	if num, rest, ok := strings.Cut(s, ":"); ok {
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 {
			return ""
		}
		line, tag = n, rest
	} else if n, err := strconv.Atoi(s); err == nil && len(s) < hashline.TagLen {
		line, tag = n, "" // a line number alone
	}
	if len(tag) > hashline.TagLen || strings.Trim(tag, "0123456789abcdef") != "" {
		return ""
	}
	var lines []int
	total := 0
	for n := 1; n <= doc.Lines(); n++ {
		if (line == 0 || n == line) && strings.HasPrefix(doc.Tag(n), tag) {
			total++
			if len(lines) < maxCandidates {
				lines = append(lines, n)
			}
		}
	}
	if total == 0 {
		return ""
	}
	b := fmt.Appendf(nil, "The lines it may name, with their full anchors (give one as LINE:TAG):\n")
	for _, n := range lines {
		b = hashline.AppendLine(b, n, doc.Line(n), lineClip)
	}
	if total > len(lines) {
		b = fmt.Appendf(b, "... and %d more; read the file for the others.\n", total-len(lines))
	}
	return string(b)
}
