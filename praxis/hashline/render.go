package hashline

import (
	"runtime"
	"strconv"
	"sync"
	"unicode/utf8"
)

// parallelLines is the size of a range from which AppendRender spreads the
// work over the available CPUs.
const parallelLines = 1 << 14

// AppendRender appends lines from..to (inclusive, 1-based) of d to dst in
// hashline form, one "N:TAG|content\n" per line. When clip > 0, content
// longer than clip bytes is cut at a character boundary and followed by a
// marker saying how many bytes were left out; the tag still covers the whole
// line.
//
// Hashing is the cost of rendering; a large range is rendered by up to
// GOMAXPROCS goroutines, each into its own part of the result.
func (d *Doc) AppendRender(dst []byte, from, to, clip int) []byte {
	lines := to - from + 1
	workers := min(runtime.GOMAXPROCS(0), lines/(parallelLines/2))
	if lines < parallelLines || workers < 2 {
		return d.appendLines(dst, from, to, clip)
	}
	// The size of every rendered line is known without hashing it, so each
	// worker gets the exact region of the result its lines fill.
	per := (lines + workers - 1) / workers
	bounds := make([]int, workers+1)
	size := len(dst)
	for w := range workers {
		bounds[w] = size
		for n := from + w*per; n <= min(to, from+(w+1)*per-1); n++ {
			size += renderedLen(n, d.Line(n), clip)
		}
	}
	bounds[workers] = size
	var out []byte
	if size <= cap(dst) {
		out = dst[:size] // every byte is written below: no need to clear it
	} else {
		out = append(dst, make([]byte, size-len(dst))...)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			region := out[bounds[w]:bounds[w]:bounds[w+1]]
			d.appendLines(region, from+w*per, min(to, from+(w+1)*per-1), clip)
		})
	}
	wg.Wait()
	return out
}

// renderBatch is how many lines appendLines hashes at a time.
const renderBatch = 512

// appendLines appends lines from..to in hashline form, their tags hashed a
// batch at a time (see sums).
func (d *Doc) appendLines(dst []byte, from, to, clip int) []byte {
	var sums [renderBatch]uint32
	num := newDecimal(from)
	for n := from; n <= to; n += renderBatch {
		batch := sums[:min(renderBatch, to-n+1)]
		d.sums(n, batch)
		for i, sum := range batch {
			dst = appendLine(dst, num.digits(), sum, d.Line(n+i), clip)
			num.inc()
		}
	}
	return dst
}

// AppendLine appends one line in hashline form.
func AppendLine(dst []byte, n int, content []byte, clip int) []byte {
	var num [20]byte
	return appendLine(dst, strconv.AppendInt(num[:0], int64(n), 10), Sum(n, content), content, clip)
}

// appendLine appends the line numbered num (in decimal), holding content,
// whose tag is sum.
func appendLine(dst, num []byte, sum uint32, content []byte, clip int) []byte {
	dst = append(dst, num...)
	dst = append(dst, ':')
	dst = appendTag(dst, sum)
	dst = append(dst, '|')
	if cut := clipAt(content, clip); cut < len(content) {
		dst = append(dst, content[:cut]...)
		dst = append(dst, clipOpen...)
		dst = strconv.AppendInt(dst, int64(len(content)-cut), 10)
		dst = append(dst, clipClose...)
	} else {
		dst = append(dst, content...)
	}
	return append(dst, '\n')
}

const (
	clipOpen  = " …[clipped "
	clipClose = " bytes]"
)

// clipAt returns how many bytes of content are shown: all of it, or, past
// clip bytes, as many as fit before a character boundary.
func clipAt(content []byte, clip int) int {
	if clip <= 0 || len(content) <= clip {
		return len(content)
	}
	cut := clip
	for cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	return cut
}

// renderedLen is the length AppendLine appends for line n.
func renderedLen(n int, content []byte, clip int) int {
	size := digits(n) + 1 + TagLen + 1 + 1
	cut := clipAt(content, clip)
	size += cut
	if cut < len(content) {
		size += len(clipOpen) + digits(len(content)-cut) + len(clipClose)
	}
	return size
}

func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
