package mcpclient

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// MaxToolNameLen is the longest tool name Praxis gives an external tool;
// model APIs refuse longer ones.
const MaxToolNameLen = 64

// ToolID names one external tool by its server and its own name.
type ToolID struct {
	Server, Tool string
}

// QualifiedNames returns the name each external tool has in Praxis:
// "mcp__SERVER__TOOL", every character outside [A-Za-z0-9_-] replaced by
// "_", at most MaxToolNameLen characters. A name that would be longer is cut
// and ends in "_" and 8 hex characters of a hash of the server and tool
// names. When several tools would get the same name, the one first in
// (server, tool) order keeps it and each other gets a hash suffix the same
// way, so the result depends only on the set of tools, not on their order.
func QualifiedNames(ids []ToolID) map[ToolID]string {
	sorted := slices.Clone(ids)
	slices.SortFunc(sorted, func(a, b ToolID) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	sorted = slices.Compact(sorted)

	out := make(map[ToolID]string, len(sorted))
	taken := make(map[string]bool, len(sorted))
	var clashed []ToolID
	for _, id := range sorted {
		n := baseName(id)
		if taken[n] {
			clashed = append(clashed, id)
			continue
		}
		taken[n] = true
		out[id] = n
	}
	for _, id := range clashed {
		n := withSuffix(baseName(id), id, 0)
		for i := 1; taken[n]; i++ { // a hash collision on top: practically never
			n = withSuffix(baseName(id), id, i)
		}
		taken[n] = true
		out[id] = n
	}
	return out
}

// baseName is the sanitised name, cut with a hash suffix when too long.
func baseName(id ToolID) string {
	n := "mcp__" + sanitize(id.Server) + "__" + sanitize(id.Tool)
	if len(n) > MaxToolNameLen {
		n = withSuffix(n, id, 0)
	}
	return n
}

// withSuffix ends n in "_" and 8 hex characters of a hash of id (and of
// salt, when not zero), keeping the whole within MaxToolNameLen.
func withSuffix(n string, id ToolID, salt int) string {
	h := sha256.New()
	h.Write([]byte(id.Server))
	h.Write([]byte{0})
	h.Write([]byte(id.Tool))
	for range salt {
		h.Write([]byte{0})
	}
	suffix := "_" + hex.EncodeToString(h.Sum(nil))[:8]
	if len(n)+len(suffix) > MaxToolNameLen {
		n = n[:MaxToolNameLen-len(suffix)]
	}
	return n + suffix
}

// sanitize replaces every character outside [A-Za-z0-9_-] with "_".
func sanitize(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
