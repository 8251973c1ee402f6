// Package conformance holds what proves that Praxis speaks MCP correctly:
// the fixture server the official conformance suite runs against
// (cmd/fixture-server), the client its client scenarios drive, which is
// Praxis's own MCP client (cmd/conformance-client, run-client-suite.sh),
// the scripts that run the suite and a client written
// against the official TypeScript SDK (run-suite.sh, sdkclient/), the
// stdio bridge that lets the suite reach a stdio server (stdiobridge/),
// in-process benchmarks of the server (serve_bench_test.go), and the mcp-go
// floor server scripts/bench-mcp.sh measures Praxis against
// (cmd/mcpgo-floor).
package conformance
