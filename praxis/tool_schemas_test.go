package praxis

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestToolSchemas holds tool_schemas.json to the schemas the built-in
// tools' Go types generate; -update rewrites the file.
func TestToolSchemas(t *testing.T) {
	var want bytes.Buffer
	want.WriteString("{\n")
	tools := (&Engine{}).tools()
	for i, tool := range tools {
		s := tool.typed()
		name, _ := json.Marshal(tool.Name)
		want.WriteString("\t" + string(name) + `: {"input": ` + string(s.in) + `, "output": ` + string(s.out) + "}")
		if i < len(tools)-1 {
			want.WriteString(",")
		}
		want.WriteString("\n")
	}
	want.WriteString("}\n")
	if *update {
		if err := os.WriteFile("tool_schemas.json", want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(toolSchemasJSON, want.Bytes()) {
		t.Fatal("tool_schemas.json differs from the schemas the tools' types generate: run go test ./praxis -run TestToolSchemas -update")
	}
	for _, tool := range tools {
		got := withPregenerated(tool)
		s, g := tool.typed(), got.typed()
		if !bytes.Equal(s.in, g.in) || !bytes.Equal(s.out, g.out) {
			t.Errorf("%s: the listed schemas are not the generated ones", tool.Name)
		}
	}
}
