package praxis

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Workspace is the directory tree the engine may touch. Every file
// operation goes through an os.Root opened on it, so no path, symlink or
// race can reach outside.
type Workspace struct {
	dir  string // absolute and clean, as given
	real string // dir with symlinks resolved
	root *os.Root
}

// OpenWorkspace opens dir as a workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", abs, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", abs, err)
	}
	return &Workspace{dir: abs, real: real, root: root}, nil
}

// Dir returns the workspace's absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Root returns the os.Root every file operation goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// Close releases the workspace's root.
func (w *Workspace) Close() error { return w.root.Close() }

// Rel maps a caller's path to a clean, slash-separated path relative to the
// workspace ("." for the workspace itself). Relative paths are taken from
// the workspace root; absolute paths must lie inside it. Rel is lexical:
// symlinks are checked when the path is used.
func (w *Workspace) Rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", Errorf(EInvalidArgs, "path %q contains a NUL byte", p)
	}
	if p == "" {
		return ".", nil
	}
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		for _, base := range []string{w.dir, w.real} {
			if clean == base {
				return ".", nil
			}
			if rel, ok := strings.CutPrefix(clean, base+string(filepath.Separator)); ok {
				return filepath.ToSlash(rel), nil
			}
		}
		return "", w.outside(p)
	}
	clean := filepath.Clean(p)
	if clean != "." && !filepath.IsLocal(clean) {
		return "", w.outside(p)
	}
	return filepath.ToSlash(clean), nil
}

func (w *Workspace) outside(p string) *Error {
	return Errorf(EPathOutside, "%s is outside the workspace", p).
		WithDetail("workspace root: " + w.dir + "\nUse a path relative to it, or an absolute path inside it.")
}

// fail maps an operating-system error on rel to an *Error.
func (w *Workspace) fail(rel string, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	switch {
	case isEscape(err):
		return Errorf(EPathOutside, "%s leads outside the workspace (through a symlink or ..)", rel).
			WithDetail("workspace root: " + w.dir)
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(ENotFound, "%s does not exist", rel)
	case errors.Is(err, syscall.ENOTDIR):
		return Errorf(ENotDir, "%s: a part of the path is a file, not a directory", rel)
	case errors.Is(err, syscall.EISDIR):
		return Errorf(EIsDir, "%s is a directory", rel)
	case errors.Is(err, syscall.ELOOP):
		return Errorf(EIO, "%s: too many levels of symbolic links", rel)
	case errors.Is(err, fs.ErrPermission):
		return Errorf(EIO, "%s: permission denied", rel)
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.As(err, &pathErr):
		err = pathErr.Err
	case errors.As(err, &linkErr):
		err = linkErr.Err
	}
	return Errorf(EIO, "%s: %v", rel, err)
}

// isEscape reports whether err is os.Root's refusal of a path that leaves
// the root. The os package does not export that error, so it is recognised
// by its text.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// ReadFile reads the regular file rel, refusing directories, FIFOs,
// sockets and devices without blocking on them, and files over max bytes.
//
// os.Root walks a path one directory at a time, opening each, on every
// operation; the file is looked at and opened in its own directory, opened
// once as a root of its own, so that the walk is not done twice. A path
// that leaves that directory (a symbolic link to elsewhere) is then read
// through the workspace's root, which decides as it always does.
func (w *Workspace) ReadFile(rel string, max int64) ([]byte, fs.FileInfo, error) {
	dir, name := filepath.Split(rel)
	if dir == "" {
		return w.readIn(w.root, name, rel, max)
	}
	sub, err := w.root.OpenRoot(dir)
	if err != nil {
		return nil, nil, w.fail(rel, err)
	}
	data, fi, err := w.readIn(sub, name, rel, max)
	sub.Close()
	if CodeOf(err) == EPathOutside {
		return w.readIn(w.root, rel, rel, max)
	}
	return data, fi, err
}

// readIn reads the regular file name of r, which is rel in the workspace
// (see ReadFile).
func (w *Workspace) readIn(r *os.Root, name, rel string, max int64) ([]byte, fs.FileInfo, error) {
	fi, err := r.Stat(name)
	if err != nil {
		return nil, nil, w.fail(rel, err)
	}
	if err := checkRegular(rel, fi); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK: if a FIFO is swapped in after the Stat, opening it must
	// not wait for a writer. It has no effect on regular files.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, w.fail(rel, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, nil, w.fail(rel, err)
	}
	if err := checkRegular(rel, fi); err != nil {
		return nil, nil, err
	}
	if fi.Size() > max {
		return nil, fi, tooLarge(rel, fi.Size(), max)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		if int64(len(data)) > max {
			return nil, fi, tooLarge(rel, int64(len(data)), max)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		switch {
		case errors.Is(err, io.EOF):
			return data, fi, nil
		case err != nil:
			return nil, fi, w.fail(rel, err)
		case n > 0 && int64(len(data)) == fi.Size() && len(data) < cap(data):
			// A read that stops short of the buffer exactly at the size
			// the file had when opened: its end, without a read of
			// nothing more to say so. (A short read elsewhere, as some
			// file systems make, reads on.)
			return data, fi, nil
		}
	}
}

func checkRegular(rel string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return Errorf(EIsDir, "%s is a directory", rel).WithDetail("Use list_dir to see what it holds.")
	case !fi.Mode().IsRegular():
		return Errorf(ENotRegular, "%s is not a regular file (%s)", rel, fileKind(fi.Mode()))
	}
	return nil
}

func tooLarge(rel string, size, max int64) error {
	return Errorf(ETooLarge, "%s is %d bytes, over the limit of %d bytes", rel, size, max)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	}
	return "an irregular file"
}

// resolveLinks follows rel's final component while it is a symlink and
// returns the workspace-relative path of what it names, so that a write
// replaces the file a link points to rather than the link. A link that
// leads outside is E_PATH_OUTSIDE. Directories on the way are left to
// os.Root, which follows them only while they stay inside.
func (w *Workspace) resolveLinks(rel string) (string, error) {
	for range 40 {
		fi, err := w.root.Lstat(rel)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return rel, nil // a missing file is created; other errors surface on use
		}
		target, err := w.root.Readlink(rel)
		if err != nil {
			return "", w.fail(rel, err)
		}
		dir, err := filepath.EvalSymlinks(filepath.Join(w.real, filepath.FromSlash(path.Dir(rel))))
		if err != nil {
			return "", w.fail(rel, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		next, err := w.Rel(target)
		if err != nil {
			return "", Errorf(EPathOutside, "%s is a symlink to %s, outside the workspace", rel, target).
				WithDetail("workspace root: " + w.dir)
		}
		rel = next
	}
	return "", Errorf(EIO, "%s: too many levels of symbolic links", rel)
}
