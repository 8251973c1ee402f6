package skills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// makeSkills writes n skills, each with a references/ file, under dir.
func makeSkills(b *testing.B, dir string, n int) {
	b.Helper()
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("skill-%04d", i))
		writeSkill(b, d, fmt.Sprintf("Skill number %d %s", i, strings.Repeat("does things ", 10)))
		if err := os.MkdirAll(filepath.Join(d, "references"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "references", "notes.md"), []byte("# Notes\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiscover1000 measures a cold search of a directory of 1,000
// skills: every SKILL.md opened and its frontmatter parsed. The target is
// well under 100 ms per search.
func BenchmarkDiscover1000(b *testing.B) {
	dir := b.TempDir()
	makeSkills(b, dir, 1000)
	ctx := context.Background()
	cpu := startCPU(b)
	for b.Loop() {
		s, err := New(Options{Roots: []Root{{Dir: dir}}}).Snapshot(ctx)
		if err != nil || len(s.Skills) != 1000 {
			b.Fatalf("%d skills, %v\n%s", len(s.Skills), err, problemLines(s.Problems[:min(3, len(s.Problems))]))
		}
	}
	cpu.report()
}

// BenchmarkReadFiles1000 is the reference for BenchmarkDiscover1000: the
// same directory listed and every SKILL.md read whole with os.ReadFile,
// nothing parsed or confined, one file after another.
func BenchmarkReadFiles1000(b *testing.B) {
	dir := b.TempDir()
	makeSkills(b, dir, 1000)
	cpu := startCPU(b)
	for b.Loop() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if _, err := os.ReadFile(filepath.Join(dir, e.Name(), "SKILL.md")); err == nil {
				n++
			}
		}
		if n != 1000 {
			b.Fatalf("%d files read", n)
		}
	}
	cpu.report()
}

// BenchmarkOneChanged1000 measures asking again after one SKILL.md of
// 1,000 changed: the check, a walk, and one file parsed again.
func BenchmarkOneChanged1000(b *testing.B) {
	dir := b.TempDir()
	makeSkills(b, dir, 1000)
	ctx := context.Background()
	c := New(Options{Roots: []Root{{Dir: dir}}})
	if _, err := c.Snapshot(ctx); err != nil {
		b.Fatal(err)
	}
	cpu := startCPU(b)
	i := 0
	for b.Loop() {
		i++
		b.StopTimer()
		writeSkill(b, filepath.Join(dir, "skill-0500"), fmt.Sprintf("Changed %d times.", i))
		b.StartTimer()
		s, err := c.Snapshot(ctx)
		if sk, _ := s.Lookup("skill-0500"); err != nil || sk.Description != fmt.Sprintf("Changed %d times.", i) {
			b.Fatalf("the change was not picked up: %q, %v", sk.Description, err)
		}
	}
	cpu.report()
}

// BenchmarkUnchanged1000 measures asking a catalog of 1,000 skills again
// when nothing changed: the modification-time check alone.
func BenchmarkUnchanged1000(b *testing.B) {
	dir := b.TempDir()
	makeSkills(b, dir, 1000)
	ctx := context.Background()
	c := New(Options{Roots: []Root{{Dir: dir}}})
	first, err := c.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cpu := startCPU(b)
	for b.Loop() {
		s, err := c.Snapshot(ctx)
		if err != nil || s != first {
			b.Fatal("the catalog searched again though nothing changed")
		}
	}
	cpu.report()
}

// cpuClock reports the process's CPU time (user and system) per
// operation as the metric cpu-ms/op. On a busy machine it shows the work
// done, where ns/op also counts the time spent waiting for a CPU.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuClock {
	b.ResetTimer()
	return cpuClock{b: b, start: cpuTime(b)}
}

func (c cpuClock) report() {
	c.b.ReportMetric(float64(cpuTime(c.b)-c.start)/float64(time.Millisecond)/float64(c.b.N), "cpu-ms/op")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
