package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	var v struct {
		Args  []string          `json:"args"`
		Hooks map[string]string `json:"hooks"`
		N     int               `json:"n"`
	}
	for _, tc := range []struct{ in, want string }{
		{`{"args": "x"}`, `"args" should be a list, not string`},
		{`{"hooks": 3}`, `"hooks" should be an object, not number`},
		{`{"n": "3"}`, `"n" should be a number, not string`},
		{`[1]`, `the value should be an object, not array`},
		{`{"args": [1,}`, `at byte 13: `},
		{`{"args": `, `ends too early`},
	} {
		err := json.Unmarshal([]byte(tc.in), &v)
		got := Describe(err)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "Go ") || strings.Contains(got, "struct") {
			t.Errorf("%s: %q; want %q without Go internals", tc.in, got, tc.want)
		}
	}
}
