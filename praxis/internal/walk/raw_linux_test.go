//go:build linux && !walkportable

package walk

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// remoteOnly makes every file system count as remote for the rest of the
// test: the walk then makes no raw system call.
func remoteOnly(t *testing.T) {
	old := localMagic
	localMagic = func(int64) bool { return false }
	t.Cleanup(func() { localMagic = old })
}

// TestReadSwappedRemote swaps files for FIFOs, directories and links as
// TestReadSwapped does, with the reads made through the runtime.
func TestReadSwappedRemote(t *testing.T) {
	remoteOnly(t)
	TestReadSwapped(t)
}

// rawModes walks dir and returns, for each file, whether its directory is
// taken as local and whether it is opened for raw reads. Every file must
// read as its path.
func rawModes(t *testing.T, dir string) map[string][2]bool {
	t.Helper()
	var mu sync.Mutex
	modes := map[string][2]bool{}
	walkFiles(t, dir, "", Options{}, func(f *File) {
		of, err := f.dir.fd.openFile(f.Name)
		if err != nil {
			t.Errorf("%s: %v", f.Path(), err)
			return
		}
		of.close()
		mu.Lock()
		modes[f.Path()] = [2]bool{f.dir.fd.local, of.raw}
		mu.Unlock()
	})
	return modes
}

func TestRawOnlyLocal(t *testing.T) {
	dir := tree(t, "a.txt", "d/b.txt")
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	local := localFS(fd) && noXDevWorks(fd)
	unix.Close(fd)
	for path, m := range rawModes(t, dir) {
		if m != [2]bool{local, local} {
			t.Errorf("%s: local directory, raw open = %v, want both %v", path, m, local)
		}
	}

	remoteOnly(t)
	for path, m := range rawModes(t, dir) {
		if m != [2]bool{false, false} {
			t.Errorf("remote file systems only: %s: local directory, raw open = %v", path, m)
		}
	}
}

// TestRawMountPoints mounts file systems inside the tree: a directory of
// another local file system is read raw, one of a file system that does
// not count as local is not, nor is anything below it, and neither is a
// file bind-mounted from there. Needs the right to mount (root).
func TestRawMountPoints(t *testing.T) {
	top := t.TempDir()
	mount := func(source, target, fstype string, flags uintptr) {
		t.Helper()
		if err := unix.Mount(source, target, fstype, flags, ""); err != nil {
			t.Skipf("mount %s on %s: %v", fstype, target, err)
		}
		t.Cleanup(func() { unix.Unmount(target, unix.MNT_DETACH) })
	}
	// The tree is a tmpfs of its own, whatever the temporary directory is.
	dir := filepath.Join(top, "tree")
	other := filepath.Join(top, "other")
	for _, d := range []string{dir, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mount("tmpfs", dir, "tmpfs", 0)
	mount("ramfs", other, "ramfs", 0)
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "top.txt"), "top.txt\n")
	write(filepath.Join(dir, "bound.txt"), "hidden by the mount\n")
	write(filepath.Join(other, "bound.txt"), "bound.txt\n")
	mount(filepath.Join(other, "bound.txt"), filepath.Join(dir, "bound.txt"), "", unix.MS_BIND)
	for _, d := range []string{"tmp", "ram"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mount("tmpfs", filepath.Join(dir, "tmp"), "tmpfs", 0)
	mount("ramfs", filepath.Join(dir, "ram"), "ramfs", 0)
	write(filepath.Join(dir, "tmp/in.txt"), "tmp/in.txt\n")
	write(filepath.Join(dir, "ram/in.txt"), "ram/in.txt\n")
	// A local file system again below the one that is not.
	if err := os.Mkdir(filepath.Join(dir, "ram/tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	mount("tmpfs", filepath.Join(dir, "ram/tmp"), "tmpfs", 0)
	write(filepath.Join(dir, "ram/tmp/deep.txt"), "ram/tmp/deep.txt\n")

	old := localMagic
	localMagic = func(t int64) bool { return t == unix.TMPFS_MAGIC } // ramfs is remote here
	t.Cleanup(func() { localMagic = old })
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !noXDevWorks(fd) {
		unix.Close(fd)
		t.Skip("openat2 with RESOLVE_NO_XDEV is refused here")
	}
	unix.Close(fd)

	got := rawModes(t, dir)
	want := map[string][2]bool{
		"top.txt":          {true, true},
		"bound.txt":        {true, false}, // a mount point in a local directory
		"tmp/in.txt":       {true, true},
		"ram/in.txt":       {false, false},
		"ram/tmp/deep.txt": {false, false}, // below a remote directory
	}
	keys := func(m map[string][2]bool) []string {
		var k []string
		for p := range m {
			k = append(k, p)
		}
		slices.Sort(k)
		return k
	}
	if !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("walked %v, want %v", keys(got), keys(want))
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: local directory, raw open = %v, want %v", p, got[p], w)
		}
	}
}
