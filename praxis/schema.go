package praxis

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/praxis-tools/praxis/internal/lazyre"
)

// The JSON Schemas of typed tools are generated from Go types by
// jsonschema.For, then refined by these struct tags, named after the
// keywords they set:
//
//	jsonschema:"..."   the property's description (jsonschema-go's own tag)
//	enum:"a,b,c"       the allowed values of a string
//	default:"..."      the value an absent argument takes: a JSON literal, or
//	                   plain text for a string; top-level scalar fields only
//	minimum:"1"        bounds of a number
//	maximum:"10"
//	minLength:"1"      bounds of a string's length, in characters
//	maxLength:"64"
//	minItems:"1"       the fewest items of an array
//
// A type that implements schemaProvider describes itself instead (a job id
// given as a string or a number, say).
//
// Generated schemas admit no null: an argument is left out by omitting
// it, and a value of an output type never holds a nil pointer or slice
// where its schema requires a value (mark such fields omitempty). Fields
// promoted from an embedded pointer to a struct are optional, since the
// pointer may be nil.

// schemaProvider is implemented by types that describe their own JSON
// Schema.
type schemaProvider interface {
	jsonSchema() *jsonschema.Schema
}

// typeSchema generates the schema of t, which must be a struct: the
// object of a tool's arguments or structured result.
func typeSchema(t reflect.Type) (*jsonschema.Schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is a %s, not a struct", t, t.Kind())
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := refine(t, s, true); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return s, nil
}

// refine applies the struct tags and rules above to s, the schema that
// jsonschema.For made of t.
func refine(t reflect.Type, s *jsonschema.Schema, top bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dropNull(s)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return refine(t.Elem(), s.Items, false)
	case reflect.Map:
		return refine(t.Elem(), s.AdditionalProperties, false)
	case reflect.Struct:
		if s.Type != "object" {
			return nil // a struct with its own JSON form, as time.Time is a string
		}
		if s.Properties == nil {
			s.Properties = map[string]*jsonschema.Schema{} // "properties": {} for a struct without fields
		}
	default:
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok || f.Anonymous {
			continue
		}
		p := s.Properties[name]
		if p == nil {
			continue
		}
		if viaPointer(t, f.Index) {
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
		}
		if sp, ok := reflect.New(f.Type).Elem().Interface().(schemaProvider); ok {
			own := sp.jsonSchema()
			if p.Description != "" {
				own.Description = p.Description
			}
			s.Properties[name] = own
			continue
		}
		if err := applyTags(f, p, top); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if err := refine(f.Type, p, false); err != nil {
			return err
		}
	}
	return nil
}

// dropNull removes the "null" that jsonschema.For adds for pointers and
// slices.
func dropNull(s *jsonschema.Schema) {
	if len(s.Types) == 0 {
		return
	}
	s.Types = slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(s.Types) == 1 {
		s.Type, s.Types = s.Types[0], nil
	}
}

// viaPointer reports whether the field at index in t is promoted through
// an embedded pointer.
func viaPointer(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Pointer {
			return true
		}
		t = f.Type
	}
	return false
}

// jsonName returns the name encoding/json gives f, and false if it leaves
// f out.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", f.Tag.Get("json") == "-,"
	case "":
		return f.Name, true
	}
	return name, true
}

// applyTags sets the keywords f's struct tags name on p.
func applyTags(f reflect.StructField, p *jsonschema.Schema, top bool) error {
	kind := f.Type.Kind()
	if kind == reflect.Pointer {
		kind = f.Type.Elem().Kind()
	}
	num := func(tag string, dst **float64) error {
		v, ok := f.Tag.Lookup(tag)
		if !ok {
			return nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		*dst = &x
		return nil
	}
	count := func(tag string, dst **int) error {
		v, ok := f.Tag.Lookup(tag)
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		*dst = &n
		return nil
	}
	for _, err := range []error{
		num("minimum", &p.Minimum), num("maximum", &p.Maximum),
		count("minLength", &p.MinLength), count("maxLength", &p.MaxLength),
		count("minItems", &p.MinItems),
	} {
		if err != nil {
			return err
		}
	}
	if v, ok := f.Tag.Lookup("enum"); ok {
		if kind != reflect.String {
			return fmt.Errorf("enum is for strings, not %s", kind)
		}
		for _, e := range strings.Split(v, ",") {
			p.Enum = append(p.Enum, e)
		}
	}
	if v, ok := f.Tag.Lookup("default"); ok {
		switch {
		case !top:
			return fmt.Errorf("default is for top-level arguments only")
		case kind == reflect.String:
			p.Default, _ = json.Marshal(v)
		case kind == reflect.Bool || kind >= reflect.Int && kind <= reflect.Float64:
			if !json.Valid([]byte(v)) {
				return fmt.Errorf("default %q is not a JSON value", v)
			}
			p.Default = json.RawMessage(v)
		default:
			return fmt.Errorf("default is for strings, numbers and booleans, not %s", kind)
		}
	}
	return nil
}

// defaultsOf returns the JSON object of the defaults the schema s of a
// tool's arguments declares, or nil if it declares none. A default that
// its property's schema refuses is an error.
func defaultsOf(s *jsonschema.Schema) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	for name, p := range s.Properties {
		if p.Default == nil {
			continue
		}
		rs, err := p.CloneSchemas().Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		var v any
		if err := json.Unmarshal(p.Default, &v); err != nil {
			return nil, fmt.Errorf("field %s: default: %w", name, err)
		}
		if err := rs.Validate(v); err != nil {
			return nil, fmt.Errorf("field %s: default %s: %w", name, p.Default, err)
		}
		m[name] = p.Default
	}
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}

// supportedDraft reports whether the validator implements the JSON Schema
// draft that s declares with $schema (none means 2020-12).
func supportedDraft(s *jsonschema.Schema) bool {
	switch s.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		return true
	}
	return false
}

// resolveInput prepares a tool's raw input schema for validation. It
// returns nil, nil for a schema the validator cannot take in full (a
// draft other than 2020-12 or 07, a remote $ref): arguments of such a tool
// are passed on unchecked, for its own server to judge. An input schema
// that is not a JSON object is an error.
func resolveInput(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil || !supportedDraft(&s) {
		return nil, nil
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, nil
	}
	return rs, nil
}

// validateArgs decodes raw, the arguments of a call, and checks them
// against rs. A failure is an E_INVALID_ARGS *Error naming the field.
func validateArgs(rs *jsonschema.Resolved, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return Errorf(EInvalidArgs, "arguments are not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return Errorf(EInvalidArgs, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	if rs == nil {
		return nil
	}
	if err := rs.Validate(v); err != nil {
		at, msg := schemaProblem(err)
		field := fieldOf(at)
		if field == "" {
			return Errorf(EInvalidArgs, "arguments: %s", msg).WithDetail(argumentList(rs.Schema()))
		}
		e := Errorf(EInvalidArgs, "field %s: %s", field, msg)
		if sub := schemaAt(rs.Schema(), at); sub != nil {
			e.Detail = "Field " + field + " takes " + compactSchema(sub)
		}
		return e
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	}
	return "object"
}

// schemaProblem splits a validation error of jsonschema-go, which reads
// "validating root: validating /properties/ops/items/properties/op: enum:
// ...", into the JSON pointer of the innermost schema that failed and
// describes an argument (not one reached through $ref or oneOf, whose
// pointers name no argument), and what is wrong, its values written as a
// person would (1, not 1/1 or 1.000000; null).
func schemaProblem(err error) (at, msg string) {
	msg = err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if _, ok := pointerSteps(loc); ok {
			at = loc
		}
		msg = tail
	}
	msg = strings.ReplaceAll(msg, "<invalid reflect.Value>", "null") // how it prints a JSON null
	return at, plainNumbers.Get().ReplaceAllString(msg, "$1")
}

// plainNumbers matches the integers jsonschema-go writes as fractions
// (3/1) and with six zero decimals (3.000000).
var plainNumbers = lazyre.New(`\b(-?\d+)(?:/1|\.000000)\b`)

// fieldOf turns a schema's JSON pointer into the argument it describes:
// /properties/files/items/properties/path is files[].path. The root is "".
func fieldOf(pointer string) string {
	steps, _ := pointerSteps(pointer)
	var b strings.Builder
	for _, step := range steps {
		switch {
		case step.prop != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(step.prop)
		case step.items:
			b.WriteString("[]")
		case step.additional:
			b.WriteString(".*")
		}
	}
	return b.String()
}

// pointerStep is one step of a schema's JSON pointer that leads to a
// value: into a property, the items of an array or the other properties
// of an object.
type pointerStep struct {
	prop              string
	items, additional bool
}

// pointerSteps parses a JSON pointer into a schema ("root" or "" for the
// schema itself). It reports false for one that takes any other step, as
// into $defs or oneOf.
func pointerSteps(pointer string) ([]pointerStep, bool) {
	if pointer == "root" || pointer == "" {
		return nil, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	var steps []pointerStep
	parts := strings.Split(pointer[1:], "/")
	for i := 0; i < len(parts); i++ {
		switch {
		case parts[i] == "properties" && i+1 < len(parts):
			steps = append(steps, pointerStep{prop: strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i+1])})
			i++
		case parts[i] == "items":
			steps = append(steps, pointerStep{items: true})
		case parts[i] == "additionalProperties":
			steps = append(steps, pointerStep{additional: true})
		default:
			return nil, false
		}
	}
	return steps, true
}

// schemaAt follows pointer from root, or returns nil where it leads
// through anything but properties, items and additionalProperties.
func schemaAt(root *jsonschema.Schema, pointer string) *jsonschema.Schema {
	s := root
	steps, _ := pointerSteps(pointer)
	for _, step := range steps {
		switch {
		case s == nil:
			return nil
		case step.prop != "":
			s = s.Properties[step.prop]
		case step.items:
			s = s.Items
		case step.additional:
			s = s.AdditionalProperties
		}
	}
	return s
}

// compactSchema renders s as one line of JSON, without the descriptions
// of it and of the values it holds.
func compactSchema(s *jsonschema.Schema) string {
	c := s.CloneSchemas()
	var strip func(*jsonschema.Schema)
	strip = func(s *jsonschema.Schema) {
		if s == nil {
			return
		}
		s.Description = ""
		for _, p := range s.Properties {
			strip(p)
		}
		strip(s.Items)
		strip(s.AdditionalProperties)
	}
	strip(c)
	b, err := json.Marshal(c)
	if err != nil {
		return "(unprintable schema)"
	}
	return string(b)
}

// argumentList names the arguments s describes, with their types, the
// required ones marked: what a caller needs after a mistake at the top.
func argumentList(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return "The tool takes no arguments."
	}
	names := slices.Clone(s.PropertyOrder)
	for name := range s.Properties {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names[len(s.PropertyOrder):])
	var b strings.Builder
	b.WriteString("Arguments:")
	for _, name := range names {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		typ := p.Type
		if typ == "" {
			typ = strings.Join(p.Types, " or ")
		}
		if typ == "" {
			typ = "any"
		}
		fmt.Fprintf(&b, " %s (%s", name, typ)
		if slices.Contains(s.Required, name) {
			b.WriteString(", required")
		}
		b.WriteString("),")
	}
	return strings.TrimSuffix(b.String(), ",")
}
