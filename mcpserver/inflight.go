package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// inflightCall is a request admitted for serving. From the moment it is
// admitted until it is answered, a notifications/cancelled that names its
// id finds it.
type inflightCall struct {
	ctx       context.Context // the request's; done when it is cancelled
	cancel    context.CancelFunc
	cancelled atomic.Bool // by the client: no response is sent

	c   *conn
	key string // the raw request id; "" for initialize, which cannot be cancelled
}

// admit makes the request env known to c as in flight, with a context
// derived from ctx that a cancellation ends. A transport admits a request
// before it reads the next message of the stream, so that a cancellation
// that follows the request always finds it. The caller ends the returned
// call's flight with done, or hands it to Server.answer, which does.
func (c *conn) admit(ctx context.Context, env *jsonrpc.Message) *inflightCall {
	if env.Method == string(mcp.MethodInitialize) {
		return &inflightCall{ctx: ctx, c: c}
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &inflightCall{ctx: ctx, cancel: cancel, c: c, key: string(env.ID)}
	c.inflight.Store(f.key, f)
	if c.sessionless {
		c.srv.sessionless.Store(f.key, f)
	}
	return f
}

// done ends the call's flight: it is no longer found by its id, and its
// context is cancelled.
func (f *inflightCall) done() {
	if f.key == "" {
		return
	}
	f.c.inflight.CompareAndDelete(f.key, f)
	if f.c.sessionless {
		f.c.srv.sessionless.CompareAndDelete(f.key, f)
	}
	f.cancel()
}

// cancelInflight cancels the request a notifications/cancelled names and
// marks it so that no response is sent for it.
//
// A notification of a protocol without sessions comes in a connection of
// its own: it cancels the request of that ID being served for any
// connection without a session, which still gets its response (the
// client, which cancelled it, no longer waits for it).
func (c *conn) cancelInflight(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	var compact bytes.Buffer
	if json.Compact(&compact, p.RequestID) != nil {
		return
	}
	if c.sessionless {
		if e, ok := c.srv.sessionless.Load(compact.String()); ok {
			e.(*inflightCall).cancel()
		}
		return
	}
	if e, ok := c.inflight.LoadAndDelete(compact.String()); ok {
		e := e.(*inflightCall)
		e.cancelled.Store(true)
		e.cancel()
	}
}
