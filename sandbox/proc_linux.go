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
	pid, ppid, pgrp, sid int
	start                uint64 // start time in clock ticks after boot: a pid and its start name one process
	zombie               bool
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
		if e, ok := readStat(pid); ok {
			fn(e)
		}
	}
	return nil
}

// readStat reads /proc/pid/stat; false when the process is gone.
func readStat(pid int) (procEntry, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime ...; comm may hold spaces and parens.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return procEntry{}, false
	}
	e := procEntry{pid: pid, zombie: f[0] == "Z" || f[0] == "X"}
	e.ppid, _ = strconv.Atoi(f[1])
	e.pgrp, _ = strconv.Atoi(f[2])
	e.sid, _ = strconv.Atoi(f[3])
	e.start, _ = strconv.ParseUint(f[19], 10, 64)
	return e, true
}

// family is the set of processes of one command: its shell (the leader),
// every process in the leader's session, and every process descended from
// one of them, including those that left the session and those orphaned
// by their parent.
//
// An orphan goes to the nearest subreaper: bwrap's init or the shell in a
// PID namespace, where it stays a descendant of the leader; without a
// namespace, Praxis itself (adopt set). An orphan adopted by Praxis is a
// member when it was seen as one before, or when its session or process
// group was made by a member: a daemon's double fork keeps one or the
// other unless it was started, orphaned and moved to a session of its own
// between two scans.
type family struct {
	self   int  // Praxis's pid
	leader int  // the shell, or bwrap
	adopt  bool // Praxis is a subreaper: its children may be orphans of members
	limit  int  // most live members at once; 0: none
	known  map[int]uint64
	// ids holds every pid that was a member, and so may name a session
	// or process group made by one.
	ids      map[int]bool
	lastPID  int // the newest pid of the system at the last scan
	lastLive int
}

func newFamily(leader int, adopt bool, limit int) *family {
	return &family{self: os.Getpid(), leader: leader, adopt: adopt, limit: limit,
		known: make(map[int]uint64), ids: map[int]bool{leader: true}}
}

// scan reads /proc and returns the members, alive or zombie, the leader
// included while it is there.
func (f *family) scan() []procEntry {
	procs := make(map[int]procEntry)
	children := make(map[int][]int)
	eachProc(func(e procEntry) {
		procs[e.pid] = e
		children[e.ppid] = append(children[e.ppid], e.pid)
	})
	member := make(map[int]bool)
	var queue []int
	add := func(pid int) {
		if !member[pid] {
			member[pid] = true
			queue = append(queue, pid)
		}
	}
	for pid, e := range procs {
		// The leader's session and process group are the command's: no
		// one else can join them.
		if pid == f.leader || e.sid == f.leader || e.pgrp == f.leader {
			add(pid)
		}
	}
	for pid, start := range f.known {
		if e, ok := procs[pid]; ok && e.start == start {
			add(pid)
		} else {
			delete(f.known, pid)
		}
	}
	for {
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			for _, c := range children[pid] {
				add(c)
			}
		}
		if !f.adopt {
			break
		}
		for _, c := range children[f.self] {
			if e := procs[c]; c != f.leader && !member[c] && (f.ids[e.sid] || f.ids[e.pgrp]) {
				add(c)
			}
		}
		if len(queue) == 0 {
			break
		}
	}
	out := make([]procEntry, 0, len(member))
	for pid := range member {
		e := procs[pid]
		out = append(out, e)
		f.ids[pid] = true
		if pid != f.leader {
			f.known[pid] = e.start
		}
	}
	return out
}

// live returns the members that are not zombies, leaving out the leader
// when withLeader is false, and reaps the zombies Praxis adopted.
func (f *family) live(withLeader bool) []procEntry {
	var out []procEntry
	for _, e := range f.scan() {
		switch {
		case e.zombie:
			f.reap(e)
		case e.pid != f.leader || withLeader:
			out = append(out, e)
		}
	}
	return out
}

// reap collects an adopted orphan that has exited. The leader, which
// os/exec waits for, and processes that are not members are never
// touched, so no one else's exit status is taken.
func (f *family) reap(e procEntry) {
	if f.adopt && e.ppid == f.self && e.pid != f.leader {
		var ws unix.WaitStatus
		unix.Wait4(e.pid, &ws, unix.WNOHANG, nil)
	}
}

// over reports whether the family holds more live processes than its
// limit. A full scan is skipped while no process was created on the
// whole system since the last one (the newest pid in /proc/loadavg is
// unchanged): every process alive then was seen, so none can be missed.
func (f *family) over() bool {
	if last, err := lastPID(); err == nil && last == f.lastPID {
		return f.limit > 0 && f.lastLive > f.limit
	} else if err == nil {
		f.lastPID = last
	}
	f.lastLive = len(f.live(true))
	return f.limit > 0 && f.lastLive > f.limit
}

// signal sends sig to every live member and to the leader's process
// group, and returns how many members there were.
func (f *family) signal(sig syscall.Signal) int {
	members := f.live(true)
	syscall.Kill(-f.leader, sig)
	for _, e := range members {
		syscall.Kill(e.pid, sig)
	}
	return len(members)
}

// terminate sends SIGTERM to the family, waits up to grace for it to
// empty, then kills what is left.
func (f *family) terminate(grace time.Duration) {
	if f.signal(syscall.SIGTERM) == 0 {
		return
	}
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(f.live(true)) == 0 {
			return
		}
	}
	f.kill()
}

// kill sends SIGKILL to the family until it holds no live process: a
// process forking while the signal is delivered may add one.
func (f *family) kill() {
	for range 500 {
		if f.signal(syscall.SIGKILL) == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
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

// lastPID returns the pid most recently created on the system, the fifth
// field of /proc/loadavg.
func lastPID() (int, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 5 {
		return 0, fmt.Errorf("/proc/loadavg: unexpected %q", b)
	}
	return strconv.Atoi(f[4])
}
