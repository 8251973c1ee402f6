// Command praxis is the Praxis tool engine for coding agents: it serves
// the engine's tools over MCP, runs an agent loop, and calls tools directly.
//
// Run "praxis help" for the commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stdio is what a command reads and writes; tests substitute their own.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// Exit statuses shared by every command.
const (
	exitOK        = 0
	exitToolError = 1 // the command ran, and what it ran failed
	exitUsage     = 2 // the command line was wrong
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io stdio) int
}

func commands() []command {
	return []command{
		{"agent", "run an agent on a task with the engine's tools and external MCP servers", runAgent},
		{"call", "run one tool and print its result", runCall},
		{"serve", "serve the tools over MCP (stdio, or streamable HTTP with --http)", runServe},
		{"connect", "serve on stdio by forwarding to a remote praxis serve --http", runConnect},
		{"mcp", "list external MCP servers and their tools (mcp list)", runMCP},
		{"sessions", "list, show and replay agent sessions (sessions list|show|replay)", runSessions},
		{"tools", "list the engine's tools", runTools},
		{"skills", "list, show and check skills (SKILL.md)", runSkills},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	go cancelOnSignal(cancel)
	os.Exit(run(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
}

// cancelOnSignal calls cancel at the first SIGINT or SIGTERM, as
// signal.NotifyContext would, and keeps catching them until the process
// exits. main runs it beside start-up rather than before it: the runtime
// sets signal handling up on a thread of its own and waits for that
// thread, 0.5-1 ms of every command's start.
func cancelOnSignal(cancel context.CancelFunc) {
	<-catchSignals()
	cancel()
}

// catchSignals makes SIGINT and SIGTERM arrive on the channel it returns,
// from its first call on; code that takes one of them over calls it first,
// so that the catching is not set up again after.
var catchSignals = sync.OnceValue(func() chan os.Signal {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	return sig
})

func run(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		usage(io.err)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(io.out)
		return exitOK
	case "-version", "--version":
		return runVersion(ctx, nil, io)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], io)
		}
	}
	fmt.Fprintf(io.err, "praxis: unknown command %q\n\n", args[0])
	usage(io.err)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Praxis: a tool engine for coding agents.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: praxis COMMAND [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "praxis COMMAND --help" for a command's flags.`)
}
