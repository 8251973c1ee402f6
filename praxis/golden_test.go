package praxis

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/tools/txtar"

	"github.com/praxis-tools/praxis/sandbox"
)

var update = flag.Bool("update", false, "rewrite the expected results of testdata/golden/*.txtar")

// TestGolden runs the transcripts in testdata/golden: each archive is a
// small workspace, a call of one tool and its exact result, the contract
// a reader can browse. An archive holds, in this order:
//
//	(comment)                   what the transcript shows
//	-- workspace/PATH --        files of the workspace before the call
//	-- session --               optional, empty: the setup and the call are
//	                            calls of one Session (see Change notices)
//	-- setup --                 optional calls made first, one per line:
//	                            TOOL {"arguments": ...}; each must succeed
//	-- call --                  the call: TOOL {"arguments": ...}
//	-- text -- / -- error --    the text of the result, or of the error
//	                            result
//	-- structured.json --       the structured result of a success
//	-- after/PATH --            optional: a file of the workspace after
//	                            the call, compared byte for byte
//
// A section whose content does not end in a newline says so in its name
// ("-- text, no final newline --"), since txtar ends every file with one.
//
// With -update the expected sections are rewritten from what the calls
// return (after/ files only where the archive already names them).
//
// What depends on the machine or the clock is masked, here and nowhere
// else: the workspace's absolute path reads $WORK, the home directory's
// $HOME; command durations read
// <duration> in text and 0 as duration_ms; process ids read <pid>; the
// modification times of memory notes read <time>. The workspace files get
// modification times one second apart in archive order (the last newest),
// so that results sorted by time come out the same everywhere. The engine
// runs commands with sandbox.DefaultPolicy (no isolation), with HOME set
// to an empty directory so that no skill of the machine's user shows.
//
// Every structured result is validated against the tool's output schema
// with jsonschema-go, and every tool of the catalog must have a
// transcript.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	covered := map[string]bool{}
	ran := 0
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ran++
			covered[runGolden(t, file, home)] = true
		})
	}
	if ran < len(files) {
		return // -run chose some transcripts: coverage is not in question
	}
	e, _ := newTestEngine(t, nil)
	for _, tool := range e.Catalog().Tools() {
		if !covered[tool.Name] {
			t.Errorf("tool %s has no transcript in testdata/golden", tool.Name)
		}
	}
}

// runGolden runs one transcript and returns the name of the tool it calls.
func runGolden(t *testing.T, file, home string) string {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var call, setup string
	var after []string
	ctx := context.Background()
	mtime := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range ar.Files {
		switch name, data := exactContent(f); {
		case strings.HasPrefix(name, "workspace/"):
			p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(name, "workspace/")))
			writeTestFile(t, p, string(data))
			mtime = mtime.Add(time.Second)
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		case name == "session":
			s := NewSession("golden")
			defer s.Close()
			ctx = WithSession(ctx, s)
		case name == "setup":
			setup = string(f.Data)
		case name == "call":
			call = string(f.Data)
		case strings.HasPrefix(name, "after/"):
			after = append(after, name)
		}
	}
	if call == "" {
		t.Fatal("no call section")
	}
	pol := sandbox.DefaultPolicy("")
	pol.KillGrace = 200 * time.Millisecond
	e, err := New(Options{Workspace: dir, NoSync: true, Sandbox: &pol})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	for line := range strings.Lines(setup) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		tool, args := parseCall(t, line)
		if res, err := e.Catalog().Call(ctx, tool, args); err != nil || res.IsError {
			t.Fatalf("setup %s: %v %s", line, err, res.Text)
		}
	}
	tool, args := parseCall(t, call)
	res, err := e.Catalog().Call(ctx, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	m := masker{work: dir, home: home}

	got := []txtar.File{textSection(res.IsError, m.text(res.Text))}
	if !res.IsError {
		structured := m.structured(t, res.Structured)
		checkOutputSchema(t, e, tool, structured)
		got = append(got, txtar.File{Name: "structured.json", Data: structured})
	}
	for _, name := range after {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(name, "after/"))))
		if err != nil {
			data = []byte(m.text(fmt.Sprintf("(%v)\n", err)))
		}
		got = append(got, exactSection(name, data))
	}

	if *update {
		var kept []txtar.File
		for _, f := range ar.Files {
			if strings.HasPrefix(f.Name, "workspace/") || f.Name == "session" || f.Name == "setup" || f.Name == "call" {
				kept = append(kept, f)
			}
		}
		ar.Files = append(kept, got...)
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return tool
	}
	var want []txtar.File
	for _, f := range ar.Files {
		if isResultSection(f.Name) || strings.HasPrefix(f.Name, "after/") {
			want = append(want, f)
		}
	}
	if len(want) != len(got) {
		t.Errorf("sections: got %v, want %v (run with -update to rewrite)", names(got), names(want))
	}
	for i := range min(len(want), len(got)) {
		if want[i].Name != got[i].Name || !bytes.Equal(want[i].Data, got[i].Data) {
			t.Errorf("-- %s --\ngot:\n%s\nwant (-- %s --):\n%s", got[i].Name, got[i].Data, want[i].Name, want[i].Data)
		}
	}
	return tool
}

func isResultSection(name string) bool {
	base, _, _ := strings.Cut(name, ",")
	return base == "text" || base == "error" || name == "structured.json"
}

func names(fs []txtar.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// parseCall parses "TOOL {json}".
func parseCall(t *testing.T, s string) (string, json.RawMessage) {
	t.Helper()
	tool, args, _ := strings.Cut(strings.TrimSpace(s), " ")
	args = strings.TrimSpace(args)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		t.Fatalf("call %q: arguments are not JSON", s)
	}
	return tool, json.RawMessage(args)
}

// noEOL marks a section whose content does not end in a newline: txtar
// ends every file with one.
const noEOL = ", no final newline"

// exactSection holds data byte for byte under name.
func exactSection(name string, data []byte) txtar.File {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return txtar.File{Name: name + noEOL, Data: append(slices.Clip(data), '\n')}
	}
	return txtar.File{Name: name, Data: data}
}

// exactContent returns the name and exact content of a section written by
// exactSection.
func exactContent(f txtar.File) (string, []byte) {
	if name, ok := strings.CutSuffix(f.Name, noEOL); ok {
		return name, bytes.TrimSuffix(f.Data, []byte("\n"))
	}
	return f.Name, f.Data
}

// textSection holds a result's text.
func textSection(isError bool, text string) txtar.File {
	if isError {
		return exactSection("error", []byte(text))
	}
	return exactSection("text", []byte(text))
}

// masker replaces what depends on the machine or the clock; see
// TestGolden.
type masker struct{ work, home string }

var (
	maskDuration   = regexp.MustCompile(`\b(after|running for) [0-9][0-9.]*(ns|µs|ms|s|m[0-9.]*s|h[0-9.]*m[0-9.]*s)\b`)
	maskPID        = regexp.MustCompile(`\bpid [0-9]+\b`)
	maskDurationMS = regexp.MustCompile(`"duration_ms":[0-9]+`)
	maskModified   = regexp.MustCompile(`"modified":"[^"]*"`)
)

func (m masker) text(s string) string {
	s = strings.ReplaceAll(s, m.work, "$WORK")
	if m.home != "" {
		s = strings.ReplaceAll(s, m.home, "$HOME")
	}
	s = maskDuration.ReplaceAllString(s, "$1 <duration>")
	return maskPID.ReplaceAllString(s, "pid <pid>")
}

// structured renders v as indented JSON in the order of its fields,
// masked.
func (m masker) structured(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	masked := maskDurationMS.ReplaceAllString(strings.TrimSpace(b.String()), `"duration_ms":0`)
	masked = maskModified.ReplaceAllString(masked, `"modified":"<time>"`)
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(m.text(masked)), "", "  "); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

// checkOutputSchema validates a structured result against the output
// schema of tool.
func checkOutputSchema(t *testing.T, e *Engine, tool string, structured []byte) {
	t.Helper()
	def, ok := e.Catalog().Lookup(tool)
	if !ok || len(def.OutputSchema) == 0 {
		t.Fatalf("%s has no output schema", tool)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(def.OutputSchema, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(structured, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("structured result does not match the output schema of %s: %v\n%s", tool, err, structured)
	}
}

// TestGoldenMasks holds the masks to what they must hide and no more.
func TestGoldenMasks(t *testing.T) {
	m := masker{work: "/tmp/w"}
	for in, want := range map[string]string{
		"exit code 0 after 12ms\n":               "exit code 0 after <duration>\n",
		"exit code 0 after 1.5s\n":               "exit code 0 after <duration>\n",
		"job 1 running for 2m3s (time limit 5m)": "job 1 running for <duration> (time limit 5m)",
		"background job 1 (pid 4242, time":       "background job 1 (pid <pid>, time",
		"workspace root: /tmp/w":                 "workspace root: $WORK",
		"after 3 lines":                          "after 3 lines",
	} {
		if got := m.text(in); got != want {
			t.Errorf("mask(%q) = %q, want %q", in, got, want)
		}
	}
	in := struct {
		Path       string       `json:"path"`
		DurationMS int64        `json:"duration_ms"`
		Notes      []MemoryNote `json:"notes"`
	}{"/tmp/w/a", 7, []MemoryNote{{Key: "k", Modified: time.Now()}}}
	got := string(m.structured(t, in))
	want := `{"path":"$WORK/a","duration_ms":0,"notes":[{"key":"k","size":0,"first_line":"","modified":"<time>"}]}`
	if strings.Join(strings.Fields(got), "") != want {
		t.Errorf("structured mask: %s, want %s", got, want)
	}
}
