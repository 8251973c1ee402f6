package conformance_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

// These benchmarks drive the MCP server in-process over the same newline
// JSON-RPC a stdio client speaks, so that `go test -bench -cpuprofile`
// shows where a call's time goes without a process boundary. The
// end-to-end figures, with the process, come from cmd/mcpbench
// (scripts/bench-mcp.sh).
//
//	go test ./conformance -run '^$' -bench Stdio -benchmem
//	go test ./conformance -run '^$' -bench Stdio/read_file_10MB -cpuprofile cpu.prof
//	go tool pprof -top cpu.prof

// stdioClient is a raw JSON-RPC client on a server served over pipes.
type stdioClient struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

func (c *stdioClient) call(b *testing.B, method, params string) int {
	c.id++
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	want := fmt.Sprintf(`"id":%d,`, c.id)
	for {
		line, err := c.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A large response: keep what the buffer holds, read the
			// rest, and judge it whole.
			line = append([]byte(nil), line...)
			rest, err2 := c.r.ReadBytes('\n')
			if err2 != nil {
				b.Fatal(err2)
			}
			line = append(line, rest...)
		} else if err != nil {
			b.Fatal(err)
		}
		// The ID may come first or last; the payload may be megabytes.
		head := string(line[:min(len(line), 200)])
		tail := string(line[max(len(line)-200, 0):])
		if strings.Contains(head, `"method"`) && !strings.Contains(head, `"result"`) {
			continue // a notification
		}
		if !strings.Contains(head, want) && !strings.Contains(tail, fmt.Sprintf(`"id":%d}`, c.id)) {
			continue
		}
		if strings.Contains(head, `"error"`) || strings.Contains(string(line), `"isError":true`) {
			b.Fatalf("call failed: %.300s", line)
		}
		return len(line)
	}
}

func serveStdio(b *testing.B, ws string) *stdioClient {
	b.Helper()
	srv, err := mcpserver.New(mcpserver.Options{
		Open: func(dir string) (*praxis.Engine, error) {
			return praxis.New(praxis.Options{Workspace: dir})
		},
		Workspace:      ws,
		FixedWorkspace: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW, mcpserver.StdioOptions{}); outW.Close() }()
	b.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
		srv.Close()
	})
	c := &stdioClient{w: inW, r: bufio.NewReaderSize(outR, 1<<20)}
	c.call(b, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	fmt.Fprint(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return c
}

func BenchmarkStdio(b *testing.B) {
	ws := b.TempDir()
	write := func(name string, lines, width int) {
		var sb strings.Builder
		for i := range lines {
			fmt.Fprintf(&sb, "%08d %0*d\n", i, width-10, i*7919)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("tiny.txt", 1, 16)
	write("small.txt", 32, 64)    // 2 KiB
	write("big.txt", 100000, 100) // 10 MB

	cases := []struct{ name, method, params string }{
		{"ping", "ping", `{}`},
		{"read_file_tiny", "tools/call", `{"name":"read_file","arguments":{"path":"tiny.txt"}}`},
		{"read_file_2KiB", "tools/call", `{"name":"read_file","arguments":{"path":"small.txt"}}`},
		{"read_file_10MB", "tools/call", `{"name":"read_file","arguments":{"path":"big.txt","limit":100000}}`},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := serveStdio(b, ws)
			n := c.call(b, tc.method, tc.params)
			b.SetBytes(int64(n))
			b.ResetTimer()
			for b.Loop() {
				c.call(b, tc.method, tc.params)
			}
		})
	}
}
