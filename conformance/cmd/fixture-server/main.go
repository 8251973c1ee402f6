// Command fixture-server serves the Praxis engine together with the
// fixtures the official MCP conformance suite (npm
// @modelcontextprotocol/conformance, server mode) calls by name: tools,
// resources and prompts named test_*, and the capabilities they need. It
// uses mcpserver's real transports, sessions and security, so the suite
// exercises those; the fixtures themselves stay out of the praxis binary.
//
// Usage:
//
//	fixture-server [-workspace DIR]              serve on stdin and stdout
//	fixture-server -http 127.0.0.1:PORT [-workspace DIR]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	workspace := flag.String("workspace", ".", "the engine's workspace `DIR`")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *httpAddr, *workspace); err != nil {
		fmt.Fprintf(os.Stderr, "fixture-server: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, httpAddr, workspace string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := mcpserver.New(mcpserver.Options{
		Open:           func(dir string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: dir}) },
		Workspace:      workspace,
		FixedWorkspace: true,
		Version:        "conformance",
		Notes:          mcpserver.EngineNotes,
		Skills:         mcpserver.EngineSkills,
		Extensions:     []mcpserver.Extension{fixtures()},
		Logger:         log,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if httpAddr == "" {
		return srv.ServeStdio(ctx, os.Stdin, os.Stdout, mcpserver.StdioOptions{})
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return err
	}
	return srv.ServeStreamableHTTP(ctx, ln, mcpserver.HTTPOptions{})
}
