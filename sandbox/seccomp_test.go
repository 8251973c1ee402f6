//go:build linux

package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// call is one system call as the filter sees it.
type call struct {
	arch uint32
	nr   uint32
	args [6]uint32 // the low halves, which are all the filter reads
}

// seccompData lays c out as struct seccomp_data for the bpf package's
// virtual machine, which loads words big-endian: each word the filter reads
// is stored that way at its offset.
func seccompData(c call) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], c.nr)
	binary.BigEndian.PutUint32(b[offArch:], c.arch)
	for i, a := range c.args {
		binary.BigEndian.PutUint32(b[offArgs+8*i:], a)
	}
	return b
}

// The filter, run in a BPF virtual machine, gives each ABI's calls the
// answer it should, for both machines it is built for: the native table,
// the compat tables (x32, i386, arm), another architecture.
func TestSeccompProgram(t *testing.T) {
	const (
		allow = retAllow
		eperm = retErrno | uint32(unix.EPERM)
		enosy = retErrno | uint32(unix.ENOSYS)
		kill  = retKillProcess
	)
	suid := uint32(0o4755)
	tests := []struct {
		goarch  string
		sockets bool
		name    string
		c       call
		want    uint32
	}{
		{"amd64", false, "socket AF_UNIX", call{auditArchX86_64, 41, [6]uint32{unix.AF_UNIX, unix.SOCK_STREAM}}, eperm},
		{"amd64", false, "socket AF_INET", call{auditArchX86_64, 41, [6]uint32{unix.AF_INET, unix.SOCK_STREAM}}, allow},
		{"amd64", true, "socket AF_UNIX, sockets on", call{auditArchX86_64, 41, [6]uint32{unix.AF_UNIX}}, allow},
		{"amd64", false, "socketpair AF_UNIX", call{auditArchX86_64, 53, [6]uint32{unix.AF_UNIX}}, allow},
		{"amd64", false, "x32 socket AF_UNIX", call{auditArchX86_64, x32SyscallBit | 41, [6]uint32{unix.AF_UNIX}}, eperm},
		{"amd64", false, "i386 socket AF_UNIX", call{auditArchI386, 359, [6]uint32{unix.AF_UNIX}}, eperm},
		{"amd64", false, "i386 socketcall SYS_SOCKET", call{auditArchI386, 102, [6]uint32{1}}, eperm},
		{"amd64", false, "i386 socketcall SYS_CONNECT", call{auditArchI386, 102, [6]uint32{3}}, allow},
		{"amd64", true, "i386 socketcall SYS_SOCKET, sockets on", call{auditArchI386, 102, [6]uint32{1}}, allow},
		{"amd64", false, "chmod setuid", call{auditArchX86_64, 90, [6]uint32{0, suid}}, eperm},
		{"amd64", true, "chmod setuid, sockets on", call{auditArchX86_64, 90, [6]uint32{0, suid}}, eperm},
		{"amd64", false, "chmod setgid", call{auditArchX86_64, 90, [6]uint32{0, 0o2755}}, eperm},
		{"amd64", false, "chmod plain", call{auditArchX86_64, 90, [6]uint32{0, 0o755}}, allow},
		{"amd64", false, "fchmodat setuid", call{auditArchX86_64, 268, [6]uint32{0, 0, suid}}, eperm},
		{"amd64", false, "fchmodat2 setuid", call{auditArchX86_64, 452, [6]uint32{0, 0, suid}}, eperm},
		{"amd64", false, "openat creating setuid", call{auditArchX86_64, 257, [6]uint32{0, 0, unix.O_CREAT, suid}}, eperm},
		{"amd64", false, "openat plain", call{auditArchX86_64, 257, [6]uint32{0, 0, unix.O_CREAT, 0o644}}, allow},
		{"amd64", false, "mknod setuid", call{auditArchX86_64, 133, [6]uint32{0, unix.S_IFREG | suid}}, eperm},
		{"amd64", false, "x32 chmod setuid", call{auditArchX86_64, x32SyscallBit | 90, [6]uint32{0, suid}}, eperm},
		{"amd64", false, "i386 chmod setuid", call{auditArchI386, 15, [6]uint32{0, suid}}, eperm},
		{"amd64", false, "i386 fchmodat setuid", call{auditArchI386, 306, [6]uint32{0, 0, suid}}, eperm},
		{"amd64", false, "openat2", call{auditArchX86_64, 437, [6]uint32{}}, enosy},
		{"amd64", false, "io_uring_setup", call{auditArchX86_64, 425, [6]uint32{}}, enosy},
		{"amd64", false, "i386 io_uring_setup", call{auditArchI386, 425, [6]uint32{}}, enosy},
		{"amd64", false, "write", call{auditArchX86_64, 1, [6]uint32{1}}, allow},
		{"amd64", false, "an arm64 call on amd64", call{auditArchAArch64, 198, [6]uint32{unix.AF_UNIX}}, kill},
		{"arm64", false, "socket AF_UNIX", call{auditArchAArch64, 198, [6]uint32{unix.AF_UNIX}}, eperm},
		{"arm64", false, "socket AF_INET6", call{auditArchAArch64, 198, [6]uint32{unix.AF_INET6}}, allow},
		{"arm64", false, "arm socket AF_UNIX", call{auditArchARM, 281, [6]uint32{unix.AF_UNIX}}, eperm},
		{"arm64", false, "fchmodat setuid", call{auditArchAArch64, 53, [6]uint32{0, 0, suid}}, eperm},
		{"arm64", false, "fchmod setuid", call{auditArchAArch64, 52, [6]uint32{0, suid}}, eperm},
		{"arm64", false, "openat creating setgid", call{auditArchAArch64, 56, [6]uint32{0, 0, 0o100, 0o2755}}, eperm},
		{"arm64", false, "mknodat setuid", call{auditArchAArch64, 33, [6]uint32{0, 0, unix.S_IFREG | suid}}, eperm},
		{"arm64", false, "arm chmod setuid", call{auditArchARM, 15, [6]uint32{0, suid}}, eperm},
		{"arm64", false, "x86_64 call on arm64", call{auditArchX86_64, 41, [6]uint32{unix.AF_UNIX}}, kill},
		{"arm64", false, "io_uring_enter", call{auditArchAArch64, 426, [6]uint32{}}, enosy},
	}
	for _, tt := range tests {
		t.Run(tt.goarch+"/"+tt.name, func(t *testing.T) {
			prog, err := seccompProgram(tt.goarch, tt.sockets)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := bpf.NewVM(prog)
			if err != nil {
				t.Fatal(err)
			}
			got, err := vm.Run(seccompData(tt.c))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != tt.want {
				t.Errorf("got %#x, want %#x", uint32(got), tt.want)
			}
		})
	}
	if _, err := seccompProgram("riscv64", false); err == nil {
		t.Error("a filter for an architecture without rules")
	}
}
