//go:build !amd64 || purego

package hashline

const haveLanes = false

func compress16(*lanes16) { panic("hashline: no lane kernel") }
