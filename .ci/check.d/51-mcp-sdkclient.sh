#!/usr/bin/env bash
# A client written against the official MCP TypeScript SDK drives praxis
# serve over stdio and HTTP: list tools, read, edit with anchors, check bytes,
# and call every tool (failures included), the SDK validating each structured
# result against the tool's output schema.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash conformance/sdkclient/run.sh
