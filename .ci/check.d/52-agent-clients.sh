#!/usr/bin/env bash
# Real clients drive praxis agent serve: the AI SDK's UI message stream
# parsing (useChat's transport, readUIMessageStream), the official OpenAI
# and Anthropic SDKs, and a reconnection with Last-Event-ID.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash agent/service/testdata/clients/run.sh
