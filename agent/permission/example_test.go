package permission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/praxis-tools/praxis/agent/permission"
)

func Example() {
	p, err := permission.New(permission.Rules{
		Allow: []string{"bash(go test*)"},
		Ask:   []string{"bash(git push*)"},
		Deny:  []string{"edit_file(**/*.lock)", "mcp__github__*"},
	}, "/ws")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range []struct{ tool, args string }{
		{"bash", `{"command":"go test ./..."}`},
		{"bash", `{"command":"cd sub && git push"}`},
		{"edit_file", `{"path":"/ws/web/yarn.lock"}`},
		{"mcp__github__merge_pull_request", `{}`},
		{"read_file", `{"path":"main.go"}`},
	} {
		v := p.Check(context.Background(), nil, c.tool, json.RawMessage(c.args))
		fmt.Println(strings.TrimSpace(fmt.Sprint(v.Allowed, " ", v.Reason)))
	}
	// Output:
	// true
	// false bash needs confirmation by the rule ask(bash(git push*)) (on "git push"), and there is no terminal to ask on, so it is refused
	// false edit_file is denied by the rule deny(edit_file(**/*.lock)) (on "web/yarn.lock")
	// false mcp__github__merge_pull_request is denied by the rule deny(mcp__github__*)
	// true
}
