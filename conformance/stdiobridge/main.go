// Command stdiobridge exposes an MCP server that speaks stdio as a
// streamable HTTP endpoint on a loopback address, so that HTTP-only test
// clients (the official conformance suite) can exercise a server's stdio
// transport.
//
// Usage:
//
//	stdiobridge [-addr 127.0.0.1:0] [-url-file FILE] -- COMMAND [ARGS...]
//
// Every HTTP session gets its own server process: an initialize request
// without an Mcp-Session-Id header starts COMMAND, and the session ends
// when the client sends DELETE, when the process exits, or when the bridge
// stops. The bridge never reorders messages: whatever the process writes to
// stdout reaches the HTTP client in the same order, so a stdio server that
// lets a response overtake its own notifications is caught, not hidden.
//
// Routing server messages to HTTP streams follows the streamable HTTP rules:
// a response goes to the POST stream that carried its request, and the
// stream closes once every request in that POST is answered; a progress
// notification goes to the stream of the request that owns its token;
// any other notification or server-to-client request goes to the newest
// open POST stream, else to the GET stream, else it is dropped with a log
// line.
//
// The endpoint answers only loopback Host and Origin headers (403
// otherwise, by the checks of Praxis's own HTTP endpoints), caps request
// bodies (413), and answers a body that is not JSON-RPC with the error the
// Praxis server gives it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/praxis-tools/praxis/internal/httpguard"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("stdiobridge", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback `address` to listen on")
	urlFile := fs.String("url-file", "", "write the endpoint URL to this `file` once listening")
	maxSessions := fs.Int("max-sessions", 256, "maximum number of concurrent sessions (server processes)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	command := fs.Args()
	if len(command) == 0 {
		fmt.Fprintln(os.Stderr, "usage: stdiobridge [flags] -- COMMAND [ARGS...]")
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	if !httpguard.LoopbackAddr(*addr) {
		log.Error("refusing non-loopback address", "addr", *addr)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("listen", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	b := newBridge(command, *maxSessions, log)
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	url := fmt.Sprintf("http://%s/mcp", ln.Addr())
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(url+"\n"), 0o644); err != nil {
			log.Error("writing url file", "err", err)
			return 1
		}
	}
	log.Info("listening", "url", url, "command", command)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve", "err", err)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b.closeAll()
	srv.Shutdown(shutdownCtx)
	return 0
}
