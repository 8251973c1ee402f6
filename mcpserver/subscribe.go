package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/praxis"
)

// Files as resources. A file of the session's workspace is the resource
// file://PATH, PATH its absolute path as MCP roots name directories
// (percent-encoded as RFC 8089 has it). resources/read returns its
// content; resources/subscribe makes the server send
// notifications/resources/updated {uri} whenever the file changes on
// disk, until resources/unsubscribe or the session's end. The engine's
// watcher finds the changes (praxis.Engine.Subscribe). Every session is a
// praxis.Session too: a tool result tells of files the session was shown
// that changed on disk since, in its text and under _meta's
// "praxis/notices".

// noticesMetaKey is the _meta key of a tool result's notices.
const noticesMetaKey = "praxis/notices"

// fileSession is a connection's engine session and its subscriptions.
type fileSession struct {
	once sync.Once
	px   *praxis.Session

	mu   sync.Mutex
	subs map[string]fileSub // by URI as the client gave it
	done bool
}

type fileSub struct {
	eng     *praxis.Engine // nil for an extension's resource
	path    string
	release func()
}

// session returns c's engine session, made on first use; it ends with c.
func (c *conn) session() *praxis.Session {
	f := &c.files
	f.once.Do(func() {
		f.px = praxis.NewSession(c.id)
		context.AfterFunc(c.ctx, func() {
			f.mu.Lock()
			subs := f.subs
			f.subs, f.done = nil, true
			f.mu.Unlock()
			f.px.Close()
			for _, sub := range subs {
				sub.release()
			}
		})
	})
	return f.px
}

// withSession makes the calls of ctx belong to c's session. A request of
// a protocol without sessions is a session of its own, which has nothing
// to tell: it gets none.
func withSession(ctx context.Context, c *conn) context.Context {
	if c.sessionless {
		return ctx
	}
	return praxis.WithSession(ctx, c.session())
}

// noticeMeta is the _meta of a tool result carrying notices, nil for one
// without.
func noticeMeta(ns []praxis.Notice) *mcp.Meta {
	if len(ns) == 0 {
		return nil
	}
	return mcp.NewMetaFromMap(map[string]any{noticesMetaKey: ns})
}

// fileURIPath returns the absolute path a file:// URI names.
func fileURIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s is not a URI: %w", uri, err)
	case u.Scheme != "file":
		return "", fmt.Errorf("%s is not a file:// URI", uri)
	case u.Host != "" && u.Host != "localhost":
		return "", fmt.Errorf("%s names host %q; only local files are served", uri, u.Host)
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("%s: a file URI has no query or fragment (percent-encode ? and # in names)", uri)
	case !filepath.IsAbs(filepath.FromSlash(u.Path)):
		return "", fmt.Errorf("%s does not name an absolute path", uri)
	}
	return filepath.FromSlash(u.Path), nil
}

// fileURI returns the file:// URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// mountFiles serves the workspace's files as file:// resources.
func (s *Server) mountFiles() {
	s.addTemplate(
		mcp.NewResourceTemplate("file://{+path}", "workspace file",
			mcp.WithTemplateDescription("A file of the workspace, by its absolute path. Subscribe to be told when it changes on disk.")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return s.readFileResource(ctx, req.Params.URI)
		})
}

func (s *Server) readFileResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	p, err := fileURIPath(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrResourceNotFound, err)
	}
	eng, release := s.engineFor(ctx)
	defer release()
	if c := connFromContext(ctx); c != nil {
		ctx = withSession(ctx, c)
	}
	data, _, err := eng.ReadRaw(ctx, p)
	if err != nil {
		return nil, fileResourceError(err)
	}
	if utf8.Valid(data) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: string(data)}}, nil
	}
	return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: "application/octet-stream",
		Blob: base64.StdEncoding.EncodeToString(data)}}, nil
}

// fileResourceError makes a file the engine refuses (outside the
// workspace, missing, not a regular file) a resource that is not found,
// with the engine's reason.
func fileResourceError(err error) error {
	if praxis.CodeOf(err) != "" && praxis.CodeOf(err) != praxis.EIO && praxis.CodeOf(err) != praxis.EInternal {
		return fmt.Errorf("%w: %s", ErrResourceNotFound, praxis.ErrorResult(err).Text)
	}
	return err
}

// subscribe subscribes the session to the resource uri
// (resources/subscribe, subscriptions/listen). A file:// URI must name a
// regular file of the session's workspace; notifications/resources/updated
// follow each change of the file on disk. The memory notes and skills send
// no updates: subscribing to them is refused. Any other URI is an
// extension's (see Extension), which sends its own updates: the
// subscription is only recorded.
func (c *call) subscribe(uri string) error {
	switch scheme, _, _ := strings.Cut(uri, ":"); strings.ToLower(scheme) {
	case "file":
	case "memory", "skill":
		return fmt.Errorf("%s: only file:// resources send updates", uri)
	default:
		c.files.record(uri, fileSub{release: func() {}})
		return nil
	}
	p, err := fileURIPath(uri)
	if err != nil {
		return err
	}
	ctx := withCall(c.conn.ctx, c)
	eng, release := c.srv.engineFor(ctx)
	px := c.session()
	// A session of its own (a subscriptions/listen request of a protocol
	// without sessions) is told on its stream, any other on its standalone
	// stream.
	send := c.conn.sendOut
	if c.sessionless {
		send = c.out.send
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationResourceUpdated),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
	}}
	notify := func() {
		if err := send(jsonValue(n)); err != nil {
			c.srv.log.Debug("resource update dropped", "session", c.id, "uri", uri, "err", err)
		}
	}
	if _, err := eng.Subscribe(px, p, notify); err != nil {
		release()
		return errors.New(praxis.ErrorResult(err).Text)
	}
	if !c.files.record(uri, fileSub{eng: eng, path: p, release: release}) {
		eng.Unsubscribe(px, p)
		release()
		return errors.New("the session has ended")
	}
	return nil
}

// record keeps sub as the subscription to uri, in place of an earlier one.
// It reports false once the session has ended.
func (f *fileSession) record(uri string, sub fileSub) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return false
	}
	if f.subs == nil {
		f.subs = make(map[string]fileSub)
	}
	if old, ok := f.subs[uri]; ok { // subscribed again
		if old.eng != nil && old.eng != sub.eng {
			old.eng.Unsubscribe(f.px, old.path)
		}
		old.release()
	}
	f.subs[uri] = sub
	return true
}

// unsubscribe ends the session's subscription to uri, if any.
func (c *call) unsubscribe(uri string) {
	f := &c.files
	f.mu.Lock()
	sub, ok := f.subs[uri]
	delete(f.subs, uri)
	f.mu.Unlock()
	if ok {
		if sub.eng != nil {
			sub.eng.Unsubscribe(c.session(), sub.path)
		}
		sub.release()
	}
}
