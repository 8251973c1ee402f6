package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

func runVersion(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("version", "", "Prints the version of Praxis, its revision and the Go version it was built with.", io)
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	fmt.Fprintf(io.out, "praxis %s\n", versionString())
	return exitOK
}

func versionString() string {
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	return v + rev + " " + runtime.Version()
}
