#!/usr/bin/env bash
# The official MCP conformance suite against Praxis's server with the
# suite's fixtures (conformance/cmd/fixture-server), over streamable HTTP
# and over stdio (through conformance/stdiobridge), with the baselines in
# conformance/baseline-*.yml. CONFORMANCE_RUNS repeats it to catch flaky
# scenarios.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash conformance/run-suite.sh -n "${CONFORMANCE_RUNS:-2}"
