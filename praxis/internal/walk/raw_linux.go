//go:build linux && !walkportable

package walk

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A grep opens, reads and closes every file of a tree: three system calls
// a file, tens of thousands a search. Through the runtime's system call
// path, a goroutine in a call lets go of its processor, and the runtime's
// monitor hands a processor held in a call for more than 20 µs to another
// thread, waking it. Over a search, that hand-off and the monitor's own
// wake-ups cost 10-15% of the time on two CPUs.
//
// Raw system calls skip all of that and keep the processor, so the Go
// scheduler and the garbage collector's stop-the-world wait for a raw call
// to return. That is safe only for a call that cannot hang: a file on a
// local file system, whose read waits at worst for its disk. A file on a
// network or FUSE file system, whose server may never answer, is read
// through the runtime as before. So raw calls are made only in directories
// whose file system is local, and only for files opened with
// RESOLVE_NO_XDEV: a name that is a mount point (a bind-mounted file, a
// mounted directory) fails with EXDEV before anything of the mounted file
// system is called, and is then opened the usual way.

// localFS reports whether fd's file system is one whose reads cannot hang
// on a server: a local disk or memory file system.
func localFS(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	return localMagic(int64(st.Type))
}

// localMagic reports whether a statfs(2) file system type is local.
var localMagic = func(t int64) bool {
	switch t {
	case unix.EXT4_SUPER_MAGIC, // also ext2 and ext3
		unix.XFS_SUPER_MAGIC,
		unix.BTRFS_SUPER_MAGIC,
		unix.TMPFS_MAGIC,
		unix.RAMFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC,
		unix.F2FS_SUPER_MAGIC,
		unix.SQUASHFS_MAGIC,
		unix.BCACHEFS_SUPER_MAGIC,
		0x2fc12fc1: // ZFS
		return true
	}
	return false
}

// noXDevWorks reports whether openat2 with RESOLVE_NO_XDEV is there: not
// before Linux 5.6, and a seccomp filter may refuse it.
func noXDevWorks(dir int) bool {
	fd, err := openat2(dir, ".", dirFlags, unix.RESOLVE_NO_XDEV)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// file is an open regular file, read with raw system calls if raw.
type file struct {
	fd  int
	raw bool
}

// fileFlags open a file without following a link, and without waiting on
// a FIFO swapped in after the directory was read.
const fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// openFile opens the file name in d.
func (d dirFD) openFile(name string) (file, error) {
	if d.local {
		fd, err := rawOpenNoXDev(d.fd, name)
		if err == nil {
			return file{fd: fd, raw: true}, nil
		}
		if !errors.Is(err, unix.EXDEV) {
			return file{}, err
		}
	}
	fd, err := openat(d.fd, name, fileFlags)
	return file{fd: fd}, err
}

func rawOpenNoXDev(dir int, name string) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	how := unix.OpenHow{Flags: fileFlags, Resolve: unix.RESOLVE_NO_XDEV}
	for {
		r, _, errno := unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dir), uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		switch errno {
		case 0:
			return int(r), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}

func (f file) read(b []byte) (int, error) {
	if !f.raw {
		return unix.Read(f.fd, b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	r, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(f.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

func (f file) close() {
	if f.raw {
		unix.RawSyscall(unix.SYS_CLOSE, uintptr(f.fd), 0, 0)
		return
	}
	unix.Close(f.fd)
}
