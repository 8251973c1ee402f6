//go:build linux

package sandbox

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeEngine serves /_ping with the API version given and records the
// paths of the other requests, answering them with 404 and an engine
// error, on a Unix socket; it returns the socket's unix:// address.
func fakeEngine(t *testing.T, apiVersion string) (string, func() []string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "engine.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_ping" {
			if apiVersion != "" {
				w.Header().Set("API-Version", apiVersion)
			}
			w.Write([]byte("OK"))
			return
		}
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message":"No such image: nothing:1"}`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + sock, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// TestEngineAPIVersion negotiates the API version with engines of several
// ages: an older engine's version is used, a newer one's is capped at the
// version Praxis speaks, one older than the minimum is refused, and
// DOCKER_API_VERSION fixes the version without negotiating.
func TestEngineAPIVersion(t *testing.T) {
	cases := []struct {
		name, engine, env string
		want              string // the version in request paths; "" when ping must fail
	}{
		{"older engine", "1.41", "", "1.41"},
		{"newer engine", "1.99", "", maxAPIVersion},
		{"same", maxAPIVersion, "", maxAPIVersion},
		{"no version header", "", "", maxAPIVersion},
		{"too old", "1.39", "", ""},
		{"fixed by the environment", "1.41", "1.44", "1.44"},
		{"fixed with a v", "1.41", "v1.43", "1.43"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("DOCKER_API_VERSION", c.env)
			host, paths := fakeEngine(t, c.engine)
			cli, where, err := newEngineAPI(host)
			if err != nil {
				t.Fatal(err)
			}
			defer cli.close()
			if where != host {
				t.Errorf("address %q, want %q", where, host)
			}
			err = cli.ping(context.Background())
			if c.want == "" {
				if err == nil {
					t.Fatal("ping accepted an engine older than the minimum")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = cli.imageInspect(context.Background(), "nothing:1")
			if !engineStatus(err, http.StatusNotFound) || !strings.Contains(err.Error(), "No such image: nothing:1") {
				t.Errorf("imageInspect: %v, want the engine's 404 and message", err)
			}
			if got := paths(); len(got) != 1 || got[0] != "GET /v"+c.want+"/images/nothing:1/json" {
				t.Errorf("requests %q, want GET /v%s/images/nothing:1/json", got, c.want)
			}
		})
	}
}

// TestEngineAPIAddress refuses malformed engine addresses with a message
// and takes DOCKER_HOST when the policy names none.
func TestEngineAPIAddress(t *testing.T) {
	for _, host := range []string{"nowhere", "unix://", "ftp://engine:21", "tcp://"} {
		if _, _, err := newEngineAPI(host); err == nil {
			t.Errorf("%q accepted", host)
		}
	}
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
	t.Setenv("DOCKER_CERT_PATH", "")
	cli, where, err := newEngineAPI("")
	if err != nil {
		t.Fatal(err)
	}
	defer cli.close()
	if where != "tcp://127.0.0.1:1" || cli.scheme != "http" {
		t.Errorf("DOCKER_HOST: %q over %s", where, cli.scheme)
	}
	if err := cli.ping(context.Background()); err == nil {
		t.Error("ping succeeded with no engine listening")
	}
}

func TestVersionLess(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"1.40", "1.41", true},
		{"1.41", "1.40", false},
		{"1.9", "1.10", true},
		{"1.56", "1.56", false},
		{"2.0", "1.99", false},
		{"1", "1.1", true},
	}
	for _, c := range cases {
		if got := versionLess(c.a, c.b); got != c.want {
			t.Errorf("versionLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
