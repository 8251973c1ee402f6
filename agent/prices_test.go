package agent

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestPricesLookup(t *testing.T) {
	p := DefaultPrices()
	tests := []struct {
		model string
		want  string // the key whose price applies; "" for none
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"claude-opus-4-1-20250805", "claude-opus-4-1"},
		{"claude-haiku-4-5", "claude-haiku-4-5"},
		{"gpt-4.1", "gpt-4.1"},
		{"gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"},
		{"gpt-4o-mini", "gpt-4o-mini"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-5.1", "gpt-5.1"},
		{"gpt-5-mini", "gpt-5-mini"},
		{"o3-pro", "o3-pro"},
		{"o3-2025-04-16", "o3"},
		{"o4-mini", "o4-mini"},
		{"claude-sonnet-5", ""},
		{"claude-sonnet-4.5", ""},
		{"llama3.1:8b", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := p.Lookup(tt.model)
		if ok != (tt.want != "") || ok && got != p[tt.want] {
			t.Errorf("Lookup(%q) = %+v, %v; want the price of %q", tt.model, got, ok, tt.want)
		}
	}
}

func TestPriceCost(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	// Anthropic bills cache reads and writes apart from input tokens.
	sonnet := DefaultPrices()["claude-sonnet-4-5"]
	u := Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 10000, CacheWriteTokens: 2000}
	if got, want := sonnet.Cost("anthropic", u), (1000*3+200*15+10000*0.3+2000*3.75)/1e6; !near(got, want) {
		t.Errorf("anthropic cost %v, want %v", got, want)
	}
	// OpenAI's prompt tokens include the cached ones, billed at the cached rate.
	gpt := DefaultPrices()["gpt-4.1"]
	u = Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 400}
	if got, want := gpt.Cost("openai", u), (600*2+400*0.5+100*8)/1e6; !near(got, want) {
		t.Errorf("openai cost %v, want %v", got, want)
	}
}

func TestPricesApplyConfig(t *testing.T) {
	p := DefaultPrices()
	err := p.ApplyConfig([]byte("sandbox:\n  network: none\nprices:\n  claude-sonnet-4-5: {input: 1, output: 2}\n  my-local-model:\n    input: 0.5\n    output: 1.5\n    cache_read: 0.05\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p["claude-sonnet-4-5"]; got != (Price{Input: 1, Output: 2}) {
		t.Errorf("override: %+v", got)
	}
	if got, ok := p.Lookup("my-local-model-q4"); !ok || got != (Price{Input: 0.5, Output: 1.5, CacheRead: 0.05}) {
		t.Errorf("added: %+v %v", got, ok)
	}
	if got := p["gpt-4.1"]; got != DefaultPrices()["gpt-4.1"] {
		t.Errorf("a price the file does not name changed: %+v", got)
	}
	for _, bad := range []struct{ yaml, says string }{
		{"prices:\n  m: {input: 1, ouput: 2}\n", `unknown key "ouput"`},
		{"prices:\n  m: {input: -1}\n", "negative"},
		{"prices:\n  m: {input: cheap}\n", "cheap"},
	} {
		if err := DefaultPrices().ApplyConfig([]byte(bad.yaml)); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("ApplyConfig(%q) = %v, want an error saying %q", bad.yaml, err, bad.says)
		}
	}
	if err := p.ApplyConfig(nil); err != nil {
		t.Errorf("an empty file: %v", err)
	}
}

// TestCostAndMaxCost checks cost_usd on every step and the run, and that
// --max-cost stops the run once the cost reaches the budget.
func TestCostAndMaxCost(t *testing.T) {
	turn := ScriptTurn{ToolCalls: calls("echo"), Usage: &Usage{InputTokens: 100000, OutputTokens: 10000}} // $0.45 at sonnet's prices
	turns := []ScriptTurn{turn, turn, turn, {Text: "done", Usage: &Usage{InputTokens: 1000}}}
	for i := range 3 {
		turns[i].ToolCalls = []ScriptCall{{Name: "echo", Input: []byte(`{"text":"x"}`)}}
	}
	t.Run("priced", func(t *testing.T) {
		out, events := runScript(t, context.Background(), Config{Model: "claude-sonnet-4-5-20250929"}, turns, echoTool())
		var sum float64
		steps := 0
		for _, e := range events {
			if e.Type == EventStepComplete {
				if e.CostUSD == nil {
					t.Fatalf("step %d without cost_usd", e.Step)
				}
				sum += *e.CostUSD
				steps++
			}
		}
		last := events[len(events)-1]
		want := 3*0.45 + 0.003
		if steps != 4 || math.Abs(sum-want) > 1e-9 || last.CostUSD == nil || math.Abs(*last.CostUSD-want) > 1e-9 || !out.Priced || math.Abs(out.CostUSD-want) > 1e-9 {
			t.Errorf("steps %d sum %v, run_complete %v, outcome %v; want %v", steps, sum, last.CostUSD, out.CostUSD, want)
		}
	})
	t.Run("unpriced", func(t *testing.T) {
		out, events := runScript(t, context.Background(), Config{Model: "my-model"}, turns, echoTool())
		for _, e := range events {
			if e.CostUSD != nil {
				t.Errorf("%s has cost_usd for a model without a price", e.Type)
			}
		}
		if out.Priced {
			t.Errorf("outcome priced: %+v", out)
		}
	})
	t.Run("max cost", func(t *testing.T) {
		out, events := runScript(t, context.Background(), Config{Model: "claude-sonnet-4-5", Harness: &Harness{MaxCost: 0.8}}, turns, echoTool())
		last := events[len(events)-1]
		if out.StopReason != StopMaxCost || out.Steps != 2 || !strings.Contains(out.Err.Error(), "reaching the budget of $0.8000") || strings.Contains(out.Err.Error(), "--") || last.StopReason != StopMaxCost {
			t.Errorf("outcome %+v", out)
		}
		if events[0].Controls == nil || events[0].Controls.MaxCostUSD != 0.8 {
			t.Errorf("run_start controls %+v", events[0].Controls)
		}
	})
}

// TestTranscriptShowsThinkingAndCost checks the text transcript: reasoning
// on lines of its own, marked, apart from the answer; cache tokens and the
// cost on the closing line.
func TestTranscriptShowsThinkingAndCost(t *testing.T) {
	var b strings.Builder
	h := TranscriptHandler(&b)
	cost := 0.0123
	for _, ev := range []Event{
		{Type: EventRunStart, RunID: "r", Provider: "anthropic", Model: "m"},
		{Type: EventThinking, Text: "First, "},
		{Type: EventThinking, Text: "look.\nThen act."},
		{Type: EventTextDelta, Text: "The answer."},
		{Type: EventRunComplete, StopReason: StopCompleted, Steps: 1, Usage: &Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 700, CacheWriteTokens: 30}, CostUSD: &cost},
	} {
		h(ev)
	}
	want := "praxis agent · run r · anthropic m · 0 tools\n" +
		"  ∴ First, look.\n    Then act.\n" +
		"The answer.\n" +
		"— completed after 1 steps, 0 tool calls · 10 tokens in, 5 out (cache: 700 read, 30 written) · $0.0123 · 0s\n"
	if b.String() != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", b.String(), want)
	}
}
