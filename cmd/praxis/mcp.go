package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/praxis-tools/praxis/mcpclient"
)

// defaultMCPConfig is the project configuration file Claude Code reads,
// used when "praxis mcp list" is given no --config.
const defaultMCPConfig = ".mcp.json"

func runMCP(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("mcp", "list [flags]",
		"Connects to the external MCP servers of a configuration file and lists each server, its\n"+
			"state and its tools as the agent sees them (mcp__SERVER__TOOL).\n"+
			"An entry that cannot be used is listed as invalid with the reason.\n"+
			"Exit status: 0 when every enabled server connected, 1 when one did not, 2 on usage errors.", io)
	config := fs.String("config", defaultMCPConfig, "the configuration `file` (mcpServers or VS Code servers format)")
	asJSON := fs.Bool("json", false, "print the servers and tools as JSON")
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	switch {
	case fs.NArg() == 0:
		return badArgs(fs, io, "needs the subcommand list")
	case fs.Arg(0) != "list":
		return badArgs(fs, io, "has no subcommand %q (there is list)", fs.Arg(0))
	case fs.NArg() > 1:
		return badArgs(fs, io, "list takes no arguments, and was given %q", strings.Join(fs.Args()[1:], " "))
	}
	cfg, err := mcpclient.LoadConfig(*config, mcpclient.Vars{})
	if err != nil {
		fmt.Fprintf(io.err, "praxis mcp: %v\n", err)
		return exitUsage
	}
	m := mcpclient.Connect(ctx, cfg, mcpclient.Options{Logger: newLogger(io)})
	defer m.Close()
	servers := m.Servers()
	code := exitOK
	for _, s := range servers {
		if s.State == mcpclient.StateFailed || s.State == mcpclient.StateInvalid {
			code = exitToolError
		}
	}
	if *asJSON {
		writeJSON(io.out, servers)
		return code
	}
	for _, s := range servers {
		fmt.Fprintf(io.out, "%s  %s  %s", s.Name, s.State, s.Transport)
		if s.ServerName != "" {
			fmt.Fprintf(io.out, "  %s %s (protocol %s)", s.ServerName, s.ServerVersion, s.ProtocolVersion)
		}
		if s.Error != "" {
			fmt.Fprintf(io.out, "  %s", s.Error)
		}
		fmt.Fprintln(io.out)
		for _, t := range s.Tools {
			if t.Skipped != "" {
				fmt.Fprintf(io.out, "  - %-40s skipped: %s\n", t.Original, t.Skipped)
				continue
			}
			fmt.Fprintf(io.out, "  %-42s %-12s %s\n", t.Name, hints(t), firstSentence(t.Description))
		}
	}
	return code
}

// hints summarises a tool's annotations in one word.
func hints(t mcpclient.ToolInfo) string {
	var h []string
	switch {
	case t.Annotations.ReadOnly:
		h = append(h, "read-only")
	case t.Annotations.Destructive:
		h = append(h, "destructive")
	default:
		h = append(h, "writes")
	}
	if t.Annotations.OpenWorld {
		h = append(h, "open")
	}
	return strings.Join(h, ",")
}
