package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// bwrapArgs returns the bwrap command line, up to and including "--", that
// runs a command in dir under the runner's policy.
//
// The command gets the host root read-only, a minimal /dev, its own /proc
// and PID namespace (so killing bwrap ends every process inside), a private
// /tmp, the Hide paths covered, the workspace and the Writable paths
// read-write, the ReadOnly paths
// read-only again (and not removable, nor movable with their directories),
// no capabilities, the seccomp filter (on fd seccompFD: see seccompFilter),
// and with the network off a network namespace holding only loopback. bwrap is not given --new-session: the
// runner already starts it in a session without a controlling terminal,
// and keeping the command in bwrap's process group lets the runner count
// and kill it from outside.
func (r *Runner) bwrapArgs(dir string) []string {
	p := r.policy
	args := []string{r.bwrap,
		"--die-with-parent",
		"--unshare-pid",
		"--unshare-ipc",
		"--unshare-uts",
		"--cap-drop", "ALL",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	}
	if p.networkOff() {
		args = append(args, "--unshare-net")
	}
	if r.filter != nil {
		args = append(args, "--seccomp", strconv.Itoa(seccompFD))
	}
	ws := realPath(p.Workspace)
	// Hidden paths are covered before the workspace is mounted, so that
	// hiding a directory that holds the workspace leaves the workspace
	// visible, and those inside the workspace after, so that it does not
	// uncover them.
	var hideInside []string
	for _, h := range p.Hide {
		h = expandHome(h)
		if !filepath.IsAbs(h) {
			continue
		}
		h = realPath(h)
		switch {
		case within(ws, h):
			hideInside = append(hideInside, h)
		case within(h, ws):
			// Left writable (an empty tmpfs that vanishes with the
			// sandbox) so that bwrap can make the workspace's mount point.
			args = append(args, "--tmpfs", h)
		default:
			args = hide(args, h)
		}
	}
	args = append(args, "--bind", ws, ws)
	for _, w := range p.Writable {
		if _, err := os.Stat(w); err == nil {
			w = realPath(w)
			args = append(args, "--bind", w, w)
		}
	}
	for _, h := range hideInside {
		args = hide(args, h)
	}
	pinned := make(map[string]bool)
	for _, ro := range p.ReadOnly {
		if !filepath.IsAbs(ro) {
			ro = filepath.Join(ws, ro)
		}
		if _, err := os.Lstat(ro); err != nil {
			continue
		}
		ro = realPath(ro)
		// Pin each directory between the workspace and the path by
		// binding it onto itself (it stays writable): a mount point
		// cannot be renamed, so no rename can carry the path away.
		if rel, err := filepath.Rel(ws, filepath.Dir(ro)); err == nil && filepath.IsLocal(rel) {
			dir := ws
			for _, part := range strings.Split(rel, string(filepath.Separator)) {
				dir = filepath.Join(dir, part)
				if !pinned[dir] {
					pinned[dir] = true
					args = append(args, "--bind", dir, dir)
				}
			}
		}
		args = append(args, "--ro-bind", ro, ro)
	}
	return append(args, "--chdir", dir, "--")
}

// realPath returns p with symlinks resolved, or p when that fails.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// seccompFD is the descriptor on which bwrap reads the seccomp filter: the
// first of exec.Cmd's ExtraFiles.
const seccompFD = 3

// probeBwrap checks that bwrap (found by New) can build the sandbox the
// policy asks for, by running true in it. Its error names what is missing.
func (r *Runner) probeBwrap() error {
	path := r.bwrap
	ws := realPath(r.policy.Workspace)
	var err error
	if r.filter, err = seccompFilter(r.policy.UnixSockets); err != nil {
		return err
	}
	// The probe runs once in most processes, while a server idles: it
	// starts bwrap with os.StartProcess and gathers its output in a file in
	// memory, without the goroutines, pipes and threads of os/exec, whose
	// code and stacks stayed resident (0.3 MiB of an idle server).
	out, err := probeOutput()
	if err != nil {
		return fmt.Errorf("%w: cannot probe bwrap: %v", ErrUnavailable, err)
	}
	defer out.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("%w: cannot probe bwrap: %v", ErrUnavailable, err)
	}
	defer null.Close()
	filter, err := filterFile(r.filter)
	if err != nil {
		return err
	}
	defer filter.Close()
	args := append(r.bwrapArgs(ws), "true")
	proc, err := os.StartProcess(path, args, &os.ProcAttr{Files: []*os.File{null, out, out, filter}})
	var st *os.ProcessState
	if err == nil {
		kill := time.AfterFunc(10*time.Second, func() { proc.Kill() })
		st, err = proc.Wait()
		kill.Stop()
	}
	if err == nil && !st.Success() {
		err = errors.New(st.String())
	}
	if err != nil {
		b := make([]byte, 4096)
		n, _ := out.ReadAt(b, 0)
		msg := strings.TrimSpace(string(b[:n]))
		if msg == "" {
			msg = err.Error()
		}
		hint := ""
		if strings.Contains(msg, "namespace") || strings.Contains(msg, "uid map") ||
			strings.Contains(msg, "not permitted") || strings.Contains(msg, "Permission denied") {
			hint = usernsHint()
		}
		return fmt.Errorf("%w: bwrap cannot build its sandbox on this machine: %s%s", ErrUnavailable, msg, hint)
	}
	return nil
}

// usernsHint explains the usual reason bwrap fails: the kernel does not let
// unprivileged users create user namespaces.
func usernsHint() string {
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	var why []string
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		why = append(why, "user namespaces are disabled (sysctl user.max_user_namespaces = 0)")
	}
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		why = append(why, "unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone = 0)")
	}
	if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		why = append(why, "AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns = 1; an AppArmor profile for bwrap lifts it)")
	}
	if len(why) == 0 {
		return " (bwrap needs user namespaces, or to run as root; inside a container, the container may forbid creating namespaces)"
	}
	return " (" + strings.Join(why, "; ") + ")"
}

// expandHome replaces a leading "~/" with the home directory.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// hide appends the bwrap arguments that cover path, if it exists: an empty
// read-only directory over a directory, an empty file over a file.
func hide(args []string, path string) []string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return args
	case fi.IsDir():
		return append(args, "--tmpfs", path, "--remount-ro", path)
	default:
		return append(args, "--ro-bind", "/dev/null", path)
	}
}

// within reports whether path is dir or lies inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// filterFile returns a pipe from which bwrap reads prog, written whole.
func filterFile(prog []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if _, err := w.Write(prog); err != nil { // far below a pipe's buffer
		r.Close()
		return nil, err
	}
	return r, nil
}
