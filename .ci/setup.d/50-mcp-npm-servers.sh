# Installs the external MCP servers the mcpclient and agent tests run against
# (servers Praxis did not write), into a cache directory, and tells the tests
# where they are. Sourced by .ci/run.
#
#   PRAXIS_NPM_MCP_DIR          where the servers are installed (node_modules/ inside)
#   PRAXIS_REQUIRE_NPM_SERVERS  1: the tests fail instead of skipping when a server is absent
PRAXIS_NPM_MCP_DIR="${PRAXIS_NPM_MCP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/praxis/npm-mcp-servers}"
mkdir -p "$PRAXIS_NPM_MCP_DIR"
npm install --prefix "$PRAXIS_NPM_MCP_DIR" --no-audit --no-fund --loglevel=error \
	@modelcontextprotocol/server-memory@2026.8.31 \
	@modelcontextprotocol/server-everything@2026.8.31
export PRAXIS_NPM_MCP_DIR
export PRAXIS_REQUIRE_NPM_SERVERS=1
