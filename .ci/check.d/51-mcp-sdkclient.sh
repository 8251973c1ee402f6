#!/usr/bin/env bash
# A client written against the official MCP TypeScript SDK drives praxis
# serve over stdio and HTTP: list tools, read, edit with anchors, check bytes
# and structured output.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash conformance/sdkclient/run.sh
