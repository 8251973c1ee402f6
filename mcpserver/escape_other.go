//go:build !amd64 || purego

package mcpserver

// escapeVec escapes nothing: without the amd64 kernel, writeString
// escapes eight bytes at a time on its own.
func escapeVec(dst []byte, src string) (i, j int) { return 0, 0 }
