package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis"
)

// tinyPNG is a 1x1 PNG, base64-encoded.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// screenshotTool returns an image, as an external MCP tool's image content
// arrives through mcpclient.
func screenshotTool() praxis.Tool {
	return praxis.Tool{
		Name: "mcp__browser__screenshot", Description: "Takes a screenshot.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
			return praxis.Result{Text: "the page\n[image: image/png, 92 bytes of base64]", Images: []praxis.Image{{MIMEType: "image/png", Data: tinyPNG}}}, nil
		},
	}
}

func runWithTools(t *testing.T, p Provider, tools ...praxis.Tool) Outcome {
	t.Helper()
	cat, err := praxis.NewCatalog(tools...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Provider: p, Model: "m", Tools: cat})
	if err != nil {
		t.Fatal(err)
	}
	return a.Run(context.Background(), "look at the page")
}

// TestImagesReachTheModel checks that a tool result's images go to the
// provider as images: Anthropic image blocks inside the tool_result,
// OpenAI image_url parts in a user message after the tool message.
func TestImagesReachTheModel(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		api, srv := newFakeAPI(t, reply{sse: anthropicCallReply("s1", "mcp__browser__screenshot", `{}`)}, reply{sse: anthropicText("a blank page")})
		if out := runWithTools(t, &Anthropic{APIKey: "k", BaseURL: srv.URL}, screenshotTool()); out.StopReason != StopCompleted {
			t.Fatalf("outcome %+v", out)
		}
		msgs := api.got[1].body["messages"].([]any)
		result := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
		want := `{"cache_control":{"type":"ephemeral"},"content":[{"text":"the page\n[image: image/png, 92 bytes of base64]","type":"text"},` +
			`{"source":{"data":"` + tinyPNG + `","media_type":"image/png","type":"base64"},"type":"image"}],"tool_use_id":"s1","type":"tool_result"}`
		if got := jsonOf(result); got != want {
			t.Errorf("tool result:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("openai", func(t *testing.T) {
		api, srv := newFakeAPI(t, reply{sse: openaiCallReply("s1", "mcp__browser__screenshot", `{}`)}, reply{sse: openaiText("a blank page")})
		if out := runWithTools(t, &OpenAI{BaseURL: srv.URL}, screenshotTool()); out.StopReason != StopCompleted {
			t.Fatalf("outcome %+v", out)
		}
		msgs := api.got[1].body["messages"].([]any)
		tool, user := msgs[len(msgs)-2].(map[string]any), msgs[len(msgs)-1].(map[string]any)
		if tool["role"] != "tool" || tool["tool_call_id"] != "s1" || !strings.HasPrefix(tool["content"].(string), "the page") {
			t.Errorf("tool message %s", jsonOf(tool))
		}
		want := `{"content":[{"text":"Image 1 of 1 of the result of tool call s1:","type":"text"},` +
			`{"image_url":{"url":"data:image/png;base64,` + tinyPNG + `"},"type":"image_url"}],"role":"user"}`
		if got := jsonOf(user); got != want {
			t.Errorf("user message:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("openai without vision", func(t *testing.T) {
		api, srv := newFakeAPI(t,
			reply{sse: openaiCallReply("s1", "mcp__browser__screenshot", `{}`)},
			reply{status: 400, body: `{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error"}}`},
			reply{sse: openaiText("I cannot see it")})
		if out := runWithTools(t, &OpenAI{BaseURL: srv.URL}, screenshotTool()); out.StopReason != StopCompleted {
			t.Fatalf("outcome %+v", out)
		}
		if len(api.got) != 3 || strings.Contains(jsonOf(api.got[2].body), "image_url") || !strings.Contains(jsonOf(api.got[2].body), "[image: image/png") {
			t.Errorf("the retry without images: %s", jsonOf(api.got[len(api.got)-1].body))
		}
	})
}

// TestImagesSurviveResume checks that a journaled tool result keeps its
// images, so a resumed session sends them again.
func TestImagesSurviveResume(t *testing.T) {
	var events []Event
	cat, _ := praxis.NewCatalog(screenshotTool())
	a, _ := New(Config{Provider: &Scripted{Turns: []ScriptTurn{{ToolCalls: calls("mcp__browser__screenshot")}, {Text: "seen"}}},
		Tools: cat, OnEvent: func(e Event) { events = append(events, e) }})
	a.Run(context.Background(), "task")
	st, err := Fold(events)
	if err != nil {
		t.Fatal(err)
	}
	res := st.Messages[2].Content[0]
	if res.Type != BlockToolResult || len(res.Images) != 1 || res.Images[0].Data != tinyPNG {
		t.Errorf("folded tool result %+v", res)
	}
}
