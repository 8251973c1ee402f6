package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/agent/doomloop"
	"github.com/praxis-tools/praxis/agent/permission"
	"github.com/praxis-tools/praxis/praxis"
)

// A run under harness controls: a permission rule refuses a call, and the
// run completes only once its evaluation gate passes.
func ExampleHarness() {
	ws, err := os.MkdirTemp("", "harness-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	touch := praxis.Tool{
		Name:        "touch",
		Description: "Creates an empty file.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`),
		Annotations: praxis.Annotations{Destructive: true},
		Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
			var a struct{ Path string }
			json.Unmarshal(args, &a)
			return praxis.Result{Text: "created " + a.Path}, os.WriteFile(ws+"/"+a.Path, nil, 0o644)
		},
	}
	tools, _ := praxis.NewCatalog(touch)
	rules, _ := permission.New(permission.Rules{Deny: []string{"touch(**/*.lock)"}}, ws)
	model := &agent.Scripted{Turns: []agent.ScriptTurn{
		{Text: "Done."}, // too early: the gate fails
		{ToolCalls: []agent.ScriptCall{{Name: "touch", Input: json.RawMessage(`{"path": "go.lock"}`)}}},
		{ToolCalls: []agent.ScriptCall{{Name: "touch", Input: json.RawMessage(`{"path": "ready"}`)}}},
		{Text: "Done now."},
	}}
	a, _ := agent.New(agent.Config{
		Provider: model,
		Tools:    tools,
		Harness: &agent.Harness{
			Workspace:   ws,
			Gates:       []string{"test -e ready"},
			Permissions: rules,
			DoomLoop:    &doomloop.Config{},
			MaxTokens:   100000,
		},
		OnEvent: func(e agent.Event) {
			switch e.Type {
			case agent.EventToolResult:
				fmt.Println(e.Tool, "->", e.Output)
			case agent.EventGate:
				fmt.Println("gate", e.Gate.Command, "passed:", e.Gate.Passed)
			}
		},
	})
	out := a.Run(context.Background(), "Make the workspace ready.")
	fmt.Println(out.StopReason, out.Steps)
	// Output:
	// gate test -e ready passed: false
	// touch -> E_POLICY: touch is denied by the rule deny(touch(**/*.lock)) (on "go.lock")
	// The permission rules of this session refuse the call; do not retry it as it is.
	// touch -> created ready
	// gate test -e ready passed: true
	// completed 4
}
