#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios against Praxis's
# MCP client (conformance/run-client-suite.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash conformance/run-client-suite.sh
