package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/praxis-tools/praxis/agent"
	"github.com/praxis-tools/praxis/praxis"
)

// A run with the scripted provider: the model calls a tool, then answers.
func Example() {
	clock := praxis.Tool{
		Name:        "clock",
		Description: "Tells the time.",
		InputSchema: json.RawMessage(`{"type": "object"}`),
		Annotations: praxis.Annotations{ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, _ json.RawMessage) (praxis.Result, error) {
			return praxis.Result{Text: "12:00"}, nil
		},
	}
	tools, _ := praxis.NewCatalog(clock)
	model := &agent.Scripted{Turns: []agent.ScriptTurn{
		{ToolCalls: []agent.ScriptCall{{Name: "clock"}}},
		{Text: "It is noon."},
	}}
	a, _ := agent.New(agent.Config{
		Provider: model,
		Tools:    tools,
		OnEvent: func(e agent.Event) {
			if e.Type == agent.EventToolResult {
				fmt.Printf("%s -> %s\n", e.Tool, e.Output)
			}
		},
	})
	out := a.Run(context.Background(), "What time is it?")
	fmt.Println(out.StopReason, out.Steps, out.Final)
	// Output:
	// clock -> 12:00
	// completed 2 It is noon.
}
