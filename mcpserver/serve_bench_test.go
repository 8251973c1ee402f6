package mcpserver

import (
	"bufio"
	"context"
	"io"
	"testing"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// BenchmarkServe measures the protocol path alone, without I/O: decoding,
// the dispatch, the tool, and encoding the response.
func BenchmarkServe(b *testing.B) {
	s, dir := newTestServer(b, Options{FixedWorkspace: true}, nil)
	writeFile(b, dir, "tiny.txt", "hello\n")
	c := newConn(context.Background(), s, "bench", discard{})
	c.Initialize()
	w := bufio.NewWriter(io.Discard)
	for _, tc := range []struct{ name, line string }{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"steps", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{"n":0}}}`},
		{"read_file", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"tiny.txt"}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			line := []byte(tc.line)
			b.ReportAllocs()
			for b.Loop() {
				env, _ := jsonrpc.Decode(line)
				s.serve(c.ctx, c, discard{}, env, line)(w)
				w.Flush()
			}
		})
	}
}
