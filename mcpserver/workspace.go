package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-tools/praxis/praxis"
)

// enginePool shares one engine per workspace directory between the
// sessions working there, so that they share the engine's file locks and
// version history. An engine is closed when its last user releases it.
type enginePool struct {
	open func(dir string) (*praxis.Engine, error)

	mu      sync.Mutex
	engines map[string]*pooledEngine // by real directory
}

type pooledEngine struct {
	eng  *praxis.Engine
	refs int
}

func newEnginePool(open func(string) (*praxis.Engine, error)) *enginePool {
	return &enginePool{open: open, engines: make(map[string]*pooledEngine)}
}

// acquire returns the engine for dir, opening it if no one uses it yet,
// and the function that releases it (idempotent).
func (p *enginePool) acquire(dir string) (*praxis.Engine, func(), error) {
	key, err := realDir(dir)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pe := p.engines[key]
	if pe == nil {
		eng, err := p.open(key)
		if err != nil {
			return nil, nil, err
		}
		pe = &pooledEngine{eng: eng}
		p.engines[key] = pe
	}
	pe.refs++
	return pe.eng, sync.OnceFunc(func() { p.release(key, pe) }), nil
}

// ref takes one more reference on an engine the caller already holds.
func (p *enginePool) ref(eng *praxis.Engine) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, pe := range p.engines {
		if pe.eng == eng {
			pe.refs++
			return sync.OnceFunc(func() { p.release(key, pe) })
		}
	}
	return func() {}
}

func (p *enginePool) release(key string, pe *pooledEngine) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pe.refs--; pe.refs == 0 {
		if p.engines[key] == pe {
			delete(p.engines, key)
		}
		pe.eng.Close()
	}
}

// closeAll closes every engine still open.
func (p *enginePool) closeAll() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for key, pe := range p.engines {
		errs = append(errs, pe.eng.Close())
		delete(p.engines, key)
	}
	return errors.Join(errs...)
}

// realDir returns dir made absolute with symlinks resolved; it must be a
// directory.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s: not a directory", abs)
	}
	return real, nil
}

// rootsTimeout bounds how long a call waits for the client to answer
// roots/list before it proceeds in the default workspace.
const rootsTimeout = 5 * time.Second

// sessionWorkspace is the workspace one session works in: the default one,
// or the first root its client lists. The roots are asked for when the
// session first needs a workspace and again after the client says they
// changed, on the stream of the request that needs them.
type sessionWorkspace struct {
	// stale is set when the roots must be asked for (again). It is not
	// guarded by mu: the notification that sets it must not wait for a
	// refresh in progress, which may be waiting for a message behind it.
	stale atomic.Bool

	mu      sync.Mutex // held during a refresh
	eng     *praxis.Engine
	release func()
	root    string
}

func newSessionWorkspace() *sessionWorkspace {
	w := &sessionWorkspace{}
	w.stale.Store(true)
	return w
}

func (w *sessionWorkspace) markStale() { w.stale.Store(true) }

// engine returns the session's engine with a reference the caller must
// release, or nil when the session works in the default workspace. It asks
// the client for its roots first when they are unknown or stale, and the
// client declared the roots capability.
func (w *sessionWorkspace) engine(ctx context.Context, s *Server, c *call) (*praxis.Engine, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c != nil && c.conn.clientHasRoots() && w.stale.Swap(false) {
		w.refresh(ctx, s, c)
	}
	if w.eng == nil {
		return nil, nil
	}
	return w.eng, s.engines.ref(w.eng)
}

// refresh asks the client for its roots and moves the session to the first
// one. On any failure the session keeps its workspace.
func (w *sessionWorkspace) refresh(ctx context.Context, s *Server, c *call) {
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := c.listRoots(ctx)
	if err != nil {
		s.log.Warn("roots/list failed; keeping the workspace", "session", c.conn.id, "err", err)
		return
	}
	if len(res.Roots) == 0 {
		w.set(nil, nil, "")
		return
	}
	dir, err := rootDir(res.Roots[0].URI)
	if err != nil {
		s.log.Warn("first root unusable; keeping the workspace", "session", c.conn.id, "root", res.Roots[0].URI, "err", err)
		return
	}
	if dir == w.root {
		return
	}
	eng, release, err := s.engines.acquire(dir)
	if err != nil {
		s.log.Warn("cannot open the first root; keeping the workspace", "session", c.conn.id, "root", dir, "err", err)
		return
	}
	s.log.Info("workspace from client roots", "session", c.conn.id, "workspace", eng.Workspace().Dir())
	w.set(eng, release, dir)
}

func (w *sessionWorkspace) set(eng *praxis.Engine, release func(), root string) {
	if w.release != nil {
		w.release()
	}
	w.eng, w.release, w.root = eng, release, root
}

// close releases the session's engine.
func (w *sessionWorkspace) close() {
	w.mu.Lock()
	w.set(nil, nil, "")
	w.mu.Unlock()
}

// rootDir returns the directory a root's file:// URI names.
func rootDir(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("not a file:// URI")
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file URI names host %q", u.Host)
	}
	return realDir(filepath.FromSlash(u.Path))
}
