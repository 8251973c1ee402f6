package praxis

import (
	"bytes"
	"io/fs"
	"unicode/utf8"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// loadText reads rel as text: it must be a regular file within the size
// limit, hold no NUL byte in its first 8 KiB and be valid UTF-8. It returns
// the file's lines and its version. The version of a large file is hashed
// on another goroutine, while the text is checked and split into lines.
func (e *Engine) loadText(rel string) (*hashline.Doc, fs.FileInfo, string, error) {
	data, fi, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
	if err != nil {
		return nil, nil, "", err
	}
	if len(data) < concurrentVersionBytes {
		doc, err := parseText(rel, data)
		if err != nil {
			return nil, nil, "", err
		}
		return doc, fi, hashline.Version(data), nil
	}
	version := make(chan string, 1)
	go func() { version <- hashline.Version(data) }()
	doc, err := parseText(rel, data)
	v := <-version
	if err != nil {
		return nil, nil, "", err
	}
	return doc, fi, v, nil
}

// concurrentVersionBytes is the size from which loadText hashes a file's
// version beside checking and parsing it: both take about a millisecond a
// megabyte, far more than starting a goroutine.
const concurrentVersionBytes = 256 << 10

// parseText checks that data, the bytes of rel, are text and splits them
// into lines.
func parseText(rel string, data []byte) (*hashline.Doc, error) {
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, Errorf(EBinary, "%s looks binary (%d bytes, a NUL byte in its first 8 KiB); it is not shown", rel, len(data))
	}
	if !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		return nil, Errorf(ENotUTF8, "%s is not valid UTF-8 (%d bytes, first invalid byte at offset %d); it is not shown", rel, len(data), off)
	}
	return hashline.Parse(data), nil
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
