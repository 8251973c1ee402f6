package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// TestCallRelocatesAcrossProcesses: one "praxis call" process reads a file,
// another program inserts lines above, and a second process edits with the
// first one's anchors. The versions the first process served are on disk
// in the workspace's state directory, so the second relocates the edit,
// and says so; an edit whose neighbouring line changed is refused.
func TestCallRelocatesAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	base := "package app\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n"
	p := filepath.Join(dir, "app.go")
	if err := os.WriteFile(p, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	read := runPraxis(t, dir, "", "call", "read_file", `{"path":"app.go"}`)
	if read.code != 0 {
		t.Fatalf("read_file: %d %s", read.code, read.stderr)
	}
	anchor := map[string]string{} // content -> LINE:TAG
	for line := range strings.Lines(read.stdout) {
		if a, content, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "|"); ok && !strings.HasPrefix(a, "#") {
			anchor[content] = a
		}
	}
	if anchor["\treturn 2"] == "" || anchor["\treturn 1"] == "" {
		t.Fatalf("no anchors in:\n%s", read.stdout)
	}

	// Someone else inserts lines above, and changes the line after "return 1".
	other := "// Package app is an example.\n// It has two functions.\n" + strings.Replace(base, "\treturn 1\n}\n", "\treturn 1\n} // A\n", 1)
	if err := os.WriteFile(p, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}

	args, _ := json.Marshal(map[string]any{"path": "app.go", "ops": []any{
		map[string]any{"op": "replace_line", "tag": anchor["\treturn 2"], "new_text": "\treturn 20"},
	}})
	res := runPraxis(t, dir, "", "call", "edit_file", string(args))
	if res.code != 0 {
		t.Fatalf("edit_file: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if want := "relocated: the anchors were read from version " + hashline.Version([]byte(base)); !strings.Contains(res.stdout, want) {
		t.Errorf("the result does not say %q:\n%s", want, res.stdout)
	}
	want := strings.Replace(other, "\treturn 2\n", "\treturn 20\n", 1)
	if got, _ := os.ReadFile(p); string(got) != want {
		t.Fatalf("after the edit:\n%s\nwant:\n%s", got, want)
	}

	args, _ = json.Marshal(map[string]any{"path": "app.go", "ops": []any{
		map[string]any{"op": "replace_line", "tag": anchor["\treturn 1"], "new_text": "\treturn 10"},
	}})
	res = runPraxis(t, dir, "", "call", "edit_file", string(args))
	if res.code != 1 || !strings.Contains(res.stderr, "E_ANCHOR_STALE") {
		t.Fatalf("an edit next to a changed line: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got, _ := os.ReadFile(p); string(got) != want {
		t.Errorf("a refused edit wrote the file:\n%s", got)
	}
}
