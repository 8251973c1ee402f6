package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestTighter(t *testing.T) {
	for _, tc := range []struct{ flag, req, want int }{
		{50, 0, 50}, {50, 10, 10}, {50, 500, 50}, {0, 7, 7}, {0, 0, 0},
	} {
		if got := tighter(tc.flag, tc.req); got != tc.want {
			t.Errorf("tighter(%d, %d) = %d, want %d", tc.flag, tc.req, got, tc.want)
		}
	}
	if got := tighter(2.5, 9.0); got != 2.5 {
		t.Errorf("a request raised --max-cost to %v", got)
	}
}

// serveAgent starts the real binary's agent service on a free loopback
// port and returns its base URL; the process ends with the test.
func serveAgent(t *testing.T, ws string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(praxisBin, append([]string{"agent", "serve", "--http=" + addr, "--workspace", ws}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr, cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("praxis agent serve did not listen on %s:\n%s", addr, stderr.String())
		}
	}
}

// getSession waits for session id to have a turn count of turns and no
// running turn, and returns it.
func getSession(t *testing.T, base, id string, turns int) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/v1/sessions/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if s["running"] == false && s["turns"] == float64(turns) && s["stop_reason"] != nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %v", id, s)
		}
	}
}

// TestAgentServeRestart runs a session on the real service, stops the
// service, starts another on the same workspace, and continues the
// session there.
func TestAgentServeRestart(t *testing.T) {
	ws := t.TempDir()
	script := writeFile(t, filepath.Join(t.TempDir(), "s.json"), `{"turns": [{"text": "first answer"}, {"text": "second answer"}]}`)
	base, cmd := serveAgent(t, ws, "--provider", "scripted", "--script", script, "--sandbox", "none")
	resp, err := http.Post(base+"/v1/sessions", "application/json", strings.NewReader(`{"task": "hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || created.ID == "" {
		t.Fatalf("create: %d %+v", resp.StatusCode, created)
	}
	if s := getSession(t, base, created.ID, 1); s["final"] != "first answer" {
		t.Fatalf("first turn: %v", s)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the service did not stop cleanly: %v", err)
	}

	base, _ = serveAgent(t, ws, "--provider", "scripted", "--script", script, "--sandbox", "none")
	resp, err = http.Get(base + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"id":"`+created.ID+`"`) {
		t.Fatalf("the restarted service does not list the session: %s", body)
	}
	resp, err = http.Post(base+"/v1/sessions/"+created.ID+"/messages", "application/json", strings.NewReader(`{"text": "go on"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("message: %d", resp.StatusCode)
	}
	if s := getSession(t, base, created.ID, 2); s["final"] != "second answer" {
		t.Fatalf("the continued session: %v", s)
	}
}
