#!/usr/bin/env bash
# staticcheck over the whole tree: unused code, deprecated APIs, the checks
# go vet does not make. The version is pinned so that a new release's new
# checks arrive by a change here, not by a red CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
go install honnef.co/go/tools/cmd/staticcheck@v0.8.2 # release 2026.2.2
"$(go env GOPATH)/bin/staticcheck" ./...
