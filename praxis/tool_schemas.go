package praxis

import (
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

// toolSchemas returns the schemas of toolSchemasJSON by tool name.
var toolSchemas = sync.OnceValue(func() map[string]*typedSchemas {
	var raw map[string]struct {
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(toolSchemasJSON, &raw); err != nil {
		panic(fmt.Sprintf("praxis: tool_schemas.json: %v", err)) // TestToolSchemas reads it
	}
	out := make(map[string]*typedSchemas, len(raw))
	for name, s := range raw {
		out[name] = &typedSchemas{in: s.Input, out: s.Output}
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
