//go:build !linux

package sandbox

// dockerSeccomp returns no profile: the engine's default applies. The
// profile that refuses setuid and setgid bits is built from the engine's
// default, which its library provides on Linux only.
func dockerSeccomp() (string, error) { return "", nil }
