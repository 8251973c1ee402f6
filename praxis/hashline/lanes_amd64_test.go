//go:build amd64 && !purego

package hashline

import (
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// laneKernel is a lane kernel this CPU can run, or noLanes (lines hashed
// one by one).
type laneKernel struct {
	name  string
	lanes int
}

func laneKernels() []laneKernel {
	var ks []laneKernel
	if cpuid.CPU.Supports(cpuid.AVX512F) {
		ks = append(ks, laneKernel{"avx512", avx512Lanes})
	}
	if cpuid.CPU.Supports(cpuid.AVX2) {
		ks = append(ks, laneKernel{"avx2", avx2Lanes})
	}
	return append(ks, laneKernel{"scalar", noLanes})
}

// useKernel makes sums use k until the test ends.
func useKernel(tb testing.TB, k laneKernel) {
	saved, savedHave := lanes, haveLanes
	tb.Cleanup(func() { lanes, haveLanes = saved, savedHave })
	lanes, haveLanes = k.lanes, k.lanes != noLanes
}
