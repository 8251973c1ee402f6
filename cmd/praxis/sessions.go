package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/journal"
)

func runSessions(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("sessions", "list | show ID | replay ID | stats",
		"Lists and reads the agent sessions journaled under the workspace's .praxis/sessions/.\n\n"+
			"  list       the sessions, oldest first: ID, last change, events, how the last run ended, task\n"+
			"  show ID    a session's summary and the integrity of its journal\n"+
			"  replay ID  the session's transcript (--json: its events, one per line)\n"+
			"  stats      the harness metrics of every run, summed (compare harness configurations)\n\n"+
			"ID \"latest\" names the most recent session. A journal with a corrupt line is read up to it;\n"+
			"the command then names the line and exits 1.", io)
	ef := addEngineFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(io.err, "praxis sessions: "+format+"\n", a...)
		return code
	}
	dir := sessionsDir(ef.workspace)
	pos := fs.Args()
	sub := fs.Arg(0)
	switch {
	case sub == "list" && len(pos) == 1:
		return sessionsList(dir, *asJSON, io)
	case sub == "stats" && len(pos) == 1:
		return sessionsStats(dir, *asJSON, io)
	case sub == "":
		return badArgs(fs, io, "needs list, show ID, replay ID or stats")
	case sub != "show" && sub != "replay" && sub != "list" && sub != "stats":
		return badArgs(fs, io, "has no subcommand %q (there are list, show ID, replay ID and stats)", sub)
	case sub == "list" || sub == "stats":
		return badArgs(fs, io, "%s takes no arguments, and was given %q", sub, strings.Join(pos[1:], " "))
	case len(pos) != 2:
		return badArgs(fs, io, "%s needs one session ID (\"praxis sessions list\" lists them, \"latest\" is the last)", sub)
	}
	id := pos[1]
	if id == "latest" {
		latest, err := journal.Latest(dir)
		if err != nil {
			return fail(exitToolError, "%s", noSessions(dir, err))
		}
		id = latest
	}
	if !journal.ValidID(id) {
		return fail(exitUsage, "%q is not a session ID; \"praxis sessions list\" lists them", id)
	}
	events, jl, rerr := agent.ReadSession(dir, id)
	if jl == nil {
		return fail(exitToolError, "%s", noSessions(dir, rerr))
	}
	if sub == "show" {
		var mod time.Time
		if fi, err := os.Stat(journal.Path(dir, id)); err == nil {
			mod = fi.ModTime()
		}
		sessionShow(summarize(id, journal.Path(dir, id), mod, events, jl, rerr), jl, rerr, *asJSON, io)
	} else {
		sessionReplay(events, *asJSON, io)
	}
	if rerr != nil {
		return fail(exitToolError, "%v", rerr)
	}
	return exitOK
}

// sessionsStats sums the metrics of the runs of every session in dir.
func sessionsStats(dir string, asJSON bool, io stdio) int {
	infos, err := journal.List(dir)
	if err != nil {
		fmt.Fprintf(io.err, "praxis sessions: %v\n", err)
		return exitToolError
	}
	var st agent.Stats
	bad := 0
	for _, in := range infos {
		events, _, err := agent.ReadSession(dir, in.ID)
		if err != nil {
			bad++
		}
		st.Sessions++
		for _, ev := range events {
			st.Add(ev)
		}
	}
	st.Finish()
	if asJSON {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st)
	} else {
		printStats(io.out, st)
	}
	if bad > 0 {
		fmt.Fprintf(io.err, "praxis sessions: %d journals are corrupt; their runs up to the bad line are counted\n", bad)
		return exitToolError
	}
	return exitOK
}

func printStats(w io.Writer, s agent.Stats) {
	opt := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	fmt.Fprintf(w, "sessions              %d (%d runs with metrics)\n", s.Sessions, s.Runs)
	var reasons []string
	for r, n := range s.StopReasons {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	slices.Sort(reasons)
	fmt.Fprintf(w, "stop reasons          %s\n", strings.Join(reasons, ", "))
	fmt.Fprintf(w, "steps, tool calls     %d, %d\n", s.Steps, s.ToolCalls)
	fmt.Fprintf(w, "to the first pass     %s steps, %s tool calls (mean over %d runs that passed)\n",
		opt(s.MeanStepsToFirstPass, "%.1f"), opt(s.MeanToolCallsToFirstPass, "%.1f"), s.RunsPassed)
	fmt.Fprintf(w, "gates                 %d of %d attempts passed (%s)\n", s.GatePasses, s.GateAttempts, opt(percent(s.GatePassRate), "%.0f%%"))
	fmt.Fprintf(w, "changes               %d lines in %d files (%s lines per file)\n", s.LinesChanged, s.FilesChanged, opt(s.LinesPerFile, "%.1f"))
	fmt.Fprintf(w, "edits in lines read   %d of %d (%s)\n", s.EditsInRead, s.Edits, opt(percent(s.EditsInReadShare), "%.0f%%"))
	codes := slices.Sorted(maps.Keys(s.Errors))
	for _, c := range codes {
		e := s.Errors[c]
		fmt.Fprintf(w, "error %-15s %d, %d retried successfully\n", c, e.Count, e.Recovered)
	}
	fmt.Fprintf(w, "time                  model %s, tools %s\n", time.Duration(s.ModelMS)*time.Millisecond, time.Duration(s.ToolMS)*time.Millisecond)
	fmt.Fprintf(w, "cost                  %s\n", opt(s.CostUSD, "$%.4f"))
}

func percent(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p * 100
	return &v
}

// sessionSummary is what list and show tell of a session.
type sessionSummary struct {
	ID        string           `json:"id"`
	Path      string           `json:"path"`
	Modified  time.Time        `json:"modified"`
	Events    int              `json:"events"`
	Task      string           `json:"task"`
	Runs      int              `json:"runs"`
	Steps     int              `json:"steps"`
	ToolCalls int              `json:"tool_calls"`
	Usage     agent.Usage      `json:"usage"`
	Stop      agent.StopReason `json:"stop_reason,omitempty"`
	Final     string           `json:"final,omitempty"`
	// Resumable says the last run did not end (the process died) or did
	// not complete: --resume goes on from there.
	Resumable bool   `json:"resumable"`
	Torn      bool   `json:"torn_last_line,omitempty"`
	Corrupt   string `json:"corrupt,omitempty"`
}

func summarize(id, path string, mod time.Time, events []agent.Event, jl *journal.Log, rerr error) sessionSummary {
	s := sessionSummary{ID: id, Path: path, Modified: mod, Events: len(events)}
	if jl != nil {
		s.Torn = jl.Torn != nil
	}
	if rerr != nil {
		s.Corrupt = rerr.Error()
	}
	if len(events) > 0 {
		s.Task = events[0].Task
	}
	if st, err := agent.Fold(events); err == nil {
		s.Runs, s.Steps, s.ToolCalls, s.Usage, s.Stop, s.Final = st.Runs, st.Steps, st.ToolCalls, st.Usage, st.Stop, st.Final
		s.Resumable = st.Stop != agent.StopCompleted && len(events) > 0
	} else if s.Corrupt == "" {
		s.Corrupt = err.Error()
	}
	return s
}

func sessionsList(dir string, asJSON bool, io stdio) int {
	infos, err := journal.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		infos, err = nil, nil
	}
	if err != nil {
		fmt.Fprintf(io.err, "praxis sessions: %s\n", noSessions(dir, err))
		return exitToolError
	}
	var list []sessionSummary
	for _, in := range infos {
		events, jl, rerr := agent.ReadSession(dir, in.ID)
		list = append(list, summarize(in.ID, in.Path, in.ModTime, events, jl, rerr))
	}
	if asJSON {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		if list == nil {
			list = []sessionSummary{}
		}
		_ = enc.Encode(list)
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintf(io.out, "no sessions in %s\n", dir)
		return exitOK
	}
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tMODIFIED\tEVENTS\tENDED\tTASK")
	for _, s := range list {
		ended := string(s.Stop)
		switch {
		case s.Corrupt != "":
			ended = "CORRUPT"
		case ended == "":
			ended = "(no end)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.Modified.Local().Format("2006-01-02 15:04"), s.Events, ended, oneLineClip(s.Task, 60))
	}
	tw.Flush()
	return exitOK
}

func sessionShow(s sessionSummary, jl *journal.Log, rerr error, asJSON bool, io stdio) {
	if asJSON {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
		return
	}
	w := io.out
	fmt.Fprintf(w, "session    %s\n", s.ID)
	fmt.Fprintf(w, "task       %s\n", oneLineClip(s.Task, 100))
	fmt.Fprintf(w, "runs       %d (%d steps, %d tool calls, %d tokens in, %d out)\n", s.Runs, s.Steps, s.ToolCalls, s.Usage.InputTokens, s.Usage.OutputTokens)
	ended := string(s.Stop)
	if ended == "" {
		ended = "did not end (the process stopped mid-run)"
	}
	fmt.Fprintf(w, "ended      %s\n", ended)
	if s.Final != "" {
		fmt.Fprintf(w, "last text  %s\n", oneLineClip(s.Final, 100))
	}
	integrity := fmt.Sprintf("%d events, checksums chained and verified", s.Events)
	if s.Torn {
		integrity += fmt.Sprintf("; the last line (line %d, %d bytes) was cut short by a crash and is ignored", jl.Torn.Line, jl.Torn.Bytes)
	}
	if rerr != nil {
		var ce *journal.CorruptError
		if errors.As(rerr, &ce) {
			integrity = fmt.Sprintf("CORRUPT at line %d: %s; %d events before it are intact", ce.Line, ce.Reason, s.Events)
		} else {
			integrity = "unreadable: " + rerr.Error()
		}
	}
	fmt.Fprintf(w, "journal    %s\n", integrity)
	if s.Resumable && rerr == nil {
		fmt.Fprintf(w, "resume     praxis agent --resume %s [PROMPT]\n", s.ID)
	}
}

func sessionReplay(events []agent.Event, asJSON bool, io stdio) {
	var sink func(agent.Event)
	if asJSON {
		sink = agent.JSONLines(io.out)
	} else {
		sink = agent.TranscriptHandler(io.out)
	}
	for _, ev := range events {
		if !asJSON && ev.Type == agent.EventRunStart && ev.Resumed {
			fmt.Fprintf(io.out, "\n— resumed")
			if ev.Task != "" {
				fmt.Fprintf(io.out, " with: %s", oneLineClip(ev.Task, 100))
			}
			fmt.Fprintln(io.out)
		}
		if !asJSON && ev.Type == agent.EventRunStart && !ev.Resumed {
			sink(ev)
			fmt.Fprintf(io.out, "> %s\n", strings.TrimSpace(ev.Task))
			continue
		}
		sink(ev)
	}
}

// noSessions words an error of reading the sessions directory dir for the
// user: a missing directory or journal is named as such.
func noSessions(dir string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return fmt.Sprintf("there are no sessions in this workspace (%s does not exist); \"praxis agent\" records them", dir)
		}
		return "there is no such session; \"praxis sessions list\" lists them"
	}
	return err.Error()
}

func oneLineClip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
