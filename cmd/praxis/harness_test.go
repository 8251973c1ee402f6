package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/journal"
)

func sc(name, input string) agent.ScriptCall {
	return agent.ScriptCall{Name: name, Input: json.RawMessage(input)}
}

func st(text string, calls ...agent.ScriptCall) agent.ScriptTurn {
	return agent.ScriptTurn{Text: text, ToolCalls: calls}
}

// decodeEvents reads JSON Lines events.
func decodeEvents(t *testing.T, out string) []agent.Event {
	t.Helper()
	var events []agent.Event
	s := bufio.NewScanner(strings.NewReader(out))
	s.Buffer(nil, 4<<20)
	for s.Scan() {
		var e agent.Event
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON event: %q: %v", s.Text(), err)
		}
		events = append(events, e)
	}
	return events
}

var sessionLine = regexp.MustCompile(`praxis agent: session (\S+) \(`)

func sessionIDs(stderr string) []string {
	var ids []string
	for _, m := range sessionLine.FindAllStringSubmatch(stderr, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestAgentResumeAfterKill kills the real praxis process in the middle of
// a step, resumes the session from its journal, lets it finish, and checks
// the journal.
func TestAgentResumeAfterKill(t *testing.T) {
	ws := workspace(t)
	tmp := t.TempDir()
	script := writeScript(t, []agent.ScriptTurn{
		st("Writing a.", sc("write_file", `{"path":"a.txt","content":"one\n"}`)),
		st("Writing b.", sc("write_file", `{"path":"b.txt","content":"two\n"}`)),
		st("Writing c.", sc("write_file", `{"path":"c.txt","content":"three\n"}`)),
		st("c was interrupted; reading notes instead.", sc("read_file", `{"path":"notes.txt"}`)),
		st("All done."),
	})
	// The hook holds the third call until the process is killed.
	hookPID := filepath.Join(tmp, "hook.pid")
	hooksFile := writeFile(t, filepath.Join(tmp, "hooks.json"), `{"hooks":{"PreToolUse":[{"matcher":"write_file","hooks":[
		{"command":"if grep -q c.txt; then echo $$ > `+hookPID+`; exec sleep 120; fi","timeout":300}]}]}}`)
	t.Cleanup(func() {
		if b, err := os.ReadFile(hookPID); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})

	cmd := exec.Command(praxisBin, "agent", "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--hooks", hooksFile, "the task")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(hookPID); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the run never reached the third call\n%s\n%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ids := sessionIDs(errb.String())
	if len(ids) != 1 {
		t.Fatalf("no session ID on stderr:\n%s", errb.String())
	}
	id := ids[0]
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil {
		t.Fatal("step 2 did not happen before the kill")
	}
	if _, err := os.Stat(filepath.Join(ws, "c.txt")); err == nil {
		t.Fatal("the held call ran")
	}
	killed := decodeEvents(t, out.String())
	if n := len(killed); n == 0 || killed[n-1].Type == agent.EventRunComplete {
		t.Fatalf("the killed run completed: %+v", killed)
	}

	show := runPraxis(t, ws, "", "sessions", "show", id)
	if show.code != 0 || !strings.Contains(show.stdout, "did not end") || !strings.Contains(show.stdout, "--resume "+id) {
		t.Fatalf("show after the kill: %d\n%s%s", show.code, show.stdout, show.stderr)
	}

	res := runPraxis(t, ws, "", "agent", "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--resume", id)
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	resumed := decodeEvents(t, res.stdout)
	if resumed[0].Type != agent.EventRunStart || !resumed[0].Resumed || resumed[0].RunID != id || resumed[0].Seq <= killed[len(killed)-1].Seq-1 {
		t.Fatalf("resumed run_start %+v", resumed[0])
	}
	last := resumed[len(resumed)-1]
	if last.StopReason != agent.StopCompleted || last.Final != "All done." {
		t.Fatalf("resumed run_complete %+v", last)
	}

	// The journal holds both runs, verifies, and folds to the conversation.
	events, jl, err := agent.ReadSession(filepath.Join(ws, ".praxis", "sessions"), id)
	if err != nil || jl.Torn != nil {
		t.Fatalf("journal: %v, torn %+v", err, jl.Torn)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.RunID != id {
			t.Fatalf("journal event %d: seq %d run %s", i, e.Seq, e.RunID)
		}
	}
	s, err := agent.Fold(events)
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs != 2 || s.Stop != agent.StopCompleted || !s.Partial || s.Final != "All done." {
		t.Fatalf("folded state %+v", s)
	}
	// The call the kill interrupted, to write_file (idempotent), was run
	// again on resume, once.
	if got, _ := os.ReadFile(filepath.Join(ws, "c.txt")); string(got) != "three\n" {
		t.Fatalf("c.txt after the resume: %q", got)
	}
	var rerun int
	for _, e := range resumed {
		if e.Type == agent.EventToolResult && e.Tool == "write_file" && strings.HasPrefix(e.Output, "created c.txt") {
			rerun++
		}
	}
	if rerun != 1 || len(s.Interrupted) != 0 {
		t.Fatalf("the interrupted write_file was run %d times on resume; still interrupted: %+v", rerun, s.Interrupted)
	}

	replay := runPraxis(t, ws, "", "sessions", "replay", id)
	if replay.code != 0 || !strings.Contains(replay.stdout, "resumed") || !strings.Contains(replay.stdout, "All done.") || !strings.Contains(replay.stdout, "> the task") {
		t.Fatalf("replay: %d\n%s%s", replay.code, replay.stdout, replay.stderr)
	}
	rj := runPraxis(t, ws, "", "sessions", "replay", "--json", id)
	if got := decodeEvents(t, rj.stdout); len(got) != len(events) {
		t.Fatalf("replay --json gave %d events, the journal holds %d", len(got), len(events))
	}
	list := runPraxis(t, ws, "", "sessions", "list")
	if list.code != 0 || !strings.Contains(list.stdout, id) || !strings.Contains(list.stdout, "completed") {
		t.Fatalf("list: %s%s", list.stdout, list.stderr)
	}
}

func TestAgentResumeTornAndCorruptJournal(t *testing.T) {
	ws := workspace(t)
	script := writeScript(t, []agent.ScriptTurn{
		st("", sc("list_dir", `{"path":"."}`)),
		st("", sc("read_file", `{"path":"notes.txt"}`)),
		st("finished"),
	})
	code, _, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--max-steps", "1", "task")
	ids := sessionIDs(errb)
	if code != exitMaxSteps || len(ids) != 1 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	id := ids[0]
	dir := filepath.Join(ws, ".praxis", "sessions")
	path := journal.Path(dir, id)
	good, _ := os.ReadFile(path)

	// A crash in the middle of a write leaves a torn last line.
	writeFile(t, path, string(good)+`{"seq":99,"event":{"type":"tool_st`)
	show := runPraxis(t, ws, "", "sessions", "show", id)
	if show.code != 0 || !strings.Contains(show.stdout, "cut short by a crash") {
		t.Fatalf("show torn: %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--continue")
	if code != 0 || !strings.Contains(errb, "cut short") {
		t.Fatalf("resume over a torn line: exit %d\n%s\n%s", code, out, errb)
	}
	if _, jl, err := agent.ReadSession(dir, id); err != nil || jl.Torn != nil {
		t.Fatalf("after the resume: %v torn %+v", err, jl.Torn)
	}

	// A changed line in the middle is reported, never skipped.
	lines := strings.SplitAfter(string(good), "\n")
	lines[2] = strings.Replace(lines[2], `"type"`, `"typo"`, 1)
	writeFile(t, path, strings.Join(lines, ""))
	show = runPraxis(t, ws, "", "sessions", "show", id)
	if show.code != 1 || !strings.Contains(show.stdout, "CORRUPT at line 3") || !strings.Contains(show.stderr, "line 3") {
		t.Fatalf("show corrupt: %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	code, _, errb = runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--resume", id)
	if code != exitToolError || !strings.Contains(errb, "line 3") {
		t.Fatalf("resume corrupt: exit %d\n%s", code, errb)
	}
	list := runPraxis(t, ws, "", "sessions", "list")
	if !strings.Contains(list.stdout, "CORRUPT") {
		t.Fatalf("list: %s", list.stdout)
	}
	if r := runPraxis(t, ws, "", "sessions", "show", "../x"); r.code != exitUsage {
		t.Fatalf("show ../x: %d", r.code)
	}
}

func TestAgentHarnessExitStatuses(t *testing.T) {
	again := sc("list_dir", `{"path":"."}`)
	loop := []agent.ScriptTurn{st("", again), st("", again), st("", again), st("", again), st("done")}
	dir := t.TempDir()
	stopHook := writeFile(t, filepath.Join(dir, "hooks.yaml"), `hooks:
  PreToolUse:
    - hooks:
        - command: "echo '{\"continue\": false, \"stopReason\": \"enough\"}'"
`)
	cases := []struct {
		name string
		args []string
		code int
		stop agent.StopReason
	}{
		{"max_tokens", []string{"--max-tokens", "1"}, exitMaxTokens, agent.StopMaxTokens},
		{"max_tool_calls", []string{"--max-tool-calls", "2"}, exitMaxToolCalls, agent.StopMaxToolCalls},
		{"doom_loop", nil, exitDoomLoop, agent.StopDoomLoop},
		{"doom loop off", []string{"--doom-loop", "0"}, exitOK, agent.StopCompleted},
		{"gate_failed", []string{"--doom-loop", "0", "--gate", "exit 3", "--max-gate-attempts", "1"}, exitGateFailed, agent.StopGateFailed},
		{"gate passes", []string{"--doom-loop", "0", "--gate", "test -f notes.txt"}, exitOK, agent.StopCompleted},
		{"stopped_by_hook", []string{"--hooks", stopHook}, exitStoppedByHook, agent.StopHook},
		{"max_steps", []string{"--max-steps", "2"}, exitMaxSteps, agent.StopMaxSteps},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--provider", "scripted", "--script", writeScript(t, loop), "--workspace", workspace(t), "--json"}, tc.args...)
			code, out, errb := runAgentTest(t, nil, append(args, "task")...)
			events := decodeEvents(t, out)
			if code != tc.code || len(events) == 0 || events[len(events)-1].StopReason != tc.stop {
				t.Fatalf("exit %d, want %d (%s)\n%s\n%s", code, tc.code, tc.stop, out, errb)
			}
		})
	}
	for _, args := range [][]string{
		{"--iterations", "2", "task"},
		{"--resume", "x", "--continue"},
		{"--resume", "x", "--iterations", "2", "--progress", "p.md"},
		{"--deny", "bash(", "task"},
		{"--hooks", filepath.Join(dir, "missing.json"), "task"},
		{"--compact-at", "1.5", "task"},
		{"--max-gate-attempts", "0", "task"},
		{"--iterations", "2", "--progress", "../progress.md", "task"},
	} {
		full := append([]string{"--provider", "scripted", "--script", writeScript(t, loop), "--workspace", workspace(t)}, args...)
		if code, _, errb := runAgentTest(t, nil, full...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, errb)
		}
	}
}

func TestAgentPermissionFlags(t *testing.T) {
	ws := workspace(t)
	perms := writeFile(t, filepath.Join(t.TempDir(), "settings.json"), `{"permissions":{"deny":["write_file(**/*.lock)"],"ask":["edit_file"]}}`)
	script := writeScript(t, []agent.ScriptTurn{
		st("", sc("write_file", `{"path":"deps/x.lock","content":"x"}`), sc("write_file", `{"path":"ok.txt","content":"x"}`)),
		st("", sc("edit_file", `{"path":"notes.txt","ops":[{"op":"append","new_text":"z"}]}`)),
		st("", sc("list_dir", `{"path":"."}`)),
		st("done"),
	})
	code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "--json",
		"--permissions", perms, "--deny", "list_dir", "task")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	events := decodeEvents(t, out)
	c := events[0].Controls
	if c == nil || !reflect.DeepEqual(c.Rules, []string{"deny(write_file(**/*.lock))", "deny(list_dir)", "ask(edit_file)"}) || c.DoomThreshold != 3 {
		t.Errorf("run_start controls %+v", c)
	}
	res := toolResults(events)
	want := []struct {
		isErr bool
		text  string
	}{{true, "deny(write_file(**/*.lock))"}, {false, ""}, {true, "ask(edit_file)"}, {true, "deny(list_dir)"}}
	for i, w := range want {
		if res[i].IsError != w.isErr || !strings.Contains(res[i].Output, w.text) {
			t.Errorf("result %d: %+v", i, res[i])
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "deps", "x.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the denied write happened")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != notes {
		t.Error("the edit that needed asking happened without a terminal")
	}
}

func TestAgentIterations(t *testing.T) {
	session := []agent.ScriptTurn{
		st("Reading the progress file.", sc("read_file", `{"path":"progress.md"}`)),
		st("One unit of work, noted.", sc("edit_file", `{"path":"progress.md","ops":[{"op":"append","new_text":"- one more unit done"}]}`)),
		st("Done for this session.\nTASK COMPLETE"),
	}
	// The gate passes from its third run on: the first two sessions end
	// with gate_failed, the third completes.
	gate := "echo run >> .gate-runs; test $(wc -l < .gate-runs) -ge 3"
	t.Run("until declared complete", func(t *testing.T) {
		ws := workspace(t)
		writeFile(t, filepath.Join(ws, "progress.md"), "# Progress\n")
		code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", writeScript(t, session), "--workspace", ws, "--json",
			"--iterations", "5", "--progress", "progress.md", "--gate", gate, "--max-gate-attempts", "1", "build the thing")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errb)
		}
		ids := sessionIDs(errb)
		starts := []agent.Event{}
		var stops []agent.StopReason
		for _, e := range decodeEvents(t, out) {
			switch e.Type {
			case agent.EventRunStart:
				starts = append(starts, e)
			case agent.EventRunComplete:
				stops = append(stops, e.StopReason)
			}
		}
		if len(ids) != 3 || len(starts) != 3 || ids[0] == ids[1] || ids[1] == ids[2] {
			t.Fatalf("sessions %v, run_starts %d", ids, len(starts))
		}
		for i, s := range starts {
			if s.Resumed || s.RunID != ids[i] || !strings.Contains(s.Task, "build the thing") || !strings.Contains(s.Task, "session "+strconv.Itoa(i+1)+" of at most 5") || !strings.Contains(s.Task, "progress.md") {
				t.Errorf("session %d run_start %+v", i+1, s)
			}
		}
		if want := []agent.StopReason{agent.StopGateFailed, agent.StopGateFailed, agent.StopCompleted}; !equalStops(stops, want) {
			t.Fatalf("stops %v, want %v", stops, want)
		}
		// The last line sums the series up.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var sum IterationsSummary
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Type != "iterations_summary" || sum.StopReason != agent.StopCompleted || strings.Join(sum.Sessions, ",") != strings.Join(ids, ",") ||
			sum.Steps != 9 || sum.ToolCalls != 6 || sum.Usage.InputTokens == 0 || !strings.Contains(sum.Final, "TASK COMPLETE") {
			t.Errorf("summary %s", lines[len(lines)-1])
		}
		b, _ := os.ReadFile(filepath.Join(ws, "progress.md"))
		if strings.Count(string(b), "one more unit done") != 3 {
			t.Fatalf("progress file:\n%s", b)
		}
		// Each session has its own journal, with a fresh conversation.
		for _, id := range ids {
			events, _, err := agent.ReadSession(filepath.Join(ws, ".praxis", "sessions"), id)
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := agent.Fold(events); s.Runs != 1 || s.Steps != 3 {
				t.Errorf("session %s: %+v", id, s)
			}
		}
	})
	t.Run("max_iterations", func(t *testing.T) {
		ws := workspace(t)
		writeFile(t, filepath.Join(ws, "progress.md"), "# Progress\n")
		code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", writeScript(t, session), "--workspace", ws, "--json",
			"--iterations", "2", "--progress", "progress.md", "--gate", "false", "--max-gate-attempts", "1", "task")
		if code != exitMaxIterations || len(sessionIDs(errb)) != 2 || !strings.Contains(errb, "stop reason max_iterations") {
			t.Fatalf("exit %d\n%s", code, errb)
		}
		events := decodeEvents(t, out)
		if last := events[len(events)-1]; last.Type != "iterations_summary" || last.StopReason != agent.StopMaxIterations || !strings.Contains(last.Error, "sessions ran, the most allowed") {
			t.Errorf("last line %+v", last)
		}
	})
	t.Run("a session that forgets the progress file is reminded", func(t *testing.T) {
		ws := workspace(t)
		writeFile(t, filepath.Join(ws, "progress.md"), "# Progress\n")
		forgetful := []agent.ScriptTurn{st("TASK COMPLETE"), session[1], st("TASK COMPLETE")}
		code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", writeScript(t, forgetful), "--workspace", ws, "--json",
			"--iterations", "1", "--progress", "progress.md", "task")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errb)
		}
		var reminded bool
		for _, e := range decodeEvents(t, out) {
			reminded = reminded || (e.Type == agent.EventMessage && e.Kind == agent.MessageReminder && strings.Contains(e.Text, "progress.md"))
		}
		if !reminded {
			t.Fatal("no reminder to update the progress file")
		}
	})
}

func equalStops(a, b []agent.StopReason) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAgentTranscriptShowsHarnessEvents(t *testing.T) {
	again := sc("list_dir", `{"path":"."}`)
	script := writeScript(t, []agent.ScriptTurn{st("", again), st("", again), st("", again), st("", sc("read_file", `{"path":"notes.txt"}`)), st("done"), st("done")})
	code, out, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", workspace(t),
		"--gate", "test -e gate-ok || { touch gate-ok; exit 1; }", "task")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"⟳ loop warning: list_dir was called with the same arguments 3 times", "✗ gate test -e gate-ok", "✗ gate failed; the model goes on", "✓ gate test -e gate-ok", "— completed after 6 steps"} {
		if !strings.Contains(out, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, out)
		}
	}
}

func TestAgentJournalStaysInTheWorkspace(t *testing.T) {
	ws, outside := workspace(t), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".praxis")); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, []agent.ScriptTurn{st("done")})
	code, _, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "task")
	if code != exitToolError || !strings.Contains(errb, "sessions directory") {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the workspace: %v", ents)
	}
	if code, _, errb := runAgentTest(t, nil, "--provider", "scripted", "--script", script, "--workspace", ws, "--no-journal", "task"); code != 0 {
		t.Fatalf("--no-journal: exit %d\n%s", code, errb)
	}
}
