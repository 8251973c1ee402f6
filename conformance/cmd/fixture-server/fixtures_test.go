package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/mcpserver"
	"github.com/praxis-tools/praxis/praxis"
)

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    string
}

// session serves the fixtures over stdio pipes and speaks raw JSON-RPC.
type session struct {
	t    *testing.T
	in   io.WriteCloser
	msgs chan message
}

func start(t *testing.T) *session {
	srv, err := mcpserver.New(mcpserver.Options{
		Open:       func(d string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: d}) },
		Workspace:  t.TempDir(),
		Extensions: []mcpserver.Extension{fixtures()},
	})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		srv.ServeStdio(ctx, inR, outW, mcpserver.StdioOptions{})
		outW.Close()
		close(done)
	}()
	s := &session{t: t, in: inW, msgs: make(chan message, 100)}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m message
			json.Unmarshal(sc.Bytes(), &m)
			m.raw = sc.Text()
			s.msgs <- m
		}
		close(s.msgs)
	}()
	t.Cleanup(func() { inW.Close(); cancel(); <-done; srv.Close() })
	s.request(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return s
}

// request sends a request and returns the messages up to its response.
func (s *session) request(id int, method, params string) []message {
	s.t.Helper()
	fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	var got []message
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatal("the server stopped")
			}
			got = append(got, m)
			if m.Method == "" && string(m.ID) == fmt.Sprint(id) {
				if len(m.Error) > 0 {
					s.t.Fatalf("%s: %s", method, m.raw)
				}
				return got
			}
		case <-time.After(10 * time.Second):
			s.t.Fatalf("%s: no response", method)
		}
	}
}

// TestNotificationScenarios runs the two scenarios the suite finds flaky
// on a naive mcp-go server, many times: every notification arrives before
// the response.
func TestNotificationScenarios(t *testing.T) {
	s := start(t)
	s.request(1, "logging/setLevel", `{"level":"debug"}`)
	for i := range 10 {
		got := s.request(10+2*i, "tools/call", `{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p"}}`)
		if len(got) != 4 || got[0].Method != "notifications/progress" || got[2].Method != "notifications/progress" {
			t.Fatalf("progress: %d messages before the response: %v", len(got)-1, got)
		}
		got = s.request(11+2*i, "tools/call", `{"name":"test_tool_with_logging","arguments":{}}`)
		if len(got) != 4 || got[0].Method != "notifications/message" {
			t.Fatalf("logging: %d messages before the response: %v", len(got)-1, got)
		}
	}
}

func TestFixtures(t *testing.T) {
	s := start(t)
	for i, tc := range []struct{ method, params, want string }{
		{"tools/call", `{"name":"test_simple_text"}`, SimpleText},
		{"tools/call", `{"name":"test_error_handling","arguments":{}}`, `"isError":true`},
		{"tools/call", `{"name":"test_image_content","arguments":{}}`, `"mimeType":"image/png"`},
		{"tools/call", `{"name":"test_audio_content","arguments":{}}`, `"mimeType":"audio/wav"`},
		{"tools/call", `{"name":"test_multiple_content_types","arguments":{}}`, `test://mixed-content-resource`},
		{"resources/read", `{"uri":"test://static-text"}`, StaticText},
		{"resources/read", `{"uri":"test://template/123/data"}`, `Data for ID: 123`},
		{"prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"hello","arg2":"world"}}`, `arg1='hello', arg2='world'`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"}}`, `"values":["paris","park","party"]`},
		{"tools/list", `{}`, `"$defs"`},
		{"tools/list", `{}`, `"read_file"`}, // the engine's tools stay next to the fixtures
	} {
		got := s.request(100+i, tc.method, tc.params)
		if resp := got[len(got)-1].raw; !strings.Contains(resp, tc.want) {
			t.Errorf("%s %s: %s lacks %q", tc.method, tc.params, resp, tc.want)
		}
	}
}
