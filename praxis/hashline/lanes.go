package hashline

import (
	"math/bits"
	"strconv"

	"github.com/praxis-tools/praxis/internal/blake3"
)

// laneMin is the fewest lines sums hashes in lanes: below it, filling the
// lanes costs more than it saves.
const laneMin = 8

// laneJob is the line a lane is hashing: the message prefix+content, whose
// block number block goes in next.
type laneJob struct {
	i       int // index of the line's tag in sums's out
	prefix  [24]byte
	plen    int
	content []byte
	length  int // len(prefix) + len(content)
	block   int
	blocks  int
}

// sums sets out[i] to the tag of line from+i, as a number, for every i.
//
// With AVX-512 or AVX2, sixteen lines are hashed at once, a block of each per
// compression; a lane whose line is done takes the next one, so that lines
// of different lengths keep every lane busy.
func (d *Doc) sums(from int, out []uint32) { sumLines(from, out, d.Line) }

// sumLines is sums of the lines line returns by number.
func sumLines(from int, out []uint32, line func(n int) []byte) {
	if !blake3.HaveLanes() || len(out) < laneMin {
		for i := range out {
			out[i] = Sum(from+i, line(from+i))
		}
		return
	}
	var s blake3.Lanes
	var jobs [16]laneJob
	num := newDecimal(from)
	next, active := 0, 0
	// start gives lane the next line, or leaves it idle when none is left.
	// A line longer than a chunk is hashed on its own.
	start := func(lane int) {
		j := &jobs[lane]
		for ; next < len(out); next++ {
			content := line(from + next)
			p := append(j.prefix[:0], num.digits()...)
			p = append(p, ':')
			num.inc()
			length := len(p) + len(content)
			if length > chunkSize {
				out[next] = sumPrefixed(p, content)
				continue
			}
			j.i, j.plen, j.content, j.length = next, len(p), content, length
			j.block, j.blocks = 0, (length+blockSize-1)/blockSize
			for w := range blake3.IV {
				s.CV[w][lane] = blake3.IV[w]
			}
			next++
			active++
			return
		}
		j.i = -1
	}
	for lane := range jobs {
		start(lane)
	}
	for active > 0 {
		for lane := range jobs {
			if j := &jobs[lane]; j.i >= 0 {
				j.load(&s, lane)
			}
		}
		blake3.CompressLanes(&s)
		for lane := range jobs {
			j := &jobs[lane]
			if j.i < 0 {
				continue
			}
			if j.block++; j.block == j.blocks {
				// The hash's first four bytes are the first output word,
				// little-endian.
				out[j.i] = bits.ReverseBytes32(s.CV[0][lane])
				active--
				start(lane)
			}
		}
	}
}

// load puts block j.block of j's message, its length and its flags in lane.
func (j *laneJob) load(s *blake3.Lanes, lane int) {
	off := j.block * blockSize
	row := &s.Block[lane]
	if off >= j.plen && off+blockSize <= j.length {
		*row = [blockSize]byte(j.content[off-j.plen:])
	} else { // the first block, holding the prefix, or a last partial block
		*row = [blockSize]byte{}
		k := 0
		if off < j.plen {
			k = copy(row[:], j.prefix[off:j.plen])
		}
		copy(row[k:], j.content[max(0, off-j.plen):])
	}
	flags := uint32(0)
	if j.block == 0 {
		flags = flagChunkStart
	}
	s.BlockLen[lane] = blockSize
	if j.block == j.blocks-1 {
		flags |= flagChunkEnd | flagRoot
		s.BlockLen[lane] = uint32(j.length - off)
	}
	s.Flags[lane] = flags
}

// decimal is a positive number in decimal digits, counted up without
// dividing: consecutive line numbers cost a byte or two each.
type decimal struct {
	buf   [20]byte // the digits, right-aligned
	start int
}

func newDecimal(n int) decimal {
	var d decimal
	s := strconv.AppendInt(nil, int64(n), 10)
	d.start = len(d.buf) - len(s)
	copy(d.buf[d.start:], s)
	return d
}

func (d *decimal) digits() []byte { return d.buf[d.start:] }

func (d *decimal) inc() {
	i := len(d.buf) - 1
	for ; i >= d.start && d.buf[i] == '9'; i-- {
		d.buf[i] = '0'
	}
	if i < d.start {
		d.start--
		d.buf[d.start] = '1'
		return
	}
	d.buf[i]++
}
