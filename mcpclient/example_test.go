package mcpclient_test

import (
	"fmt"

	"github.com/praxis-tools/praxis/mcpclient"
)

func ExampleParseConfig() {
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "s3cret"}[k]
		return v, ok
	}
	cfg, err := mcpclient.ParseConfig([]byte(`{
		"mcpServers": {
			"files": {"command": "files-server", "args": ["--root", "${ROOT:-.}"], "timeout": "10s"},
			"docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
		}
	}`), mcpclient.Vars{Lookup: env})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Servers {
		fmt.Println(s.Name, s.Transport, s.Command, s.Args, s.URL, s.Headers, s.Timeout)
	}
	// Output:
	// docs http  [] https://docs.example.com/mcp map[Authorization:Bearer s3cret] 1m0s
	// files stdio files-server [--root .]  map[] 10s
}

func ExampleQualifiedNames() {
	names := mcpclient.QualifiedNames([]mcpclient.ToolID{
		{Server: "git hub", Tool: "create.issue"},
		{Server: "git_hub", Tool: "create_issue"},
	})
	fmt.Println(names[mcpclient.ToolID{Server: "git hub", Tool: "create.issue"}])
	fmt.Println(names[mcpclient.ToolID{Server: "git_hub", Tool: "create_issue"}])
	// Output:
	// mcp__git_hub__create_issue
	// mcp__git_hub__create_issue_fdfd7b02
}
