//go:build linux

package sandbox

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkRun measures the cost of running a trivial command, without
// isolation and under bwrap, against starting bash directly with os/exec
// (the reference: what any runner pays).
func BenchmarkRun(b *testing.B) {
	b.Run("os-exec-reference", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, iso := range []Isolation{IsolationNone, IsolationBwrap} {
		b.Run(string(iso), func(b *testing.B) {
			if iso == IsolationBwrap {
				if _, err := exec.LookPath("bwrap"); err != nil {
					b.Skip("no bwrap")
				}
			}
			p := DefaultPolicy(b.TempDir())
			p.Isolation = iso
			r, err := New(p)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := r.Run(context.Background(), Command{Script: "true"})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkOutput measures draining 16 MiB through the capture.
func BenchmarkOutput(b *testing.B) {
	r, err := New(DefaultPolicy(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(16 << 20)
	for b.Loop() {
		res, err := r.Run(context.Background(), Command{Script: "head -c 16777216 /dev/zero"})
		if err != nil || res.Stdout.Total != 16<<20 {
			b.Fatal(err, res.Stdout.Total)
		}
	}
}
