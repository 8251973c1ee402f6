package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/sandbox"
)

// TestEngineNotesAndSkills serves a real engine's memory notes and skills:
// a note written with write_memory and a skill on disk become resources,
// and the skill a prompt.
func TestEngineNotesAndSkills(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".praxis/skills/release/SKILL.md", "---\nname: release\ndescription: How to cut a release.\n---\nTag, build, publish.\n")
	s, err := New(Options{
		Open:           func(d string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: d, NoSync: true}) },
		Workspace:      dir,
		FixedWorkspace: true,
		Notes:          EngineNotes,
		Skills:         EngineSkills,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	if res := c.call(1, "write_memory", map[string]any{"key": "project/build", "content": "run make\n"}).tool(t); res.IsError {
		t.Fatalf("write_memory: %s", res.text())
	}

	c.send(request(2, "resources/list", nil))
	m, _ := c.response(2)
	for _, uri := range []string{"memory://project%2Fbuild", "skill://release"} {
		if !strings.Contains(string(m.Result), `"`+uri+`"`) {
			t.Errorf("resources/list lacks %s: %s", uri, m.Result)
		}
	}
	for i, tc := range []struct{ uri, want string }{
		{"memory://project%2Fbuild", "run make"},
		{"skill://release", "Tag, build, publish."},
	} {
		c.send(request(10+i, "resources/read", map[string]any{"uri": tc.uri}))
		m, _ := c.response(10 + i)
		var res struct {
			Contents []struct{ Text string } `json:"contents"`
		}
		json.Unmarshal(m.Result, &res)
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, tc.want) {
			t.Errorf("read %s: %s", tc.uri, m.raw)
		}
	}
	for i, uri := range []string{"memory://nothing", "skill://nothing"} {
		c.send(request(20+i, "resources/read", map[string]any{"uri": uri}))
		if m, _ := c.response(20 + i); m.Error == nil {
			t.Errorf("read %s: %s, want an error", uri, m.raw)
		}
	}
	c.send(request(30, "prompts/get", map[string]any{"name": "release"}))
	if m, _ := c.response(30); !strings.Contains(string(m.Result), "Tag, build, publish.") {
		t.Errorf("prompts/get release: %s", m.raw)
	}

	// A client that gets a prompt before anything was listed.
	s2, err := New(Options{
		Open:           func(d string) (*praxis.Engine, error) { return praxis.New(praxis.Options{Workspace: d, NoSync: true}) },
		Workspace:      dir,
		FixedWorkspace: true,
		Skills:         EngineSkills,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	c2 := startStdio(t, s2, StdioOptions{})
	c2.initialize(nil)
	c2.send(request(1, "prompts/get", map[string]any{"name": "release"}))
	if m, _ := c2.response(1); !strings.Contains(string(m.Result), "Tag, build, publish.") {
		t.Errorf("prompts/get before any listing: %s", m.raw)
	}
}

// TestCancelKillsCommand cancels a running bash call: the call answers
// E_CANCELLED and the command's process is gone.
func TestCancelKillsCommand(t *testing.T) {
	dir := t.TempDir()
	policy := sandbox.DefaultPolicy("")
	s, err := New(Options{
		Open: func(d string) (*praxis.Engine, error) {
			return praxis.New(praxis.Options{Workspace: d, NoSync: true, Sandbox: &policy})
		},
		Workspace:      dir,
		FixedWorkspace: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)
	// The pid the command sees may be its PID namespace's: /proc of the
	// host, found through its unique sleep, names it outside.
	arg := fmt.Sprintf("30.%d", time.Now().UnixNano()%1e9)
	c.send(request(1, "tools/call", callParams("bash", map[string]any{"command": "exec sleep " + arg}, nil)))
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		pid = processWithArg(arg)
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
	}
	c.send(notification("notifications/cancelled", map[string]any{"requestId": 1}))
	for _, m := range c.drain() {
		t.Errorf("the cancelled call was answered: %s", m.raw)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after the call was cancelled", pid)
		}
	}
}

// processWithArg returns a process whose command line holds arg, or 0.
func processWithArg(arg string) int {
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline"); err == nil && strings.Contains(string(b), "\x00"+arg+"\x00") {
			return pid
		}
	}
	return 0
}
