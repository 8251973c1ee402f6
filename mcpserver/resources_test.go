package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/praxis"
)

// fakeNotes and fakeSkills stand in for the engine's note store and skill
// catalog.
type fakeNotes struct {
	mu    sync.Mutex
	notes map[string]string
}

func (n *fakeNotes) set(key, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if text == "" {
		delete(n.notes, key)
		return
	}
	n.notes[key] = text
}

func (n *fakeNotes) Keys(context.Context) ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	keys := make([]string, 0, len(n.notes))
	for k := range n.notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

func (n *fakeNotes) Read(_ context.Context, key string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	text, ok := n.notes[key]
	if !ok {
		return "", praxis.Errorf(praxis.ENotFound, "no note %q", key)
	}
	return text, nil
}

type fakeSkills map[string]string

func (s fakeSkills) List(context.Context) ([]Skill, error) {
	var out []Skill
	for name := range s {
		out = append(out, Skill{Name: name, Description: "The " + name + " skill."})
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (s fakeSkills) Load(_ context.Context, name string) (string, error) {
	body, ok := s[name]
	if !ok {
		return "", praxis.Errorf(praxis.ENotFound, "no skill %q", name)
	}
	return body, nil
}

func TestNotesAndSkills(t *testing.T) {
	notes := &fakeNotes{notes: map[string]string{"build": "run make", "style guide": "gofmt"}}
	s, _ := newTestServer(t, Options{
		Notes:  func(*praxis.Engine) Notes { return notes },
		Skills: func(*praxis.Engine) Skills { return fakeSkills{"review": "# Review\nRead the diff."} },
	}, nil)
	c := startStdio(t, s, StdioOptions{})
	c.initialize(nil)

	listURIs := func(id int) []string {
		c.send(request(id, "resources/list", nil))
		m, _ := c.response(id)
		var list struct {
			Resources []struct{ URI, Name string } `json:"resources"`
		}
		json.Unmarshal(m.Result, &list)
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		sort.Strings(uris)
		return uris
	}
	if got, want := listURIs(1), []string{"memory://build", "memory://style%20guide", "skill://review"}; !slices.Equal(got, want) {
		t.Errorf("resources %v, want %v", got, want)
	}
	// Notes written or removed later show in the next listing.
	notes.set("todo", "ship it")
	notes.set("build", "")
	if got, want := listURIs(2), []string{"memory://style%20guide", "memory://todo", "skill://review"}; !slices.Equal(got, want) {
		t.Errorf("resources after changes %v, want %v", got, want)
	}
	notes.set("build", "run make")

	for i, tc := range []struct{ uri, text string }{
		{"memory://build", "run make"},
		{"memory://style%20guide", "gofmt"},
		{"skill://review", "# Review\nRead the diff."},
	} {
		c.send(request(10+i, "resources/read", map[string]any{"uri": tc.uri}))
		m, _ := c.response(10 + i)
		var res struct {
			Contents []struct{ URI, Text string } `json:"contents"`
		}
		json.Unmarshal(m.Result, &res)
		if len(res.Contents) != 1 || res.Contents[0].Text != tc.text || res.Contents[0].URI != tc.uri {
			t.Errorf("read %s: %s", tc.uri, m.raw)
		}
	}
	c.send(request(20, "resources/read", map[string]any{"uri": "memory://missing"}))
	if m, _ := c.response(20); m.Error == nil {
		t.Errorf("missing note: %s, want an error", m.raw)
	}

	c.send(request(30, "prompts/list", nil))
	m, _ := c.response(30)
	if !strings.Contains(string(m.Result), `"review"`) {
		t.Errorf("prompts/list: %s", m.raw)
	}
	c.send(request(31, "prompts/get", map[string]any{"name": "review"}))
	m, _ = c.response(31)
	if !strings.Contains(string(m.Result), "Read the diff.") {
		t.Errorf("prompts/get: %s", m.raw)
	}
}

// TestStdioShutdownCancelsCalls cancels ServeStdio's context with a call in
// flight: the call is cancelled and ServeStdio returns.
func TestStdioShutdownCancelsCalls(t *testing.T) {
	started := make(chan string, 4)
	s, _ := newTestServer(t, Options{}, started)
	ctx, cancel := context.WithCancel(context.Background())
	c := startPipes(t, func(_ context.Context, r io.Reader, w io.Writer) error {
		return s.ServeStdio(ctx, r, w, StdioOptions{})
	})
	c.initialize(nil)
	c.send(request(1, "tools/call", callParams("block", map[string]any{}, nil)))
	<-started
	cancel()
	select {
	case got := <-started:
		if got != "cancelled" {
			t.Fatalf("got %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call was not cancelled")
	}
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return")
	}
}
