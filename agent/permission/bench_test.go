package permission

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecideCommand measures a decision on a typical compound
// command under a handful of command rules: the cost the parse adds to
// every bash call of a session with rules.
func BenchmarkDecideCommand(b *testing.B) {
	p, err := New(Rules{
		Allow: []string{"bash(go test*)", "bash(go build*)"},
		Ask:   []string{"bash(git commit*)"},
		Deny:  []string{"bash(git push*)", "bash(rm -rf*)", "bash(curl*)", "Bash(npm publish:*)"},
	}, "")
	if err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"command": `cd pkg && FOO=1 go test -run 'TestX|TestY' ./... 2>&1 | tee out.log; git status --short && sh -c "make lint"`})
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide("bash", args); d.Effect != Allow {
			b.Fatal(d.Effect)
		}
	}
}
