package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// TestReadFile serves the floor over pipes: read_file returns a file's
// text as it is, and refuses a path out of the workspace.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	text := "line one\n\t\"two\" <3>\n"
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		server.NewStdioServer(newServer(root)).Listen(ctx, inR, outW)
		outW.Close()
		close(done)
	}()
	defer func() { cancel(); inW.Close(); <-done }()
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 1<<20)
	call := func(id int64, method, params string) *jsonrpc.Message {
		t.Helper()
		if _, err := inW.Write(append(jsonrpc.AppendRequest(nil, id, method, []byte(params)), '\n')); err != nil {
			t.Fatal(err)
		}
		got := make(chan *jsonrpc.Message, 1)
		go func() {
			for out.Scan() {
				if m, bad := jsonrpc.Decode(out.Bytes()); bad == nil && m.Kind == jsonrpc.KindResponse {
					got <- m
					return
				}
			}
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("no response to %s", method)
		}
		return nil
	}
	call(0, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	m := call(1, "tools/call", `{"name":"read_file","arguments":{"path":"a.txt"}}`)
	if want := `{"content":[{"type":"text","text":"line one\n\t\"two\" \u003c3\u003e\n"}]}`; string(m.Result) != want {
		t.Errorf("read_file: %s, want %s", m.Result, want)
	}
	m = call(2, "tools/call", `{"name":"read_file","arguments":{"path":"../x"}}`)
	if !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("a path out of the workspace: %s", m.Result)
	}
}

// TestRefusesNonLoopback: the floor serves HTTP on loopback only.
func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80"} {
		err := run(context.Background(), []string{"-http", addr, "-workspace", t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("-http %s: %v", addr, err)
		}
	}
}
