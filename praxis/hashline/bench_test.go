package hashline

import (
	"fmt"
	"strings"
	"testing"
)

// sourceLike returns about size bytes of Go-like source, 45 bytes a line on
// average.
func sourceLike(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "\tif err := step%d(ctx, arg); err != nil {\n", i)
	}
	return []byte(b.String())
}

func benchRender(b *testing.B, size int) {
	data := sourceLike(size)
	d := Parse(data)
	buf := make([]byte, 0, len(data)+16*d.Lines())
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(d.Lines()), "lines")
	for b.Loop() {
		buf = Parse(data).AppendRender(buf[:0], 1, d.Lines(), 2000)
	}
}

func BenchmarkRender2KiB(b *testing.B) { benchRender(b, 2<<10) }
func BenchmarkRender10MB(b *testing.B) { benchRender(b, 10<<20) }

func BenchmarkSum(b *testing.B) {
	line := []byte("\tif err := json.Unmarshal(raw, &s); err != nil {")
	var s uint32
	n := 0
	for b.Loop() {
		n++
		s += Sum(n, line)
	}
	_ = s
}

func BenchmarkApply10kLines(b *testing.B) {
	data := sourceLike(10000 * 45)
	d := Parse(data)
	edits := []Edit{{From: 5000, To: 5000, Lines: []string{"\t// changed"}}}
	for b.Loop() {
		if _, _, err := Apply(d, edits); err != nil {
			b.Fatal(err)
		}
	}
}
