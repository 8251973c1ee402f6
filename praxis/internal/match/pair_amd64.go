//go:build amd64 && !purego

package match

// havePair: indexPair is a vector kernel here, faster than a search for
// one byte whenever that byte is common.
const havePair = true

// indexPair returns the first position p of text, looking only at those
// with p+15+max(off1, off2) < len(text), where text[p+off1]|mask1 == want1
// and text[p+off2]|mask2 == want2. Without one, found is false and i is
// the first position not looked at. In pair_amd64.s.
//
//go:noescape
func indexPair(text []byte, off1, off2 int, want1, want2, mask1, mask2 byte) (i int, found bool)

// indexRanges returns the first position p of text, looking only at
// those with p+15+max(off1, off2) < len(text), where text[p+off1]-lo1 <=
// w1 and text[p+off2]-lo2 <= w2, unsigned: the two bytes are in the
// ranges [lo1, lo1+w1] and [lo2, lo2+w2]. Without one, found is false and
// i is the first position not looked at. In pair_amd64.s.
//
//go:noescape
func indexRanges(text []byte, off1, off2 int, lo1, lo2, w1, w2 byte) (i int, found bool)
