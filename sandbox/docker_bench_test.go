//go:build linux

package sandbox

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkRunner measures a trivial command's latency under each
// isolation: none, bwrap, and docker (an exec in the session's running
// container). Runners the machine lacks are skipped.
func BenchmarkRunner(b *testing.B) {
	for _, iso := range []Isolation{IsolationNone, IsolationBwrap, IsolationDocker} {
		b.Run(string(iso), func(b *testing.B) {
			p := DefaultPolicy(b.TempDir())
			p.Isolation = iso
			switch iso {
			case IsolationBwrap:
				if _, err := exec.LookPath("bwrap"); err != nil {
					b.Skip("no bwrap")
				}
			case IsolationDocker:
				p.Image = needDocker(b)
			}
			r, err := New(p)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			if _, err := r.Run(ctx, Command{Script: "true"}); err != nil { // the container starts here
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := r.Run(ctx, Command{Script: "true"})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkDockerSession measures a docker session's start-up: New (engine
// and image checks, the orphan sweep), the container's creation and start
// at the first command, the command itself, and Close. It reports the
// first command's latency (the container's start) as first-ms.
func BenchmarkDockerSession(b *testing.B) {
	img := needDocker(b)
	ws := b.TempDir()
	var first time.Duration
	for b.Loop() {
		p := DefaultPolicy(ws)
		p.Isolation = IsolationDocker
		p.Image = img
		r, err := New(p)
		if err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		res, err := r.Run(context.Background(), Command{Script: "true"})
		first += time.Since(t)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
		r.Close()
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-ms")
}
