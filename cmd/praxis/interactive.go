package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/permission"
	"github.com/praxis-tools/praxis/praxis"
)

// interactivePrompt is what the line editor shows before each turn.
const interactivePrompt = "> "

// lineEditor reads the user's turns from a terminal with line editing and
// history (golang.org/x/term's Terminal: arrows, Home/End, Ctrl-A/E/K/U/W,
// bracketed paste). The terminal is raw only while a line is read, so
// that the rest of the time Ctrl-C is a signal.
type lineEditor struct {
	tty *os.File
	t   *term.Terminal
}

func newLineEditor(tty *os.File, out io.Writer) *lineEditor {
	rw := struct {
		io.Reader
		io.Writer
	}{ctrlCClears{tty}, out}
	return &lineEditor{tty: tty, t: term.NewTerminal(rw, interactivePrompt)}
}

// readLine reads one line. io.EOF means the user pressed Ctrl-D on an
// empty line.
func (e *lineEditor) readLine() (string, error) {
	return e.readLineAfter(interactivePrompt)
}

// readLineAfter reads one line after prompt.
func (e *lineEditor) readLineAfter(prompt string) (string, error) {
	e.t.SetPrompt(prompt)
	fd := int(e.tty.Fd())
	st, err := term.MakeRaw(fd)
	if err != nil {
		return "", fmt.Errorf("the terminal: %w", err)
	}
	defer term.Restore(fd, st)
	if w, h, err := term.GetSize(fd); err == nil {
		_ = e.t.SetSize(w, h)
	}
	line, err := e.t.ReadLine()
	if errors.Is(err, term.ErrPasteIndicator) {
		err = nil // a pasted line is a line
	}
	return line, err
}

// editorPrompter asks the questions of permission rules and hooks with
// the line editor, which owns the terminal in the interactive mode (a
// second reader of standard input would take the user's next turn).
type editorPrompter struct {
	mu  sync.Mutex
	ed  *lineEditor
	out io.Writer
}

// Confirm asks q; Ctrl-D, like anything but y or yes, refuses.
func (p *editorPrompter) Confirm(ctx context.Context, q permission.Question) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	args := string(q.Args)
	var compact bytes.Buffer
	if json.Compact(&compact, q.Args) == nil {
		args = compact.String()
	}
	if r := []rune(args); len(r) > 500 {
		args = string(r[:500]) + "…"
	}
	fmt.Fprintf(p.out, "\nAllow %s %s?\n  rule %s\n", q.Tool, args, q.Rule)
	line, err := p.ed.readLineAfter("Allow? [y/N] ")
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// ctrlCClears turns Ctrl-C at the prompt into Ctrl-U, which clears the
// line (the Terminal would otherwise end the input, which is Ctrl-D's
// job).
type ctrlCClears struct{ r io.Reader }

func (c ctrlCClears) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := range p[:n] {
		if p[i] == 3 {
			p[i] = 21
		}
	}
	return n, err
}

// converse runs "praxis agent" without a task on a terminal: it reads the
// user's turns with the line editor and runs each as the next prompt of
// one session, journaled like any other (each turn is a resumed run), so
// that --resume goes on with it later. Ctrl-C cancels the current turn
// and goes back to the prompt; Ctrl-D on an empty line ends. It returns
// the last turn's outcome and -1, or an exit status >= 0 when a turn could
// not start (the reason already printed).
func (hf *harnessFlags) converse(ctx context.Context, cfg agent.Config, workspace string, tty *os.File, std stdio, log *slog.Logger) (agent.Outcome, int) {
	fail := func(code int, format string, a ...any) (agent.Outcome, int) {
		fmt.Fprintf(std.err, "praxis agent: "+format+"\n", a...)
		return agent.Outcome{}, code
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	h, err := hf.harness(cfg.Provider.Name(), ws, toolNames(cfg), true, std, log)
	if err != nil {
		return fail(exitUsage, "%s", fileProblem("the settings file", err))
	}
	// Ctrl-C cancels the turn, not the process: this session takes the
	// interrupt signal over.
	catchSignals()
	signal.Reset(os.Interrupt)
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)

	// The transcript shows the run's header once, not at every turn.
	// Without a journal, the turns so far are kept in memory to go on from.
	var events []agent.Event
	sink := cfg.OnEvent
	cfg.OnEvent = func(ev agent.Event) {
		if hf.noJournal {
			events = append(events, ev)
		}
		if sink != nil && !(ev.Type == agent.EventRunStart && ev.Resumed) {
			sink(ev)
		}
	}
	// The turns are one session of the engine: a file the model read in
	// one turn and the user changed before the next is told of then.
	sess := praxis.NewSession("interactive")
	defer sess.Close()
	ctx = praxis.WithSession(ctx, sess)
	fmt.Fprintln(std.err, "praxis agent: type a prompt and press Enter; Ctrl-C cancels a turn, Ctrl-D ends.")
	ed := newLineEditor(tty, std.out)
	h.Prompter = &editorPrompter{ed: ed, out: std.out}
	var (
		out agent.Outcome
		id  string
	)
	for ctx.Err() == nil {
		line, err := ed.readLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(exitToolError, "%v", err)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		select { // an interrupt from before the turn is not for it
		case <-interrupt:
		default:
		}
		turn, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			select {
			case <-interrupt:
				cancel()
			case <-done:
			}
		}()
		fh, hc, cc := *hf, *h, cfg
		if id != "" {
			if hf.noJournal {
				hc.Resume, cc.RunID = events, id
			} else {
				fh.resume, fh.cont = id, false
			}
		}
		var code int
		out, code = fh.session(turn, cc, &hc, line, std, log)
		close(done)
		cancel()
		if code >= 0 {
			return out, code
		}
		if out.StopReason == agent.StopCancelled && ctx.Err() == nil {
			fmt.Fprintln(std.err, "praxis agent: turn cancelled")
		}
		id = out.RunID
	}
	if id == "" {
		return out, exitOK
	}
	if hf.noJournal {
		fmt.Fprintf(std.err, "praxis agent: session %s ended (not journaled)\n", id)
	} else {
		fmt.Fprintf(std.err, "praxis agent: session %s ended; go on with: praxis agent --resume %s\n", id, id)
	}
	return out, exitOK
}
