//go:build !purego

package mcpserver

// escapeVec escapes src into dst as the inside of a JSON string, sixteen
// bytes at a time, until fewer than sixteen are left, and returns how far
// it got in src and in dst (escape_amd64.s). dst must hold six bytes for
// each of src's, and two more; its bytes past j are the caller's to
// overwrite.
func escapeVec(dst []byte, src string) (i, j int) {
	if len(dst) < 6*len(src)+2 {
		panic("mcpserver: escapeVec into a buffer too short")
	}
	return escapeSSE2(dst, src, &escapes)
}

//go:noescape
func escapeSSE2(dst []byte, src string, table *[256]uint64) (i, j int)
