package agent

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestImagesThatCannotBeSent checks that an image no model takes is left
// out with a note in the text, and the call's other images still go.
func TestImagesThatCannotBeSent(t *testing.T) {
	big := strings.Repeat("A", (maxImageBytes/3+10)*4)
	tool := praxis.Tool{
		Name: "shots", Description: "Images of every kind.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, args json.RawMessage) (praxis.Result, error) {
			return praxis.Result{Text: "shots", Images: []praxis.Image{
				{MIMEType: "image/png", Data: tinyPNG},
				{MIMEType: "image/tiff", Data: tinyPNG},
				{MIMEType: "image/png", Data: "not base64!"},
				{MIMEType: "image/jpeg", Data: big},
			}}, nil
		},
	}
	var events []Event
	cat, _ := praxis.NewCatalog(tool)
	a, _ := New(Config{Provider: &Scripted{Turns: []ScriptTurn{{ToolCalls: calls("shots")}, {Text: "ok"}}},
		Tools: cat, OnEvent: func(e Event) { events = append(events, e) }})
	out := a.Run(context.Background(), "task")
	res := out.Messages[2].Content[0]
	if len(res.Images) != 1 || res.Images[0].Data != tinyPNG {
		t.Errorf("images sent: %d", len(res.Images))
	}
	for _, want := range []string{`"image/tiff" was not passed on to the model: models take PNG, JPEG, GIF and WebP`, "not valid base64", "larger than 5 MB"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the text does not say %q:\n%s", want, res.Text)
		}
	}
}

// TestRequestImagesAreBounded checks that a request carries the images of
// the latest tool results only, up to maxRequestImages.
func TestRequestImagesAreBounded(t *testing.T) {
	var msgs []Message
	for i := range 30 {
		id := fmt.Sprint("s", i)
		msgs = append(msgs,
			Message{Role: RoleAssistant, Content: []Block{{Type: BlockToolUse, ID: id, Name: "shot", Input: json.RawMessage(`{}`)}}},
			Message{Role: RoleUser, Content: []Block{{Type: BlockToolResult, ID: id, Text: "[image]", Images: []Image{{MIMEType: "image/png", Data: tinyPNG}}}}})
	}
	req := &Request{Model: "m", Messages: append([]Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Text: "go"}}}}, msgs...)}
	for name, body := range map[string]string{
		"anthropic": jsonOf((&Anthropic{}).body(req, true)),
		"openai":    jsonOf((&OpenAI{}).body(req, true)),
	} {
		if n := strings.Count(body, tinyPNG); n != maxRequestImages {
			t.Errorf("%s: %d images in the request, want %d", name, n, maxRequestImages)
		}
		if last := strings.LastIndex(body, `s29`); last < 0 || !strings.Contains(body[last:], tinyPNG) {
			t.Errorf("%s: the latest result's image is not sent", name)
		}
	}
}
