// Command mcpbench measures an MCP server from the outside, speaking raw
// JSON-RPC over stdio or streamable HTTP.
//
// Usage:
//
//	mcpbench [flags] -- COMMAND [ARGS...]            stdio: spawns COMMAND
//	mcpbench [flags] -url URL                        HTTP: a running server
//	mcpbench [flags] -url URL -- COMMAND [ARGS...]   HTTP: spawns COMMAND, then connects to URL
//
// It reports, for one call given by -method (and -tool / -args for
// tools/call):
//
//   - cold start: from spawning the server to the initialize response (or
//     with -cold-until tools/list, to the tools/list response after the
//     handshake), the median of -cold fresh starts (spawned servers only);
//   - idle RSS after initialization and peak RSS after the run, summed over
//     the spawned process and its descendants (Linux /proc; spawned servers
//     only);
//   - latency percentiles of -n calls after -warmup unmeasured ones, and
//     calls per second; with -c N, N concurrent clients share the -n calls:
//     over HTTP each with its own session, over stdio as N requests in
//     flight on the one connection.
//
// Every measured call must succeed: a JSON-RPC error or an isError result
// stops the run, so an error path is never benchmarked by mistake.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is what one run measures.
type config struct {
	url      string
	command  []string
	dir      string
	method   string
	tool     string
	args     string
	n        int
	warmup   int
	clients  int
	cold     int
	label    string
	jsonOut  bool
	timeout  time.Duration
	idleWait time.Duration
	showLog  bool
	fields   string
	// coldUntil is the response a cold start ends with: initialize, or
	// tools/list (sent after the handshake).
	coldUntil string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.url, "url", "", "streamable HTTP endpoint `URL` (loopback); without it, COMMAND is spoken to over stdio")
	fs.StringVar(&c.dir, "dir", "", "working `directory` for COMMAND")
	fs.StringVar(&c.method, "method", "tools/call", "JSON-RPC `method` to measure (tools/call, ping, tools/list, ...)")
	fs.StringVar(&c.tool, "tool", "", "tool `name` for tools/call")
	fs.StringVar(&c.args, "args", "{}", "tool arguments as a JSON `object`")
	fs.IntVar(&c.n, "n", 2000, "measured calls in total")
	fs.IntVar(&c.warmup, "warmup", 200, "unmeasured calls before measuring, per client")
	fs.IntVar(&c.clients, "c", 1, "concurrent clients (HTTP only)")
	fs.IntVar(&c.cold, "cold", 5, "cold starts to measure (spawned servers only; 0 to skip)")
	fs.StringVar(&c.coldUntil, "cold-until", "initialize", "the `response` a cold start ends with: initialize, or tools/list after the handshake")
	fs.StringVar(&c.label, "label", "", "label printed with the result")
	fs.BoolVar(&c.jsonOut, "json", false, "print the result as one JSON object")
	fs.StringVar(&c.fields, "fields", "", "print only these comma-separated JSON `fields` of the result, space-separated on one line (for scripts)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "limit for any single call or start")
	fs.BoolVar(&c.showLog, "server-log", false, "pass the spawned server's stderr through (discarded by default)")
	fs.DurationVar(&c.idleWait, "idle-wait", 300*time.Millisecond, "settle time before sampling idle RSS")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcpbench [flags] [-url URL] [-- COMMAND [ARGS...]]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(argv); err != nil {
		return 2
	}
	c.command = fs.Args()
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, "mcpbench:", err)
		fs.Usage()
		return 2
	}
	res, err := measure(ctx, c)
	if err != nil {
		fmt.Fprintln(stderr, "mcpbench:", err)
		return 1
	}
	switch {
	case c.fields != "":
		if err := printFields(stdout, res, c.fields); err != nil {
			fmt.Fprintln(stderr, "mcpbench:", err)
			return 2
		}
	case c.jsonOut:
		json.NewEncoder(stdout).Encode(res)
	default:
		res.print(stdout)
	}
	return 0
}

func (c *config) check() error {
	switch {
	case c.url == "" && len(c.command) == 0:
		return errors.New("give a server COMMAND after --, or -url")
	case c.method == "tools/call" && c.tool == "":
		return errors.New("tools/call needs -tool")
	case c.n < 1 || c.warmup < 0 || c.cold < 0:
		return errors.New("-n must be positive, -warmup and -cold not negative")
	case c.clients < 1:
		return errors.New("-c must be positive")
	case c.coldUntil != "initialize" && c.coldUntil != "tools/list":
		return fmt.Errorf("-cold-until is initialize or tools/list, not %q", c.coldUntil)
	}
	if c.method == "tools/call" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(c.args), &obj); err != nil || obj == nil {
			return fmt.Errorf("-args must be a JSON object: %q", c.args)
		}
	}
	return nil
}

// params is the params object of the measured request.
func (c *config) params() json.RawMessage {
	if c.method == "tools/call" {
		p, _ := json.Marshal(map[string]any{"name": c.tool, "arguments": json.RawMessage(c.args)})
		return p
	}
	return json.RawMessage(`{}`)
}

// printFields prints the named JSON fields of res on one line; a field that
// was not measured prints as "-".
func printFields(w io.Writer, res *result, fields string) error {
	b, _ := json.Marshal(res)
	var m map[string]any
	json.Unmarshal(b, &m)
	known := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[result]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		known[name] = true
	}
	var out []string
	for _, f := range strings.Split(fields, ",") {
		f = strings.TrimSpace(f)
		if !known[f] {
			return fmt.Errorf("unknown field %q", f)
		}
		v, ok := m[f]
		switch {
		case !ok:
			out = append(out, "-")
		case reflect.TypeOf(v).Kind() == reflect.Float64:
			out = append(out, strconv.FormatFloat(v.(float64), 'f', -1, 64))
		default:
			out = append(out, fmt.Sprint(v))
		}
	}
	_, err := fmt.Fprintln(w, strings.Join(out, " "))
	return err
}
