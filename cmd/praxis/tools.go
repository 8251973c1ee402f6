package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

func runTools(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("tools", "[flags]",
		"Lists the engine's tools, one line each. With --json, prints each tool's full\n"+
			"description, input and output schemas and annotations.", io)
	ef := addEngineFlags(fs)
	asJSON := fs.Bool("json", false, "print full schemas and annotations as JSON")
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return noArgs(fs, io)
	}
	eng := ef.open("tools", io)
	if eng == nil {
		return exitUsage
	}
	defer eng.Close()
	tools := eng.Catalog().Tools()
	if *asJSON {
		out := make([]map[string]any, len(tools))
		for i, t := range tools {
			out[i] = map[string]any{
				"name":        t.Name,
				"description": t.Description,
				"inputSchema": t.InputSchema,
				"annotations": t.Annotations,
			}
			if len(t.OutputSchema) > 0 {
				out[i]["outputSchema"] = json.RawMessage(t.OutputSchema)
			}
		}
		writeJSON(io.out, out)
		return exitOK
	}
	for _, t := range tools {
		fmt.Fprintf(io.out, "%-16s %s\n", t.Name, firstSentence(t.Description))
	}
	return exitOK
}

// firstSentence returns the description's first sentence, for one-line
// listings.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
