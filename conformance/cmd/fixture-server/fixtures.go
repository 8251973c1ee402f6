package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/praxis-tools/praxis/mcpserver"
)

// Fixture texts the suite's scenarios describe.

const (
	SimpleText        = "This is a simple text response for testing."
	ErrorText         = "This tool intentionally returns an error for testing"
	StaticText        = "This is the content of the static text resource."
	EmbeddedText      = "This is an embedded resource content."
	PromptEmbedded    = "Embedded resource content for testing."
	notificationPause = 50 * time.Millisecond
)

// fixtures is the extension that mounts the fixtures with the
// capabilities they need: resource and prompt lists that may change, and
// completion. These are the fixture server's; "praxis serve" advertises
// none of them.
func fixtures() mcpserver.Extension {
	pngData := base64.StdEncoding.EncodeToString(redPixelPNG())
	wavData := base64.StdEncoding.EncodeToString(silentWAV())
	noArgs := func(name, desc string) mcp.Tool {
		return mcp.NewTool(name, mcp.WithDescription(desc),
			mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false))
	}
	result := func(content ...mcp.Content) *mcp.CallToolResult { return &mcp.CallToolResult{Content: content} }
	ext := mcpserver.Extension{
		ResourcesListChanged: true,
		PromptsListChanged:   true,
		Completer:            completer{},
	}
	tool := func(t mcp.Tool, h func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)) {
		ext.Tools = append(ext.Tools, mcpserver.ExtensionTool{Tool: t, Handler: h})
	}
	resource := func(r mcp.Resource, read mcpserver.ResourceReader) {
		ext.Resources = append(ext.Resources, mcpserver.ExtensionResource{Resource: r, Read: read})
	}
	prompt := func(p mcp.Prompt, h func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error)) {
		ext.Prompts = append(ext.Prompts, mcpserver.ExtensionPrompt{Prompt: p, Handler: h})
	}
	tool(noArgs("test_simple_text", "Returns a fixed text."),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(mcp.NewTextContent(SimpleText)), nil
		})
	tool(noArgs("test_image_content", "Returns a 1x1 PNG image."),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(mcp.NewImageContent(pngData, "image/png")), nil
		})
	tool(noArgs("test_audio_content", "Returns a short silent WAV clip."),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(mcp.NewAudioContent(wavData, "audio/wav")), nil
		})
	tool(noArgs("test_embedded_resource", "Returns an embedded text resource."),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: EmbeddedText,
			})), nil
		})
	tool(noArgs("test_multiple_content_types", "Returns text, an image and an embedded resource."),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(
				mcp.NewTextContent("Multiple content types test:"),
				mcp.NewImageContent(pngData, "image/png"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
				}),
			), nil
		})
	tool(noArgs("test_error_handling", "Always fails."),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError(ErrorText), nil
		})
	tool(noArgs("test_tool_with_logging", "Sends three log messages while it runs."),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sess := mcpserver.SessionFromContext(ctx)
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 && !pause(ctx) {
					return nil, ctx.Err()
				}
				if err := sess.Log(mcp.LoggingLevelInfo, "conformance", msg); err != nil {
					return nil, err
				}
			}
			return result(mcp.NewTextContent("Tool with logging executed successfully")), nil
		})
	tool(noArgs("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100."),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sess := mcpserver.SessionFromContext(ctx)
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			for i, p := range []float64{0, 50, 100} {
				if i > 0 && !pause(ctx) {
					return nil, ctx.Err()
				}
				if token == nil {
					continue
				}
				if err := sess.Progress(token, p, 100, ""); err != nil {
					return nil, err
				}
			}
			return result(mcp.NewTextContent("Tool with progress executed successfully")), nil
		})
	tool(mcp.NewTool("test_sampling", mcp.WithDescription("Asks the client's model to answer a prompt."),
		mcp.WithString("prompt", mcp.Required(), mcp.Description("The prompt to send to the model")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// The official conformance suite still calls test_sampling.
			//lint:ignore SA1019 sampling is deprecated by the protocol, not yet by the conformance suite this fixture serves
			res, err := mcpserver.SessionFromContext(ctx).CreateMessage(ctx, mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
				MaxTokens: 100,
			})
			if err != nil {
				return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
			}
			text := ""
			if t, ok := res.Content.(mcp.TextContent); ok {
				text = t.Text
			}
			return result(mcp.NewTextContent("LLM response: " + text)), nil
		})
	tool(mcp.NewTool("test_elicitation", mcp.WithDescription("Asks the client's user for a username and an email."),
		mcp.WithString("message", mcp.Required(), mcp.Description("The message to show the user")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, req.GetString("message", ""), `{
				"type": "object",
				"properties": {
					"username": {"type": "string", "description": "User's response"},
					"email": {"type": "string", "description": "User's email address"}
				},
				"required": ["username", "email"]
			}`, "User response: ")
		})
	tool(noArgs("test_elicitation_sep1034_defaults", "Asks for input with a default for every primitive type."),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, "Please review your information", `{
				"type": "object",
				"properties": {
					"name": {"type": "string", "default": "John Doe"},
					"age": {"type": "integer", "default": 30},
					"score": {"type": "number", "default": 95.5},
					"status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
					"verified": {"type": "boolean", "default": true}
				}
			}`, "Elicitation completed: ")
		})
	tool(noArgs("test_elicitation_sep1330_enums", "Asks for input with every kind of enum schema."),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, "Please choose options", `{
				"type": "object",
				"properties": {
					"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
					"titledSingle": {"type": "string", "oneOf": [
						{"const": "value1", "title": "First Option"},
						{"const": "value2", "title": "Second Option"},
						{"const": "value3", "title": "Third Option"}
					]},
					"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
					"untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
					"titledMulti": {"type": "array", "items": {"anyOf": [
						{"const": "value1", "title": "First Choice"},
						{"const": "value2", "title": "Second Choice"},
						{"const": "value3", "title": "Third Choice"}
					]}}
				}
			}`, "Elicitation completed: ")
		})
	tool(mcp.NewToolWithRawSchema("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json.RawMessage(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {
			"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}
		},
		"properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
		"additionalProperties": false
	}`)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(mcp.NewTextContent("ok")), nil
	})

	resource(mcp.NewResource("test://static-text", "static-text", mcp.WithResourceDescription("A fixed text."), mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: StaticText}}, nil
		})
	resource(mcp.NewResource("test://static-binary", "static-binary", mcp.WithResourceDescription("A 1x1 PNG image."), mcp.WithMIMEType("image/png")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: pngData}}, nil
		})
	resource(mcp.NewResource("test://watched-resource", "watched-resource", mcp.WithResourceDescription("A resource clients may subscribe to."), mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content."}}, nil
		})
	ext.ResourceTemplates = append(ext.ResourceTemplates, mcpserver.ExtensionResourceTemplate{
		Template: mcp.NewResourceTemplate("test://template/{id}/data", "template",
			mcp.WithTemplateDescription("Data for an id."), mcp.WithTemplateMIMEType("application/json")),
		Read: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			if id == "" || strings.Contains(id, "/") {
				return nil, fmt.Errorf("%w: %s", mcpserver.ErrResourceNotFound, req.Params.URI)
			}
			text, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(text)}}, nil
		},
	})

	prompt(mcp.NewPrompt("test_simple_prompt", mcp.WithPromptDescription("A prompt without arguments.")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A simple prompt", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("This is a simple prompt for testing.")),
			}), nil
		})
	prompt(mcp.NewPrompt("test_prompt_with_arguments", mcp.WithPromptDescription("A prompt with two arguments."),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return mcp.NewGetPromptResult("A prompt with arguments", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"]))),
			}), nil
		})
	prompt(mcp.NewPrompt("test_prompt_with_embedded_resource", mcp.WithPromptDescription("A prompt embedding a resource."),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			if uri == "" {
				return nil, errors.New("resourceUri is required")
			}
			return mcp.NewGetPromptResult("A prompt with an embedded resource", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: PromptEmbedded})),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please process the embedded resource above.")),
			}), nil
		})
	prompt(mcp.NewPrompt("test_prompt_with_image", mcp.WithPromptDescription("A prompt with an image.")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A prompt with an image", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent(pngData, "image/png")),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please analyze the image above.")),
			}), nil
		})
	return ext
}

// completer completes the fixture prompts' arguments and the template's
// id from fixed lists, by prefix.
type completer struct{}

// completionValues are what an argument completes to.
var completionValues = map[string][]string{
	"arg1": {"paris", "park", "party"},
	"arg2": {"alpha", "beta", "gamma"},
	"id":   {"123", "124", "200"},
}

func (completer) CompletePromptArgument(_ context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return complete(arg), nil
}

func (completer) CompleteResourceArgument(_ context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return complete(arg), nil
}

func complete(arg mcp.CompleteArgument) *mcp.Completion {
	values := []string{}
	for _, v := range completionValues[arg.Name] {
		if strings.HasPrefix(v, arg.Value) {
			values = append(values, v)
		}
	}
	return &mcp.Completion{Values: values, Total: len(values)}
}

// elicit asks the client's user for input with schema and reports the
// answer as text after prefix.
func elicit(ctx context.Context, message, schema, prefix string) (*mcp.CallToolResult, error) {
	res, err := mcpserver.SessionFromContext(ctx).Elicit(ctx, mcp.ElicitationParams{Message: message, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
	}
	content, _ := json.Marshal(res.Content)
	return mcp.NewToolResultText(fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content)), nil
}

// pause waits between two notifications, as the scenarios ask; false if
// ctx ended.
func pause(ctx context.Context) bool {
	t := time.NewTimer(notificationPause)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func redPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding a fixed in-memory image cannot fail
	}
	return b.Bytes()
}

// silentWAV returns 10 ms of 8 kHz, 8-bit mono silence.
func silentWAV() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1)) // PCM
	w(uint16(1)) // mono
	w(uint32(rate))
	w(uint32(rate)) // bytes per second
	w(uint16(1))    // block align
	w(uint16(8))    // bits per sample
	b.WriteString("data")
	w(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples))
	return b.Bytes()
}
