#!/usr/bin/env bash
# Hashline tags are hashed in vector lanes on amd64 with AVX-512 or AVX2 and
# one line at a time elsewhere. go test ./... runs the kernels this CPU has
# against the one-line path; here the portable build (-tags purego, which
# every other architecture gets) runs the package's tests, and the packages
# are vetted for an architecture without the assembly.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -count=1 -tags purego ./praxis/hashline
GOARCH=arm64 go vet ./praxis/hashline
