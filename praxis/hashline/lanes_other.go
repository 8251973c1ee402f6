//go:build !amd64 || purego

package hashline

const haveLanes = false

func compress16(s *lanes16) { panic("hashline: compress16 without AVX-512") }
