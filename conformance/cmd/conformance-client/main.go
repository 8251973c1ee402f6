// Command conformance-client is the client the official MCP conformance
// suite drives in its client scenarios (conformance/run-client-suite.sh):
// it connects to the server whose URL is its last argument over
// streamable HTTP with package mcpclient, exactly as Praxis connects to
// the servers of an MCP configuration, and calls the tool the scenario
// named in $MCP_CONFORMANCE_SCENARIO expects to be called. It exits 1
// when the server could not be reached or the call failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/praxis-tools/praxis/mcpclient"
	"github.com/praxis-tools/praxis/praxis"
)

// calls are the tools the scenarios expect a call of, with its arguments.
var calls = map[string]struct{ tool, args string }{
	"tools_call": {"add_numbers", `{"a": 5, "b": 3}`},
	"sse-retry":  {"test_reconnection", `{}`},
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client SERVER_URL")
		os.Exit(2)
	}
	os.Exit(run(os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO")))
}

func run(url, scenario string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	conf, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"server": map[string]any{"type": "http", "url": url, "timeout": "20s"},
	}})
	if err != nil {
		log.Error("config", "err", err)
		return 1
	}
	cfg, err := mcpclient.ParseConfig(conf, mcpclient.Vars{})
	if err != nil {
		log.Error("config", "err", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	m := mcpclient.Connect(ctx, cfg, mcpclient.Options{Logger: log, ClientName: "praxis-conformance-client", ClientVersion: "1.0.0"})
	defer m.Close()
	st := m.Servers()[0]
	if st.State != mcpclient.StateConnected {
		log.Error("not connected", "state", st.State, "err", st.Error)
		return 1
	}
	log.Info("connected", "server", st.ServerName, "protocol", st.ProtocolVersion, "tools", len(st.Tools))
	c, ok := calls[scenario]
	if !ok {
		return 0
	}
	cat, err := praxis.NewCatalog(m.Tools()...)
	if err != nil {
		log.Error("catalog", "err", err)
		return 1
	}
	res, err := cat.Call(ctx, "mcp__server__"+c.tool, json.RawMessage(c.args))
	if err != nil || res.IsError {
		log.Error("call failed", "tool", c.tool, "text", res.Text, "err", err)
		return 1
	}
	fmt.Println(res.Text)
	return 0
}
