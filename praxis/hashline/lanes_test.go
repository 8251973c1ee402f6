package hashline

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/praxis-tools/praxis/internal/blake3"
)

// TestSumLines holds the lane hashing to Sum, line by line: lines of every
// length up to past a chunk, then lines of mixed lengths side by side, with
// line numbers of every width from 1 to 19 digits.
func TestSumLines(t *testing.T) {
	for _, k := range blake3.Kernels() {
		t.Run(k, func(t *testing.T) {
			defer blake3.UseKernel(k)()
			testSumLines(t)
		})
	}
}

func testSumLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var lines [][]byte
	for n := 0; n <= chunkSize+130; n++ {
		line := make([]byte, n)
		for i := range line {
			line[i] = byte(' ' + rng.IntN(95))
		}
		lines = append(lines, line)
	}
	for range 3000 {
		n := rng.IntN(200)
		if rng.IntN(50) == 0 {
			n = rng.IntN(3000)
		}
		lines = append(lines, bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, n))
	}
	for digits, pow := 1, 1; digits <= 19; digits, pow = digits+1, pow*10 {
		from := max(1, pow-3) // the last numbers of one width, then the next
		for _, count := range []int{1, laneMin - 1, laneMin, 17, 300, len(lines)} {
			line := func(n int) []byte { return lines[(n-from)%len(lines)] }
			out := make([]uint32, count)
			sumLines(from, out, line)
			for i, got := range out {
				if want := Sum(from+i, line(from+i)); got != want {
					t.Fatalf("line %d (%d bytes) of %d from %d: %08x, want %08x", from+i, len(line(from+i)), count, from, got, want)
				}
			}
		}
	}
}

// BenchmarkSums hashes the lines of 1 MB of Go-like source with each kernel.
func BenchmarkSums(b *testing.B) {
	d := Parse(sourceLike(1 << 20))
	out := make([]uint32, d.Lines())
	for _, k := range blake3.Kernels() {
		b.Run(k, func(b *testing.B) {
			defer blake3.UseKernel(k)()
			b.SetBytes(int64(len(d.Bytes())))
			for b.Loop() {
				d.sums(1, out)
			}
		})
	}
}

// FuzzSums holds the tags hashed in lanes to those hashed line by line, with
// each kernel, for any text and any first line.
func FuzzSums(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc\r\nd"), uint16(1))
	f.Add(bytes.Repeat([]byte("0123456789abcdef\n"), 300), uint16(9))
	f.Add(append(bytes.Repeat([]byte{'x'}, 1100), "\nshort\n"...), uint16(95))
	f.Fuzz(func(t *testing.T, data []byte, first uint16) {
		d := Parse(data)
		if d.Lines() == 0 {
			return
		}
		from := int(first)%d.Lines() + 1
		out := make([]uint32, d.Lines()-from+1)
		for _, k := range blake3.Kernels() {
			restore := blake3.UseKernel(k)
			d.sums(from, out)
			restore()
			for i, got := range out {
				if want := Sum(from+i, d.Line(from+i)); got != want {
					t.Fatalf("%s: line %d: %08x, want %08x", k, from+i, got, want)
				}
			}
		}
	})
}
