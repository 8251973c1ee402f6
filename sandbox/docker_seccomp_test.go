//go:build linux

package sandbox

import (
	"encoding/json"
	"testing"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// The containers' profile is the engine's default but for the calls that
// set a mode: each is allowed only without the setuid and setgid bits,
// and openat2 is ENOSYS. A call the default refuses stays refused.
func TestDockerSeccompProfile(t *testing.T) {
	s, err := dockerSeccomp()
	if err != nil {
		t.Fatal(err)
	}
	var prof seccomp.Seccomp
	if err := json.Unmarshal([]byte(s), &prof); err != nil {
		t.Fatal(err)
	}
	if prof.DefaultAction != specs.ActErrno {
		t.Errorf("default action %s, want the default profile's %s", prof.DefaultAction, specs.ActErrno)
	}
	rules := map[string][]*seccomp.Syscall{}
	for _, sc := range prof.Syscalls {
		for _, name := range sc.Names {
			rules[name] = append(rules[name], sc)
		}
	}
	for name, arg := range setIDCalls {
		rs := rules[name]
		if len(rs) != 1 || rs[0].Action != specs.ActAllow || len(rs[0].Args) != 1 {
			t.Errorf("%s: %d rules, want one conditional allow", name, len(rs))
			continue
		}
		a := rs[0].Args[0]
		if a.Index != arg || a.Op != specs.OpMaskedEqual || a.Value != 0o6000 || a.ValueTwo != 0 {
			t.Errorf("%s: condition %+v", name, a)
		}
	}
	if rs := rules["openat2"]; len(rs) != 1 || rs[0].Action != specs.ActErrno || rs[0].ErrnoRet == nil || *rs[0].ErrnoRet != 38 {
		t.Errorf("openat2: %+v", rs)
	}
	for _, name := range []string{"read", "write", "openat", "execve", "clone"} {
		if len(rules[name]) == 0 {
			t.Errorf("%s is not allowed", name)
		}
	}
	for _, name := range []string{"reboot", "kexec_load", "init_module"} {
		for _, sc := range rules[name] {
			if sc.Action == specs.ActAllow && sc.Includes == nil {
				t.Errorf("%s is allowed unconditionally", name)
			}
		}
	}
}
