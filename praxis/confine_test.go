package praxis

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// confinedEngine returns an engine whose workspace sits beside an
// "outside" directory holding secret.txt, with symlinks leading out.
func confinedEngine(t *testing.T) (e *Engine, ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	writeTestFile(t, filepath.Join(outside, "secret.txt"), "secret\n")
	writeTestFile(t, filepath.Join(ws, "in.txt"), "inside\n")
	writeTestFile(t, filepath.Join(ws, "dir/f.txt"), "f\n")
	for link, target := range map[string]string{
		"out-file":     filepath.Join(outside, "secret.txt"),
		"out-rel":      "../outside/secret.txt",
		"out-dir":      outside,
		"dangling-out": filepath.Join(outside, "not-yet.txt"),
		"in-link":      "in.txt",
		"in-dir":       "dir",
		"dir/up":       "../in.txt",
		"dir/out-abs":  filepath.Join(outside, "secret.txt"),
		"dir/out-up":   "../../outside/secret.txt",
		"dir/up-dir":   "..",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	e, err = New(Options{Workspace: ws, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, ws, outside
}

func TestConfinementRefusesEscapes(t *testing.T) {
	e, ws, outside := confinedEngine(t)
	for _, p := range []string{
		"../outside/secret.txt",
		filepath.Join(outside, "secret.txt"),
		"/etc/passwd",
		"dir/../../outside/secret.txt",
		"out-file",
		"out-rel",
		"out-dir/secret.txt",
		"dangling-out",
		"dir/out-abs", // links out of a directory below the root
		"dir/out-up",
		"dir/up-dir/out-file",
		"in-dir/out-up",
	} {
		t.Run(p, func(t *testing.T) {
			mustFail(t, call(t, e, "read_file", map[string]any{"path": p}), EPathOutside, ws)
			mustFail(t, call(t, e, "write_file", map[string]any{"path": p, "content": "pwned\n"}), EPathOutside)
			mustFail(t, call(t, e, "edit_file", map[string]any{"path": p, "ops": []any{map[string]any{"op": "append", "new_text": "pwned"}}}), EPathOutside)
		})
	}
	if got := readTestFile(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(outside, "not-yet.txt")); !os.IsNotExist(err) {
		t.Errorf("a write through a dangling link created a file outside: %v", err)
	}
	// No directory is created outside, even on a refused call.
	mustFail(t, call(t, e, "write_file", map[string]any{"path": "out-dir/sub/deep/x.txt", "content": "x"}), EPathOutside)
	if _, err := os.Stat(filepath.Join(outside, "sub")); !os.IsNotExist(err) {
		t.Errorf("a directory was created outside: %v", err)
	}
	mustFail(t, call(t, e, "list_dir", map[string]any{"path": "out-dir"}), EPathOutside)
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "in\x00.txt"}), EInvalidArgs, "NUL")
}

func TestConfinementFollowsInsideLinks(t *testing.T) {
	e, ws, _ := confinedEngine(t)
	for _, p := range []string{"in-link", "in-dir/f.txt", "dir/up", "in-dir/up", "dir/up-dir/in.txt", "dir/up-dir/dir/f.txt", filepath.Join(ws, "in.txt")} {
		mustOK(t, call(t, e, "read_file", map[string]any{"path": p}))
	}
	// A write through an inside link changes the target; the link stays.
	mustOK(t, call(t, e, "write_file", map[string]any{"path": "in-link", "content": "changed\n"}))
	if got := readTestFile(t, filepath.Join(ws, "in.txt")); got != "changed\n" {
		t.Errorf("target = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "in-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("in-link is no longer a symlink: %v %v", fi, err)
	}
	a := anchors(t, e, "in-dir/f.txt")
	mustOK(t, call(t, e, "edit_file", map[string]any{"path": "in-dir/f.txt", "ops": []any{map[string]any{"op": "replace_line", "tag": a[0], "new_text": "F"}}}))
	if got := readTestFile(t, filepath.Join(ws, "dir/f.txt")); got != "F\n" {
		t.Errorf("edit through a directory link: %q", got)
	}
}

func TestConfinementSymlinkSwappedBetweenCalls(t *testing.T) {
	e, ws, outside := confinedEngine(t)
	link := filepath.Join(ws, "swap")
	if err := os.Symlink("in.txt", link); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, e, "read_file", map[string]any{"path": "swap"}))
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), link); err != nil {
		t.Fatal(err)
	}
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "swap"}), EPathOutside)
	mustFail(t, call(t, e, "write_file", map[string]any{"path": "swap", "content": "pwned"}), EPathOutside)
	if got := readTestFile(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
		t.Errorf("outside file changed: %q", got)
	}
}

func TestReadRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	e, ws, _ := confinedEngine(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(ws, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := syscall.Mkfifo(filepath.Join(ws, "dir/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"fifo", "sock", "dir/fifo", "in-dir/fifo"}
	if err := syscall.Mknod(filepath.Join(ws, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		names = append(names, "null")
	} else {
		t.Logf("no device node test: %v", err)
	}
	for _, name := range names {
		done := make(chan Result, 1)
		go func() { done <- call(t, e, "read_file", map[string]any{"path": name}) }()
		select {
		case res := <-done:
			mustFail(t, res, ENotRegular, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("read_file %s blocked", name)
		}
	}
	mustFail(t, call(t, e, "edit_file", map[string]any{"path": "fifo", "ops": []any{map[string]any{"op": "append", "new_text": "x"}}}), ENotRegular)
}

func TestRelativeAndAbsolutePaths(t *testing.T) {
	e, ws, _ := confinedEngine(t)
	for _, tc := range []struct{ in, want string }{
		{"in.txt", "in.txt"},
		{"./dir/../in.txt", "in.txt"},
		{filepath.Join(ws, "dir", "f.txt"), "dir/f.txt"},
		{ws, "."},
		{"", "."},
	} {
		got, err := e.Workspace().Rel(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Rel(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, p := range []string{"..", "../ws/in.txt", ws + "-other/x", "/"} {
		if _, err := e.Workspace().Rel(p); CodeOf(err) != EPathOutside {
			t.Errorf("Rel(%q): %v, want E_PATH_OUTSIDE", p, err)
		}
	}
}
