package praxis

import (
	"bytes"
	"io/fs"
	"unicode/utf8"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// loadText reads rel as text: it must be a regular file within the size
// limit, hold no NUL byte in its first 8 KiB and be valid UTF-8.
func (e *Engine) loadText(rel string) (*hashline.Doc, fs.FileInfo, error) {
	data, fi, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
	if err != nil {
		return nil, nil, err
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, nil, Errorf(EBinary, "%s looks binary (%d bytes, a NUL byte in its first 8 KiB); it is not shown", rel, len(data))
	}
	if !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		return nil, nil, Errorf(ENotUTF8, "%s is not valid UTF-8 (%d bytes, first invalid byte at offset %d); it is not shown", rel, len(data), off)
	}
	return hashline.Parse(data), fi, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
