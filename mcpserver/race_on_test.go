//go:build race

package mcpserver

// raceEnabled reports whether the race detector runs, which multiplies a
// process's memory.
const raceEnabled = true
