package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
)

// DefaultMaxMessageBytes is the default bound on one incoming stdio line:
// large enough for a write_file of the largest file read_file accepts,
// escaped. HTTP bodies have their own, smaller default
// (DefaultMaxBodyBytes), as HTTP serves many clients at once.
const DefaultMaxMessageBytes = 96 << 20

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// MaxMessageBytes bounds one incoming line. A longer line is skipped and
	// answered with a JSON-RPC error. Default DefaultMaxMessageBytes.
	MaxMessageBytes int
}

// lineSink is the stdio sink: one message per line, written whole and
// flushed.
type lineSink struct{ lw *jsonrpc.LineWriter }

func (l lineSink) send(enc writeFunc) error { return l.lw.Send(enc) }

// ServeStdio serves one client over newline-delimited JSON-RPC on r and w
// until r ends or ctx is cancelled. Only protocol messages are written to w.
// Requests are served concurrently; a request's notifications are written
// before its response. When r ends, the calls in flight finish first; when
// ctx is cancelled, they are cancelled and get a few seconds to return.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer, opts StdioOptions) error {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	out := lineSink{jsonrpc.NewLineWriter(w)}
	var id [8]byte
	rand.Read(id[:])
	c := newConn(ctx, s, "stdio-"+hex.EncodeToString(id[:]), out)
	if err := c.register(); err != nil {
		return err
	}
	d := &dispatcher{srv: s, c: c, out: out, jobs: make(chan func()),
		in: bufio.NewReaderSize(r, 64<<10), max: opts.MaxMessageBytes, readErr: make(chan error, 1)}
	defer d.stop()

	go d.read()
	select {
	case err := <-d.readErr:
		// The client closed its end: let the calls in flight answer.
		d.wait(0)
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	case <-ctx.Done():
		return nil
	}
}

// stdioWorkers is how many goroutines wait for work: reading on, or a
// batch. They keep their grown stacks from one request to the next; when
// none is idle, a goroutine of its own takes the work, so a long call never
// delays another. They start as work first finds none idle, not with the
// connection: a goroutine started then costs the client's first requests
// a thread of the runtime's.
const stdioWorkers = 4

// dispatcher routes the messages of one stdio connection.
//
// One goroutine at a time reads. When it reads a request, it hands the
// reading on to an idle worker and serves the request itself: the request
// starts at once, on the goroutine that has just read it, instead of
// waiting for another to wake; the worker reads the next message
// meanwhile. Requests thus run concurrently, while notifications and
// responses are handled in the order they came.
type dispatcher struct {
	srv     *Server
	c       *conn
	out     sink
	jobs    chan func()
	workers int // started, at most stdioWorkers; guarded by mu

	in      *bufio.Reader // read by one goroutine at a time
	max     int
	readErr chan error // why reading stopped

	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

func (d *dispatcher) work() {
	for job := range d.jobs {
		job()
	}
}

// read reads messages until the input ends, then reports why on
// d.readErr. A request that runs concurrently is served on this goroutine
// once another has taken the reading over. A line over the bound is
// skipped to its end and answered with an error.
func (d *dispatcher) read() {
	for {
		line, err := jsonrpc.ReadLine(d.in, d.max)
		if errors.Is(err, jsonrpc.ErrLineTooLong) {
			d.out.send(errorFunc(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over the limit of %d bytes", d.max)))
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if env := d.handle(line); env != nil {
				// Admitted before the next message is read: a
				// cancellation right behind the request finds it.
				f := d.c.admit(d.c.ctx, env)
				if d.handOff() {
					d.respond(f, env, line)
					d.wg.Done()
					return
				}
				f.done()
			}
		}
		if err != nil {
			d.readErr <- err
			return
		}
	}
}

// handOff passes the reading to an idle worker, or to a goroutine of its
// own, and counts the request the caller then serves. It reports false,
// doing neither, when the connection is closing.
func (d *dispatcher) handOff() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false
	}
	d.wg.Add(1)
	d.run(d.read)
	return true
}

// run runs job on an idle worker, on a new one while there are fewer than
// stdioWorkers, or else on a goroutine of its own. d.mu is held.
func (d *dispatcher) run(job func()) {
	select {
	case d.jobs <- job:
	default:
		if d.workers < stdioWorkers {
			d.workers++
			go func() {
				job()
				d.work()
			}()
			return
		}
		go job()
	}
}

// handle routes one line from the client. Responses to the server's
// requests and notifications are handled in order, on the reading
// goroutine, so that a cancellation is seen while its call still runs;
// so is initialize, so that what follows finds the session initialized.
// A request to serve concurrently is returned.
func (d *dispatcher) handle(line []byte) *jsonrpc.Message {
	if jsonrpc.IsBatch(line) {
		d.handleBatch(line)
		return nil
	}
	env, bad := jsonrpc.Decode(line)
	if bad != nil {
		d.out.send(errorResponse(bad))
		return nil
	}
	switch env.Kind {
	case jsonrpc.KindResponse:
		if !d.c.deliver(env) {
			d.srv.log.Debug("stdio: response to no pending request", "id", string(env.ID))
		}
	case jsonrpc.KindNotification:
		d.srv.serve(d.c.ctx, d.c, d.out, env, line)
	case jsonrpc.KindRequest:
		if env.Method != string(mcp.MethodInitialize) {
			return env
		}
		d.respond(d.c.admit(d.c.ctx, env), env, line)
	}
	return nil
}

// spawn runs job on a worker, or on a goroutine of its own when none is
// idle, unless the connection is closing. It reports whether it did.
func (d *dispatcher) spawn(job func()) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false
	}
	d.wg.Add(1)
	wrapped := func() {
		defer d.wg.Done()
		job()
	}
	d.run(wrapped)
	return true
}

// handleBatch serves a JSON-RPC batch, if the session's protocol version
// has them: its responses and notifications in order, its requests
// concurrently, and their responses as one array once all are answered.
func (d *dispatcher) handleBatch(line []byte) {
	if v := d.c.negotiated(); !batchesAllowed(v) {
		d.out.send(errorResponse(batchRefusal(v)))
		return
	}
	items, bad := jsonrpc.SplitBatch(line)
	if bad != nil {
		d.out.send(errorResponse(bad))
		return
	}
	b := splitBatch(d.c.ctx, d.c, items)
	reqs, raws, resps := b.reqs, b.raws, b.resps
	if len(reqs) == 0 {
		if len(resps) > 0 {
			d.out.send(joinResponses(resps))
		}
		return
	}
	started := d.spawn(func() {
		resps := append(resps, serveAll(func(i int) writeFunc {
			return d.srv.answer(b.flights[i], d.out, reqs[i], raws[i])
		}, len(reqs))...)
		if len(resps) > 0 {
			if err := d.out.send(joinResponses(resps)); err != nil {
				d.srv.log.Warn("stdio: writing a batch response", "err", err)
			}
		}
	})
	if !started {
		b.done()
	}
}

// serveAll runs serve(0..n-1) concurrently and returns the responses,
// without the nil ones of cancelled requests.
func serveAll(serve func(int) writeFunc, n int) []writeFunc {
	out := make([]writeFunc, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = serve(i) })
	}
	wg.Wait()
	return slices.DeleteFunc(out, func(w writeFunc) bool { return w == nil })
}

// respond serves the request env, admitted as f, and writes its response.
func (d *dispatcher) respond(f *inflightCall, env *jsonrpc.Message, line []byte) {
	if resp := d.srv.answer(f, d.out, env, line); resp != nil {
		if err := d.out.send(resp); err != nil {
			d.srv.log.Warn("stdio: writing a response", "err", err)
		}
	}
}

// wait stops taking requests and waits for those in flight, at most
// timeout if it is positive.
func (d *dispatcher) wait(timeout time.Duration) {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	if timeout <= 0 {
		d.wg.Wait()
		return
	}
	waitAtMost(&d.wg, timeout)
}

// stop ends the connection: calls still running are cancelled and get
// shutdownGrace to return.
func (d *dispatcher) stop() {
	d.c.close()
	d.wait(shutdownGrace)
	d.mu.Lock()
	close(d.jobs)
	d.mu.Unlock()
}

// errorFunc writes a JSON-RPC error response, its message in the
// protocol's words (see protocolText).
func errorFunc(id json.RawMessage, code int, msg string) writeFunc {
	return func(w *bufio.Writer) error {
		_, err := w.Write(jsonrpc.AppendError(w.AvailableBuffer(), id, code, protocolText(msg)))
		return err
	}
}

// shutdownGrace is how long cancelled calls get to return before the
// server stops waiting for them.
const shutdownGrace = 5 * time.Second

// waitAtMost waits for wg, or for d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
