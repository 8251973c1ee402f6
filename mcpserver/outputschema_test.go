package mcpserver

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/sandbox"
)

// TestStructuredContentMatchesOutputSchema calls every engine tool over
// stdio, with arguments that succeed and with arguments that fail, and
// validates each successful call's structuredContent against the output
// schema tools/list gave, with a validator other than the one that
// generated the schemas, as clients such as the TypeScript SDK do. An
// error result carries no structuredContent.
func TestStructuredContentMatchesOutputSchema(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Workspace: dir, Open: func(d string) (*praxis.Engine, error) {
		pol := sandbox.DefaultPolicy("")
		pol.KillGrace = 200 * time.Millisecond
		return praxis.New(praxis.Options{Workspace: d, NoSync: true, Sandbox: &pol})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	writeFile(t, dir, "a.txt", "alpha\nbeta\n")
	writeFile(t, dir, ".praxis/memory/style.md", "Tabs.\n")
	writeFile(t, dir, ".praxis/skills/release/SKILL.md", "---\nname: release\ndescription: Cut a release.\n---\nSee [notes](NOTES.md).\n")
	writeFile(t, dir, ".praxis/skills/release/NOTES.md", "one\ntwo\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)

	c.send(request(1, "tools/list", nil))
	schemas := map[string]*jsonschema.Schema{}
	var listed struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	m, _ := c.response(1)
	if err := json.Unmarshal(m.Result, &listed); err != nil {
		t.Fatalf("tools/list: %s: %v", m.raw, err)
	}
	for _, tool := range listed.Tools {
		if len(tool.OutputSchema) == 0 {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.OutputSchema))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource(tool.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := comp.Compile(tool.Name + ".json")
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		schemas[tool.Name] = sch
	}

	read := c.call(2, "read_file", map[string]any{"path": "a.txt"}).tool(t)
	tag := regexp.MustCompile(`(?m)^(2:[0-9a-f]+)\|`).FindStringSubmatch(read.text())
	if tag == nil {
		t.Fatalf("no anchor in %q", read.text())
	}
	calls := []struct {
		tool string
		args map[string]any
		fail bool
	}{
		{"read_file", map[string]any{"path": "a.txt", "offset": 2}, false},
		{"read_file", map[string]any{"path": "../x"}, true},
		{"write_file", map[string]any{"path": "b.txt", "content": "new\n"}, false},
		{"write_file", map[string]any{"path": "b.txt", "content": "x", "expect_version": "0"}, true},
		{"edit_file", map[string]any{"path": "a.txt", "dry_run": true, "ops": []map[string]any{{"op": "replace_line", "tag": tag[1], "new_text": "gamma"}}}, false},
		{"edit_file", map[string]any{"path": "a.txt", "ops": []map[string]any{{"op": "replace_line", "tag": tag[1], "new_text": "gamma"}}}, false},
		{"edit_file", map[string]any{"path": "a.txt", "ops": []map[string]any{{"op": "nope"}}}, true},
		{"patch_file", map[string]any{"patch": "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-new\n+newer\n"}, false},
		{"patch_file", map[string]any{"patch": "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-absent\n+x\n"}, true},
		{"list_dir", map[string]any{"depth": 3}, false},
		{"list_dir", map[string]any{"path": "a.txt"}, true},
		{"glob", map[string]any{"pattern": "**/*.txt"}, false},
		{"glob", map[string]any{"pattern": "[x"}, true},
		{"grep", map[string]any{"pattern": "gamma", "output": "files"}, false},
		{"grep", map[string]any{"pattern": "("}, true},
		{"bash", map[string]any{"command": "echo hi; exit 4"}, false},
		{"bash", map[string]any{"command": "sleep 60", "background": true}, false},
		{"bash", map[string]any{"command": ""}, true},
		{"job_output", map[string]any{"job": 1}, false},
		{"job_output", map[string]any{"job": "99"}, true},
		{"job_kill", map[string]any{"job": "1"}, false},
		{"job_output", map[string]any{"job": "1", "since": 0}, false},
		{"job_kill", map[string]any{"job": "99"}, true},
		{"write_memory", map[string]any{"key": "project/build", "content": "make test", "mode": "append"}, false},
		{"write_memory", map[string]any{"key": "../x", "content": "x"}, true},
		{"read_memory", map[string]any{"key": "style"}, false},
		{"read_memory", map[string]any{"key": "gone"}, false},
		{"read_memory", map[string]any{"key": "a//b"}, true},
		{"list_memory", nil, false},
		{"search_memory", map[string]any{"query": "make"}, false},
		{"search_memory", map[string]any{"query": " "}, true},
		{"delete_memory", map[string]any{"key": "style"}, false},
		{"delete_memory", map[string]any{"key": "style"}, true},
		{"list_skills", nil, false},
		{"load_skill", map[string]any{"name": "release"}, false},
		{"load_skill", map[string]any{"name": "nope"}, true},
		{"read_skill_file", map[string]any{"name": "release", "path": "NOTES.md"}, false},
		{"read_skill_file", map[string]any{"name": "release", "path": "../x"}, true},
	}
	succeeded := map[string]bool{"read_file": true}
	check := func(name string, res wireResult) {
		t.Helper()
		if res.IsError {
			if len(res.StructuredContent) > 0 {
				t.Errorf("%s: an error result carries structuredContent %s", name, res.StructuredContent)
			}
			return
		}
		sch := schemas[name]
		if sch == nil {
			t.Errorf("%s: no output schema listed", name)
			return
		}
		if len(res.StructuredContent) == 0 {
			t.Errorf("%s: no structuredContent", name)
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.StructuredContent))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: structuredContent %s does not match its schema: %v", name, res.StructuredContent, err)
		}
		succeeded[name] = true
	}
	check("read_file", read)
	for i, tc := range calls {
		res := c.call(10+i, tc.tool, tc.args).tool(t)
		if res.IsError != tc.fail {
			t.Errorf("%s %v: isError = %v, want %v: %s", tc.tool, tc.args, res.IsError, tc.fail, res.text())
		}
		check(tc.tool, res)
	}

	eng, err := praxis.New(praxis.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, tool := range eng.Catalog().Tools() {
		if !succeeded[tool.Name] {
			t.Errorf("engine tool %s was not called successfully", tool.Name)
		}
	}
}
