package blake3

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"lukechampine.com/blake3"
)

// randomBytes returns n bytes from a fixed seed.
func randomBytes(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestSum256 holds Sum256 to the BLAKE3 library with each lane kernel: every
// length up to three chunks, lengths around every chunk count up to past
// four groups of sixteen (the tree's odd ones out at every level), and
// random lengths up to 4 MB.
func TestSum256(t *testing.T) {
	data := randomBytes(4 << 20)
	rng := rand.New(rand.NewPCG(5, 6))
	var lengths []int
	for n := 0; n <= 3*ChunkSize; n++ {
		lengths = append(lengths, n)
	}
	for k := 4; k <= 70; k++ {
		lengths = append(lengths, k*ChunkSize-1, k*ChunkSize, k*ChunkSize+1)
	}
	for range 40 {
		lengths = append(lengths, rng.IntN(len(data)+1))
	}
	lengths = append(lengths, len(data))
	for _, k := range Kernels() {
		t.Run(k, func(t *testing.T) {
			defer UseKernel(k)()
			for _, n := range lengths {
				if got, want := Sum256(data[:n]), blake3.Sum256(data[:n]); got != want {
					t.Fatalf("%d bytes: %x, want %x", n, got, want)
				}
			}
		})
	}
}

// TestCompressLanes holds each lane kernel to Compress, lane by lane, on
// random chaining values, blocks, lengths, flags and counters.
func TestCompressLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range Kernels() {
		if k == "scalar" {
			continue
		}
		t.Run(k, func(t *testing.T) {
			defer UseKernel(k)()
			for range 200 {
				var s Lanes
				for lane := range 16 {
					for w := range 8 {
						s.CV[w][lane] = rng.Uint32()
					}
					for i := range s.Block[lane] {
						s.Block[lane][i] = byte(rng.Uint32())
					}
					s.BlockLen[lane] = uint32(rng.IntN(BlockSize + 1))
					s.Flags[lane] = uint32(rng.IntN(16))
					s.CounterLo[lane], s.CounterHi[lane] = rng.Uint32(), rng.Uint32()
				}
				in := s
				CompressLanes(&s)
				for lane := range 16 {
					var cv [8]uint32
					for w := range cv {
						cv[w] = in.CV[w][lane]
					}
					m := BlockWords(&in.Block[lane])
					want := Compress(&cv, &m, uint64(in.CounterHi[lane])<<32|uint64(in.CounterLo[lane]), in.BlockLen[lane], in.Flags[lane])
					for w := range want {
						if got := s.CV[w][lane]; got != want[w] {
							t.Fatalf("lane %d, word %d: %08x, want %08x", lane, w, got, want[w])
						}
					}
				}
			}
		})
	}
}

// BenchmarkSum256 hashes 10 MB, a large file's version, with each kernel
// and with the BLAKE3 library.
func BenchmarkSum256(b *testing.B) {
	data := randomBytes(10 << 20)
	for _, k := range Kernels() {
		b.Run(k, func(b *testing.B) {
			defer UseKernel(k)()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				Sum256(data)
			}
		})
	}
	b.Run("library", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			blake3.Sum256(data)
		}
	})
}

// FuzzSum256 holds Sum256 to the BLAKE3 library with each kernel; the
// input is repeated to reach lengths of many chunks, up to 64 chunks.
func FuzzSum256(f *testing.F) {
	f.Add([]byte("abc"), uint8(1))
	f.Add(randomBytes(1500), uint8(40))
	f.Fuzz(func(t *testing.T, data []byte, times uint8) {
		msg := bytes.Repeat(data, int(times)+1)
		msg = msg[:min(len(msg), 64*ChunkSize)]
		want := blake3.Sum256(msg)
		for _, k := range Kernels() {
			restore := UseKernel(k)
			got := Sum256(msg)
			restore()
			if got != want {
				t.Fatalf("%s, %d bytes: %x, want %x", k, len(msg), got, want)
			}
		}
	})
}
