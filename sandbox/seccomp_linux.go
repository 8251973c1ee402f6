//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Seccomp return actions and the layout of struct seccomp_data
// (linux/seccomp.h).
const (
	retAllow       = 0x7fff0000
	retErrno       = 0x00050000
	retKillProcess = 0x80000000

	offNr   = 0
	offArch = 4
	offArgs = 16 // args[i] at offArgs+8*i; on little-endian machines its low 32 bits come first

	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAArch64 = 0xc00000b7
	auditArchARM     = 0x40000028

	x32SyscallBit = 0x40000000

	setIDBits = unix.S_ISUID | unix.S_ISGID
)

// ruleKind is what a rule checks of a system call.
type ruleKind int

const (
	refuse     ruleKind = iota // always refused
	unixSocket                 // refused when argument arg is AF_UNIX
	setID                      // refused when the mode in argument arg has setuid or setgid
	socketCall                 // socketcall(SYS_SOCKET, ...): the domain is behind a pointer, so refused whole
)

// rule refuses one system call, or some of its uses, with errno.
type rule struct {
	nr    uint32
	kind  ruleKind
	arg   int
	errno unix.Errno
}

// abi is one system-call table the kernel accepts from a process of this
// machine: its audit architecture and the rules for its numbers.
type abi struct {
	arch  uint32
	mask  uint32 // applied to the number first (x32 calls carry a flag bit)
	rules []rule
}

// syscallRules returns the rules for each ABI a process on this machine
// can use: amd64 with its x32 and i386 compat tables, arm64 with its arm
// compat table. Both must be covered, or a 32-bit program would pass
// through numbers the filter does not look at.
//
// What is refused: creating Unix-domain sockets (unless unixSockets),
// setting the setuid or setgid bit (chmod family, creating a file or node
// with it), and the calls that would do either out of the filter's sight:
// io_uring (which opens files and sockets itself) and openat2 (whose mode
// is behind a pointer; callers fall back to openat on ENOSYS).
func syscallRules(goarch string, unixSockets bool) ([]abi, error) {
	type nrs struct {
		socket, socketcall                      int // -1 where the table has none
		open, creat, openat, chmod, fchmod, fch int
		mknod, mknodat                          int
	}
	build := func(n nrs) []rule {
		var rs []rule
		add := func(nr int, kind ruleKind, arg int, errno unix.Errno) {
			if nr >= 0 {
				rs = append(rs, rule{uint32(nr), kind, arg, errno})
			}
		}
		if !unixSockets {
			add(n.socket, unixSocket, 0, unix.EPERM)
			add(n.socketcall, socketCall, 0, unix.EPERM)
		}
		add(n.open, setID, 2, unix.EPERM)
		add(n.creat, setID, 1, unix.EPERM)
		add(n.openat, setID, 3, unix.EPERM)
		add(n.chmod, setID, 1, unix.EPERM)
		add(n.fchmod, setID, 1, unix.EPERM)
		add(n.fch, setID, 2, unix.EPERM)
		add(452, setID, 2, unix.EPERM) // fchmodat2, the same number in every table
		add(n.mknod, setID, 1, unix.EPERM)
		add(n.mknodat, setID, 2, unix.EPERM)
		add(437, refuse, 0, unix.ENOSYS) // openat2
		for nr := 425; nr <= 427; nr++ { // io_uring_setup, _enter, _register
			add(nr, refuse, 0, unix.ENOSYS)
		}
		return rs
	}
	switch goarch {
	case "amd64":
		return []abi{
			{auditArchX86_64, ^uint32(x32SyscallBit), build(nrs{socket: 41, socketcall: -1,
				open: 2, creat: 85, openat: 257, chmod: 90, fchmod: 91, fch: 268, mknod: 133, mknodat: 259})},
			{auditArchI386, ^uint32(0), build(nrs{socket: 359, socketcall: 102,
				open: 5, creat: 8, openat: 295, chmod: 15, fchmod: 94, fch: 306, mknod: 14, mknodat: 297})},
		}, nil
	case "arm64":
		return []abi{
			{auditArchAArch64, ^uint32(0), build(nrs{socket: 198, socketcall: -1,
				open: -1, creat: -1, openat: 56, chmod: -1, fchmod: 52, fch: 53, mknod: -1, mknodat: 33})},
			{auditArchARM, ^uint32(0), build(nrs{socket: 281, socketcall: -1,
				open: 5, creat: 8, openat: 322, chmod: 15, fchmod: 94, fch: 333, mknod: 14, mknodat: 324})},
		}, nil
	}
	return nil, fmt.Errorf("%w: the seccomp filter of isolation bwrap is built for amd64 and arm64, not %s", ErrUnavailable, goarch)
}

// seccompFilter returns the classic BPF program bwrap installs with
// --seccomp, for this machine (see seccompProgram), in the kernel's struct
// sock_filter layout and this machine's byte order.
func seccompFilter(unixSockets bool) ([]byte, error) {
	prog, err := seccompProgram(runtime.GOARCH, unixSockets)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}

// seccompProgram returns the filter for a machine of architecture goarch:
// for each ABI of syscallRules, its rules, then allow; a call from any
// other architecture kills the process, since its numbers mean other
// calls.
func seccompProgram(goarch string, unixSockets bool) ([]bpf.Instruction, error) {
	abis, err := syscallRules(goarch, unixSockets)
	if err != nil {
		return nil, err
	}
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: offArch, Size: 4}}
	for _, a := range abis {
		block := abiBlock(a)
		if len(block) > 255 {
			return nil, fmt.Errorf("seccomp: %d instructions for arch %#x, more than a jump can skip", len(block), a.arch)
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.arch, SkipFalse: uint8(len(block))})
		prog = append(prog, block...)
	}
	return append(prog, bpf.RetConstant{Val: retKillProcess}), nil
}

// abiBlock returns the instructions of one ABI's rules. Each rule loads
// the call number and skips its body when the number differs; a body that
// does not refuse falls through to the next rule, which loads the number
// again. The block ends by allowing the call.
func abiBlock(a abi) []bpf.Instruction {
	var out []bpf.Instruction
	errno := func(e unix.Errno) bpf.Instruction { return bpf.RetConstant{Val: retErrno | uint32(e)} }
	for _, r := range a.rules {
		var body []bpf.Instruction
		arg := bpf.LoadAbsolute{Off: uint32(offArgs + 8*r.arg), Size: 4}
		switch r.kind {
		case refuse:
			body = []bpf.Instruction{errno(r.errno)}
		case unixSocket:
			body = []bpf.Instruction{arg, bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipFalse: 1}, errno(r.errno)}
		case socketCall:
			const sysSocket = 1 // SYS_SOCKET of linux/net.h
			body = []bpf.Instruction{arg, bpf.JumpIf{Cond: bpf.JumpEqual, Val: sysSocket, SkipFalse: 1}, errno(r.errno)}
		case setID:
			body = []bpf.Instruction{arg, bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: setIDBits, SkipFalse: 1}, errno(r.errno)}
		}
		out = append(out, bpf.LoadAbsolute{Off: offNr, Size: 4})
		if a.mask != ^uint32(0) {
			out = append(out, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: a.mask})
		}
		out = append(out, bpf.JumpIf{Cond: bpf.JumpEqual, Val: r.nr, SkipFalse: uint8(len(body))})
		out = append(out, body...)
	}
	return append(out, bpf.RetConstant{Val: retAllow})
}
