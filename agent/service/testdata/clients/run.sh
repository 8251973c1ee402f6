#!/usr/bin/env bash
# Builds praxis, installs the pinned clients (npm ci) and runs the
# real-client check (clients.test.mjs) against praxis agent serve.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
bin=$(mktemp -d "${TMPDIR:-/tmp}/praxis-agentclients.XXXXXX")
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go build -o "$bin/praxis" ./cmd/praxis)
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
cd "$here"
PRAXIS_BIN=$bin/praxis node --test --test-reporter=spec clients.test.mjs
