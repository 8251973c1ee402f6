package praxis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// schema is the subset of JSON Schema that Praxis validates arguments
// against: type, properties, required, additionalProperties (false),
// items, enum, minimum/maximum, minLength/maxLength, minItems/maxItems.
// Other keywords are accepted and ignored, so schemas of external tools can
// be checked as far as this subset goes.
type schema struct {
	Type                 typeList           `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
}

// typeList holds "type", which may be a string or a list of strings.
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

func compileSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &schema{}, nil
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// validateArgs checks raw against s and returns an E_INVALID_ARGS error
// naming the field and what was expected.
func (s *schema) validateArgs(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Errorf(EInvalidArgs, "arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return Errorf(EInvalidArgs, "arguments hold more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return Errorf(EInvalidArgs, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	if msg := s.check(v, ""); msg != "" {
		return Errorf(EInvalidArgs, "%s", msg)
	}
	return nil
}

func (s *schema) check(v any, at string) string {
	if s == nil {
		return ""
	}
	if len(s.Type) > 0 && !s.typeOK(v) {
		return fmt.Sprintf("%s: expected %s, got %s", fieldName(at), strings.Join(s.Type, " or "), jsonKind(v))
	}
	if len(s.Enum) > 0 && !enumHas(s.Enum, v) {
		return fmt.Sprintf("%s: expected one of %s, got %s", fieldName(at), enumList(s.Enum), compactJSON(v))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				return fmt.Sprintf("%s: missing (required)", fieldName(join(at, name)))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := s.Properties[k]; ok {
				if msg := ps.check(x[k], join(at, k)); msg != "" {
					return msg
				}
			} else if string(bytes.TrimSpace(s.AdditionalProperties)) == "false" {
				return fmt.Sprintf("%s: unknown field (expected one of %s)", fieldName(join(at, k)), propList(s.Properties))
			}
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			return fmt.Sprintf("%s: expected at least %d items, got %d", fieldName(at), *s.MinItems, len(x))
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			return fmt.Sprintf("%s: expected at most %d items, got %d", fieldName(at), *s.MaxItems, len(x))
		}
		for i, item := range x {
			if msg := s.Items.check(item, fmt.Sprintf("%s[%d]", at, i)); msg != "" {
				return msg
			}
		}
	case string:
		n := len([]rune(x))
		if s.MinLength != nil && n < *s.MinLength {
			return fmt.Sprintf("%s: expected at least %d characters, got %d", fieldName(at), *s.MinLength, n)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Sprintf("%s: expected at most %d characters, got %d", fieldName(at), *s.MaxLength, n)
		}
	case json.Number:
		f, _ := x.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Sprintf("%s: expected a number >= %v, got %s", fieldName(at), *s.Minimum, x)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Sprintf("%s: expected a number <= %v, got %s", fieldName(at), *s.Maximum, x)
		}
	}
	return ""
}

func (s *schema) typeOK(v any) bool {
	for _, t := range s.Type {
		switch t {
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "null":
			if v == nil {
				return true
			}
		case "number":
			if _, ok := v.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := v.(json.Number); ok {
				if f, err := n.Float64(); err == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
					return true
				}
			}
		default:
			return true // a type this subset does not know: do not refuse
		}
	}
	return false
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "number " + x.String()
		}
		return "integer " + x.String()
	}
	return fmt.Sprintf("%T", v)
}

func enumHas(enum []any, v any) bool {
	for _, e := range enum {
		if compactJSON(e) == compactJSON(v) {
			return true
		}
	}
	return false
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = compactJSON(e)
	}
	return strings.Join(parts, ", ")
}

func propList(props map[string]*schema) string {
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func fieldName(at string) string {
	if at == "" {
		return "arguments"
	}
	return "field " + at
}
