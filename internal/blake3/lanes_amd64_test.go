//go:build amd64 && !purego

package blake3

import (
	"testing"

	featureprobe "github.com/klauspost/cpuid/v2"
)

// TestDetectLanes holds the CPU check of our own to a full feature probe's.
func TestDetectLanes(t *testing.T) {
	want := noLanes
	switch {
	case featureprobe.CPU.Supports(featureprobe.AVX512F):
		want = avx512Lanes
	case featureprobe.CPU.Supports(featureprobe.AVX2):
		want = avx2Lanes
	}
	if got := detectLanes(); got != want {
		t.Errorf("detectLanes() = %d, the feature probe says %d", got, want)
	}
}
