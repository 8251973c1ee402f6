package sandbox

import (
	"fmt"
	"strings"
	"sync"
)

// Output is what was kept of one stream.
type Output struct {
	// Text is the kept bytes: the head and the tail, with a marker line
	// between them when bytes were dropped.
	Text string
	// Total is the number of bytes the stream carried in all.
	Total int64
	// Omitted is the number of bytes dropped from Text (an upper bound when
	// reading from a position inside the dropped part).
	Omitted int64
}

// Truncated reports whether bytes were dropped.
func (o Output) Truncated() bool { return o.Omitted > 0 }

// The streams of a capture.
const (
	stdout = 0
	stderr = 1
)

// capture keeps the head and the tail of a command's stdout and stderr while
// the command writes them. Every byte has a position in the merged stream
// (the order in which the bytes of both streams arrived), so a reader can
// ask for what came since its last read with one number. It is safe for
// concurrent use.
type capture struct {
	headCap, tailCap int

	mu      sync.Mutex
	pos     int64 // merged position: bytes of both streams so far
	streams [2]stream
}

type stream struct {
	total      int64
	head, tail []chunk
	headLen    int
	tailLen    int
}

// chunk is a run of one stream's bytes, contiguous in the merged stream.
type chunk struct {
	pos  int64 // merged position of data[0]
	off  int64 // stream offset of data[0]
	data []byte
}

func (c chunk) end() int64 { return c.off + int64(len(c.data)) }

// newCapture keeps up to limit bytes per stream: its first half and its
// last half.
func newCapture(limit int) *capture {
	h := limit / 2
	return &capture{headCap: h, tailCap: limit - h}
}

// write records b as the next bytes of stream i.
func (c *capture) write(i int, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.streams[i]
	pos, off := c.pos, s.total
	c.pos += int64(len(b))
	s.total += int64(len(b))
	if k := min(len(b), c.headCap-s.headLen); k > 0 {
		s.head = appendChunk(s.head, pos, off, b[:k])
		s.headLen += k
		b, pos, off = b[k:], pos+int64(k), off+int64(k)
	}
	if len(b) == 0 || c.tailCap == 0 {
		return
	}
	if drop := len(b) - c.tailCap; drop > 0 {
		b, pos, off = b[drop:], pos+int64(drop), off+int64(drop)
	}
	s.tail = appendChunk(s.tail, pos, off, b)
	s.tailLen += len(b)
	for s.tailLen > c.tailCap {
		first := &s.tail[0]
		if over := s.tailLen - c.tailCap; over < len(first.data) {
			first.data = first.data[over:]
			first.pos += int64(over)
			first.off += int64(over)
			s.tailLen -= over
			break
		}
		s.tailLen -= len(first.data)
		s.tail = s.tail[1:]
	}
}

// appendChunk adds b (copied) to cs, growing the last chunk when b follows
// it directly in the merged stream.
func appendChunk(cs []chunk, pos, off int64, b []byte) []chunk {
	if n := len(cs); n > 0 {
		last := &cs[n-1]
		if last.pos+int64(len(last.data)) == pos && len(last.data) < 64<<10 {
			last.data = append(last.data, b...)
			return cs
		}
	}
	return append(cs, chunk{pos: pos, off: off, data: append([]byte(nil), b...)})
}

// position returns the merged position after the last byte written.
func (c *capture) position() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pos
}

// since returns, for each stream, the kept bytes at merged positions from
// pos on, and the position to read from next time.
func (c *capture) since(pos int64) (out [2]Output, next int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.streams {
		out[i] = c.streams[i].since(pos)
	}
	return out, c.pos
}

func (s *stream) since(pos int64) Output {
	var b strings.Builder
	out := Output{Total: s.total}
	var prevEnd int64 // stream offset after the last byte kept before
	shown := false    // whether a byte at or after pos has been placed
	gap := func(next chunk) {
		if next.off > prevEnd {
			n := next.off - prevEnd
			out.Omitted += n
			if shown || b.Len() > 0 {
				fmt.Fprintf(&b, "\n…[praxis: %d bytes omitted]…\n", n)
			} else {
				fmt.Fprintf(&b, "…[praxis: up to %d bytes omitted]…\n", n)
			}
		}
	}
	for _, part := range [2][]chunk{s.head, s.tail} {
		for _, ch := range part {
			if ch.pos+int64(len(ch.data)) <= pos {
				prevEnd = ch.end()
				continue
			}
			if ch.pos >= pos {
				gap(ch) // bytes dropped before a chunk that starts inside the cursor's range
			}
			data := ch.data
			if skip := pos - ch.pos; skip > 0 {
				data = data[skip:]
			}
			b.Write(data)
			shown = true
			prevEnd = ch.end()
		}
	}
	out.Text = b.String()
	return out
}
