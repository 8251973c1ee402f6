package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// TestFastToolCallMatchesDispatch runs the same tools/call requests through
// the fast path and through the generic dispatch, and compares the
// responses on the wire.
func TestFastToolCallMatchesDispatch(t *testing.T) {
	s, dir := newTestServer(t, Options{FixedWorkspace: true}, nil)
	writeFile(t, dir, "a.txt", "one\ntwo\n")
	c := newConn(context.Background(), s, "parity", discard{})
	c.Initialize()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`,
		`{"jsonrpc":"2.0","id":"x-2","method":"tools/call","params":{"name":"read_file","arguments":{"path":"missing"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":7}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_dir","arguments":null}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps","arguments":{"n":2},"_meta":{"progressToken":"t"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"b.txt","content":"x\n"}}}`,
	} {
		env, bad := jsonrpc.Decode([]byte(line))
		if bad != nil {
			t.Fatal(bad)
		}
		cl := newCall(c, discard{})
		ctx := withCall(c.ctx, cl)
		fast := s.fastToolCall(ctx, cl, env)
		if fast == nil {
			t.Fatalf("%s: not served by the fast path", line)
		}
		os.Remove(filepath.Join(dir, "b.txt")) // write_file: both paths create it
		generic := responseFunc(env.ID, s.dispatch(ctx, newCall(c, discard{}), env, []byte(line)))
		if got, want := render(t, fast), render(t, generic); !jsonEqual(t, got, want) {
			t.Errorf("%s:\nfast      %s\ndispatch  %s", line, got, want)
		}
	}
	// Tools of extensions, task-augmented calls and other metadata are
	// left to the generic dispatch.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{},"task":{"ttl":1000}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"other":1}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"steps\",\"arguments\":{},\"_meta\":{\"progressToken\":\"\xff\"}}}",
	} {
		env, _ := jsonrpc.Decode([]byte(line))
		cl := newCall(c, discard{})
		if s.fastToolCall(withCall(c.ctx, cl), cl, env) != nil {
			t.Errorf("%s: served by the fast path", line)
		}
	}
}

func render(t *testing.T, f writeFunc) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := f(w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return b.Bytes()
}
