package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/praxis"
)

// recorder is a sink that keeps what is sent to it.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) send(enc writeFunc) error {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := enc(w); err != nil {
		return err
	}
	w.Flush()
	r.mu.Lock()
	r.msgs = append(r.msgs, b.String())
	r.mu.Unlock()
	return nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.msgs
	r.msgs = nil
	return m
}

// testExtension has a tool, a resource, a template, a prompt and a
// completer of each kind, and handlers that fail and panic.
func testExtension() Extension {
	text := func(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }
	return Extension{
		Tools: []ExtensionTool{
			{Tool: mcp.NewTool("hello", mcp.WithString("who")), Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("hello " + req.GetString("who", "world")), nil
			}},
			{Tool: mcp.NewTool("fails"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, errors.New("it failed")
			}},
			{Tool: mcp.NewTool("nothing"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, nil
			}},
			{Tool: mcp.NewTool("panics"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				panic("ext kaboom")
			}},
			{Tool: mcp.NewTool("progress"), Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				sess := SessionFromContext(ctx)
				if err := sess.Progress(req.Params.Meta.ProgressToken, 1, 2, "half"); err != nil {
					return nil, err
				}
				if err := sess.Log(mcp.LoggingLevelDebug, "t", "hidden at info"); err != nil {
					return nil, err
				}
				if err := sess.Log(mcp.LoggingLevelWarning, "t", "shown"); err != nil {
					return nil, err
				}
				return text("done"), nil
			}},
		},
		Resources: []ExtensionResource{{
			Resource: mcp.NewResource("x://fixed", "fixed", mcp.WithMIMEType("text/plain")),
			Read: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "fixed"}}, nil
			},
		}},
		ResourceTemplates: []ExtensionResourceTemplate{{
			Template: mcp.NewResourceTemplate("x://item/{id}", "item"),
			Read: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				var id string
				if v, _ := req.Params.Arguments["id"].([]string); len(v) == 1 {
					id = v[0]
				}
				switch id {
				case "missing":
					return nil, ErrResourceNotFound
				case "broken":
					return nil, errors.New("disk on fire")
				}
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "item " + id}}, nil
			},
		}},
		Prompts: []ExtensionPrompt{
			{Prompt: mcp.NewPrompt("greet", mcp.WithArgument("name")), Handler: func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult("greeting", []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hi "+req.Params.Arguments["name"])),
				}), nil
			}},
			{Prompt: mcp.NewPrompt("empty"), Handler: func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			}},
			{Prompt: mcp.NewPrompt("panics"), Handler: func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				panic("prompt kaboom")
			}},
		},
		Completer: testCompleter{},
	}
}

type testCompleter struct{}

func (testCompleter) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if arg.Name == "fail" {
		return nil, errors.New("cannot complete")
	}
	return &mcp.Completion{Values: []string{prompt + ":" + arg.Name + ":" + arg.Value}}, nil
}

func (testCompleter) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return nil, nil
}

const modernMetaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestDispatch holds the server's answer to each method, with good and bad
// params, exactly as it goes on the wire, with the notifications the
// request sends before it.
func TestDispatch(t *testing.T) {
	s, _ := newTestServer(t, Options{FixedWorkspace: true, Version: "1.0", Extensions: []Extension{testExtension()}}, nil)
	rec := &recorder{}
	c := newConn(context.Background(), s, "dispatch", rec)
	t.Cleanup(c.close)
	exchange := func(line string) []string {
		t.Helper()
		env, bad := jsonrpc.Decode([]byte(line))
		if bad != nil {
			t.Fatalf("%s: %v", line, bad)
		}
		resp := s.serve(c.ctx, c, rec, env, []byte(line))
		if resp != nil {
			rec.send(resp)
		}
		return rec.take()
	}
	jsonString := func(s string) string { b, _ := json.Marshal(s); return string(b) }

	caps := `{"logging":{},"prompts":{},"resources":{"subscribe":true},"tools":{"listChanged":true},"completions":{}}`
	initResult := `{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"serverInfo":{"name":"praxis","version":"1.0"},"instructions":` + jsonString(instructions) + `}`
	tests := []struct {
		name, req string
		want      []string
	}{
		// Before initialize, logging/setLevel fails; other methods answer.
		{"setLevel before initialize", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`,
			[]string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"session not properly initialized"}}`}},
		{"initialize", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			[]string{`{"jsonrpc":"2.0","id":2,"result":` + initResult + `}`}},
		{"initialize, unknown version", `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			[]string{`{"jsonrpc":"2.0","id":"i","result":` + strings.Replace(initResult, "2025-06-18", "2025-11-25", 1) + `}`}},
		{"initialize, unparsable", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":5}}`,
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"unparsable initialize request: \"params.protocolVersion\" must be a string, got number"}}`}},
		{"ping", `{"jsonrpc":"2.0","id":4,"method":"ping"}`,
			[]string{`{"jsonrpc":"2.0","id":4,"result":{}}`}},
		{"ping, params not an object", `{"jsonrpc":"2.0","id":"p","method":"ping","params":[1]}`, // no Go name: neither PingRequest nor its embedded Request
			[]string{`{"jsonrpc":"2.0","id":"p","error":{"code":-32600,"message":"unparsable ping request: \"params\" must be a value of another type, got array"}}`}},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"foo/bar","params":{}}`,
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method foo/bar not found"}}`}},
		{"tasks", `{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"x"}}`,
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"tasks not supported"}}`}},
		{"setLevel", `{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info"}}`,
			[]string{`{"jsonrpc":"2.0","id":7,"result":{}}`}},
		{"setLevel, unknown level", `{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"loud"}}`,
			[]string{`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"invalid logging level 'loud'"}}`}},
		{"setLevel, unparsable", `{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":[]}}`,
			[]string{`{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"unparsable logging/setLevel request: \"params.level\" must be a value of another type, got array"}}`}},
		{"tools/list, bad cursor", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":"!"}}`,
			[]string{`{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"illegal base64 data at input byte 0"}}`}},
		{"tools/list, past the end", `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":"enp6"}}`,
			[]string{`{"jsonrpc":"2.0","id":11,"result":{"tools":[]}}`}},
		{"tools/call", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"hello","arguments":{"who":"you"}}}`,
			[]string{`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello you"}]}}`}},
		{"tools/call, unknown tool", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"nope"}}`,
			[]string{`{"jsonrpc":"2.0","id":13,"error":{"code":-32602,"message":"tool 'nope' not found: tool not found"}}`}},
		{"tools/call, unparsable", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":1}}`,
			[]string{`{"jsonrpc":"2.0","id":14,"error":{"code":-32600,"message":"unparsable tools/call request: \"params.name\" must be a string, got number"}}`}},
		{"tools/call, handler error", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"fails"}}`,
			[]string{`{"jsonrpc":"2.0","id":15,"error":{"code":-32603,"message":"it failed"}}`}},
		{"tools/call, no result", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"nothing"}}`,
			[]string{`{"jsonrpc":"2.0","id":16,"error":{"code":-32603,"message":"tool 'nothing' handler returned no result"}}`}},
		{"tools/call, panic", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"panics"}}`,
			[]string{`{"jsonrpc":"2.0","id":17,"error":{"code":-32603,"message":"internal error: ext kaboom"}}`}},
		{"tools/call, engine tool panics", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"boom","arguments":{}}}`,
			[]string{`{"jsonrpc":"2.0","id":18,"result":{"content":[{"type":"text","text":"E_INTERNAL: tool boom panicked: kaboom\nThis is a bug in Praxis; the server keeps running. Please report it with the call that caused it."}],"isError":true}}`}},
		{"tools/call, notifications first", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}}`,
			[]string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"half","progress":1,"progressToken":"p","total":2}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"shown","level":"warning","logger":"t"}}`,
				`{"jsonrpc":"2.0","id":19,"result":{"content":[{"type":"text","text":"done"}]}}`,
			}},
		{"resources/list", `{"jsonrpc":"2.0","id":20,"method":"resources/list"}`,
			[]string{`{"jsonrpc":"2.0","id":20,"result":{"resources":[{"uri":"x://fixed","name":"fixed","mimeType":"text/plain"}]}}`}},
		{"resources/read", `{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{"uri":"x://fixed"}}`,
			[]string{`{"jsonrpc":"2.0","id":21,"result":{"contents":[{"uri":"x://fixed","mimeType":"text/plain","text":"fixed"}]}}`}},
		{"resources/read, template", `{"jsonrpc":"2.0","id":22,"method":"resources/read","params":{"uri":"x://item/7"}}`,
			[]string{`{"jsonrpc":"2.0","id":22,"result":{"contents":[{"uri":"x://item/7","text":"item 7"}]}}`}},
		{"resources/read, not found by handler", `{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"x://item/missing"}}`,
			[]string{`{"jsonrpc":"2.0","id":23,"error":{"code":-32002,"message":"resource not found"}}`}},
		{"resources/read, no handler", `{"jsonrpc":"2.0","id":24,"method":"resources/read","params":{"uri":"y://z"}}`,
			[]string{`{"jsonrpc":"2.0","id":24,"error":{"code":-32002,"message":"handler not found for resource URI 'y://z': resource not found"}}`}},
		{"resources/read, handler error", `{"jsonrpc":"2.0","id":25,"method":"resources/read","params":{"uri":"x://item/broken"}}`,
			[]string{`{"jsonrpc":"2.0","id":25,"error":{"code":-32603,"message":"disk on fire"}}`}},
		{"resources/subscribe, no uri", `{"jsonrpc":"2.0","id":26,"method":"resources/subscribe","params":{}}`,
			[]string{`{"jsonrpc":"2.0","id":26,"error":{"code":-32602,"message":"uri is required"}}`}},
		{"resources/subscribe", `{"jsonrpc":"2.0","id":27,"method":"resources/subscribe","params":{"uri":"x://fixed"}}`,
			[]string{`{"jsonrpc":"2.0","id":27,"result":{}}`}},
		{"resources/unsubscribe", `{"jsonrpc":"2.0","id":28,"method":"resources/unsubscribe","params":{"uri":"x://fixed"}}`,
			[]string{`{"jsonrpc":"2.0","id":28,"result":{}}`}},
		{"prompts/list", `{"jsonrpc":"2.0","id":29,"method":"prompts/list"}`,
			[]string{`{"jsonrpc":"2.0","id":29,"result":{"prompts":[{"name":"empty"},{"name":"greet","arguments":[{"name":"name"}]},{"name":"panics"}]}}`}},
		{"prompts/get", `{"jsonrpc":"2.0","id":30,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"ann"}}}`,
			[]string{`{"jsonrpc":"2.0","id":30,"result":{"description":"greeting","messages":[{"role":"user","content":{"type":"text","text":"hi ann"}}]}}`}},
		{"prompts/get, no messages", `{"jsonrpc":"2.0","id":31,"method":"prompts/get","params":{"name":"empty"}}`,
			[]string{`{"jsonrpc":"2.0","id":31,"result":{"messages":[]}}`}},
		{"prompts/get, unknown prompt", `{"jsonrpc":"2.0","id":32,"method":"prompts/get","params":{"name":"nope"}}`,
			[]string{`{"jsonrpc":"2.0","id":32,"error":{"code":-32602,"message":"prompt 'nope' not found: prompt not found"}}`}},
		{"prompts/get, panic", `{"jsonrpc":"2.0","id":33,"method":"prompts/get","params":{"name":"panics"}}`,
			[]string{`{"jsonrpc":"2.0","id":33,"error":{"code":-32603,"message":"internal error: prompt kaboom"}}`}},
		{"completion/complete", `{"jsonrpc":"2.0","id":34,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"a"}}}`,
			[]string{`{"jsonrpc":"2.0","id":34,"result":{"completion":{"values":["greet:name:a"]}}}`}},
		{"completion/complete, nil completion", `{"jsonrpc":"2.0","id":35,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"x://item/{id}"},"argument":{"name":"id","value":""}}}`,
			[]string{`{"jsonrpc":"2.0","id":35,"result":{"completion":{"values":[]}}}`}},
		{"completion/complete, completer error", `{"jsonrpc":"2.0","id":36,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"fail","value":""}}}`,
			[]string{`{"jsonrpc":"2.0","id":36,"error":{"code":-32603,"message":"cannot complete"}}`}},
		{"completion/complete, unknown ref", `{"jsonrpc":"2.0","id":37,"method":"completion/complete","params":{"ref":{"type":"ref/x"},"argument":{"name":"a","value":""}}}`,
			[]string{`{"jsonrpc":"2.0","id":37,"error":{"code":-32600,"message":"unparsable completion/complete request: unknown reference type: ref/x"}}`}},
		{"server/discover without _meta", `{"jsonrpc":"2.0","id":38,"method":"server/discover"}`,
			[]string{`{"jsonrpc":"2.0","id":38,"error":{"code":-32601,"message":"\"server/discover\" requires protocol version 2026-07-28 or later"}}`}},

		// Requests of 2026-07-28 carry their version in _meta.
		{"modern ping", `{"jsonrpc":"2.0","id":40,"method":"ping","params":{` + modernMetaJSON + `}}`,
			[]string{`{"jsonrpc":"2.0","id":40,"error":{"code":-32601,"message":"\"ping\" was removed in protocol version 2026-07-28"}}`}},
		{"modern, no capabilities", `{"jsonrpc":"2.0","id":41,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			[]string{`{"jsonrpc":"2.0","id":41,"error":{"code":-32602,"message":"missing or invalid _meta field io.modelcontextprotocol/clientCapabilities"}}`}},
		{"modern, unknown version", `{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			[]string{`{"jsonrpc":"2.0","id":42,"error":{"code":-32022,"message":"unsupported protocol version: \"2099-01-01\" (supported: [2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05])","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2099-01-01"}}}`}},
		{"modern tools/call", `{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"hello",` + modernMetaJSON + `}}`,
			[]string{`{"jsonrpc":"2.0","id":43,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"praxis","version":"1.0"}},"content":[{"type":"text","text":"hello world"}],"resultType":"complete"}}`}},
		{"modern resources/read, not found", `{"jsonrpc":"2.0","id":44,"method":"resources/read","params":{"uri":"x://item/missing",` + modernMetaJSON + `}}`,
			[]string{`{"jsonrpc":"2.0","id":44,"error":{"code":-32602,"message":"resource not found"}}`}},
		{"modern resources/read", `{"jsonrpc":"2.0","id":45,"method":"resources/read","params":{"uri":"x://fixed",` + modernMetaJSON + `}}`,
			[]string{`{"jsonrpc":"2.0","id":45,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"praxis","version":"1.0"}},"resultType":"complete","ttlMs":0,"cacheScope":"private","contents":[{"uri":"x://fixed","mimeType":"text/plain","text":"fixed"}]}}`}},
		{"modern server/discover", `{"jsonrpc":"2.0","id":46,"method":"server/discover","params":{` + modernMetaJSON + `}}`,
			[]string{`{"jsonrpc":"2.0","id":46,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"praxis","version":"1.0"}},"resultType":"complete","ttlMs":0,"cacheScope":"private","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":` + caps + `,"instructions":` + jsonString(instructions) + `}}`}},
		{"modern subscriptions/listen, nothing to listen to", `{"jsonrpc":"2.0","id":47,"method":"subscriptions/listen","params":{"notifications":{},` + modernMetaJSON + `}}`,
			[]string{
				`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":47},"notifications":{}}}`,
				`{"jsonrpc":"2.0","id":47,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"praxis","version":"1.0"},"io.modelcontextprotocol/subscriptionId":47},"resultType":"complete"}}`,
			}},
		{"modern tools/call, logs only at the level _meta asks", `{"jsonrpc":"2.0","id":48,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}}}`,
			[]string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"half","progress":1,"progressToken":1,"total":2}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"hidden at info","level":"debug","logger":"t"}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"shown","level":"warning","logger":"t"}}`,
				`{"jsonrpc":"2.0","id":48,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"praxis","version":"1.0"}},"content":[{"type":"text","text":"done"}],"resultType":"complete"}}`,
			}},

		// Notifications get no answer.
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}}`, nil},
	}
	for _, tc := range tests {
		got := exchange(tc.req)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
		}
	}
}

// TestSessionRequestsOfModernRequests: a handler serving a request of
// 2026-07-28 cannot make requests to the client.
func TestSessionRequestsOfModernRequests(t *testing.T) {
	s, _ := newTestServer(t, Options{FixedWorkspace: true}, nil)
	c := newConn(context.Background(), s, "", discard{})
	t.Cleanup(c.close)
	cl := newCall(c, discard{})
	cl.era = era{modern: true}
	sess := SessionFromContext(withCall(c.ctx, cl))
	if _, err := sess.Elicit(c.ctx, mcp.ElicitationParams{Message: "m", RequestedSchema: map[string]any{"type": "object"}}); !errors.Is(err, ErrServerRequestsUnsupported) {
		t.Errorf("Elicit: %v", err)
	}
	if _, err := sess.ListRoots(c.ctx); !errors.Is(err, ErrServerRequestsUnsupported) {
		t.Errorf("ListRoots: %v", err)
	}
	if SessionFromContext(context.Background()) != nil {
		t.Error("a session outside a request")
	}
}

// TestListChanged: the sessions are told when a list changes, and only
// then: listing the same notes again tells nothing.
func TestListChanged(t *testing.T) {
	notes := &fakeNotes{notes: map[string]string{"a": "x"}}
	s, _ := newTestServer(t, Options{FixedWorkspace: true, Notes: func(*praxis.Engine) Notes { return notes }}, nil)
	rec := &recorder{}
	c := newConn(context.Background(), s, "lists", rec)
	if err := c.register(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	c.Initialize()
	list := func() {
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
		env, _ := jsonrpc.Decode(line)
		s.serve(c.ctx, c, discard{}, env, line)
	}
	// want waits for the notifications on the session's stream.
	want := func(n int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		var got []string
		for time.Now().Before(deadline) {
			rec.mu.Lock()
			got = slices.Clone(rec.msgs)
			rec.mu.Unlock()
			if len(got) >= n {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // and no more
		got = rec.take()
		if len(got) != n {
			t.Fatalf("notifications %q, want %d", got, n)
		}
		for _, m := range got {
			if m != `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}` {
				t.Errorf("notification %s", m)
			}
		}
	}
	list()
	want(1)
	list()
	want(0)
	notes.set("b", "y")
	list()
	want(1)
}
