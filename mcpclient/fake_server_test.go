package mcpclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tests start real processes: the test binary itself, re-executed with
// fakeServerEnv set, serves MCP on stdio with the tools newFakeServer
// defines.
const fakeServerEnv = "PRAXIS_MCPCLIENT_FAKE_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeServerEnv) {
	case "":
		os.Exit(m.Run())
	case "stdio":
		if os.Getenv("FAKE_CHILD_PIDFILE") != "" {
			startChild(os.Getenv("FAKE_CHILD_PIDFILE"))
		}
		if err := server.ServeStdio(newFakeServer()); err != nil {
			fmt.Fprintln(os.Stderr, "fake server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "silent":
		// Reads requests and never answers any.
		fmt.Fprintln(os.Stderr, "silent fake server: reading and never answering")
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "fake server: missing API token, giving up")
		os.Exit(2)
	}
}

// startChild starts a long-lived grandchild, as npx does, and records its
// pid, so that the tests can check that Close leaves no process behind.
func startChild(pidfile string) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fake server: child:", err)
		os.Exit(1)
	}
	_ = os.WriteFile(pidfile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

func newFakeServer() *server.MCPServer {
	s := server.NewMCPServer("fake", "1.2.3", server.WithToolCapabilities(false))
	echo := mcp.NewTool("echo",
		mcp.WithDescription("Echoes its message."),
		mcp.WithString("message", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
	s.AddTool(echo, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
	})
	// No annotations at all: Praxis must assume the worst.
	s.AddTool(mcp.Tool{Name: "pid", Description: "Returns the server's process id.",
		InputSchema: mcp.ToolInputSchema{Type: "object"}},
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always reports a failure.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("the widget is broken"), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Kills the server in the middle of the call.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fake server: crashing as asked")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answers.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			time.Sleep(time.Hour)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("a.b/c d", mcp.WithDescription("A name that needs sanitising.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("sanitised"), nil
		})
	return s
}
