package praxis

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type tagArgs struct {
	Name  string   `json:"name" minLength:"1" maxLength:"8" jsonschema:"A name."`
	Mode  string   `json:"mode,omitempty" enum:"fast,slow" default:"fast"`
	Count int      `json:"count,omitempty" minimum:"1" maximum:"9" default:"3"`
	On    bool     `json:"on,omitempty" default:"true"`
	Tags  []string `json:"tags,omitempty" minItems:"1"`
	Note  *string  `json:"note,omitempty"`
	Job   jobRef   `json:"job,omitempty" jsonschema:"A job."`
	Inner []struct {
		X int `json:"x" minimum:"0"`
	} `json:"inner,omitempty"`
}

type tagOut struct {
	Path string `json:"path"`
	*tagExtra
	Items []string  `json:"items"`
	When  time.Time `json:"when,omitzero"`
	text  string
}

type tagExtra struct {
	Code int `json:"code"`
}

func (o tagOut) Text() string { return o.text }

func TestNewToolSchemas(t *testing.T) {
	var got tagArgs
	tool := NewTool("t", "A tool.", Annotations{}, func(_ context.Context, a tagArgs) (tagOut, error) {
		got = a
		return tagOut{Path: "p", Items: []string{}, text: "done"}, nil
	}).withSchemas()
	for _, tc := range []struct {
		name      string
		got, want json.RawMessage
	}{
		{"input", tool.InputSchema, json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","description":"A name.","minLength":1,"maxLength":8},
			"mode":{"type":"string","default":"fast","enum":["fast","slow"]},
			"count":{"type":"integer","default":3,"minimum":1,"maximum":9},
			"on":{"type":"boolean","default":true},
			"tags":{"type":"array","items":{"type":"string"},"minItems":1},
			"note":{"type":"string"},
			"job":{"type":["string","integer"],"description":"A job."},
			"inner":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer","minimum":0}},"required":["x"],"additionalProperties":false}}},
			"required":["name"],"additionalProperties":false}`)},
		// Fields promoted from an embedded pointer are optional; slices and
		// pointers admit no null.
		{"output", tool.OutputSchema, json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string"},"code":{"type":"integer"},"items":{"type":"array","items":{"type":"string"}},"when":{"type":"string"}},
			"required":["path","items"],"additionalProperties":false}`)},
	} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, tc.want); err != nil {
			t.Fatal(err)
		}
		if string(tc.got) != compact.String() {
			t.Errorf("%s schema:\n got %s\nwant %s", tc.name, tc.got, compact.String())
		}
	}

	c, err := NewCatalog(tool)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(context.Background(), "t", json.RawMessage(`{"name": "a", "count": 5, "job": 7}`))
	if err != nil || res.IsError || res.Text != "done" {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if got.Mode != "fast" || got.Count != 5 || !got.On || got.Job != "7" {
		t.Errorf("decoded arguments with defaults: %+v", got)
	}
	if out, ok := res.Structured.(tagOut); !ok || out.Path != "p" {
		t.Errorf("structured: %#v", res.Structured)
	}
	res, _ = c.Call(context.Background(), "t", json.RawMessage(`{"name": "a", "on": false, "mode": "slow"}`))
	if res.IsError || got.On || got.Mode != "slow" || got.Count != 3 {
		t.Errorf("given values must override defaults: %+v (%s)", got, res.Text)
	}
}

type noText struct{}

func (noText) Text() string { return "" }

func TestNewToolRefusesBadDeclarations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		declare func()
		want    string
	}{
		{"default below the top", func() {
			NewTool("t", "", Annotations{}, func(context.Context, struct {
				In struct {
					X int `json:"x" default:"1"`
				} `json:"in"`
			}) (noText, error) {
				return noText{}, nil
			}).withSchemas()
		}, "top-level"},
		{"enum on a number", func() {
			NewTool("t", "", Annotations{}, func(context.Context, struct {
				X int `json:"x" enum:"1,2"`
			}) (noText, error) {
				return noText{}, nil
			}).withSchemas()
		}, "enum is for strings"},
		{"default of the wrong type", func() {
			NewTool("t", "", Annotations{}, func(context.Context, struct {
				X int `json:"x,omitempty" default:"\"one\""`
			}) (noText, error) {
				return noText{}, nil
			}).withSchemas()
		}, "has type \"string\", want \"integer\""},
		{"a bound that is no number", func() {
			NewTool("t", "", Annotations{}, func(context.Context, struct {
				X int `json:"x" minimum:"one"`
			}) (noText, error) {
				return noText{}, nil
			}).withSchemas()
		}, "minimum"},
		{"arguments that are not an object", func() {
			NewTool("t", "", Annotations{}, func(context.Context, string) (noText, error) { return noText{}, nil }).withSchemas()
		}, "not a struct"},
		{"a field no schema describes", func() {
			NewTool("t", "", Annotations{}, func(context.Context, struct {
				C chan int `json:"c"`
			}) (noText, error) {
				return noText{}, nil
			}).withSchemas()
		}, "input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if p == nil {
					t.Fatal("no panic")
				}
				if msg, _ := p.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want it to mention %q", p, tc.want)
				}
			}()
			tc.declare()
		})
	}
}

// TestCatalogValidatesExternalSchemas holds the catalog to the whole of
// JSON Schema for tools declared with a raw schema, as external tools
// are: the keywords the former subset validator skipped (pattern, oneOf,
// $ref) are checked, and a schema of a draft the validator does not
// implement is passed through unchecked.
func TestCatalogValidatesExternalSchemas(t *testing.T) {
	called := 0
	handler := func(context.Context, json.RawMessage) (Result, error) {
		called++
		return Result{Text: "ok"}, nil
	}
	c, err := NewCatalog(
		Tool{Name: "strict", Handler: handler, InputSchema: json.RawMessage(`{
			"type": "object",
			"$defs": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
			"properties": {
				"id": {"$ref": "#/$defs/id"},
				"size": {"oneOf": [{"type": "integer", "maximum": 10}, {"enum": ["big"]}]}
			},
			"required": ["id"]
		}`)},
		Tool{Name: "draft4", Handler: handler, InputSchema: json.RawMessage(`{
			"$schema": "http://json-schema.org/draft-04/schema#",
			"type": "object",
			"properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}
		}`)},
		Tool{Name: "none", Handler: handler},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, args string
		want       string // "" for a call that reaches the handler
	}{
		{"strict", `{"id": "abc", "size": 3}`, ""},
		{"strict", `{"id": "abc", "size": "big"}`, ""},
		{"strict", `{"id": "ABC"}`, `field id: pattern: "ABC" does not match regular expression "^[a-z]+$"`},
		{"strict", `{"id": "abc", "size": 11}`, "field size: oneOf: did not validate against any of"},
		{"strict", `{"id": "abc", "size": "small"}`, "field size: oneOf"},
		{"strict", `{}`, `arguments: required: missing properties: ["id"]`},
		{"draft4", `{"n": -1}`, ""},
		{"draft4", `[]`, "arguments must be a JSON object, got array"},
		{"none", `{"anything": 1}`, ""},
		{"none", `"text"`, "arguments must be a JSON object, got string"},
	} {
		before := called
		res, err := c.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && (res.IsError || called != before+1):
			t.Errorf("%s %s: want the handler called, got %q", tc.tool, tc.args, res.Text)
		case tc.want != "" && (res.Code != EInvalidArgs || !strings.Contains(res.Text, tc.want) || called != before):
			t.Errorf("%s %s: got %q (handler called %d times), want E_INVALID_ARGS with %q", tc.tool, tc.args, res.Text, called-before, tc.want)
		}
	}
	if _, err := NewCatalog(Tool{Name: "bad", Handler: handler, InputSchema: json.RawMessage(`[1]`)}); err == nil {
		t.Error("an input schema that is not a JSON object was accepted")
	}
}

// BenchmarkValidateArgs measures the validation of a read_file call's
// arguments against its resolved schema, the cost every call pays.
func BenchmarkValidateArgs(b *testing.B) {
	tool := NewTool("read_file", "", Annotations{}, func(context.Context, readArgs) (fileInfo, error) { return fileInfo{}, nil })
	args := json.RawMessage(`{"path":"internal/app/server.go","offset":10,"limit":200}`)
	schema := tool.typedInput()
	b.ReportAllocs()
	for b.Loop() {
		if err := validateArgs(schema, args); err != nil {
			b.Fatal(err)
		}
	}
}
