//go:build !purego

package mcpserver

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEscapeVec holds the SSE2 kernel to the byte-at-a-time escaping:
// every length to past five blocks, with bytes to escape of each kind at
// every place, alone, in runs and packed, and bytes from 0x80 up, which are
// safe (UTF-8 is checked apart).
func TestEscapeVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []byte{0, '\n', '\t', 0x1f, '"', '\\', 0x7f, 0x80, 0xff, ' ', 'a'}
	check := func(src []byte) {
		t.Helper()
		dst := make([]byte, 6*len(src)+2)
		i, j := escapeVec(dst, string(src))
		if i > len(src) || (len(src) >= 16 && i <= len(src)-16) || (len(src) < 16 && i != 0) {
			t.Fatalf("%q: stopped at %d of %d bytes, want within the last 16", src, i, len(src))
		}
		if want := refEscape(src[:i]); !bytes.Equal(dst[:j], want) {
			t.Fatalf("%q: escaped %d bytes as\n%q, want\n%q", src, i, dst[:j], want)
		}
	}
	for n := range 90 {
		src := make([]byte, n)
		for at := range n {
			for _, k := range kinds {
				for i := range src {
					src[i] = 'a' + byte(i%26)
				}
				src[at] = k
				check(src)
			}
		}
		for range 50 { // dense and mixed
			for i := range src {
				if rng.IntN(3) == 0 {
					src[i] = kinds[rng.IntN(len(kinds))]
				} else {
					src[i] = byte(0x20 + rng.IntN(0x5f))
				}
			}
			check(src)
		}
	}
	hi := bytes.Repeat([]byte{0x80, 0xff, 0xc3, 0xa9}, 16)
	if i, j := escapeVec(make([]byte, 6*len(hi)+2), string(hi)); i != len(hi) || j != len(hi) {
		t.Errorf("bytes from 0x80 up: escapeVec = %d, %d, want %d, %d", i, j, len(hi), len(hi))
	}
}

// refEscape escapes b byte by byte as writeString does, leaving bytes
// from 0x80 up as they are.
func refEscape(b []byte) []byte {
	var out []byte
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, `\n`...)
		case c == '\r':
			out = append(out, `\r`...)
		case c == '\t':
			out = append(out, `\t`...)
		case c < 0x20:
			out = fmt.Appendf(out, `\u%04x`, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// TestEscapeVecShortBuffer: a buffer without room for the worst case is
// refused before the kernel writes a byte.
func TestEscapeVecShortBuffer(t *testing.T) {
	src := "0123456789abcdef0123456789abcdef"
	dst := make([]byte, 6*len(src)+8)
	defer func() {
		if recover() == nil {
			t.Error("escapeVec into a buffer too short did not panic")
		}
		if !bytes.Equal(dst[6*len(src)+1:], make([]byte, 7)) {
			t.Error("escapeVec wrote past the buffer it was given")
		}
	}()
	escapeVec(dst[:6*len(src)+1], src)
}
