package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestApplyConfigFile(t *testing.T) {
	data, err := os.ReadFile("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	p := DefaultPolicy("/ws")
	if err := ApplyConfig(&p, data); err != nil {
		t.Fatal(err)
	}
	want := DefaultPolicy("/ws")
	want.Isolation = IsolationBwrap
	want.Network = NetworkOff
	want.Env = []string{"PATH", "HOME", "LANG", "LC_*", "TERM", "GOPATH"}
	want.Writable = []string{"/var/cache/praxis-test", filepath.Join(home, ".cache/go-build")}
	want.Hide = []string{"~/.ssh", "/etc/secrets"}
	want.Timeout = 90 * time.Second
	want.MaxTimeout = 20 * time.Minute
	want.BackgroundAfter = 45 * time.Second
	want.KillGrace = 2 * time.Second
	want.OutputBytes = 64 << 10
	want.Limits = Limits{CPUSeconds: 300, AddressSpace: 4 << 30, Processes: 256, FileSize: -1}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
}

// Each file overrides only the keys it names.
func TestApplyConfigLayers(t *testing.T) {
	p := DefaultPolicy("/ws")
	for _, f := range []string{
		"sandbox: {isolation: bwrap, timeout: 10s}",
		"other: 1",
		"",
		"# only a comment\n",
		"sandbox:\n",
		"sandbox: {network: on, limits: {processes: 50}}",
		"sandbox: {unix_sockets: on}",
		"sandbox:\n  shell: false\n",
	} {
		if err := ApplyConfig(&p, []byte(f)); err != nil {
			t.Fatalf("%q: %v", f, err)
		}
	}
	if p.Isolation != IsolationBwrap || p.Timeout != 10*time.Second || p.Network != NetworkOn ||
		p.Limits.Processes != 50 || p.Limits.FileSize != DefaultFileSize || p.Shell || !p.UnixSockets {
		t.Errorf("layered policy: %+v", p)
	}
}

func TestApplyConfigErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"sandbox:\n  isolaton: bwrap", "line 2: field isolaton not found"},
		{"sandbox: {network: maybe}", `"maybe": want on or off`},
		{"sandbox: {timeout: soon}", "soon"},
		{"sandbox: {limits: {address_space: 4 gigs}}", `"4 gigs" is not a count`},
		{"sandbox: {limits: {processes: -3}}", `"-3" is not a count`},
		{"sandbox: {output_bytes: unlimited}", "output_bytes cannot be unlimited"},
		{"sandbox: {unix_sockets: sometimes}", `"sometimes": want on or off`},
		{"sandbox: [1, 2]", "line 1"},
		{"sandbox: {shell: true", "did not find"},
	} {
		p := DefaultPolicy("/ws")
		err := ApplyConfig(&p, []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}
