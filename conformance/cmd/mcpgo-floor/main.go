// Command mcpgo-floor is the floor scripts/bench-mcp.sh measures the
// Praxis server against: a bare github.com/mark3labs/mcp-go server with
// one tool, read_file, that returns a file's text as it is (no line tags,
// no paging, no structured result). Whatever Praxis does beyond it, it
// should do at no more cost than this server's library overhead.
//
// Usage:
//
//	mcpgo-floor [-workspace DIR]                 serve on stdin and stdout
//	mcpgo-floor -http 127.0.0.1:PORT [-workspace DIR]
//
// read_file takes {"path": "relative/path"}, confined to the workspace by
// os.Root. HTTP is served on loopback only, at /mcp.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/praxis-tools/praxis/internal/httpguard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo-floor:", err)
		os.Exit(1)
	}
}

// run serves the floor as args say, until the input ends or ctx is
// cancelled.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("mcpgo-floor", flag.ContinueOnError)
	httpAddr := flags.String("http", "", "serve streamable HTTP on the loopback `ADDR` (host:port) instead of stdio")
	workspace := flags.String("workspace", ".", "the `DIR` read_file reads in")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	root, err := os.OpenRoot(*workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	s := newServer(root)
	if *httpAddr == "" {
		return server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout)
	}
	if !httpguard.LoopbackAddr(*httpAddr) {
		return fmt.Errorf("-http %s: only loopback addresses are served", *httpAddr)
	}
	h := server.NewStreamableHTTPServer(s)
	errc := make(chan error, 1)
	go func() { errc <- h.Start(*httpAddr) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newServer is the floor: mcp-go's server with the one tool.
func newServer(root *os.Root) *server.MCPServer {
	s := server.NewMCPServer("mcpgo-floor", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("read_file",
		mcp.WithDescription("Returns the text of a file in the workspace."),
		mcp.WithString("path", mcp.Required(), mcp.Description("File path, relative to the workspace.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		path, err := req.RequireString("path")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		b, err := root.ReadFile(path)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(string(b)), nil
	})
	return s
}
