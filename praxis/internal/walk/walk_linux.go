//go:build linux && !walkportable

package walk

import (
	"encoding/binary"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// dirFD is an open directory. Everything below it is opened relative to it
// with O_NOFOLLOW, one name at a time, so nothing outside it is reached.
type dirFD struct {
	fd int
	// local: the directory is on a local file system (see localFS), and
	// so are the files opened in it without crossing a mount point: they
	// are opened, read and closed with raw system calls.
	local bool
}

var noDir = dirFD{fd: -1}

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openStart opens start through root, which keeps it inside the workspace,
// and returns a descriptor of its own.
func openStart(root *os.Root, start string) (dirFD, error) {
	if start == "" {
		start = "."
	}
	f, err := root.Open(start)
	if err != nil {
		return noDir, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return noDir, err
	}
	if !fi.IsDir() {
		return noDir, &os.PathError{Op: "open", Path: start, Err: unix.ENOTDIR}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return noDir, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return noDir, err
	}
	if derr != nil {
		return noDir, derr
	}
	return dirFD{fd: fd, local: localFS(fd) && noXDevWorks(fd)}, nil
}

func (d dirFD) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// openDir opens the subdirectory name. Below a local directory it is
// opened without crossing a mount point; one that is a mount point is then
// opened as usual, and what is mounted there decides whether it is local.
func (d dirFD) openDir(name string) (dirFD, error) {
	if d.local {
		fd, err := openat2(d.fd, name, dirFlags, unix.RESOLVE_NO_XDEV)
		if err == nil {
			return dirFD{fd: fd, local: true}, nil
		}
		if !errors.Is(err, unix.EXDEV) {
			return noDir, err
		}
	}
	fd, err := openat(d.fd, name, dirFlags)
	if err != nil {
		return noDir, err
	}
	return dirFD{fd: fd, local: d.local && localFS(fd)}, nil
}

func openat(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

func openat2(dir int, name string, flags int, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolve}
	for {
		fd, err := unix.Openat2(dir, name, &how)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// readDir appends d's entries, less "." and "..", to out, using buf for the
// raw records.
func (d dirFD) readDir(buf []byte, out []entry) ([]entry, error) {
	for {
		n, err := unix.Getdents(d.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(buf[:n], out)
	}
}

// parseDirents decodes linux_dirent64 records: inode (8 bytes), offset (8),
// record length (2), type (1), then the NUL-terminated name.
func parseDirents(b []byte, out []entry) []entry {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		rec := b[19:reclen]
		typ := b[18]
		b = b[reclen:]
		n := 0
		for n < len(rec) && rec[n] != 0 {
			n++
		}
		name := rec[:n]
		if n == 0 || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.') {
			continue
		}
		out = append(out, entry{name: string(name), typ: direntType(typ)})
	}
	return out
}

func direntType(t uint8) entryType {
	switch t {
	case unix.DT_REG:
		return typeFile
	case unix.DT_DIR:
		return typeDir
	case unix.DT_LNK:
		return typeSymlink
	case unix.DT_UNKNOWN:
		return typeUnknown
	}
	return typeOther
}

func modeType(mode uint32) entryType {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return typeFile
	case unix.S_IFDIR:
		return typeDir
	case unix.S_IFLNK:
		return typeSymlink
	}
	return typeOther
}

func (d dirFD) lstatType(name string) entryType {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return typeOther
	}
	return modeType(st.Mode)
}

func (d dirFD) modTime(name string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return st.Mtim.Nano(), nil
}

// readFile reads the regular file name into buf: whole, growing buf to
// fit, with to nil, else in pieces as File.Scan gives them. O_NONBLOCK
// keeps a FIFO swapped in after the directory was read from blocking the
// open.
//
// Most files are read in one system call besides the open and the close:
// the file is read into buf without asking its size first, and a read that
// stops short of the buffer's end, not at a page boundary, is the end of a
// regular file (Linux returns a short read from a regular file only at its
// end, or where its cached pages stop, which is a page boundary). Only a
// file that fills the buffer is stat'ed, to check that it is a regular file
// within max bytes and to size the buffer: a device or anything else that
// gives data without end is refused there. Anything else that is not a
// regular file either refuses the read (a directory, a FIFO with no data)
// or gives what an attacker who may swap it in could have written into a
// file anyway. An empty read is stat'ed too: a FIFO without a writer gives
// one. A file over limit bytes is ErrTooLarge.
func (d dirFD) readFile(name string, buf []byte, limit int64, to Pieces) ([]byte, error) {
	f, err := d.openFile(name)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, ErrNotRegular // a symlink swapped in
		}
		return nil, err
	}
	defer f.close()
	if cap(buf) == 0 {
		buf = make([]byte, 0, minReadBuf)
	}
	buf = buf[:0]
	size := int64(-1) // known once stat'ed
	var done int64    // bytes given to to
	for {
		if len(buf) == cap(buf) {
			if size < 0 {
				var st unix.Stat_t
				if err := unix.Fstat(f.fd, &st); err != nil {
					return nil, err
				}
				if st.Mode&unix.S_IFMT != unix.S_IFREG {
					return nil, ErrNotRegular
				}
				if st.Size > limit {
					return nil, ErrTooLarge
				}
				size = st.Size
				if int64(len(buf)) == size {
					return endRead(buf, to, true)
				}
			}
			if done+int64(len(buf)) > limit {
				return nil, ErrTooLarge
			}
			var ok bool
			if buf, ok = nextPiece(buf, to, &done); !ok {
				return buf, nil
			}
			if len(buf) == cap(buf) { // whole, or a line longer than buf
				need := len(buf) + 1
				if rest := int(size - done); to == nil && rest >= need {
					need = rest + 1 // room to see the end: a file may grow
				}
				grown := make([]byte, len(buf), max(need+need/8+512, 2*cap(buf)))
				copy(grown, buf)
				buf = grown
			}
		}
		n, err := f.read(buf[len(buf):cap(buf)])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EISDIR), errors.Is(err, unix.EAGAIN):
			return nil, ErrNotRegular // a directory or a FIFO swapped in
		case err != nil:
			return nil, err
		}
		buf = buf[:len(buf)+n]
		off := done + int64(len(buf)) // the offset read to
		if off > limit {
			return nil, ErrTooLarge
		}
		// Done at the end of the file: a read of nothing, the size the
		// stat gave, or a short read that is not at a page boundary.
		// Saving the read that would return 0 matters over thousands of
		// files.
		if n == 0 && off == 0 && size < 0 {
			// Empty: a FIFO without a writer reads so too.
			var st unix.Stat_t
			if err := unix.Fstat(f.fd, &st); err != nil {
				return nil, err
			}
			if st.Mode&unix.S_IFMT != unix.S_IFREG {
				return nil, ErrNotRegular
			}
			return endRead(buf, to, true)
		}
		if n == 0 || off == size || (size < 0 && len(buf) < cap(buf) && off%pageSize != 0) {
			return endRead(buf, to, done == 0)
		}
	}
}

// minReadBuf is the buffer readFile starts with when given none; pageSize
// is the granularity at which a regular file's read may stop short before
// its end.
const (
	minReadBuf = 16 << 10
	pageSize   = 4096
)
