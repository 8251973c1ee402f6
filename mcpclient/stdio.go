package mcpclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonrpc"
	"github.com/praxis-tools/praxis/internal/procgroup"
)

// The stdio transport's limits and grace periods.
const (
	// maxStdioMessage bounds one line the server writes: a longer one is
	// skipped.
	maxStdioMessage = 64 << 20
	// stdioGrace is how long a server has to exit after its standard input
	// is closed, and again after SIGTERM.
	stdioGrace = 2 * time.Second
	// stdioDrain is how long, after the process exited, its output and
	// standard error are read before the connection is declared dead.
	stdioDrain = 500 * time.Millisecond
)

// stdioTransport runs a server as a child process in its own process group
// and speaks newline-delimited JSON-RPC on its standard input and output.
// Each line of its standard error goes to stderr.
type stdioTransport struct {
	command string
	args    []string
	env     []string // added to Praxis's environment
	dir     string
	stderr  io.Writer
	log     *slog.Logger

	cmd        *exec.Cmd
	wmu        sync.Mutex
	stdin      *os.File
	exited     chan struct{} // closed when the process has been reaped
	exitErr    error         // how it ended, once exited is closed
	stderrDone chan struct{} // closed when its standard error is read to the end
	closeOnce  sync.Once
}

func (t *stdioTransport) start(_ context.Context, h handler) error {
	cmd := exec.Command(t.command, t.args...)
	cmd.Env = append(os.Environ(), t.env...)
	cmd.Dir = t.dir
	procgroup.Own(cmd)
	// [0] is the child's end of each pipe, [1] the client's.
	var pipes [3][2]*os.File
	closeAll := func(end int) {
		for _, p := range pipes {
			if p[end] != nil {
				p[end].Close()
			}
		}
	}
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(0)
			closeAll(1)
			return err
		}
		if i == 0 {
			pipes[i] = [2]*os.File{r, w}
		} else {
			pipes[i] = [2]*os.File{w, r}
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0][0], pipes[1][0], pipes[2][0]
	err := cmd.Start()
	closeAll(0)
	if err != nil {
		closeAll(1)
		return err
	}
	inW, outR, errR := pipes[0][1], pipes[1][1], pipes[2][1]
	t.cmd, t.stdin = cmd, inW
	t.exited, t.stderrDone = make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = io.Copy(t.stderr, errR)
		errR.Close()
		close(t.stderrDone)
	}()
	go func() {
		t.exitErr = cmd.Wait()
		close(t.exited)
	}()
	readDone := make(chan struct{})
	go func() {
		// A grandchild holding the output open must not hide the death of
		// the server.
		select {
		case <-readDone:
		case <-t.exited:
			select {
			case <-readDone:
			case <-time.After(stdioDrain):
				outR.Close()
			}
		}
	}()
	go func() {
		err := t.read(outR, h)
		close(readDone)
		outR.Close()
		h.closed(t.death(err))
	}()
	return nil
}

// read passes each line of out to h until out ends, and returns why it
// did. A line over maxStdioMessage is skipped and logged.
func (t *stdioTransport) read(out io.Reader, h handler) error {
	return jsonrpc.ReadLines(bufio.NewReaderSize(out, 64<<10), maxStdioMessage, h.receive, func() {
		t.log.Warn("MCP server wrote a message over the limit; skipped", "limit_bytes", maxStdioMessage)
	})
}

// death says why the connection ended, after the output ended with err:
// how the process exited, once it has (within a grace period), with what
// it wrote to standard error read to the end.
func (t *stdioTransport) death(err error) error {
	select {
	case <-t.exited:
	case <-time.After(stdioGrace):
	}
	select {
	case <-t.stderrDone:
	case <-time.After(stdioDrain):
	}
	select {
	case <-t.exited:
		if t.exitErr != nil {
			return &connError{fmt.Errorf("the server exited: %w", t.exitErr)}
		}
		return &connError{errors.New("the server exited")}
	default:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
		return &connError{errors.New("the server closed its standard output")}
	}
	return &connError{err}
}

func (t *stdioTransport) send(_ context.Context, out outgoing) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if _, err := t.stdin.Write(append(out.data, '\n')); err != nil {
		return &connError{fmt.Errorf("writing to the server: %w", err)}
	}
	return nil
}

// close closes the server's standard input, then sends SIGTERM if it has
// not exited within stdioGrace and SIGKILL after as long again, and kills
// what is left of its process group.
func (t *stdioTransport) close() error {
	if t.cmd == nil {
		return nil // never started
	}
	t.closeOnce.Do(func() {
		t.wmu.Lock()
		t.stdin.Close()
		t.wmu.Unlock()
		if !waitClosed(t.exited, stdioGrace) {
			_ = procgroup.Terminate(t.cmd)
			if !waitClosed(t.exited, stdioGrace) {
				_ = procgroup.Kill(t.cmd)
			}
		}
		_ = procgroup.Kill(t.cmd)
		<-t.exited
	})
	return nil
}

// waitClosed reports whether ch is closed within d.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}
