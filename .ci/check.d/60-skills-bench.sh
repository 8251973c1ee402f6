#!/usr/bin/env bash
# Skills discovery speed: a first search of 1,000 skills should take well under
# 100 ms. Prints each benchmark and the first search's cost as a multiple of
# the reference run beside it (listing the directory and reading every
# SKILL.md, nothing parsed). Informational: timings on a shared CI machine are
# not asserted.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(go test -run='^$' -bench='Discover1000|ReadFiles1000|OneChanged1000|Unchanged1000' -benchtime=20x -count=1 ./skills)
echo "$out" | grep '^Benchmark'
echo "$out" | awk '
	/^BenchmarkDiscover1000/  { d = $3 }
	/^BenchmarkReadFiles1000/ { r = $3 }
	END {
		if (d == "" || r == "") { print "skills bench: missing results"; exit 1 }
		printf "skills bench: first search of 1,000 skills %.1f ms, %.1fx the reference read of the same files (%.1f ms)\n", d / 1e6, d / r, r / 1e6
	}'
