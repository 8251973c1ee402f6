package praxis

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// toolSchemasJSON holds the listing schemas of the built-in tools, generated
// from their Go types (TestToolSchemas with -update writes the file and
// fails while it differs from what the types generate), so that listing
// the tools at start-up costs no reflection: generating every schema took
// about 10 ms of a cold `praxis serve`. A call still resolves its tool's
// input schema from the types, on first use.
//
//go:embed tool_schemas.json
var toolSchemasJSON []byte

// toolSchemas returns the schemas of toolSchemasJSON by tool name. The
// file is a JSON object written one tool a line, as
//
//	"name": {"input": SCHEMA, "output": SCHEMA},
//
// each schema compact (no space between tokens, so the separators, which
// have spaces, cannot occur inside one): the lines are cut, not decoded,
// which spared 0.5 ms of every cold start.
var toolSchemas = sync.OnceValue(func() map[string]*typedSchemas {
	out := make(map[string]*typedSchemas)
	for line := range bytes.Lines(toolSchemasJSON) {
		rest, ok := bytes.CutPrefix(line, []byte("\t\""))
		if !ok {
			continue // the object's braces
		}
		name, rest, ok1 := bytes.Cut(rest, []byte(`": {"input": `))
		in, rest, ok2 := bytes.Cut(rest, []byte(`, "output": `))
		rest = bytes.TrimSuffix(bytes.TrimSuffix(bytes.TrimSuffix(rest, []byte("\n")), []byte(",")), []byte("}"))
		if !ok1 || !ok2 || !json.Valid(in) || !json.Valid(rest) {
			panic(fmt.Sprintf("praxis: tool_schemas.json: a line not as TestToolSchemas writes it: %.60q", line))
		}
		out[string(name)] = &typedSchemas{in: in, out: rest}
	}
	return out
})

// withPregenerated returns the built-in tool t listing the schemas of
// toolSchemasJSON, when the file has them.
func withPregenerated(t Tool) Tool {
	if t.typed == nil {
		return t
	}
	if s, ok := toolSchemas()[t.Name]; ok {
		t.typed = func() *typedSchemas { return s }
	}
	return t
}
