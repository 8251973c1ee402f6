//go:build !amd64 || purego

package match

// havePair: without a vector kernel, a literal is searched for by its
// rarest byte alone.
const havePair = false

func indexPair(text []byte, off1, off2 int, want1, want2, mask1, mask2 byte) (i int, found bool) {
	panic("match: indexPair without a vector kernel")
}

func indexRanges(text []byte, off1, off2 int, lo1, lo2, w1, w2 byte) (i int, found bool) {
	panic("match: indexRanges without a vector kernel")
}
