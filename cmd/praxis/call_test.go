package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallBashRunsToTheEnd runs commands longer than background_after
// through the real binary: "praxis call" waits for each and reports its
// own exit status, and timeout_ms still ends one that runs too long.
func TestCallBashRunsToTheEnd(t *testing.T) {
	ws := workspace(t)
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.yaml"), "sandbox:\n  shell: true\n  background_after: 200ms\n")
	tests := []struct {
		name     string
		args     string
		wantCode int     // exit status of praxis call
		wantExit float64 // the command's exit_code in the result, when it ran to its end
		want     string
	}{
		{"exit 3", `{"command":"sleep 1; echo done; exit 3"}`, exitOK, 3, "done"},
		{"exit 0", `{"command":"sleep 1; echo fine"}`, exitOK, 0, "fine"},
		{"timeout_ms", `{"command":"sleep 30","timeout_ms":1000}`, exitToolError, -1, "E_TIMEOUT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runPraxis(t, ws, "", "call", "--workspace", ws, "--config", cfg, "--json", "bash", tc.args)
			if res.code != tc.wantCode {
				t.Fatalf("exit status %d, want %d\n%s\n%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			var out struct {
				Text       string         `json:"text"`
				Structured map[string]any `json:"structured"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
				t.Fatalf("%v\n%s", err, res.stdout)
			}
			if strings.Contains(out.Text, "background job") || !strings.Contains(out.Text, tc.want) {
				t.Fatalf("result text:\n%s", out.Text)
			}
			if tc.wantExit >= 0 {
				if got, _ := out.Structured["exit_code"].(float64); got != tc.wantExit || out.Structured["job"] != nil {
					t.Fatalf("structured result %v, want exit_code %v", out.Structured, tc.wantExit)
				}
			}
		})
	}
}
