//go:build !amd64 || purego

package hashline

import "testing"

type laneKernel struct{ name string }

func laneKernels() []laneKernel { return []laneKernel{{"scalar"}} }

func useKernel(testing.TB, laneKernel) {}
