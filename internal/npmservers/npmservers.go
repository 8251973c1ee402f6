// Package npmservers finds the external MCP servers from npm that the tests
// run against: servers Praxis did not write. The CI setup installs them into
// the directory named by $PRAXIS_NPM_MCP_DIR and sets
// PRAXIS_REQUIRE_NPM_SERVERS=1; elsewhere a test that needs them is skipped
// when they are absent.
package npmservers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Memory and Everything are the executables of
// @modelcontextprotocol/server-memory and @modelcontextprotocol/server-everything.
const (
	Memory     = "mcp-server-memory"
	Everything = "mcp-server-everything"
)

// Bin returns the path of the installed server executable name. When it is
// absent, or node is not on PATH, the test is skipped, or fails if
// PRAXIS_REQUIRE_NPM_SERVERS is 1.
func Bin(t testing.TB, name string) string {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("PRAXIS_REQUIRE_NPM_SERVERS") == "1" {
			t.Fatalf("npm MCP server %s: %s (PRAXIS_REQUIRE_NPM_SERVERS=1)", name, why)
		}
		t.Skipf("npm MCP server %s: %s; run .ci/setup.d/50-mcp-npm-servers.sh", name, why)
	}
	dir := os.Getenv("PRAXIS_NPM_MCP_DIR")
	if dir == "" {
		missing("PRAXIS_NPM_MCP_DIR is not set")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		missing(err.Error())
	}
	return bin
}
