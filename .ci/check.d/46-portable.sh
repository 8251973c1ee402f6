#!/usr/bin/env bash
# Three hot paths have amd64 assembly: BLAKE3 runs in vector lanes with
# AVX-512 or AVX2, JSON strings are escaped sixteen bytes at a time with
# SSE2, and grep's literals are searched for by two bytes at once with
# SSE2. go test ./... runs them against their portable paths; here the
# portable build (-tags purego, which every other architecture gets) runs
# the tests of the hash, of the hashline tags, of the JSON escaping and of
# the line matcher, and the packages are vetted for an architecture
# without the assembly.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -count=1 -tags purego ./internal/blake3 ./praxis/hashline ./praxis/internal/match
go test -count=1 -tags purego -run 'WriteString|Encode' ./mcpserver
GOARCH=arm64 go vet ./internal/blake3 ./praxis/hashline ./mcpserver ./praxis/internal/match ./praxis/internal/walk
