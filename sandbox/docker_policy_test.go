package sandbox

import (
	"errors"
	"slices"
	"testing"
)

func TestDockerConfig(t *testing.T) {
	p := DefaultPolicy("/w")
	err := ApplyConfig(&p, []byte("sandbox:\n  isolation: docker\n  image: ci:1\n  engine: tcp://h:2376\n  limits:\n    memory: 512MiB\n    cpus: 1.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Isolation != IsolationDocker || p.Image != "ci:1" || p.Engine != "tcp://h:2376" || p.Limits.Memory != 512<<20 || p.Limits.CPUs != 1.5 {
		t.Errorf("%+v", p)
	}
	for _, bad := range []string{"cpus: 0", "cpus: -1", "cpus: two", "memory: lots"} {
		q := DefaultPolicy("/w")
		if err := ApplyConfig(&q, []byte("sandbox:\n  limits:\n    "+bad+"\n")); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestDockerValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Policy)
		want error
	}{
		{"docker without image", func(p *Policy) { p.Isolation = IsolationDocker }, ErrInvalid},
		{"memory under none", func(p *Policy) { p.Limits.Memory = 1 << 30 }, ErrUnavailable},
		{"cpus under bwrap", func(p *Policy) { p.Isolation = IsolationBwrap; p.Limits.CPUs = 1 }, ErrUnavailable},
		{"unknown isolation", func(p *Policy) { p.Isolation = "jail" }, ErrInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy("/w")
			tt.edit(&p)
			if err := p.withDefaults().validate(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	p := DefaultPolicy("/w")
	p.Isolation = IsolationDocker
	if !p.networkOff() {
		t.Error("the network is on by default under docker")
	}
}

func TestDockerLoosens(t *testing.T) {
	docker := DefaultPolicy("/w")
	docker.Isolation, docker.Image = IsolationDocker, "ci:1"
	docker.Limits.Memory, docker.Limits.CPUs = 1<<30, 2
	for _, tt := range []struct {
		name string
		from Policy
		edit func(*Policy)
		want []string
	}{
		{"another image", docker, func(q *Policy) { q.Image = "other:2" }, nil},
		{"another engine", docker, func(q *Policy) { q.Engine = "tcp://elsewhere:2376" }, []string{"engine"}},
		{"docker to bwrap", docker, func(q *Policy) { q.Isolation = IsolationBwrap; q.Limits.Memory, q.Limits.CPUs = 0, 0 }, []string{"isolation", "limits.memory", "limits.cpus"}},
		{"more memory", docker, func(q *Policy) { q.Limits.Memory = 2 << 30 }, []string{"limits.memory"}},
		{"unlimited cpus", docker, func(q *Policy) { q.Limits.CPUs = -1 }, []string{"limits.cpus"}},
		{"less of both", docker, func(q *Policy) { q.Limits.Memory, q.Limits.CPUs = 1<<29, 1 }, nil},
		{"bwrap to docker", Policy{Workspace: "/w", Shell: true, Isolation: IsolationBwrap}, func(q *Policy) { q.Isolation, q.Image = IsolationDocker, "ci:1" }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.from
			tt.edit(&q)
			if got := tt.from.Loosens(q); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
