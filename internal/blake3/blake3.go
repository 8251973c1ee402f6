// Package blake3 is the BLAKE3 hash as Praxis uses it: Sum256 for whole
// messages (file versions, the journal's checks), and the compression
// function, one block at a time (Compress) or sixteen independent blocks at
// once (CompressLanes, where the CPU has AVX-512 or AVX2), for hashline's
// tags, which hash many short messages, one per line.
//
// The compression function is generated (gen_compress.go, gen_lanes.go);
// the tests hold everything to the BLAKE3 library's results.
package blake3

//go:generate go run gen_compress.go
//go:generate go run gen_lanes.go

import "encoding/binary"

// Sizes, and the flags of a compression.
const (
	BlockSize = 64
	ChunkSize = 1024

	FlagChunkStart = 1 << 0
	FlagChunkEnd   = 1 << 1
	FlagParent     = 1 << 2
	FlagRoot       = 1 << 3
)

// IV is BLAKE3's initial chaining value.
var IV = [8]uint32{0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19}

// BlockWords returns the message words of a block.
func BlockWords(b *[BlockSize]byte) [16]uint32 {
	var m [16]uint32
	for i := range m {
		m[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return m
}

// Sum256 returns the BLAKE3 hash of data.
//
// A message of more than one chunk (1 KiB) is a tree: the chaining values
// of its chunks, then of pairs of them, left to right, up to the root.
// Where the CPU has the lane kernels, sixteen chunks, and then sixteen
// pairs, are compressed at once.
func Sum256(data []byte) [32]byte {
	if len(data) <= ChunkSize {
		return words(chunkCV(data, 0, FlagRoot))
	}
	cvs := chunkCVs(data)
	for len(cvs) > 2 {
		cvs = parentCVs(cvs)
	}
	return words(parentCV(&cvs[0], &cvs[1], FlagRoot))
}

// chunkCV returns the chaining value of chunk number counter, data (at
// most a chunk); root is FlagRoot for a message of one chunk, which makes
// the result the hash.
func chunkCV(data []byte, counter uint64, root uint32) [8]uint32 {
	cv := IV
	flags := uint32(FlagChunkStart)
	for len(data) > BlockSize {
		m := BlockWords((*[BlockSize]byte)(data))
		cv = Compress(&cv, &m, counter, BlockSize, flags)
		flags = 0
		data = data[BlockSize:]
	}
	var block [BlockSize]byte
	n := copy(block[:], data)
	m := BlockWords(&block)
	return Compress(&cv, &m, counter, uint32(n), flags|FlagChunkEnd|root)
}

// chunkCVs returns the chaining values of data's chunks, data being more
// than one chunk.
func chunkCVs(data []byte) [][8]uint32 {
	n := (len(data) + ChunkSize - 1) / ChunkSize
	cvs := make([][8]uint32, n)
	i := 0
	if HaveLanes() {
		var s Lanes
		for lane := range 16 {
			s.BlockLen[lane] = BlockSize
		}
		for ; (i+16)*ChunkSize <= len(data); i += 16 {
			for lane := range 16 {
				for w := range IV {
					s.CV[w][lane] = IV[w]
				}
				s.CounterLo[lane] = uint32(i + lane)
				s.CounterHi[lane] = uint32(uint64(i+lane) >> 32)
			}
			for b := 0; b < ChunkSize/BlockSize; b++ {
				flags := uint32(0)
				switch b {
				case 0:
					flags = FlagChunkStart
				case ChunkSize/BlockSize - 1:
					flags = FlagChunkEnd
				}
				for lane := range 16 {
					s.Block[lane] = [BlockSize]byte(data[(i+lane)*ChunkSize+b*BlockSize:])
					s.Flags[lane] = flags
				}
				CompressLanes(&s)
			}
			for lane := range 16 {
				for w := range IV {
					cvs[i+lane][w] = s.CV[w][lane]
				}
			}
		}
	}
	for ; i < n; i++ {
		cvs[i] = chunkCV(data[i*ChunkSize:min(len(data), (i+1)*ChunkSize)], uint64(i), 0)
	}
	return cvs
}

// parentCV returns the chaining value of the parent of l and r; root is
// FlagRoot for the root, which makes the result the hash.
func parentCV(l, r *[8]uint32, root uint32) [8]uint32 {
	var m [16]uint32
	copy(m[:8], l[:])
	copy(m[8:], r[:])
	return Compress(&IV, &m, 0, BlockSize, FlagParent|root)
}

// parentCVs returns the next level of the tree above cvs, in place: the
// parents of cvs[0] and cvs[1], of cvs[2] and cvs[3], and so on; an odd one
// out at the end goes up as it is.
func parentCVs(cvs [][8]uint32) [][8]uint32 {
	n := len(cvs) / 2
	i := 0
	if HaveLanes() {
		var s Lanes
		for lane := range 16 {
			s.BlockLen[lane] = BlockSize
			s.Flags[lane] = FlagParent
		}
		for ; i+16 <= n; i += 16 {
			for lane := range 16 {
				for w := range IV {
					s.CV[w][lane] = IV[w]
				}
				row := s.Block[lane][:]
				for w, x := range cvs[2*(i+lane)] {
					binary.LittleEndian.PutUint32(row[4*w:], x)
				}
				for w, x := range cvs[2*(i+lane)+1] {
					binary.LittleEndian.PutUint32(row[32+4*w:], x)
				}
			}
			CompressLanes(&s)
			for lane := range 16 {
				for w := range IV {
					cvs[i+lane][w] = s.CV[w][lane]
				}
			}
		}
	}
	for ; i < n; i++ {
		cvs[i] = parentCV(&cvs[2*i], &cvs[2*i+1], 0)
	}
	if len(cvs)%2 == 1 {
		cvs[n] = cvs[len(cvs)-1]
		n++
	}
	return cvs[:n]
}

// words returns the little-endian bytes of the words of a chaining value
// (or of the root's first output words: the hash).
func words(cv [8]uint32) [32]byte {
	var b [32]byte
	for i, w := range cv {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}
