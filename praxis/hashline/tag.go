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

	"lukechampine.com/blake3"
	"lukechampine.com/blake3/guts"
)

// TagLen is the length of a rendered tag in hex characters.
const TagLen = 8

// Sum returns the tag of line n (1-based) holding content (without its line
// terminator) as a number: the first four bytes of BLAKE3("n:content"),
// read big-endian so that its %08x form equals the hex prefix of the hash.
func Sum(n int, content []byte) uint32 {
	var scratch [64]byte
	msg := strconv.AppendInt(scratch[:0], int64(n), 10)
	msg = append(msg, ':')
	if len(msg)+len(content) > guts.BlockSize {
		full := make([]byte, 0, len(msg)+len(content))
		full = append(append(full, msg...), content...)
		h := blake3.Sum256(full)
		return binary.BigEndian.Uint32(h[:4])
	}
	msg = append(msg, content...)
	return sumBlock(msg)
}

// sumBlock hashes a message of at most one block (64 bytes) with a single
// compression, the whole of BLAKE3 for such an input, and returns the first
// output word.
func sumBlock(msg []byte) uint32 {
	var block [guts.BlockSize]byte
	copy(block[:], msg)
	n := guts.Node{
		CV:       guts.IV,
		BlockLen: uint32(len(msg)),
		Flags:    guts.FlagChunkStart | guts.FlagChunkEnd | guts.FlagRoot,
	}
	for i := range n.Block {
		n.Block[i] = binary.LittleEndian.Uint32(block[4*i:])
	}
	// The hash's first four bytes are the first output word, little-endian.
	return bits.ReverseBytes32(guts.CompressNode(n)[0])
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
