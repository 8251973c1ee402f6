#!/usr/bin/env bash
# Compares Praxis's glob and grep with fd and ripgrep, side by side in one
# run, on the Go source tree (or TREE), warm cache, and prints the ratios.
#
#   scripts/bench-search.sh            # 5 rounds of 10 calls per case
#   ROUNDS=9 RUNS=20 TREE=/some/src scripts/bench-search.sh
#
# Praxis is measured in-process by BenchmarkSearch (go test -bench); rg and
# fd as commands, started RUNS times in a row. Rounds alternate between the
# two so that both see the same machine load. For each case the script
# prints the median over rounds of the wall time per call and of the CPU
# time per call (user + system, all threads), and praxis/reference for
# both: under 1.00 Praxis is faster. Needs rg (apt: ripgrep) and fd (apt:
# fd-find, installed as fdfind).
set -euo pipefail
cd "$(dirname "$0")/.."

tree=${TREE:-$(go env GOROOT)/src}
rounds=${ROUNDS:-5}
runs=${RUNS:-10}
rg=$(command -v rg) || { echo "bench-search: rg not found (apt-get install ripgrep)" >&2; exit 1; }
fd=$(command -v fd || command -v fdfind) || { echo "bench-search: fd not found (apt-get install fd-find)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/praxis.test" ./praxis

# The reference command of each case, run in the tree.
ref_glob() { "$fd" -u -g '**/*.go'; }
ref_common() { "$rg" --no-config --no-require-git -c 'err != nil'; }
ref_rare() { "$rg" --no-config --no-require-git -c 'ExceedinglyRareToken'; }
ref_regex() { "$rg" --no-config --no-require-git -c 'func \w+\(ctx context\.Context'; }
cases=(glob common rare regex)
declare -A what=(
	[glob]="every *.go file, hidden and ignored ones too: glob with include_hidden and respect_ignore=false; fd -u -g"
	[common]="common literal 'err != nil', counts per file: grep output=count; rg -c"
	[rare]="rare literal 'ExceedinglyRareToken', counts per file"
	[regex]="regex 'func \\w+\\(ctx context\\.Context', counts per file"
)

# ref_run CASE: runs the reference command $runs times in $tree; prints
# "wall_ns cpu_ns" per run.
ref_run() {
	local out
	out=$( { TIMEFORMAT='%R %U %S'; time (cd "$tree" && for ((i = 0; i < runs; i++)); do "ref_$1" >/dev/null || [ $? -eq 1 ]; done); } 2>&1 )
	awk -v n="$runs" '{ printf "%.0f %.0f\n", $1 * 1e9 / n, ($2 + $3) * 1e9 / n }' <<<"$out"
}

# praxis_run CASE: runs BenchmarkSearch/CASE $runs times; prints "wall_ns cpu_ns" per call.
praxis_run() {
	(cd praxis && PRAXIS_BENCH_TREE="$tree" "$tmp/praxis.test" -test.run='^$' -test.bench="^BenchmarkSearch/$1\$" -test.benchtime="${runs}x") |
		awk '/^BenchmarkSearch/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "ns/op") w = $i; if ($(i+1) == "cpu-ns/op") c = $i } } END { printf "%.0f %.0f\n", w, c }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "tree: $tree ($(find "$tree" -type f | wc -l) files), $rounds rounds of $runs calls, $(nproc) CPUs, warm cache"
echo "rg: $($rg --version 2>/dev/null | sed -n 1p); fd: $($fd --version)"
for name in "${cases[@]}"; do
	ref_run "$name" >/dev/null # warm the cache
	praxis_run "$name" >/dev/null
	: >"$tmp/$name.praxis"
	: >"$tmp/$name.ref"
	for ((r = 0; r < rounds; r++)); do
		praxis_run "$name" >>"$tmp/$name.praxis"
		ref_run "$name" >>"$tmp/$name.ref"
	done
done

printf '\n%-7s %12s %12s %7s   %12s %12s %7s\n' case "praxis wall" "ref wall" ratio "praxis cpu" "ref cpu" ratio
for name in "${cases[@]}"; do
	pw=$(cut -d' ' -f1 "$tmp/$name.praxis" | median)
	pc=$(cut -d' ' -f2 "$tmp/$name.praxis" | median)
	rw=$(cut -d' ' -f1 "$tmp/$name.ref" | median)
	rc=$(cut -d' ' -f2 "$tmp/$name.ref" | median)
	awk -v n="$name" -v pw="$pw" -v rw="$rw" -v pc="$pc" -v rc="$rc" 'BEGIN {
		printf "%-7s %10.1fms %10.1fms %6.2fx   %10.1fms %10.1fms %6.2fx\n", n, pw/1e6, rw/1e6, pw/rw, pc/1e6, rc/1e6, pc/rc }'
done
echo
for name in "${cases[@]}"; do
	echo "$name: ${what[$name]}"
done
