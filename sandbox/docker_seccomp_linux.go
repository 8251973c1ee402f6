//go:build linux

package sandbox

import (
	"encoding/json"
	"slices"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// setIDCalls are the system calls that can give a file the setuid or
// setgid bit, with the index of their mode argument.
var setIDCalls = map[string]uint{
	"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2,
	"open": 2, "openat": 3, "creat": 1,
	"mknod": 1, "mknodat": 2,
}

// dockerSeccomp returns the seccomp profile of the session's container,
// as the JSON the engine takes in a security option: the engine's own
// default profile, except that the calls of setIDCalls are allowed only
// with a mode that has neither the setuid nor the setgid bit (the others
// fail with EPERM, the profile's default), and openat2, whose mode the
// filter cannot see, fails with ENOSYS, so that programs fall back to
// openat. The container's commands thus cannot leave a setuid or setgid
// file in the workspace, where it would stay on the host: as root, the
// owner of their own files, they could otherwise.
func dockerSeccomp() (string, error) {
	prof := seccomp.DefaultProfile()
	for _, sc := range prof.Syscalls {
		if sc.Action == specs.ActAllow {
			sc.Names = slices.DeleteFunc(sc.Names, func(name string) bool {
				_, setID := setIDCalls[name]
				return setID || name == "openat2"
			})
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range setIDCalls {
			if !yield(name) {
				return
			}
		}
	}) {
		prof.Syscalls = append(prof.Syscalls, &seccomp.Syscall{LinuxSyscall: specs.LinuxSyscall{
			Names:  []string{name},
			Action: specs.ActAllow,
			Args: []specs.LinuxSeccompArg{{
				Index: setIDCalls[name], Op: specs.OpMaskedEqual,
				Value: unix.S_ISUID | unix.S_ISGID, ValueTwo: 0,
			}},
		}})
	}
	nosys := uint(unix.ENOSYS)
	prof.Syscalls = append(prof.Syscalls, &seccomp.Syscall{LinuxSyscall: specs.LinuxSyscall{
		Names: []string{"openat2"}, Action: specs.ActErrno, ErrnoRet: &nosys,
	}})
	b, err := json.Marshal(prof)
	return string(b), err
}
