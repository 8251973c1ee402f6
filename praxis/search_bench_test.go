package praxis_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis"
)

// goSource returns the Go source tree the search benchmarks run over:
// PRAXIS_BENCH_TREE if set, else $(go env GOROOT)/src.
func goSource(b *testing.B) string {
	b.Helper()
	if dir := os.Getenv("PRAXIS_BENCH_TREE"); dir != "" {
		return dir
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	return dir
}

// BenchmarkSearch runs glob and grep over the Go source tree, warm cache,
// the cases scripts/bench-search.sh compares with fd and rg. Besides the
// time per call it reports the CPU time per call (user and system, all
// threads), which a loaded machine disturbs less.
func BenchmarkSearch(b *testing.B) {
	e, err := praxis.New(praxis.Options{Workspace: goSource(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	cases := []struct {
		name, tool, args string
	}{
		{"glob", "glob", `{"pattern": "**/*.go", "include_hidden": true, "respect_ignore": false}`},
		{"common", "grep", `{"pattern": "err != nil", "output": "count"}`},
		{"rare", "grep", `{"pattern": "ExceedinglyRareToken", "output": "count"}`},
		{"regex", "grep", `{"pattern": "func \\w+\\(ctx context\\.Context", "output": "count"}`},
		{"common-content", "grep", `{"pattern": "err != nil"}`},
		{"ignore-case", "grep", `{"pattern": "exceedinglyraretoken", "ignore_case": true, "output": "count"}`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			cpu := cpuTime()
			for b.Loop() {
				res, err := e.Catalog().Call(ctx, c.tool, json.RawMessage(c.args))
				if err != nil || res.IsError {
					b.Fatalf("%v %s", err, res.Text)
				}
			}
			if cpu >= 0 {
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
