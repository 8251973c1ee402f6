package mcpclient

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	env := lookupFrom(map[string]string{"A": "alpha", "EMPTY": "", "N_1": "one"})
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"${A}", "alpha", ""},
		{"x-${A}-${N_1}-y", "x-alpha-one-y", ""},
		{"${MISSING:-fallback}", "fallback", ""},
		{"${EMPTY:-fallback}", "fallback", ""},
		{"${A:-fallback}", "alpha", ""},
		{"${MISSING:-}", "", ""},
		{"${EMPTY}", "", ""},
		{"$A and $ alone", "$A and $ alone", ""},
		{"${env:A}", "alpha", ""},
		{"${env:MISSING:-d}", "d", ""},
		{"${workspaceFolder}/bin", "/ws/proj/bin", ""},
		{"${workspaceFolderBasename}", "proj", ""},
		{"${userHome}/.config", "/home/u/.config", ""},
		{"a${/}b${pathSeparator}c", "a/b/c", ""},
		{"${input:token}", "", "${input:token} asks the user"},
		{"${env:MISSING}", "", "MISSING is not set"},
		{"${MISSING:-a:-b}", "a:-b", ""},
		{"${MISSING}", "", "MISSING is not set"},
		{"${A", "", "unterminated"},
		{"${}", "", "bad variable reference"},
		{"${1A}", "", "bad variable reference"},
		{"${A B}", "", "bad variable reference"},
	}
	for _, tt := range tests {
		got, err := Vars{Lookup: env, Workspace: "/ws/proj", Home: "/home/u"}.Expand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestLoadConfigFormats(t *testing.T) {
	env := lookupFrom(map[string]string{"GH_TOKEN": "ghp_x", "API_HOST": "api.example.com"})
	cfg, err := LoadConfig("testdata/claude.json", Vars{Lookup: env})
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerConfig{
		{
			Name: "github", Transport: TransportStdio, Command: "npx",
			Args:       []string{"-y", "@modelcontextprotocol/server-github", "--token=ghp_x"},
			Env:        map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x", "LOG": "info"},
			Cwd:        "/tmp",
			Enabled:    true,
			ToolsAllow: []string{"get_*", "list_*"}, ToolsDeny: []string{"list_secrets"},
			Timeout: 30 * time.Second,
		},
		{Name: "off", Transport: TransportStdio, Command: "some-server", Timeout: DefaultTimeout},
		{
			Name: "remote", Transport: TransportHTTP, URL: "https://api.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer none"},
			Enabled: true, Timeout: 12 * time.Second,
		},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("servers:\n got %+v\nwant %+v", cfg.Servers, want)
	}
	gh := cfg.Servers[0]
	for name, ok := range map[string]bool{"get_issue": true, "list_issues": true, "list_secrets": false, "create_issue": false} {
		if gh.allows(name) != ok {
			t.Errorf("allows(%q) = %v, want %v", name, !ok, ok)
		}
	}

	cfg, err = LoadConfig("testdata/vscode.json", Vars{Lookup: env})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 2 || cfg.Servers[0].Name != "docs" || cfg.Servers[0].Enabled ||
		cfg.Servers[0].Transport != TransportHTTP || cfg.Servers[1].Command != "npx" || !cfg.Servers[1].Enabled {
		t.Errorf("VS Code servers = %+v", cfg.Servers)
	}
}

func TestParseConfigErrors(t *testing.T) {
	// Errors of the whole file.
	for _, tt := range []struct{ name, json, err string }{
		{"not JSON", `{"mcpServers": `, "is not valid JSON"},
		{"syntax", `{"mcpServers": {,}}`, "at byte"},
		{"no servers", `{"other": {}}`, `no "mcpServers"`},
		{"both layouts", `{"mcpServers": {}, "servers": {}}`, "keep one"},
		{"servers not an object", `{"mcpServers": []}`, `"mcpServers" should be an object`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.json), Vars{Lookup: lookupFrom(nil)})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error = %v, want one containing %q", err, tt.err)
			}
		})
	}
	// Errors of one entry: it is left out, the next one kept.
	for _, tt := range []struct{ name, entry, err string }{
		{"no command", `{"args": ["x"]}`, `a stdio server needs "command"`},
		{"http without url", `{"type": "http"}`, `an http server needs "url"`},
		{"sse without url", `{"type": "sse"}`, `an sse server needs "url"`},
		{"both", `{"command": "x", "url": "http://h"}`, "not both"},
		{"bad url", `{"url": "ftp://h"}`, "http:// or https://"},
		{"unknown type", `{"type": "ws", "url": "http://h"}`, `unknown type "ws"`},
		{"unset variable", `{"command": "x", "env": {"K": "${PRAXIS_TEST_UNSET_VAR}"}}`, `environment variable PRAXIS_TEST_UNSET_VAR is not set`},
		{"input", `{"command": "x", "args": ["${input:key}"]}`, `${input:key} asks the user`},
		{"bad timeout", `{"command": "x", "timeout": "soon"}`, "timeout"},
		{"zero timeout", `{"command": "x", "timeout": 0}`, "must be positive"},
		{"bad pattern", `{"command": "x", "tools_deny": ["[a"]}`, "tool pattern"},
		{"wrong field type", `{"command": 3}`, `"command" should be a string, not number`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(`{"mcpServers": {"a": `+tt.entry+`, "b": {"command": "ok"}}}`), Vars{Lookup: lookupFrom(nil)})
			if err != nil {
				t.Fatalf("the file was refused: %v", err)
			}
			if len(cfg.Invalid) != 1 || cfg.Invalid[0].Name != "a" || !strings.Contains(cfg.Invalid[0].Reason, tt.err) {
				t.Errorf("invalid = %+v, want a with %q", cfg.Invalid, tt.err)
			}
			if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "b" {
				t.Errorf("servers = %+v, want b alone", cfg.Servers)
			}
			if strings.Contains(cfg.Invalid[0].Reason, "json:") || strings.Contains(cfg.Invalid[0].Reason, "mcpclient.") {
				t.Errorf("the reason shows Go internals: %q", cfg.Invalid[0].Reason)
			}
		})
	}
}

func TestQualifiedNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	ids := []ToolID{
		{"fs", "read"},
		{"my server", "read.file"}, // sanitised to mcp__my_server__read_file
		{"my_server", "read_file"}, // the same, sorts after "my server"
		{"my_server", "read/file"}, // the same again
		{"s", long},
		{"s", long + "y"},
	}
	got := QualifiedNames(ids)
	if got[ToolID{"fs", "read"}] != "mcp__fs__read" {
		t.Errorf("plain name = %q", got[ToolID{"fs", "read"}])
	}
	if got[ToolID{"my server", "read.file"}] != "mcp__my_server__read_file" {
		t.Errorf("the first of a clash should keep the clean name: %v", got)
	}
	seen := map[string]bool{}
	for id, n := range got {
		if len(n) > MaxToolNameLen {
			t.Errorf("%v: %q is %d characters", id, n, len(n))
		}
		if strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("%v: %q has characters outside [A-Za-z0-9_-]", id, n)
		}
		if seen[n] {
			t.Errorf("name %q given twice", n)
		}
		seen[n] = true
	}
	if len(got) != len(ids) {
		t.Errorf("%d names for %d tools", len(got), len(ids))
	}
	// Deterministic whatever the order.
	rev := make([]ToolID, len(ids))
	for i, id := range ids {
		rev[len(ids)-1-i] = id
	}
	if again := QualifiedNames(rev); !reflect.DeepEqual(again, got) {
		t.Errorf("order changed the names:\n%v\n%v", got, again)
	}
}
