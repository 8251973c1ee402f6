package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/praxis-tools/praxis/praxis"
)

func runCall(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("call", "[flags] TOOL [JSON]",
		"Runs one tool with the arguments given as a JSON object, from the command line or,\n"+
			"when it is absent or \"-\", from standard input, and prints the result text.\n"+
			"A bash command runs to its end or its timeout_ms: a one-shot process does not move it\n"+
			"to the background.\n"+
			"Exit status: 0 on success, 1 when the tool returned an error, 2 on usage errors.", io)
	ef := addEngineFlags(fs)
	asJSON := fs.Bool("json", false, "print the whole result as JSON")
	if code, ok := parseFlags(fs, args, io); !ok {
		return code
	}
	switch {
	case fs.NArg() < 1:
		return badArgs(fs, io, `needs the name of a tool ("praxis tools" lists them)`)
	case fs.NArg() > 2:
		return badArgs(fs, io, "takes a tool and one JSON object, and was given %d arguments (quote the JSON)", fs.NArg())
	}
	name := fs.Arg(0)
	raw, err := callArgs(fs.Arg(1), io.in)
	if err != nil {
		fmt.Fprintf(io.err, "praxis call: %v\n", err)
		return exitUsage
	}
	if ef.policy != nil {
		// A one-shot process cannot keep a background job past its exit:
		// bash runs every command to its end (or its timeout_ms).
		p := *ef.policy
		p.BackgroundAfter = -1
		ef.policy = &p
	}
	eng := ef.open("call", io)
	if eng == nil {
		return exitUsage
	}
	defer eng.Close()
	res, err := eng.Catalog().Call(ctx, name, raw)
	if errors.Is(err, praxis.ErrUnknownTool) {
		fmt.Fprintf(io.err, "praxis call: unknown tool %q; \"praxis tools\" lists them\n", name)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(io.err, "praxis call: %v\n", err)
		return exitToolError
	}
	if *asJSON {
		writeJSON(io.out, resultJSON(res))
	} else {
		w := io.out
		if res.IsError {
			w = io.err
		}
		fmt.Fprint(w, res.Text)
		if !strings.HasSuffix(res.Text, "\n") {
			fmt.Fprintln(w)
		}
	}
	if res.IsError {
		return exitToolError
	}
	return exitOK
}

// callArgs returns the JSON arguments: arg itself, or standard input when
// arg is empty or "-". Empty input means no arguments.
func callArgs(arg string, in io.Reader) (json.RawMessage, error) {
	if arg == "" || arg == "-" {
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("reading arguments from standard input: %w", err)
		}
		arg = string(b)
	}
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(arg), &obj); err != nil {
		return nil, errors.New(`the arguments must be one JSON object, such as '{"path":"a.go"}'`)
	}
	return json.RawMessage(arg), nil
}

// resultJSON is a Result as "praxis call --json" prints it.
func resultJSON(r praxis.Result) map[string]any {
	m := map[string]any{"text": r.Text, "isError": r.IsError}
	if r.Structured != nil {
		m["structured"] = r.Structured
	}
	if r.Code != "" {
		m["code"] = r.Code
	}
	return m
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
