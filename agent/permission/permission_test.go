package permission

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func mustPolicy(t *testing.T, r Rules, root string) *Policy {
	t.Helper()
	p, err := New(r, root)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecide(t *testing.T) {
	p := mustPolicy(t, Rules{
		Allow: []string{"read_file", "bash(go test*)", "bash(npm run test:*)", "write_file(docs/**)", "edit_file(src/*.go)"},
		Ask:   []string{"bash(git push*)", "write_file(*.md)"},
		Deny:  []string{"edit_file(**/*.lock)", "mcp__github__*", "bash(rm -rf*)", "write_file(docs/secret/**)", "mcp__db__query(*DROP*)"},
	}, "/ws")
	cases := []struct {
		tool, args string
		effect     Effect
		rule       string // "" for the default
		subject    string
	}{
		// A bare tool name.
		{"read_file", `{"path":"a.go"}`, Allow, "allow(read_file)", ""},
		// Command patterns: prefix globs, '*' crosses '/' and spaces.
		{"bash", `{"command":"go test ./..."}`, Allow, "allow(bash(go test*))", "go test ./..."},
		{"bash", `{"command":"npm run test:unit"}`, Allow, "allow(bash(npm run test:*))", "npm run test:unit"},
		{"bash", `{"command":"git push origin feature/x"}`, Ask, "ask(bash(git push*))", "git push origin feature/x"},
		{"bash", `{"command":"  git push  "}`, Ask, "ask(bash(git push*))", "git push"},
		{"bash", `{"command":"git pull"}`, Allow, "", ""},
		{"bash", `{"command":"rm -rf /"}`, Deny, "deny(bash(rm -rf*))", "rm -rf /"},
		// Compound commands: deny and ask see every part; allow only the whole.
		{"bash", `{"command":"cd sub && git push"}`, Ask, "ask(bash(git push*))", "git push"},
		{"bash", `{"command":"go test ./... && rm -rf build"}`, Deny, "deny(bash(rm -rf*))", "rm -rf build"},
		{"bash", `{"command":"true; rm -rf x"}`, Deny, "deny(bash(rm -rf*))", "rm -rf x"},
		{"bash", `{"command":"ls | rm -rf x"}`, Deny, "deny(bash(rm -rf*))", "rm -rf x"},
		{"bash", `{"command":"echo hi\ngit push"}`, Ask, "ask(bash(git push*))", "git push"},
		// Path patterns: doublestar over workspace-relative paths.
		{"edit_file", `{"path":"go.lock"}`, Deny, "deny(edit_file(**/*.lock))", "go.lock"},
		{"edit_file", `{"path":"a/b/c.lock"}`, Deny, "deny(edit_file(**/*.lock))", "a/b/c.lock"},
		{"edit_file", `{"path":"/ws/a/b.lock"}`, Deny, "deny(edit_file(**/*.lock))", "a/b.lock"},
		{"edit_file", `{"path":"./src/x.lock"}`, Deny, "deny(edit_file(**/*.lock))", "src/x.lock"},
		{"edit_file", `{"path":"src/main.go"}`, Allow, "allow(edit_file(src/*.go))", "src/main.go"},
		{"edit_file", `{"path":"src/sub/main.go"}`, Allow, "", ""}, // '*' does not cross '/' in paths
		{"edit_file", `{"edits":[{"path":"a.go"},{"path":"pkg/yarn.lock"}]}`, Deny, "deny(edit_file(**/*.lock))", "pkg/yarn.lock"},
		{"write_file", `{"path":"docs/guide/x.txt"}`, Allow, "allow(write_file(docs/**))", "docs/guide/x.txt"},
		{"write_file", `{"path":"docs/secret/k.txt"}`, Deny, "deny(write_file(docs/secret/**))", "docs/secret/k.txt"},
		{"write_file", `{"path":"README.md"}`, Ask, "ask(write_file(*.md))", "README.md"},
		{"write_file", `{"file_path":"notes.md"}`, Ask, "ask(write_file(*.md))", "notes.md"},
		// Tool-name globs.
		{"mcp__github__create_issue", `{"title":"x"}`, Deny, "deny(mcp__github__*)", ""},
		{"mcp__gitlab__create_issue", `{"title":"x"}`, Allow, "", ""},
		// Other tools: the arguments as compact JSON, keys sorted.
		{"mcp__db__query", `{"sql":"DROP TABLE users"}`, Deny, "deny(mcp__db__query(*DROP*))", `{"sql":"DROP TABLE users"}`},
		{"mcp__db__query", `{"sql":"SELECT 1"}`, Allow, "", ""},
		// Unparsable arguments still meet the rules.
		{"mcp__db__query", `not json DROP`, Deny, "deny(mcp__db__query(*DROP*))", "not json DROP"},
		// Nothing matches: allowed by default.
		{"list_dir", `{}`, Allow, "", ""},
	}
	for _, tc := range cases {
		d := p.Decide(tc.tool, json.RawMessage(tc.args))
		rule := ""
		if d.Rule != nil {
			rule = d.Rule.String()
		}
		if d.Effect != tc.effect || rule != tc.rule || d.Subject != tc.subject {
			t.Errorf("%s %s: %s %q %q; want %s %q %q", tc.tool, tc.args, d.Effect, rule, d.Subject, tc.effect, tc.rule, tc.subject)
		}
	}
}

func TestDenyWins(t *testing.T) {
	// The same call is allowed, asked and denied by three rules: deny wins,
	// whatever the order the rules were written in.
	p := mustPolicy(t, Rules{Allow: []string{"bash"}, Ask: []string{"bash(git *)"}, Deny: []string{"bash(git push*)"}}, "")
	if d := p.Decide("bash", json.RawMessage(`{"command":"git push"}`)); d.Effect != Deny {
		t.Errorf("deny lost: %s", d.Effect)
	}
	if d := p.Decide("bash", json.RawMessage(`{"command":"git status"}`)); d.Effect != Ask {
		t.Errorf("ask lost to allow: %s", d.Effect)
	}
	if d := p.Decide("bash", json.RawMessage(`{"command":"ls"}`)); d.Effect != Allow || d.Rule == nil {
		t.Errorf("allow: %+v", d)
	}
	var nilPolicy *Policy
	if d := nilPolicy.Decide("bash", nil); d.Effect != Allow {
		t.Error("a nil policy refuses")
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, s := range []string{"", "bash(", "bash()", "(x)", "ba sh", "bash(x[)", "edit_file(a"} {
		if _, err := ParseRule(Deny, s); err == nil {
			t.Errorf("ParseRule(%q) succeeded", s)
		}
	}
	if _, err := ParseRule("maybe", "bash"); err == nil {
		t.Error("unknown effect accepted")
	}
	if _, err := New(Rules{Deny: []string{"bash("}}, ""); err == nil {
		t.Error("New accepted a bad rule")
	}
}

func TestLoad(t *testing.T) {
	want := Rules{
		Allow: []string{"read_file", "bash(go test*)"},
		Ask:   []string{"bash(git push*)"},
		Deny:  []string{"edit_file(**/*.lock)", "mcp__github__*"},
	}
	for _, f := range []string{"testdata/settings.json", "testdata/settings.yaml"} {
		got, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v", f, got)
		}
	}
	if _, err := Load("testdata/none.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

type fakePrompter struct {
	answer bool
	err    error
	asked  []Question
}

func (f *fakePrompter) Confirm(_ context.Context, q Question) (bool, error) {
	f.asked = append(f.asked, q)
	return f.answer, f.err
}

func TestCheck(t *testing.T) {
	p := mustPolicy(t, Rules{Ask: []string{"bash(git push*)"}, Deny: []string{"mcp__github__*"}}, "")
	push := json.RawMessage(`{"command":"git push"}`)
	ctx := context.Background()

	v := p.Check(ctx, nil, "bash", push)
	if v.Allowed || !strings.Contains(v.Reason, "ask(bash(git push*))") || !strings.Contains(v.Reason, "no terminal") {
		t.Errorf("no terminal: %+v", v)
	}
	yes := &fakePrompter{answer: true}
	if v := p.Check(ctx, yes, "bash", push); !v.Allowed || len(yes.asked) != 1 || yes.asked[0].Subject != "git push" {
		t.Errorf("yes: %+v %+v", v, yes.asked)
	}
	no := &fakePrompter{}
	if v := p.Check(ctx, no, "bash", push); v.Allowed || !strings.Contains(v.Reason, "refused by the user") {
		t.Errorf("no: %+v", v)
	}
	broken := &fakePrompter{err: errors.New("tty gone")}
	if v := p.Check(ctx, broken, "bash", push); v.Allowed || !strings.Contains(v.Reason, "tty gone") {
		t.Errorf("broken: %+v", v)
	}
	never := &fakePrompter{answer: true}
	if v := p.Check(ctx, never, "mcp__github__merge", nil); v.Allowed || !strings.Contains(v.Reason, "deny(mcp__github__*)") || len(never.asked) != 0 {
		t.Errorf("deny asked or allowed: %+v", v)
	}
	if v := p.Check(ctx, nil, "bash", json.RawMessage(`{"command":"ls"}`)); !v.Allowed {
		t.Errorf("default: %+v", v)
	}
}

func TestTerminal(t *testing.T) {
	q := Question{Tool: "bash", Args: json.RawMessage(`{"command":"git push"}`), Rule: Rule{Effect: Ask, Tool: "bash", Pattern: "git push*", HasPattern: true}}
	for _, tc := range []struct {
		in   string
		want bool
		err  bool
	}{{"y\n", true, false}, {"YES\n", true, false}, {"n\n", false, false}, {"\n", false, false}, {"", false, true}, {"y", true, false}} {
		var out strings.Builder
		term := &Terminal{In: strings.NewReader(tc.in), Out: &out}
		ok, err := term.Confirm(context.Background(), q)
		if ok != tc.want || (err != nil) != tc.err {
			t.Errorf("%q: %v %v", tc.in, ok, err)
		}
		if !strings.Contains(out.String(), "ask(bash(git push*))") || !strings.Contains(out.String(), "[y/N]") {
			t.Errorf("prompt %q", out.String())
		}
	}
	// A cancelled context ends a question nobody answers.
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Terminal{In: r, Out: io.Discard}).Confirm(ctx, q); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestPatchAndBatchPaths checks that the files a patch_file patch names and
// the files of an edit_file batch are the subjects of path rules, so that
// neither tool gets past a rule that governs edits.
func TestPatchAndBatchPaths(t *testing.T) {
	p := mustPolicy(t, Rules{Allow: []string{"Edit(src/**)"}, Ask: []string{"Edit(other/**)"}, Deny: []string{"Edit(**/.env)"}}, "/ws")
	cases := []struct {
		tool, args string
		effect     Effect
	}{
		{"patch_file", `{"patch":"--- a/src/a.go\n+++ b/src/a.go\n@@ -1 +1 @@\n-a\n+b\n"}`, Allow},
		{"patch_file", `{"patch":"--- a/src/a.go\n+++ b/src/a.go\n@@ -1 +1 @@\n-a\n+b\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-a\n+b\n"}`, Deny},
		{"patch_file", `{"patch":"*** Begin Patch\n*** Update File: src/a.go\n*** Move to: conf/.env\n@@\n-a\n+b\n*** End Patch\n"}`, Deny},
		{"patch_file", `{"patch":"*** Begin Patch\n*** Add File: other/x\n+x\n*** End Patch\n"}`, Ask},
		{"edit_file", `{"files":[{"path":"src/a.go","ops":[]},{"path":"sub/.env","ops":[]}]}`, Deny},
	}
	for _, c := range cases {
		d := p.Decide(c.tool, json.RawMessage(c.args))
		if d.Effect != c.effect {
			t.Errorf("%s %s: %v, want %v", c.tool, c.args, d.Effect, c.effect)
		}
	}
}
