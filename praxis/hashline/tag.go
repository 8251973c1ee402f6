// Package hashline implements the hashline text format: every line of a file
// shown as "LINE:TAG|content", where TAG is the first 8 hex characters of the
// BLAKE3 hash of "LINE:content". Edits name lines by these tags instead of
// repeating old text, so a stale edit is detected before anything changes.
//
// The package is pure: it splits bytes into lines, renders them, parses
// anchors and applies edit batches to bytes. It does no I/O.
package hashline

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strconv"

	"github.com/praxis-tools/praxis/internal/blake3"
)

// TagLen is the length of a rendered tag in hex characters.
const TagLen = 8

// BLAKE3's sizes and the flags of hashing one chunk (up to 1 KiB) as the
// root.
const (
	blockSize      = blake3.BlockSize
	chunkSize      = blake3.ChunkSize
	flagChunkStart = blake3.FlagChunkStart
	flagChunkEnd   = blake3.FlagChunkEnd
	flagRoot       = blake3.FlagRoot
)

// Sum returns the tag of line n (1-based) holding content (without its line
// terminator) as a number: the first four bytes of BLAKE3("n:content"),
// read big-endian, so that its %08x form is the hash's hex prefix.
//
// Tags are the cost of rendering, so the message is hashed here without
// being assembled in memory: a message of up to one chunk (1 KiB, nearly
// every line) is a chain of block compressions ending in the root block;
// a longer one goes to the general BLAKE3 implementation.
func Sum(n int, content []byte) uint32 {
	var prefix [24]byte
	p := strconv.AppendInt(prefix[:0], int64(n), 10)
	return sumPrefixed(append(p, ':'), content)
}

// sumPrefixed is Sum of the message p+content, p being "n:".
func sumPrefixed(p, content []byte) uint32 {
	if len(p)+len(content) > chunkSize {
		msg := make([]byte, 0, len(p)+len(content))
		h := blake3.Sum256(append(append(msg, p...), content...))
		return binary.BigEndian.Uint32(h[:4])
	}
	var block [blockSize]byte
	k := copy(block[:], p)
	used := copy(block[k:], content)
	k += used
	rest := content[used:]
	cv := blake3.IV
	flags := uint32(flagChunkStart)
	for len(rest) > 0 { // the block is full and more follows
		m := blake3.BlockWords(&block)
		cv = blake3.Compress(&cv, &m, 0, blockSize, flags)
		flags = 0
		block = [blockSize]byte{}
		k = copy(block[:], rest)
		rest = rest[k:]
	}
	m := blake3.BlockWords(&block)
	out := blake3.Compress(&cv, &m, 0, uint32(k), flags|flagChunkEnd|flagRoot)
	// The hash's first four bytes are the first output word, little-endian.
	return bits.ReverseBytes32(out[0])
}

// Tag returns the rendered tag of line n holding content.
func Tag(n int, content []byte) string {
	var b [TagLen]byte
	appendTag(b[:0], Sum(n, content))
	return string(b[:])
}

const hexDigits = "0123456789abcdef"

func appendTag(dst []byte, sum uint32) []byte {
	return append(dst,
		hexDigits[sum>>28], hexDigits[sum>>24&0xf], hexDigits[sum>>20&0xf], hexDigits[sum>>16&0xf],
		hexDigits[sum>>12&0xf], hexDigits[sum>>8&0xf], hexDigits[sum>>4&0xf], hexDigits[sum&0xf])
}

// Version returns the version of a file's bytes: the first 16 hex
// characters of their BLAKE3 hash.
func Version(data []byte) string {
	h := blake3.Sum256(data)
	return hex.EncodeToString(h[:8])
}
