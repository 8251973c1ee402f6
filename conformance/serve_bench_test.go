package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

// These benchmarks drive the MCP server in-process, over the newline
// JSON-RPC a stdio client speaks and over loopback HTTP, so that
// `go test -bench -cpuprofile` shows where a call's time goes without a
// process boundary. The end-to-end figures, with the process, come from
// cmd/mcpbench (scripts/bench-mcp.sh).
//
//	go test ./conformance -run '^$' -bench Stdio -benchmem
//	go test ./conformance -run '^$' -bench Stdio/read_file_10MB -cpuprofile cpu.prof
//	go test ./conformance -run '^$' -bench HTTP -cpuprofile cpu.prof
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
		if errors.Is(err, bufio.ErrBufferFull) {
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
		if strings.Contains(head, `"error"`) || bytes.Contains(line, []byte(`"isError":true`)) {
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

// BenchmarkHTTP drives the streamable HTTP transport on a loopback
// listener with 8 clients per CPU, each with its own session, as
// cmd/mcpbench -c does. The client's cost shows in the same profile;
// filter it out with pprof -focus=mcpserver.
func BenchmarkHTTP(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "tiny.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Open:           func(dir string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: dir}) },
		Workspace:      ws,
		FixedWorkspace: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStreamableHTTP(ctx, ln, mcpserver.HTTPOptions{}) }()
	b.Cleanup(func() { cancel(); <-done; srv.Close() })
	url := "http://" + ln.Addr().String() + "/mcp"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	post := func(b *testing.B, session, body string) (string, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return "", ""
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 || strings.Contains(string(data), `"error"`) || strings.Contains(string(data), `"isError":true`) {
			b.Errorf("HTTP %d: %.300s", resp.StatusCode, data)
		}
		return resp.Header.Get("Mcp-Session-Id"), string(data)
	}
	for _, tc := range []struct{ name, body string }{
		{"ping", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{"read_file_tiny", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"tiny.txt"}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				s, _ := post(b, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
				post(b, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				for pb.Next() {
					post(b, s, tc.body)
				}
			})
		})
	}
}
