package sandbox

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestLoosens(t *testing.T) {
	base := DefaultPolicy("/ws")
	base.Isolation = IsolationBwrap
	base.Writable = []string{"/cache"}
	tests := []struct {
		name string
		edit func(*Policy)
		want []string
	}{
		{"same", func(*Policy) {}, nil},
		{"tighter everywhere", func(q *Policy) {
			q.Shell = false
			q.Network = NetworkOff
			q.Env = []string{"PATH"}
			q.Writable = nil
			q.MaxTimeout = time.Minute
			q.Timeout = time.Second
			q.Limits = Limits{CPUSeconds: 1, AddressSpace: 1 << 20, Processes: 2, FileSize: 1}
		}, nil},
		{"harmless settings", func(q *Policy) { q.OutputBytes = 1 << 20; q.BackgroundAfter = time.Hour; q.KillGrace = time.Minute }, nil},
		{"isolation none", func(q *Policy) { q.Isolation = IsolationNone; q.Network = NetworkOn }, []string{"isolation", "network"}},
		{"network on", func(q *Policy) { q.Network = NetworkOn }, []string{"network"}},
		{"more env", func(q *Policy) { q.Env = []string{"PATH", "AWS_*"} }, []string{"env"}},
		{"more writable", func(q *Policy) { q.Writable = []string{"/cache", "/"} }, []string{"writable"}},
		{"fewer hidden", func(q *Policy) { q.Hide = []string{"~/.ssh"} }, []string{"hide"}},
		{"more hidden", func(q *Policy) { q.Hide = append(slices.Clone(DefaultHide), "/secret") }, nil},
		{"isolation auto", func(q *Policy) { q.Isolation = IsolationAuto }, []string{"isolation", "network"}},
		{"unix sockets", func(q *Policy) { q.UnixSockets = true }, []string{"unix_sockets"}},
		{"locale by prefix", func(q *Policy) { q.Env = append(q.Env, "LC_*") }, []string{"env"}},
		{"one locale variable", func(q *Policy) { q.Env = []string{"PATH", "LC_ALL"} }, nil},
		{"longer max", func(q *Policy) { q.MaxTimeout = time.Hour }, []string{"max_timeout"}},
		{"unlimited memory", func(q *Policy) { q.Limits.AddressSpace = -1 }, []string{"limits.address_space"}},
		{"more processes and cpu", func(q *Policy) { q.Limits.Processes = 5000; q.Limits.CPUSeconds = 601 }, []string{"limits.cpu_seconds", "limits.processes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := base
			q.Env = append([]string(nil), base.Env...)
			tt.edit(&q)
			if got := base.Loosens(q); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	off := Policy{Workspace: "/ws"}
	if got := off.Loosens(DefaultPolicy("/ws")); !reflect.DeepEqual(got, []string{"shell"}) {
		t.Errorf("enabling the shell: %v", got)
	}
	auto := DefaultPolicy("/ws")
	for _, q := range []Isolation{IsolationBwrap, IsolationAuto} {
		if got := auto.Loosens(Policy{Workspace: "/ws", Shell: true, Isolation: q}); got != nil {
			t.Errorf("auto to %s: %v", q, got)
		}
	}
	if got := auto.Loosens(Policy{Workspace: "/ws", Shell: true, Isolation: IsolationNone}); !reflect.DeepEqual(got, []string{"isolation"}) {
		t.Errorf("auto to none: %v", got)
	}
	unlimited := DefaultPolicy("/ws")
	unlimited.Limits.FileSize = -1
	if got := unlimited.Loosens(DefaultPolicy("/ws")); got != nil {
		t.Errorf("a finite limit under an unlimited one: %v", got)
	}
}
