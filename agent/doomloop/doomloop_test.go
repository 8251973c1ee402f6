package doomloop

import (
	"encoding/json"
	"strings"
	"testing"
)

// obs is one step: the reply's text and its calls.
type obs struct {
	text  string
	calls []call
}

type call struct {
	tool, args string
	isErr      bool
	code, out  string
}

func ok(tool, args string) call { return call{tool: tool, args: args, out: "fine"} }
func fail(tool, args, code, out string) call {
	return call{tool: tool, args: args, isErr: true, code: code, out: code + ": " + out}
}

func TestKinds(t *testing.T) {
	ls := ok("bash", `{"command":"ls"}`)
	cases := []struct {
		name  string
		cfg   Config
		steps []obs
		// want is the action after each step, as a string of c/w/s.
		want string
		kind Kind
	}{
		{"repeated call", Config{}, []obs{
			{calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}},
		}, "ccws", RepeatedCall},
		{"key order does not make a new call", Config{}, []obs{
			{calls: []call{ok("grep", `{"a":1,"b":"x"}`)}},
			{calls: []call{ok("grep", `{"b":"x","a":1}`)}},
			{calls: []call{ok("grep", ` { "a" : 1 , "b" : "x" } `)}},
		}, "ccw", RepeatedCall},
		{"different arguments are no loop", Config{}, []obs{
			{calls: []call{ok("bash", `{"command":"ls a"}`)}}, {calls: []call{ok("bash", `{"command":"ls b"}`)}},
			{calls: []call{ok("bash", `{"command":"ls c"}`)}}, {calls: []call{ok("bash", `{"command":"ls d"}`)}},
		}, "cccc", ""},
		{"an interruption resets the streak", Config{}, []obs{
			{calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ok("read_file", `{"path":"a"}`)}}, {calls: []call{ls}}, {calls: []call{ls}},
		}, "ccccc", ""},
		{"threshold and grace", Config{Threshold: 2, Grace: 2}, []obs{
			{calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}},
		}, "cwcs", RepeatedCall},
		{"the same failure, not in a row", Config{}, []obs{
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "missing rule")}},
			{calls: []call{ok("read_file", `{"path":"Makefile"}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "missing rule")}},
			{calls: []call{ok("list_dir", `{}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "missing rule")}},
			{calls: []call{ok("grep", `{"q":"x"}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "missing rule")}},
		}, "ccccwcs", RepeatedFailure},
		{"a success clears the failures", Config{}, []obs{
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "x")}}, {calls: []call{ok("list_dir", `{"p":1}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "x")}}, {calls: []call{ok("list_dir", `{"p":2}`)}},
			{calls: []call{ok("bash", `{"command":"make"}`)}}, {calls: []call{ok("list_dir", `{"p":3}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "x")}}, {calls: []call{ok("list_dir", `{"p":4}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "x")}},
		}, "ccccccccc", ""},
		{"a different failure is another pattern", Config{}, []obs{
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "a")}}, {calls: []call{ok("list_dir", `{"p":1}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "b")}}, {calls: []call{ok("list_dir", `{"p":2}`)}},
			{calls: []call{fail("bash", `{"command":"make"}`, "E_EXIT", "c")}},
		}, "ccccc", ""},
		{"noop edits with different arguments", Config{}, []obs{
			{calls: []call{fail("edit_file", `{"path":"a","ops":[1]}`, "E_NOOP", "no change")}},
			{calls: []call{fail("edit_file", `{"path":"a","ops":[2]}`, "E_NOOP", "no change")}},
			{calls: []call{fail("edit_file", `{"path":"a","ops":[3]}`, "E_NOOP", "no change")}},
			{calls: []call{fail("edit_file", `{"path":"a","ops":[4]}`, "E_NOOP", "no change")}},
		}, "ccws", NoopEdit},
		{"a real edit ends the noop streak", Config{}, []obs{
			{calls: []call{fail("edit_file", `{"ops":[1]}`, "E_NOOP", "")}},
			{calls: []call{fail("edit_file", `{"ops":[2]}`, "E_NOOP", "")}},
			{calls: []call{ok("edit_file", `{"ops":[3]}`)}},
			{calls: []call{fail("edit_file", `{"ops":[4]}`, "E_NOOP", "")}},
		}, "cccc", ""},
		{"repeated text", Config{}, []obs{
			{text: "I will fix it now."}, {text: "I will  fix it\nnow."}, {text: "I will fix it now."}, {text: "I will fix it now."},
		}, "ccws", RepeatedText},
		{"replies without text do not break a text streak", Config{}, []obs{
			{text: "Same."}, {calls: []call{ok("a", `{"i":1}`)}}, {text: "Same."}, {text: "Same."},
		}, "cccw", RepeatedText},
		{"exempt tools are not watched", Config{Exempt: []string{"job_*"}}, []obs{
			{calls: []call{ok("job_output", `{"id":1}`)}}, {calls: []call{ok("job_output", `{"id":1}`)}},
			{calls: []call{ok("job_output", `{"id":1}`)}}, {calls: []call{ok("job_output", `{"id":1}`)}},
		}, "cccc", ""},
		{"exempt calls do not break a streak", Config{Exempt: []string{"job_output"}}, []obs{
			{calls: []call{ls, ok("job_output", `{}`)}}, {calls: []call{ls}}, {calls: []call{ok("job_output", `{}`), ls}},
		}, "ccw", RepeatedCall},
		{"a recurrence after a change is warned afresh", Config{}, []obs{
			{calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}},
			{calls: []call{ok("read_file", `{}`)}},
			{calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}}, {calls: []call{ls}},
		}, "ccwcccws", RepeatedCall},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.cfg)
			var got strings.Builder
			var last Verdict
			for _, s := range tc.steps {
				d.Text(s.text)
				for _, c := range s.calls {
					d.Call(c.tool, json.RawMessage(c.args), c.isErr, c.code, c.out)
				}
				v := d.Check()
				got.WriteByte("cws"[v.Action])
				if v.Action != Continue {
					last = v
				}
			}
			if got.String() != tc.want {
				t.Fatalf("actions %s, want %s", got.String(), tc.want)
			}
			if tc.kind == "" {
				return
			}
			found := false
			for _, f := range last.Findings {
				found = found || f.Kind == tc.kind
			}
			if !found {
				t.Fatalf("findings %+v, want kind %s", last.Findings, tc.kind)
			}
			if last.Action == Stop && !strings.Contains(last.Message, string(tc.kind)) {
				t.Errorf("stop message %q does not name %s", last.Message, tc.kind)
			}
		})
	}
}

func TestMessages(t *testing.T) {
	d := New(Config{})
	for range 3 {
		d.Call("bash", json.RawMessage(`{"command":"go build"}`), true, "E_EXIT", "E_EXIT: exit status 1\nmain.go:3: undefined: x")
	}
	v := d.Check()
	if v.Action != Warn {
		t.Fatalf("%v", v.Action)
	}
	for _, want := range []string{"bash", `{"command":"go build"}`, "3 times", "undefined", "different approach", "stopped"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("warning lacks %q:\n%s", want, v.Message)
		}
	}
	// Both the streak and the failure are findings.
	if len(v.Findings) != 2 {
		t.Errorf("findings %+v", v.Findings)
	}
	d.Call("bash", json.RawMessage(`{"command":"go build"}`), true, "E_EXIT", "E_EXIT: exit status 1\nmain.go:3: undefined: x")
	v = d.Check()
	if v.Action != Stop || !strings.Contains(v.Message, "4 times") || !strings.Contains(v.Message, "after a warning") {
		t.Fatalf("%v %q", v.Action, v.Message)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1,"a":[1,2,{"d":1,"c":2}]}`: `{"a":[1,2,{"c":2,"d":1}],"b":1}`,
		`{"n":1.50}`:                      `{"n":1.50}`,
		``:                                `{}`,
		`not json`:                        `not json`,
		`{"big":12345678901234567890}`:    `{"big":12345678901234567890}`,
	} {
		if got := Canonical(json.RawMessage(in)); got != want {
			t.Errorf("Canonical(%s) = %s, want %s", in, got, want)
		}
	}
}
