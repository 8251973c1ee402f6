package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/praxis-tools/praxis/agent"
)

// ptySession is the real binary running on a pseudo-terminal.
type ptySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File // the terminal's master side
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

func startOnPTY(t *testing.T, dir string, args ...string) *ptySession {
	t.Helper()
	cmd := exec.Command(praxisBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=xterm", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	s := &ptySession{t: t, cmd: cmd, tty: tty, done: make(chan error, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		tty.Close()
	})
	return s
}

// output returns all the terminal showed so far.
func (s *ptySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// expect waits until the terminal has shown want n times in all. The
// bound is generous: it only keeps a broken build from hanging the suite.
func (s *ptySession) expect(want string, n int) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(s.output(), want) < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q %d times; it showed:\n%s", want, n, s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// end sends Ctrl-D and waits for the session to say it ended and for the
// process to exit, and returns its exit status.
func (s *ptySession) end() int {
	s.t.Helper()
	s.send("\x04")
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatalf("Ctrl-D did not end the session:\n%s", s.output())
	}
	return s.cmd.ProcessState.ExitCode()
}

func (s *ptySession) send(keys string) {
	s.t.Helper()
	if _, err := s.tty.Write([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
}

// TestAgentInteractive drives "praxis agent" without a task on a real
// pseudo-terminal: turns typed with line editing and history, replies
// streamed, Ctrl-C cancelling a turn, Ctrl-D ending; then checks that the
// conversation is one journaled session that --resume can go on with.
func TestAgentInteractive(t *testing.T) {
	dir := workspace(t)
	if !hasTool(t, dir, "bash") {
		t.Skip("no bash tool in this workspace")
	}
	script := writeScript(t, []agent.ScriptTurn{
		st("Hello from the model."),
		st("Sleeping now.", sc("bash", `{"command":"sleep 60"}`)),
		st("Back again."),
		st("Once more."),
		st("Resumed fine."),
	})
	s := startOnPTY(t, dir, "agent", "--provider", "scripted", "--script", script)
	s.expect(interactivePrompt, 1)

	// Ctrl-C at the prompt clears the line; Enter sends it.
	s.send("garbage\x03hi there\r")
	s.expect("Hello from the model.", 1)
	s.expect(interactivePrompt, 2)

	// Ctrl-C during a turn cancels the turn, not the session.
	s.send("sleep please\r")
	s.expect("Sleeping now.", 1)
	time.Sleep(300 * time.Millisecond) // let the command start
	s.send("\x03")
	s.expect("turn cancelled", 1)
	s.expect(interactivePrompt, 3)

	// Line editing: Left and a Backspace fix a typo; Up recalls a line.
	s.send("third prompxt\x1b[D\x7f\x1b[C\r")
	s.expect("Back again.", 1)
	s.expect(interactivePrompt, 4)
	s.send("\x1b[A\r")
	s.expect("Once more.", 1)
	s.expect(interactivePrompt, 5)

	// Ctrl-D ends.
	if code := s.end(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.output())
	}
	s.expect("ended; go on with", 1)
	m := regexp.MustCompile(`session (\S+) ended; go on with`).FindStringSubmatch(s.output())
	if m == nil {
		t.Fatalf("no session named:\n%s", s.output())
	}
	id := m[1]
	events, _, err := agent.ReadSession(filepath.Join(dir, ".praxis", "sessions"), id)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	var stops []agent.StopReason
	for _, e := range events {
		switch e.Type {
		case agent.EventRunStart:
			tasks = append(tasks, e.Task)
		case agent.EventRunComplete:
			stops = append(stops, e.StopReason)
		}
	}
	if got := strings.Join(tasks, "|"); got != "hi there|sleep please|third prompt|third prompt" {
		t.Errorf("the turns' prompts: %q", got)
	}
	if want := []agent.StopReason{agent.StopCompleted, agent.StopCancelled, agent.StopCompleted, agent.StopCompleted}; !equalStops(stops, want) {
		t.Errorf("stops %v, want %v", stops, want)
	}

	// The session goes on like any other.
	code, out, errOut := runAgentTest(t, nil, "--workspace", dir, "--provider", "scripted", "--script", script, "--resume", id, "--json", "and now?")
	if code != exitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if evs := decodeEvents(t, out); evs[len(evs)-1].Final != "Resumed fine." {
		t.Errorf("resumed run ended with %+v", evs[len(evs)-1])
	}
}

// TestAgentInteractiveAsks checks that an ask rule's question is asked
// with the line editor in the interactive mode, and that the answer
// decides, without taking the user's next turn.
func TestAgentInteractiveAsks(t *testing.T) {
	dir := workspace(t)
	if !hasTool(t, dir, "bash") {
		t.Skip("no bash tool in this workspace")
	}
	script := writeScript(t, []agent.ScriptTurn{
		st("", sc("bash", `{"command":"echo allowed-run"}`)),
		st("First done."),
		st("", sc("bash", `{"command":"echo refused-run"}`)),
		st("Second done."),
	})
	s := startOnPTY(t, dir, "agent", "--provider", "scripted", "--script", script, "--ask", "bash(echo *)")
	s.expect(interactivePrompt, 1)
	s.send("run one\r")
	s.expect("Allow? [y/N] ", 1)
	s.send("y\r")
	s.expect("First done.", 1)
	s.expect(interactivePrompt, 2)
	s.send("run two\r")
	s.expect("Allow? [y/N] ", 2)
	s.send("no\r")
	s.expect("Second done.", 1)
	s.expect(interactivePrompt, 3)
	if code := s.end(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.output())
	}
	s.expect("ended; go on with", 1)
	out := s.output()
	m := regexp.MustCompile(`session (\S+) ended; go on with`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no session named:\n%s", out)
	}
	events, _, err := agent.ReadSession(filepath.Join(dir, ".praxis", "sessions"), m[1])
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for _, e := range events {
		if e.Type == agent.EventRunStart {
			tasks = append(tasks, e.Task)
		}
	}
	if got := strings.Join(tasks, "|"); got != "run one|run two" {
		t.Errorf("the turns' prompts: %q (an answer was taken for a turn?)", got)
	}
	res := toolResults(events)
	if len(res) != 2 || res[0].IsError || !strings.Contains(res[0].Output, "allowed-run") || res[1].Code != "E_POLICY" || strings.Contains(res[1].Output, "refused-run\n") {
		t.Errorf("the answers did not decide: %+v", res)
	}
}

// TestAgentInteractiveWithoutJournal checks that the turns of a session
// without a journal still make one conversation: the second turn's reply
// is the script's second, chosen by the conversation's length.
func TestAgentInteractiveWithoutJournal(t *testing.T) {
	dir := workspace(t)
	script := writeScript(t, []agent.ScriptTurn{st("Reply one."), st("Reply two.")})
	s := startOnPTY(t, dir, "agent", "--provider", "scripted", "--script", script, "--no-journal")
	s.expect(interactivePrompt, 1)
	s.send("first\r")
	s.expect("Reply one.", 1)
	s.expect(interactivePrompt, 2)
	s.send("second\r")
	s.expect("Reply two.", 1)
	s.expect(interactivePrompt, 3)
	if code := s.end(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.output())
	}
	s.expect("ended (not journaled)", 1)
	if n := strings.Count(s.output(), "praxis agent · run "); n != 1 {
		t.Errorf("the run's header shows %d times:\n%s", n, s.output())
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".praxis", "sessions")); len(entries) > 0 {
		t.Errorf("a journal was written: %v", entries)
	}
}

// TestAgentInteractiveNotice: the turns of the interactive mode are one
// session of the engine, so a file the model read in one turn and the
// user changed before the next is told of at the start of that turn.
func TestAgentInteractiveNotice(t *testing.T) {
	dir := workspace(t)
	script := writeScript(t, []agent.ScriptTurn{
		st("", sc("read_file", `{"path":"notes.txt"}`)),
		st("Read it."),
		st("Noted."),
	})
	s := startOnPTY(t, dir, "agent", "--provider", "scripted", "--script", script)
	s.expect(interactivePrompt, 1)
	s.send("read the notes\r")
	s.expect("Read it.", 1)
	s.expect(interactivePrompt, 2)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("changed by the user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.send("and now?\r")
	s.expect("Noted.", 1)
	s.expect("notice: notes.txt changed on disk (", 1)
	s.expect(interactivePrompt, 3)
	if code := s.end(); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.output())
	}
}
