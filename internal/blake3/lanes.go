package blake3

// Lanes is CompressLanes's state: one block in each of sixteen lanes. The
// words are stored row by row (row i holds word i of every lane), as the
// vector registers take them; the blocks lane by lane, as they are filled,
// for the kernel to gather. Its layout is fixed by lanes_amd64.s.
type Lanes struct {
	CV        [8][16]uint32
	Block     [16][BlockSize]byte
	BlockLen  [16]uint32
	Flags     [16]uint32
	CounterLo [16]uint32 // the chunk counter
	CounterHi [16]uint32
}
