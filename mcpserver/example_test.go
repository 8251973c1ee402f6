package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

// A client's initialize, then a read_file call, served over stdio.
func ExampleServer_ServeStdio() {
	dir, err := os.MkdirTemp("", "praxis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello, world\n"), 0o644)

	srv, err := mcpserver.New(mcpserver.Options{
		Open:           func(d string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: d}) },
		Workspace:      dir,
		FixedWorkspace: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	in := strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}
`)
	var out bytes.Buffer
	if err := srv.ServeStdio(context.Background(), in, &out, mcpserver.StdioOptions{}); err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		json.Unmarshal(sc.Bytes(), &resp)
		if resp.ID == 1 {
			fmt.Print(resp.Result.Content[0].Text)
		}
	}
	// Output:
	// # hello.txt version=623a5460d841b6d1 lines=1-1 of 1 eol=lf
	// 1:3dcffb54|hello, world
}

// An extension's tool, which reports progress through its session before
// it answers.
func ExampleExtension() {
	countdown := mcpserver.ExtensionTool{
		Tool: mcp.NewTool("countdown", mcp.WithDescription("Counts down from 2."), mcp.WithReadOnlyHintAnnotation(true)),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				sess := mcpserver.SessionFromContext(ctx)
				for i := 1; i <= 2; i++ {
					if err := sess.Progress(req.Params.Meta.ProgressToken, float64(i), 2, ""); err != nil {
						return nil, err
					}
				}
			}
			return mcp.NewToolResultText("liftoff"), nil
		},
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Open:           func(d string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: d}) },
		Workspace:      os.TempDir(),
		FixedWorkspace: true,
		Extensions:     []mcpserver.Extension{{Tools: []mcpserver.ExtensionTool{countdown}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	in := strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"countdown","_meta":{"progressToken":"t"}}}
`)
	var out bytes.Buffer
	if err := srv.ServeStdio(context.Background(), in, &out, mcpserver.StdioOptions{}); err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		fmt.Println(line)
	}
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"t","total":2}}
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2,"progressToken":"t","total":2}}
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"liftoff"}]}}
}
