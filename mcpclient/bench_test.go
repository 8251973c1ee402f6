package mcpclient

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/praxis-tools/praxis/praxis"
)

// BenchmarkCall measures one external tool call through the catalog, over
// stdio and over streamable HTTP, next to an in-process tool doing the same
// work, so the ratio shows what the MCP round trip costs.
func BenchmarkCall(b *testing.B) {
	args := json.RawMessage(`{"message": "hi"}`)
	inProcess := praxis.Tool{
		Name: "echo", InputSchema: json.RawMessage(`{"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}`),
		Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
			var a struct{ Message string }
			_ = json.Unmarshal(args, &a)
			return praxis.Result{Text: "echo: " + a.Message}, nil
		},
	}
	bench := func(b *testing.B, tools []praxis.Tool, name string) {
		cat, err := praxis.NewCatalog(tools...)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := cat.Call(context.Background(), name, args)
			if err != nil || res.IsError {
				b.Fatalf("%+v %v", res, err)
			}
		}
	}
	b.Run("in-process", func(b *testing.B) { bench(b, []praxis.Tool{inProcess}, "echo") })
	b.Run("stdio", func(b *testing.B) {
		m, _ := connect(b, map[string]any{"fake": fakeStdio(b, "fake", "stdio", nil)})
		bench(b, m.Tools(), "mcp__fake__echo")
	})
	b.Run("http", func(b *testing.B) {
		srv := httptest.NewServer(server.NewStreamableHTTPServer(newFakeServer()))
		defer srv.Close()
		m, _ := connect(b, map[string]any{"remote": map[string]any{"url": srv.URL + "/mcp"}})
		bench(b, m.Tools(), "mcp__remote__echo")
	})
}
