//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// limitPrefix returns the bash commands that set l as both soft and hard
// limits, so that the command cannot raise them (without privilege), or
// stop the shell with status 126 when they cannot be set. The command's
// script follows them on the same line, so its line numbers are its own,
// and nothing of it runs before the limits are in place: bash parses a
// whole line before running any of it. A limit is never set above the one
// Praxis itself runs under.
func limitPrefix(l Limits) string {
	var b strings.Builder
	b.WriteString("ulimit")
	add := func(flag string, res int, v, unit int64) {
		if v <= 0 {
			return
		}
		var cur unix.Rlimit
		if unix.Getrlimit(res, &cur) == nil && cur.Max != unix.RLIM_INFINITY && cur.Max < uint64(v) {
			v = int64(cur.Max)
		}
		fmt.Fprintf(&b, " %s %d", flag, max(v/unit, 1))
	}
	add("-t", unix.RLIMIT_CPU, l.CPUSeconds, 1)
	add("-v", unix.RLIMIT_AS, l.AddressSpace, 1024)
	add("-f", unix.RLIMIT_FSIZE, l.FileSize, 1024)
	if l.Processes > 0 && os.Getuid() != 0 {
		// RLIMIT_NPROC counts every process of the user, so the command
		// gets its allowance on top of what the user already runs, with
		// some slack so that a command that fills it is also caught by the
		// group count, which then ends it. The kernel does not apply
		// RLIMIT_NPROC to root; there the group count alone holds.
		if n, err := userProcesses(os.Getuid()); err == nil {
			add("-u", unix.RLIMIT_NPROC, int64(n)+l.Processes+max(l.Processes/4, 16), 1)
		}
	}
	if b.Len() == len("ulimit") {
		return ""
	}
	b.WriteString(` 2>/dev/null || { echo "praxis: cannot set resource limits" >&2; exit 126; }; `)
	return b.String()
}

// procEntry is what /proc says of one process.
type procEntry struct {
	pid, pgrp int
	zombie    bool
}

// eachProc calls fn for every process /proc lists.
func eachProc(fn func(procEntry)) error {
	d, err := os.Open("/proc")
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 {
			continue
		}
		pgrp, _ := strconv.Atoi(f[2])
		e := procEntry{pid: pid, pgrp: pgrp, zombie: f[0] == "Z" || f[0] == "X"}
		fn(e)
	}
	return nil
}

// groupSize returns the number of live (not zombie) processes in process
// group pgid, leaving out pid except.
func groupSize(pgid, except int) (int, error) {
	n := 0
	err := eachProc(func(e procEntry) {
		if e.pgrp == pgid && !e.zombie && e.pid != except {
			n++
		}
	})
	return n, err
}

// userProcesses returns the number of processes owned by uid.
func userProcesses(uid int) (int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if _, err := strconv.Atoi(name); err != nil {
			continue
		}
		if fi, err := os.Stat("/proc/" + name); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
				n++
			}
		}
	}
	return n, nil
}

// terminate sends SIGTERM to process group pgid, waits up to grace for it
// to empty, then kills what is left.
func terminate(pgid int, grace time.Duration) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if n, err := groupSize(pgid, -1); err == nil && n == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	killGroup(pgid)
}

// killGroup sends SIGKILL to process group pgid until it holds no live
// process: a process forking while the signal is delivered may add one.
func killGroup(pgid int) {
	for range 200 {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err == syscall.ESRCH {
			return
		}
		if n, err := groupSize(pgid, -1); err != nil || n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// groupWatch enforces the process limit on a group by counting its
// processes. A full count reads every /proc entry, so it runs only when the
// system's count of tasks (one small read of /proc/loadavg) has grown enough
// to matter since the last count, and at least once a second.
type groupWatch struct {
	pgid, limit int
	lastTasks   int // system tasks at the last full count
	lastGroup   int // the group's processes at the last full count
	lastFull    time.Time
}

// over reports whether the group holds more processes than the limit.
func (w *groupWatch) over() bool {
	tasks, err := systemTasks()
	if err == nil && tasks-w.lastTasks <= (w.limit-w.lastGroup)/2 && time.Since(w.lastFull) < time.Second {
		return false
	}
	n, err := groupSize(w.pgid, -1)
	if err != nil {
		return false
	}
	w.lastTasks, w.lastGroup, w.lastFull = tasks, n, time.Now()
	return n > w.limit
}

// systemTasks returns the number of tasks (processes and threads) on the
// system, from the fourth field of /proc/loadavg ("running/total").
func systemTasks() (int, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0, fmt.Errorf("/proc/loadavg: unexpected %q", b)
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, fmt.Errorf("/proc/loadavg: unexpected %q", b)
	}
	return strconv.Atoi(total)
}
