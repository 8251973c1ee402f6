package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/praxis/hashline"
)

var stressLong = flag.Bool("stress.long", false, "run the stress and crash tests long (many more processes, edits and kills)")

// callJSON runs "praxis call --json" on ws and decodes the result. It
// does not stop the test, so that workers on other goroutines may call it.
func callJSON(ws, tool, args string) (text, code string, isError bool, err error) {
	cmd := exec.Command(praxisBin, "call", "--workspace", ws, "--json", tool, args)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
		Code    string `json:"code"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return "", "", false, fmt.Errorf("praxis call %s: %v, %v\n%s\n%s", tool, runErr, err, out.String(), errb.String())
	}
	return res.Text, res.Code, res.IsError, nil
}

var anchorLine = regexp.MustCompile(`(?m)^(\d+:[0-9a-f]+)\|(.*)$`)

// TestStressConcurrentEditors has several processes of the real binary
// edit one file at once, each reading it for anchors and then editing it,
// while a writer outside Praxis appends to the file in place. Every edit
// reported as applied must be in the final file, exactly once, and no
// refused edit may be. With -stress.long it runs many more edits.
func TestStressConcurrentEditors(t *testing.T) {
	procs, edits := 4, 6
	if *stressLong {
		procs, edits = 8, 60
	}
	ws := t.TempDir()
	var initial strings.Builder
	for i := range 20 {
		fmt.Fprintf(&initial, "base %d\n", i)
	}
	target := filepath.Join(ws, "shared.txt")
	if err := os.WriteFile(target, []byte(initial.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// The outside writer appends lines in place, as "echo >> file" does,
	// every 10 to 40 ms.
	ctx, stop := context.WithCancel(context.Background())
	outside := make(chan int)
	go func() {
		rng := rand.New(rand.NewPCG(3, 4))
		n := 0
		defer func() { outside <- n }()
		for ctx.Err() == nil {
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				fmt.Fprintf(f, "outside %d\n", n)
				f.Close()
				n++
			}
			time.Sleep(time.Duration(10+rng.IntN(30)) * time.Millisecond)
		}
	}()

	type outcome struct {
		token   string
		applied bool
		code    string
	}
	var mu sync.Mutex
	var outcomes []outcome
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 7))
			for i := range edits {
				token := fmt.Sprintf("edit p%d-%d", p, i)
				var args string
				if i%3 == 2 {
					args = fmt.Sprintf(`{"path":"shared.txt","ops":[{"op":"append","new_text":%q}]}`, token)
				} else {
					text, _, isErr, err := callJSON(ws, "read_file", `{"path":"shared.txt"}`)
					ms := anchorLine.FindAllStringSubmatch(text, -1)
					if err != nil || isErr || len(ms) == 0 {
						t.Errorf("read_file: %v %s", err, text)
						return
					}
					m := ms[rng.IntN(len(ms))]
					args = fmt.Sprintf(`{"path":"shared.txt","ops":[{"op":"insert_after","tag":%q,"new_text":%q}]}`, m[1], token)
				}
				text, code, isErr, err := callJSON(ws, "edit_file", args)
				if err != nil {
					t.Error(err)
					return
				}
				if isErr && code != string(praxis.EAnchorStale) && code != string(praxis.EConflict) && code != string(praxis.EAnchorSyntax) {
					t.Errorf("edit %s: unexpected failure %s", token, text)
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{token, !isErr, code})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stop()
	outsideWrites := <-outside

	final, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, l := range strings.Split(string(final), "\n") {
		lines[l]++
	}
	applied, refused := 0, map[string]int{}
	for _, o := range outcomes {
		switch n := lines[o.token]; {
		case o.applied && n != 1:
			t.Errorf("%s was reported applied but is in the final file %d times", o.token, n)
		case !o.applied && n != 0:
			t.Errorf("%s was refused (%s) but is in the final file", o.token, o.code)
		}
		if o.applied {
			applied++
		} else {
			refused[o.code]++
		}
	}
	kept := 0
	for i := range outsideWrites {
		if lines[fmt.Sprintf("outside %d", i)] > 0 {
			kept++
		}
	}
	if applied == 0 {
		t.Error("no edit was applied")
	}
	t.Logf("%d processes, %d edits: %d applied, refused %v; the outside writer appended %d lines, %d of them kept",
		procs, len(outcomes), applied, refused, outsideWrites, kept)
}

// TestCrashDuringBatches kills the real binary with SIGKILL at random
// moments of multi-file batches over large files. After each kill the
// next start of an engine (here "praxis call list_dir") must leave every
// file of the batch old or every file new, and no temporary file or intent
// record behind. With -stress.long it runs many more trials.
func TestCrashDuringBatches(t *testing.T) {
	trials := 12
	if *stressLong {
		trials = 100
	}
	const files, size = 3, 4 << 20
	ws := t.TempDir()
	names := make([]string, files)
	body := bytes.Repeat([]byte("a line of filler text to make the file large\n"), size/45)
	for i := range names {
		names[i] = fmt.Sprintf("big%d.txt", i)
		if err := os.WriteFile(filepath.Join(ws, names[i]), append([]byte("gen 0\n"), body...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(gen int) string {
		var fs []string
		for _, n := range names {
			first := fmt.Sprintf("gen %d", gen)
			fs = append(fs, fmt.Sprintf(`{"path":%q,"ops":[{"op":"replace_line","tag":"1:%s","new_text":"gen %d"}]}`,
				n, hashline.Tag(1, []byte(first)), gen+1))
		}
		return `{"files":[` + strings.Join(fs, ",") + `]}`
	}
	// The generation every file is at; fails the test when they differ.
	generation := func() int {
		t.Helper()
		gens := make([]int, files)
		for i, n := range names {
			f, err := os.Open(filepath.Join(ws, n))
			if err != nil {
				t.Fatal(err)
			}
			var g int
			_, err = fmt.Fscanf(f, "gen %d\n", &g)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			gens[i] = g
		}
		for _, g := range gens[1:] {
			if g != gens[0] {
				t.Fatalf("after recovery the batch is torn: generations %v", gens)
			}
		}
		return gens[0]
	}
	leftovers := func() []string {
		var left []string
		filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (strings.Contains(d.Name(), ".praxis-") || strings.HasPrefix(d.Name(), "intent-")) {
				left = append(left, p)
			}
			return nil
		})
		return left
	}

	// One batch run to its end measures how long a batch takes.
	start := time.Now()
	if text, _, isErr, err := callJSON(ws, "edit_file", batch(0)); err != nil || isErr {
		t.Fatal(err, text)
	}
	full := time.Since(start)
	if generation() != 1 {
		t.Fatal("the measured batch did not apply")
	}

	rng := rand.New(rand.NewPCG(1, 2))
	killedMid, recovered, old, new := 0, 0, 0, 0
	for trial := range trials {
		gen := generation()
		cmd := exec.Command(praxisBin, "call", "--workspace", ws, "edit_file", batch(gen))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(full))))
		cmd.Process.Kill()
		err := cmd.Wait()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok && !ee.Exited() {
			killedMid++
		}
		if len(leftovers()) > 0 {
			recovered++
		}
		if res := runPraxis(t, ws, "", "call", "--workspace", ws, "list_dir", "{}"); res.code != 0 {
			t.Fatalf("trial %d: the next start failed: %d\n%s", trial, res.code, res.stderr)
		}
		if left := leftovers(); len(left) > 0 {
			t.Fatalf("trial %d: left behind after the next start: %v", trial, left)
		}
		switch generation() {
		case gen:
			old++
		case gen + 1:
			new++
		default:
			t.Fatalf("trial %d: generation went from %d to %d", trial, gen, generation())
		}
	}
	t.Logf("%d trials (a batch takes %v): %d killed before their end, %d left a commit to recover; %d all old, %d all new",
		trials, full.Round(time.Millisecond), killedMid, recovered, old, new)
}

// TestAgentResumeAfterKillMidTool kills the real binary while a bash
// command of the agent runs, then resumes the session: the command, which
// is not idempotent, does not run again, the model is told the call was
// interrupted, and the journal records that result.
func TestAgentResumeAfterKillMidTool(t *testing.T) {
	ws := workspace(t)
	count := filepath.Join(ws, "count.txt")
	// The command sleeps inside the sandbox; when the agent is killed, the
	// sandbox ends it with its parent (nothing outlives its command).
	script := writeScript(t, []agent.ScriptTurn{
		st("Counting.", sc("bash", `{"command":"echo ran >> count.txt; exec sleep 120"}`)),
		st("All done."),
	})
	cmd := exec.Command(praxisBin, "agent", "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "the task")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(count); err == nil && string(b) == "ran\n" {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the command never started\n%s\n%s", out.String(), errb.String())
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	ids := sessionIDs(errb.String())
	if len(ids) != 1 {
		t.Fatalf("no session ID on stderr:\n%s", errb.String())
	}

	res := runPraxis(t, ws, "", "agent", "--provider", "scripted", "--script", script, "--workspace", ws, "--json", "--resume", ids[0])
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if got, _ := os.ReadFile(count); string(got) != "ran\n" {
		t.Fatalf("count.txt = %q: the interrupted command ran again", got)
	}
	var settled []agent.Event
	for _, e := range decodeEvents(t, res.stdout) {
		if e.Type == agent.EventToolStart {
			t.Fatalf("the resumed run started a tool: %+v", e)
		}
		if e.Type == agent.EventToolResult {
			settled = append(settled, e)
		}
	}
	if len(settled) != 1 || !settled[0].IsError || !strings.Contains(settled[0].Output, "interrupted during the call") ||
		!strings.Contains(settled[0].Output, "effect on the workspace is unknown") {
		t.Fatalf("the resumed run's tool results: %+v", settled)
	}
	events, _, err := agent.ReadSession(filepath.Join(ws, ".praxis", "sessions"), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.Fold(events)
	if err != nil || len(s.Interrupted) != 0 || s.Stop != agent.StopCompleted {
		t.Fatalf("journal folds to %+v, %v", s, err)
	}
}
