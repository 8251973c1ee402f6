//go:build !linux || walkportable

package walk

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// dirFD names a directory through the workspace's os.Root, which keeps
// every path inside it. This portable form is slower than the Linux one,
// which works on descriptors.
type dirFD struct {
	root *os.Root
	rel  string // "." for the root
}

var noDir = dirFD{}

func openStart(root *os.Root, start string) (dirFD, error) {
	if start == "" {
		start = "."
	}
	fi, err := root.Stat(start)
	if err != nil {
		return noDir, err
	}
	if !fi.IsDir() {
		return noDir, &os.PathError{Op: "open", Path: start, Err: syscall.ENOTDIR}
	}
	return dirFD{root, start}, nil
}

func (d dirFD) close() {}

func (d dirFD) path(name string) string {
	if d.rel == "." {
		return name
	}
	return d.rel + "/" + name
}

func (d dirFD) openDir(name string) (dirFD, error) {
	fi, err := d.root.Lstat(d.path(name))
	if err != nil {
		return noDir, err
	}
	if !fi.IsDir() {
		return noDir, &os.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return dirFD{d.root, d.path(name)}, nil
}

func (d dirFD) readDir(_ []byte, out []entry) ([]entry, error) {
	f, err := d.root.Open(d.rel)
	if err != nil {
		return out, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	for _, de := range des {
		out = append(out, entry{name: de.Name(), typ: modeType(de.Type())})
	}
	return out, err
}

func modeType(m fs.FileMode) entryType {
	switch {
	case m.IsRegular():
		return typeFile
	case m.IsDir():
		return typeDir
	case m&fs.ModeSymlink != 0:
		return typeSymlink
	}
	return typeOther
}

func (d dirFD) lstatType(name string) entryType {
	fi, err := d.root.Lstat(d.path(name))
	if err != nil {
		return typeOther
	}
	return modeType(fi.Mode())
}

func (d dirFD) modTime(name string) (int64, error) {
	fi, err := d.root.Lstat(d.path(name))
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}

func (d dirFD) readFile(name string, buf []byte, limit int64, to Pieces) ([]byte, error) {
	p := d.path(name)
	if fi, err := d.root.Lstat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	f, err := d.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > limit {
		return nil, ErrTooLarge
	}
	buf = buf[:0]
	var done int64 // bytes given to to
	for {
		if len(buf) == cap(buf) {
			var ok bool
			if buf, ok = nextPiece(buf, to, &done); !ok {
				return buf, nil
			}
			if len(buf) == cap(buf) { // whole, or a line longer than buf
				buf = append(buf, 0)[:len(buf)]
			}
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if done+int64(len(buf)) > limit {
			return nil, ErrTooLarge
		}
		if errors.Is(err, io.EOF) {
			return endRead(buf, to, done == 0)
		}
		if err != nil {
			return nil, err
		}
	}
}
