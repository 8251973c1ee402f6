package permission

import (
	"encoding/json"
	"testing"
)

// FuzzRules parses arbitrary rules and decides arbitrary calls with them:
// nothing panics, and a rule that parses prints back to what it parsed.
func FuzzRules(f *testing.F) {
	f.Add("bash(git push*)", "bash", `{"command":"git push origin x && rm -rf /"}`)
	f.Add("edit_file(**/*.lock)", "edit_file", `{"edits":[{"path":"a/b.lock"}]}`)
	f.Add("mcp__*", "mcp__x__y", `not json`)
	f.Add("x(", "x", `{}`)
	f.Fuzz(func(t *testing.T, rule, tool, args string) {
		r, err := ParseRule(Deny, rule)
		if err != nil {
			return
		}
		again, err := ParseRule(Deny, r.String()[len("deny("):len(r.String())-1])
		if err != nil || again.String() != r.String() {
			t.Fatalf("%q parsed to %q, which parses to %q (%v)", rule, r.String(), again.String(), err)
		}
		p, err := New(Rules{Deny: []string{rule}}, "/ws")
		if err != nil {
			t.Fatal(err)
		}
		d := p.Decide(tool, json.RawMessage(args))
		if d.Effect != Allow && d.Effect != Deny {
			t.Fatalf("effect %q", d.Effect)
		}
	})
}

// FuzzCommand reads arbitrary programs: nothing panics, and a program that
// starts with "git push" meets deny(bash(git push*)) whatever follows it
// (what follows may make the program unreadable, which denies it too).
func FuzzCommand(f *testing.F) {
	for _, s := range []string{"", "ls", "sh -c 'x'", "a && b | c", "$(", "'", "cat <<EOF\nx\nEOF", "xargs -I{} x {}", "git -c alias.x=y x", "f() { g; }; f"} {
		f.Add(s)
	}
	p, err := New(Rules{Deny: []string{"bash(git push*)"}}, "")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		parseProgram(rest)
		args, _ := json.Marshal(map[string]string{"command": "git push\n" + rest})
		if d := p.Decide("bash", args); d.Effect != Deny {
			t.Fatalf("git push followed by %q: %s", rest, d.Effect)
		}
	})
}
