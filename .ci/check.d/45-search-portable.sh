#!/usr/bin/env bash
# The walker has a Linux form (directory descriptors) and a portable one
# (os.Root paths) for other systems; build the portable one here and run the
# search tests on it, ripgrep comparison included.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -count=1 -tags walkportable ./praxis/internal/walk
go test -count=1 -tags walkportable -run 'Grep|Glob|Search' ./praxis
