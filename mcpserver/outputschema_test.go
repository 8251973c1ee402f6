package mcpserver

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestStructuredContentMatchesOutputSchema calls each engine tool that
// declares an output schema and validates its structuredContent against
// the schema, as clients such as the TypeScript SDK do.
func TestStructuredContentMatchesOutputSchema(t *testing.T) {
	s, dir := newTestServer(t, Options{}, nil)
	writeFile(t, dir, "a.txt", "alpha\nbeta\n")
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)

	read := c.call(1, "read_file", map[string]any{"path": "a.txt"}).tool(t)
	tag := regexp.MustCompile(`(?m)^(2:[0-9a-f]+)\|`).FindStringSubmatch(read.text())
	if tag == nil {
		t.Fatalf("no anchor in %q", read.text())
	}
	results := map[string]wireResult{
		"read_file":  read,
		"write_file": c.call(2, "write_file", map[string]any{"path": "b.txt", "content": "new\n"}).tool(t),
		"edit_file": c.call(3, "edit_file", map[string]any{"path": "a.txt",
			"ops": []map[string]any{{"op": "replace_line", "tag": tag[1], "new_text": "gamma"}}}).tool(t),
	}
	checked := 0
	for _, tool := range s.def.Catalog().Tools() {
		if len(tool.OutputSchema) == 0 {
			continue
		}
		res, ok := results[tool.Name]
		if !ok {
			t.Logf("%s declares an output schema; this test does not call it", tool.Name)
			continue
		}
		if res.IsError {
			t.Fatalf("%s failed: %s", tool.Name, res.text())
		}
		schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.OutputSchema))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource("schema.json", schemaDoc); err != nil {
			t.Fatal(err)
		}
		sch, err := comp.Compile("schema.json")
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		if len(res.StructuredContent) == 0 {
			t.Errorf("%s: no structuredContent", tool.Name)
			continue
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.StructuredContent))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: structuredContent %s does not match its schema: %v", tool.Name, res.StructuredContent, err)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no tool with an output schema was checked")
	}
}
