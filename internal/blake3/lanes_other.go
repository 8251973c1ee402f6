//go:build !amd64 || purego

package blake3

// HaveLanes reports whether CompressLanes can run on this CPU: not without
// amd64's kernels.
func HaveLanes() bool { return false }

// CompressLanes panics: there is no lane kernel here.
func CompressLanes(*Lanes) { panic("blake3: no lane kernel") }

// Kernels returns "scalar": the only way to hash here.
func Kernels() []string { return []string{"scalar"} }

// UseKernel does nothing: there is one way to hash here.
func UseKernel(string) (restore func()) { return func() {} }
