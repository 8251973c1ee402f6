package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var praxisBin string

// TestMain builds the real binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "praxis-bin-")
	if err != nil {
		panic(err)
	}
	praxisBin = filepath.Join(dir, "praxis")
	if out, err := exec.Command("go", "build", "-o", praxisBin, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type runResult struct {
	stdout, stderr string
	code           int
}

// runPraxis runs the binary in dir with stdin and args.
func runPraxis(t *testing.T, dir, stdin string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(praxisBin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return runResult{out.String(), errb.String(), code}
}

func TestCallExitStatuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"success", "", []string{"call", "read_file", `{"path":"a.txt"}`}, 0, "|hello\n", ""},
		{"arguments on stdin", `{"path":"a.txt"}`, []string{"call", "read_file"}, 0, "|hello\n", ""},
		{"arguments on stdin with -", `{"path":"a.txt"}`, []string{"call", "read_file", "-"}, 0, "|hello\n", ""},
		{"tool error", "", []string{"call", "read_file", `{"path":"nope.txt"}`}, 1, "", "E_NOT_FOUND: nope.txt does not exist"},
		{"outside", "", []string{"call", "read_file", `{"path":"../x"}`}, 1, "", "E_PATH_OUTSIDE"},
		{"invalid args", "", []string{"call", "read_file", `{}`}, 1, "", `E_INVALID_ARGS: arguments: required: missing properties: ["path"]`},
		{"unknown tool", "", []string{"call", "nope", `{}`}, 2, "", `unknown tool "nope"`},
		{"not JSON", "", []string{"call", "read_file", `{path`}, 2, "", "must be one JSON object"},
		{"no tool", "", []string{"call"}, 2, "", "needs the name of a tool"},
		{"bad flag", "", []string{"call", "--nope", "read_file"}, 2, "", "there is no flag --nope"},
		{"help", "", []string{"call", "--help"}, 0, "Usage: praxis call", ""},
		{"workspace flag", "", []string{"call", "--workspace", dir, "read_file", `{"path":"a.txt"}`}, 0, "|hello\n", ""},
		{"missing workspace", "", []string{"call", "--workspace", filepath.Join(dir, "nope"), "read_file", `{"path":"a.txt"}`}, 2, "", "workspace"},
		{"edit budget", "", []string{"call", "--max-changed-lines", "1", "edit_file", `{"path":"a.txt","ops":[{"op":"append","new_text":"x\ny"}]}`}, 1, "", "E_BUDGET_EXCEEDED: the edit changes 2 lines"},
		{"unknown command", "", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"top help", "", []string{"--help"}, 0, "Commands:", ""},
		{"version", "", []string{"version"}, 0, "praxis ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runPraxis(t, dir, tc.stdin, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestCallJSON(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	r := runPraxis(t, dir, "", "call", "--json", "read_file", `{"path":"a.txt"}`)
	var res struct {
		Text       string         `json:"text"`
		IsError    bool           `json:"isError"`
		Structured map[string]any `json:"structured"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v: %s", r.code, err, r.stdout)
	}
	if res.IsError || !strings.Contains(res.Text, "|hello") || res.Structured["total_lines"] != float64(1) {
		t.Errorf("result %+v", res)
	}
	r = runPraxis(t, dir, "", "call", "--json", "read_file", `{"path":"zz"}`)
	if r.code != 1 || !strings.Contains(r.stdout, `"code": "E_NOT_FOUND"`) {
		t.Errorf("error as JSON: exit %d %s", r.code, r.stdout)
	}
}

func TestEditThroughCLI(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\r\ntwo\r\n"), 0o644)
	r := runPraxis(t, dir, "", "call", "read_file", `{"path":"a.txt"}`)
	lines := strings.Split(r.stdout, "\n")
	anchor := strings.SplitN(lines[2], "|", 2)[0] // line 2
	args := `{"path":"a.txt","ops":[{"op":"replace_line","tag":"` + anchor + `","new_text":"TWO"}]}`
	if r := runPraxis(t, dir, args, "call", "edit_file"); r.code != 0 {
		t.Fatalf("edit: %d %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "one\r\nTWO\r\n" {
		t.Errorf("file = %q", got)
	}
	if r := runPraxis(t, dir, args, "call", "edit_file"); r.code != 1 || !strings.Contains(r.stderr, "E_ANCHOR_STALE") {
		t.Errorf("second edit with the same anchor: %d %s", r.code, r.stderr)
	}
}

func TestTools(t *testing.T) {
	r := runPraxis(t, t.TempDir(), "", "tools")
	for _, name := range []string{"read_file", "edit_file", "write_file", "list_dir"} {
		if !strings.Contains(r.stdout, name+" ") {
			t.Errorf("tools lacks %s:\n%s", name, r.stdout)
		}
	}
	r = runPraxis(t, t.TempDir(), "", "tools", "--json")
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations map[string]bool `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) < 4 {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	for _, tool := range tools {
		if len(tool.Annotations) != 4 || !json.Valid(tool.InputSchema) {
			t.Errorf("%s: annotations %v", tool.Name, tool.Annotations)
		}
	}
}
