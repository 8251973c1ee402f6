package praxis

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// openStore opens a version store on the workspace dir, closed at the end
// of the test.
func openStore(t *testing.T, dir string, memLimit int64) *versionStore {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := newVersionStore(root, memLimit, 64<<20, slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		s.close()
		root.Close()
	})
	return s
}

func storedFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(versionsDir)))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if validVersion(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestVersionStorePutGet(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, 1<<20)
	data := []byte("one\ntwo\n")
	v := s.put(data)
	if v != hashline.Version(data) {
		t.Fatalf("put returned %s, want the version %s", v, hashline.Version(data))
	}
	if again := s.put(bytes.Clone(data)); again != v {
		t.Errorf("put of the same bytes: %s, then %s", v, again)
	}
	if got, ok := s.get(v); !ok || !bytes.Equal(got, data) {
		t.Errorf("get(%s) = %q, %v", v, got, ok)
	}
	for _, bad := range []string{"", "0000000000000000", "../../../etc/x", "ABCDEF0123456789", v + "0", "served.log"} {
		if _, ok := s.get(bad); ok {
			t.Errorf("get(%q) found something", bad)
		}
	}
	s.flush()
	if got := storedFiles(t, dir); !slices.Equal(got, []string{v}) {
		t.Errorf("stored files %v, want [%s]", got, v)
	}
	// The state directory is kept out of version control.
	if b, err := os.ReadFile(filepath.Join(dir, ".praxis", "state", ".gitignore")); err != nil || string(b) != "*\n" {
		t.Errorf(".gitignore: %q, %v", b, err)
	}
}

// TestVersionStoreShared has two stores on one workspace, as two processes
// would: what one stores and serves, the other finds, also after both
// closed (a restart).
func TestVersionStoreShared(t *testing.T) {
	dir := t.TempDir()
	a, b := openStore(t, dir, 1<<20), openStore(t, dir, 1<<20)
	data := []byte("shared\n")
	v := hashline.Version(data)
	a.served("src/f.go", v, data)
	a.served("src/g.go", hashline.Version([]byte("g\n")), []byte("g\n"))
	a.flush()
	if got, ok := b.get(v); !ok || !bytes.Equal(got, data) {
		t.Fatalf("the other store: get(%s) = %q, %v", v, got, ok)
	}
	if got := b.recentVersions("src/f.go", 8); !slices.Equal(got, []string{v}) {
		t.Errorf("the other store's versions of src/f.go: %v, want [%s]", got, v)
	}
	a.close()
	b.close()
	c := openStore(t, dir, 1<<20)
	if got, ok := c.get(v); !ok || !bytes.Equal(got, data) {
		t.Errorf("after a restart: get(%s) = %q, %v", v, got, ok)
	}
	if got := c.recentVersions("src/f.go", 8); !slices.Equal(got, []string{v}) {
		t.Errorf("after a restart, versions of src/f.go: %v", got)
	}
}

// TestVersionStoreRecentOrder: the newest served version comes first, each
// once, and the log of another store adds to this one's own.
func TestVersionStoreRecentOrder(t *testing.T) {
	dir := t.TempDir()
	a, b := openStore(t, dir, 1<<20), openStore(t, dir, 1<<20)
	var vs []string
	for i := range 3 {
		d := fmt.Appendf(nil, "v%d\n", i)
		vs = append(vs, hashline.Version(d))
		a.served("f", vs[i], d)
	}
	a.served("f", vs[0], []byte("v0\n")) // served again: newest
	a.flush()
	want := []string{vs[0], vs[2], vs[1]}
	if got := a.recentVersions("f", 8); !slices.Equal(got, want) {
		t.Errorf("own order: %v, want %v", got, want)
	}
	if got := b.recentVersions("f", 2); !slices.Equal(got, want[:2]) {
		t.Errorf("from the log, limit 2: %v, want %v", got, want[:2])
	}
}

// TestVersionStoreCorrupt: a stored file whose content does not hash to
// its name (damaged, or written by someone else) is missing, and removed.
func TestVersionStoreCorrupt(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, 0) // nothing in memory: every get reads the disk
	data := []byte("good\n")
	v := s.put(data)
	s.flush()
	p := filepath.Join(dir, filepath.FromSlash(versionsDir), v)
	if err := os.WriteFile(p, []byte("evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.get(v); ok {
		t.Errorf("a forged version was returned: %q", got)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the forged file is still there: %v", err)
	}
}

// TestVersionStoreBound: past the bound the least recently used files go
// first; a get counts as a use.
func TestVersionStoreBound(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, 0)
	s.maxTotal = 3 * 1000
	var vs []string
	old := time.Now().Add(-time.Hour)
	for i := range 3 {
		v := s.put(bytes.Repeat([]byte{byte('a' + i)}, 1000))
		s.flush()
		vs = append(vs, v)
		// Distinct, older modification times, in order.
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(filepath.Join(dir, filepath.FromSlash(versionsDir), v), at, at)
	}
	if _, ok := s.get(vs[0]); !ok { // the oldest is used: now the newest
		t.Fatal("lost a version within the bound")
	}
	s.put(bytes.Repeat([]byte{'d'}, 1000))
	s.flush()
	got := storedFiles(t, dir)
	if len(got) != 3 || slices.Contains(got, vs[1]) || !slices.Contains(got, vs[0]) {
		t.Errorf("after eviction: %v; want 3 files, without %s (least recently used), with %s (used)", got, vs[1], vs[0])
	}
	// Too large for the store: kept nowhere.
	s.maxFile = 10
	if v := s.put([]byte("more than ten bytes\n")); slices.Contains(storedFiles(t, dir), v) {
		t.Error("a content over the size limit was stored")
	}
}

// TestVersionStoreLeftovers: a temporary file a killed process left is
// never returned and is removed once old.
func TestVersionStoreLeftovers(t *testing.T) {
	dir := t.TempDir()
	vdir := filepath.Join(dir, filepath.FromSlash(versionsDir))
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("partial")
	v := hashline.Version(data)
	tmp := filepath.Join(vdir, ".tmp-0123456789abcdef")
	writeTestFile(t, tmp, "part")
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(tmp, old, old)
	s := openStore(t, dir, 0)
	if _, ok := s.get(v); ok {
		t.Error("a temporary file was taken for a version")
	}
	s.put([]byte("x"))
	s.flush()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the old temporary file is still there: %v", err)
	}
}

// TestVersionStoreNoDisk: without a usable state directory the store works
// in memory and writes nothing, also when the directory is a symbolic link
// to elsewhere in the workspace.
func TestVersionStoreNoDisk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{".praxis is a file", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, ".praxis"), "not a directory\n")
		}},
		{"versions is a symlink", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, ".praxis", "state"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../../src", filepath.Join(dir, ".praxis", "state", "versions")); err != nil {
				t.Fatal(err)
			}
		}},
		{"state is a symlink", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "src", "versions"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, ".praxis"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../src", filepath.Join(dir, ".praxis", "state")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			s := openStore(t, dir, 1<<20)
			data := []byte("memory only\n")
			v := hashline.Version(data)
			s.served("f", v, data)
			s.flush()
			if got, ok := s.get(v); !ok || !bytes.Equal(got, data) {
				t.Errorf("get(%s) = %q, %v", v, got, ok)
			}
			if got := s.recentVersions("f", 4); !slices.Equal(got, []string{v}) {
				t.Errorf("recent versions %v", got)
			}
			filepath.WalkDir(filepath.Join(dir, "src"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("the store wrote %s outside its directory", p)
				}
				return nil
			})
		})
	}
}

// TestVersionStoreServedLogCut: the served log stays bounded and keeps its
// newest lines.
func TestVersionStoreServedLogCut(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, 0)
	s.logLimit = 16 << 10
	name := strings.Repeat("p", 200)
	var last string
	n := int(s.logLimit) / 200 * 3
	for i := range n {
		d := fmt.Appendf(nil, "%d\n", i)
		last = hashline.Version(d)
		s.served(fmt.Sprintf("%s%d", name, i), last, d)
	}
	s.flush()
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(versionsDir), servedLogName))
	if err != nil || fi.Size() > s.logLimit+300 {
		t.Fatalf("served log: %v, %v", fi, err)
	}
	other := openStore(t, dir, 0)
	if got := other.recentVersions(fmt.Sprintf("%s%d", name, n-1), 4); !slices.Equal(got, []string{last}) {
		t.Errorf("the newest line was lost: %v", got)
	}
}

// TestEngineStoresServedVersions: a read stores the version it showed, on
// disk by the time the engine is closed, where another engine finds it.
func TestEngineStoresServedVersions(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "a\nb\n"})
	mustOK(t, call(t, e, "read_file", map[string]any{"path": "f.txt"}))
	e.Close()
	v := hashline.Version([]byte("a\nb\n"))
	if got := storedFiles(t, dir); !slices.Equal(got, []string{v}) {
		t.Fatalf("stored %v, want [%s]", got, v)
	}
	e2, err := New(Options{Workspace: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if got, ok := e2.versions.get(v); !ok || string(got) != "a\nb\n" {
		t.Errorf("the next engine: %q, %v", got, ok)
	}
	if got := e2.versions.recentVersions("f.txt", 4); !slices.Equal(got, []string{v}) {
		t.Errorf("the next engine's versions of f.txt: %v", got)
	}
}

// BenchmarkVersionStorePut10MB measures what a read of a new 10 MB version
// costs the store: put (on the caller's path) and the background write
// that flush waits for.
func BenchmarkVersionStorePut10MB(b *testing.B) {
	root, err := os.OpenRoot(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	s := newVersionStore(root, 64<<20, 64<<20, slog.New(slog.DiscardHandler))
	defer s.close()
	data := bytes.Repeat([]byte("\tif err := step(ctx, arg); err != nil {\n"), 10<<20/41)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		data[0] = byte(i) // a new version each time
		s.served("f.go", hashline.Version(data), bytes.Clone(data))
		s.flush()
	}
}

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		hashline.Version([]byte("x")): true,
		"0123456789abcdef":            true,
		"0123456789ABCDEF":            false,
		"0123456789abcde":             false,
		"0123456789abcdef0":           false,
		"0123456789abcdeg":            false,
		"":                            false,
		"../0123456789abc":            false,
	} {
		if got := validVersion(v); got != want {
			t.Errorf("validVersion(%q) = %v, want %v", v, got, want)
		}
	}
	if !storeTempName(".tmp-0123456789abcdef") || storeTempName("tmp-0123456789abcdef") || storeTempName(".tmp-0123456789abcde") {
		t.Error("storeTempName accepts or refuses the wrong names")
	}
}
