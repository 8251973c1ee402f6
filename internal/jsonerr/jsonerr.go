// Package jsonerr describes the errors of encoding/json in a user's terms:
// where the document is wrong and what was expected, without Go's type
// names.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Describe returns what is wrong with a JSON document, from an error of
// json.Unmarshal or a json.Decoder: "at byte 12: ..." for a syntax error,
// "\"args\" should be a list, not string" for a value of the wrong kind.
func Describe(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end"):
		return "it ends too early"
	case errors.As(err, &syn):
		return fmt.Sprintf("at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "invalid character "))
	case errors.As(err, &typ):
		where := "the value"
		if typ.Field != "" {
			where = fmt.Sprintf("%q", typ.Field)
		}
		return fmt.Sprintf("%s should be %s, not %s", where, kind(typ.Type), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "it ends too early"
	}
	return err.Error()
}

// kind names what a Go type holds in JSON's terms.
func kind(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}
