package main

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/praxis-tools/praxis/mcpclient"
)

func runConnect(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("connect", "[flags] URL",
		"Serves MCP on standard input and output by forwarding every message to a remote\n"+
			"\"praxis serve --http\" at URL (for example http://127.0.0.1:8765/mcp), so that a\n"+
			"client that only runs stdio servers can use a shared HTTP server.", io)
	token := fs.String("token", "", "bearer `token` for the server (default $PRAXIS_TOKEN)")
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return badArgs(fs, io, "needs one URL, such as http://127.0.0.1:8765/mcp")
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(io.err, "praxis connect: %q is not an http(s) URL; give the server's address, such as http://127.0.0.1:8765/mcp\n", fs.Arg(0))
		return exitUsage
	}
	if *token == "" {
		*token = os.Getenv("PRAXIS_TOKEN")
	}
	err = mcpclient.Forward(ctx, u.String(), mcpclient.ForwardOptions{Token: *token, Logger: newLogger(io)}, io.in, io.out)
	if err != nil {
		fmt.Fprintf(io.err, "praxis connect: %v\n", err)
		return exitToolError
	}
	return exitOK
}
