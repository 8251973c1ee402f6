#!/usr/bin/env bash
# BLAKE3 runs in vector lanes on amd64 with AVX-512 or AVX2 and one block at
# a time elsewhere. go test ./... runs the kernels this CPU has against the
# one-block path; here the portable build (-tags purego, which every other
# architecture gets) runs the tests of the hash and of the hashline tags,
# and both packages are vetted for an architecture without the assembly.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -count=1 -tags purego ./internal/blake3 ./praxis/hashline
GOARCH=arm64 go vet ./internal/blake3 ./praxis/hashline
