package praxis

import (
	"bufio"
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// The version store's bounds and names.
const (
	versionsDir          = StateDir + "/versions"
	servedLogName        = "served.log"
	defaultVersionsBytes = 256 << 20 // the files under versionsDir, in all
	maxServedLog         = 1 << 20   // the served log is cut to half past this
	maxPendingBytes      = 64 << 20  // contents waiting to be written
	maxRecentVersions    = 16        // versions remembered per path in memory
	maxRecentPaths       = 4096      // paths remembered in memory (the log has more)
	touchEvery           = time.Minute
)

// versionStore keeps file contents by version (hashline.Version of the
// bytes), so that an anchor read from an earlier version of a file can be
// relocated to the file as it is now. It also remembers which versions of
// which path the engine served (showed anchors of).
//
// Contents live in memory, the most recently used up to a byte bound, and
// in content-addressed files under the workspace state directory
// (.praxis/state/versions/VERSION), shared by every process on the
// workspace and kept across restarts: a file is written to a temporary
// name and renamed, so a reader never sees part of one (they are a cache,
// not synced: a power loss may lose some); get checks the
// hash of what it reads and treats a mismatch as missing. The files are
// bounded in all (the oldest by modification time go first; a use touches
// a file) and one by one (the engine's largest readable file). Disk work
// happens in the background, off the caller's path; flush waits for it.
// Without a writable state directory the store lives in memory only.
//
// A versionStore is safe for concurrent use.
type versionStore struct {
	ws       *os.Root // the workspace, which holds the state directory
	log      *slog.Logger
	memLimit int64 // bytes of contents kept in memory
	maxFile  int64 // the largest content stored on disk
	maxTotal int64 // the bound of the files on disk, in all
	logLimit int64 // the served log is cut to half past this

	mu       sync.Mutex
	mem      map[string]*list.Element // version -> element of lru (a *memEntry)
	lru      *list.List               // most recently used first
	memBytes int64
	recent   map[string][]string  // path -> versions served, oldest first
	touched  map[string]time.Time // version -> when it was last on disk, by us
	queue    []storeJob
	queued   int64 // bytes of contents in queue
	running  bool  // a worker drains queue
	idle     *sync.Cond
	closed   bool

	// The disk side, used by one worker at a time (diskMu).
	diskMu    sync.Mutex
	dir       *os.Root // versionsDir, nil until opened
	diskOff   bool     // the state directory cannot be written: memory only
	onDisk    int64    // the bytes of the files, as last counted plus written since
	sinceScan int      // files written since the last count
}

type memEntry struct {
	version string
	data    []byte
}

// storeJob is one piece of background disk work: store (or touch) the
// content of version, and append logLine to the served log if not empty.
type storeJob struct {
	version string
	data    []byte // nil: only touch the file if it exists
	logLine string
}

// validVersion reports whether v has the form of a version: sixteen
// lowercase hex digits.
func validVersion(v string) bool {
	if len(v) != 16 {
		return false
	}
	for i := range len(v) {
		if c := v[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// storeTempName reports whether name is a temporary file of the store.
func storeTempName(name string) bool {
	v, ok := strings.CutPrefix(name, ".tmp-")
	return ok && validVersion(v)
}

func newVersionStore(ws *os.Root, memLimit, maxFile int64, log *slog.Logger) *versionStore {
	s := &versionStore{ws: ws, log: log, memLimit: memLimit, maxFile: maxFile, maxTotal: defaultVersionsBytes, logLimit: maxServedLog,
		mem: make(map[string]*list.Element), lru: list.New(), recent: make(map[string][]string),
		touched: make(map[string]time.Time)}
	s.idle = sync.NewCond(&s.mu)
	return s
}

// put stores data and returns its version. It is idempotent and
// content-addressed: the same bytes give the same version and one copy.
// The caller must not change data afterwards. The disk write, if any,
// happens in the background.
func (s *versionStore) put(data []byte) (version string) {
	version = hashline.Version(data)
	s.keep(version, data, "")
	return version
}

// get returns the content of version, from memory or from disk, and
// whether it is known. Content read from disk is checked against its
// version; a mismatch counts as unknown.
func (s *versionStore) get(version string) ([]byte, bool) {
	if !validVersion(version) {
		return nil, false
	}
	s.mu.Lock()
	if el, ok := s.mem[version]; ok {
		s.lru.MoveToFront(el)
		data := el.Value.(*memEntry).data
		s.touchLocked(version, data)
		s.mu.Unlock()
		return data, true
	}
	s.mu.Unlock()

	s.diskMu.Lock()
	data, ok := s.readDisk(version)
	s.diskMu.Unlock()
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	s.remember(version, data)
	s.mu.Unlock()
	return data, true
}

// served records that the engine showed anchors of path at version, whose
// content is data (see put).
func (s *versionStore) served(path, version string, data []byte) {
	if int64(len(data)) > s.maxFile {
		return
	}
	s.mu.Lock()
	rs := s.recent[path]
	if len(rs) > 0 && rs[len(rs)-1] == version {
		s.mu.Unlock()
		s.keep(version, data, "")
		return
	}
	if rs == nil && len(s.recent) >= maxRecentPaths {
		for p := range s.recent { // any one: the served log still has it
			delete(s.recent, p)
			break
		}
	}
	rs = slices.DeleteFunc(rs, func(v string) bool { return v == version })
	if len(rs) >= maxRecentVersions {
		rs = rs[1:]
	}
	s.recent[path] = append(rs, version)
	s.mu.Unlock()
	s.keep(version, data, version+" "+strconv.Quote(path)+"\n")
}

// recentVersions returns the versions of path the engine served, as far as this
// store knows them (its own, and those other processes logged), newest
// first, at most limit.
func (s *versionStore) recentVersions(path string, limit int) []string {
	s.mu.Lock()
	mine := slices.Clone(s.recent[path])
	s.mu.Unlock()
	var out []string
	add := func(v string) {
		if len(out) < limit && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range slices.Backward(mine) {
		add(v)
	}
	s.diskMu.Lock()
	logged := s.readServedLog(path)
	s.diskMu.Unlock()
	for _, v := range slices.Backward(logged) {
		add(v)
	}
	return out
}

// wasServed reports whether the engine (this process or another, as far
// as the served log tells) showed anchors of path at version.
func (s *versionStore) wasServed(path, version string) bool {
	s.mu.Lock()
	mine := slices.Contains(s.recent[path], version)
	s.mu.Unlock()
	if mine {
		return true
	}
	s.diskMu.Lock()
	defer s.diskMu.Unlock()
	return slices.Contains(s.readServedLog(path), version)
}

// keep puts data of version in memory and queues its disk work: writing
// it if it is not on disk, touching it otherwise (at most once a minute
// unless logLine is set), and appending logLine to the served log.
func (s *versionStore) keep(version string, data []byte, logLine string) {
	if int64(len(data)) > s.maxFile {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.mem[version]; ok {
		s.lru.MoveToFront(el)
		data = el.Value.(*memEntry).data
	} else {
		s.remember(version, data)
	}
	if logLine == "" {
		s.touchLocked(version, data)
		return
	}
	s.enqueue(storeJob{version: version, data: data, logLine: logLine})
}

// touchLocked queues a touch of version's file, at most once a minute; a
// file gone meanwhile is written again from data. The caller holds mu.
func (s *versionStore) touchLocked(version string, data []byte) {
	if t, ok := s.touched[version]; ok && time.Since(t) < touchEvery {
		return
	}
	s.enqueue(storeJob{version: version, data: data})
}

// remember adds data to the memory cache, dropping the least recently
// used contents past the bound. The caller holds mu.
func (s *versionStore) remember(version string, data []byte) {
	if _, ok := s.mem[version]; ok || int64(len(data)) > s.memLimit {
		return
	}
	s.mem[version] = s.lru.PushFront(&memEntry{version: version, data: data})
	s.memBytes += int64(len(data))
	for s.memBytes > s.memLimit {
		el := s.lru.Back()
		e := el.Value.(*memEntry)
		s.lru.Remove(el)
		delete(s.mem, e.version)
		s.memBytes -= int64(len(e.data))
	}
}

// enqueue adds a job and starts the worker if none runs. Past the bound of
// pending bytes, a content is kept in memory only. The caller holds mu.
func (s *versionStore) enqueue(j storeJob) {
	if s.closed {
		return
	}
	if j.data != nil && s.queued+int64(len(j.data)) > maxPendingBytes {
		if j.logLine == "" {
			return
		}
		j.data = nil
	}
	s.touched[j.version] = time.Now()
	if len(s.touched) > 1<<16 {
		clear(s.touched)
	}
	s.queue = append(s.queue, j)
	s.queued += int64(len(j.data))
	if !s.running {
		s.running = true
		go s.drain()
	}
}

// drain does the queued disk work until the queue is empty.
func (s *versionStore) drain() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.running = false
			s.idle.Broadcast()
			s.mu.Unlock()
			return
		}
		j := s.queue[0]
		s.queue[0] = storeJob{}
		s.queue = s.queue[1:]
		s.mu.Unlock()

		s.diskMu.Lock()
		s.do(j)
		s.diskMu.Unlock()

		s.mu.Lock()
		s.queued -= int64(len(j.data))
		s.mu.Unlock()
	}
}

// flush waits until the queued disk work is done.
func (s *versionStore) flush() {
	s.mu.Lock()
	for s.running {
		s.idle.Wait()
	}
	s.mu.Unlock()
}

// close finishes the queued disk work and releases the store's directory.
// Later puts stay in memory.
func (s *versionStore) close() {
	s.flush()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.diskMu.Lock()
	if s.dir != nil {
		s.dir.Close()
		s.dir = nil
	}
	s.diskOff = true
	s.diskMu.Unlock()
}

// do runs one job. The caller holds diskMu.
func (s *versionStore) do(j storeJob) {
	if !s.openDisk(true) {
		return
	}
	now := time.Now()
	if err := s.dir.Chtimes(j.version, now, now); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Debug("touching a stored version", "version", j.version, "err", err)
		} else if j.data != nil {
			if err := s.write(j.version, j.data); err != nil {
				s.log.Warn("storing a file version", "version", j.version, "err", err)
			} else {
				s.onDisk += int64(len(j.data))
				s.sinceScan++
				if s.onDisk > s.maxTotal || s.sinceScan >= 256 {
					s.evict()
				}
			}
		}
	}
	if j.logLine != "" {
		s.appendServed(j.logLine)
	}
}

// write replaces the file name in the store's directory with data: a
// temporary file (".tmp-" and random hex) renamed over it, so that no
// reader sees part of it. A process killed meanwhile leaves the temporary
// file, which evict removes an hour later. The caller holds diskMu.
func (s *versionStore) write(name string, data []byte) error {
	var tmp string
	var err error
	for range 10 {
		tmp = ".tmp-" + randomHex(8)
		if err = writeTemp(s.dir, tmp, data, 0o644, false); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := s.dir.Rename(tmp, name); err != nil {
		s.dir.Remove(tmp)
		return err
	}
	return nil
}

// openDisk opens the store's directory, creating it when create is set,
// and reports whether the disk side is usable. The directory and its
// parents must be real directories, not symbolic links, so that the store
// never writes or removes files elsewhere. The caller holds diskMu.
func (s *versionStore) openDisk(create bool) bool {
	if s.dir != nil || s.diskOff {
		return s.dir != nil
	}
	var infos []fs.FileInfo
	for _, p := range []string{".praxis", StateDir, versionsDir} {
		fi, err := s.ws.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) && create {
			if p == StateDir {
				err = makeStateDir(s.ws, p)
			} else if err = s.ws.Mkdir(p, 0o755); errors.Is(err, fs.ErrExist) {
				err = nil
			}
			if err == nil {
				fi, err = s.ws.Lstat(p)
			}
		}
		if err != nil {
			if create || !errors.Is(err, fs.ErrNotExist) {
				s.off(err)
			}
			return false
		}
		if !fi.IsDir() {
			s.off(fmt.Errorf("%s is not a directory", p))
			return false
		}
		infos = append(infos, fi)
	}
	dir, err := s.ws.OpenRoot(versionsDir)
	if err != nil {
		s.off(err)
		return false
	}
	if fi, err := dir.Stat("."); err != nil || !os.SameFile(fi, infos[len(infos)-1]) {
		dir.Close()
		s.off(fmt.Errorf("%s changed while being opened", versionsDir))
		return false
	}
	s.dir = dir
	s.evict()
	return true
}

func (s *versionStore) off(err error) {
	s.diskOff = true
	s.log.Info("file versions are kept in memory only: the state directory cannot be used", "dir", versionsDir, "err", err)
}

// readDisk reads and checks the stored content of version. The caller
// holds diskMu.
func (s *versionStore) readDisk(version string) ([]byte, bool) {
	if !s.openDisk(false) {
		return nil, false
	}
	data, err := readRegular(s.dir, version, s.maxFile)
	if err != nil {
		return nil, false
	}
	if hashline.Version(data) != version {
		s.log.Warn("a stored file version does not match its name; removed", "version", version)
		s.dir.Remove(version)
		return nil, false
	}
	now := time.Now()
	s.dir.Chtimes(version, now, now)
	return data, true
}

// evict counts the stored files and removes the oldest until they fit the
// bound, and temporary files left by a killed process. The caller holds
// diskMu.
func (s *versionStore) evict() {
	s.sinceScan = 0
	f, err := s.dir.Open(".")
	if err != nil {
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	type file struct {
		name  string
		size  int64
		mtime time.Time
	}
	var files []file
	var total int64
	for _, de := range entries {
		name := de.Name()
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		switch {
		case validVersion(name):
			files = append(files, file{name, fi.Size(), fi.ModTime()})
			total += fi.Size()
		case storeTempName(name) && time.Since(fi.ModTime()) > time.Hour:
			s.dir.Remove(name)
		}
	}
	if total > s.maxTotal {
		slices.SortFunc(files, func(a, b file) int { return a.mtime.Compare(b.mtime) })
		for _, f := range files {
			if total <= s.maxTotal {
				break
			}
			if err := s.dir.Remove(f.name); err == nil || errors.Is(err, fs.ErrNotExist) {
				total -= f.size
			}
		}
	}
	s.onDisk = total
}

// appendServed appends a line to the served log, and cuts the log to its
// newer half when it has grown past its bound. A line lost to a
// concurrent cut only makes a version harder to find. The caller holds
// diskMu.
func (s *versionStore) appendServed(line string) {
	f, err := s.dir.OpenFile(servedLogName, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		s.log.Debug("appending to the served log", "err", err)
		return
	}
	_, err = f.WriteString(line)
	fi, serr := f.Stat()
	f.Close()
	if err != nil || serr != nil || fi.Size() <= s.logLimit {
		return
	}
	data, err := readRegular(s.dir, servedLogName, 4*s.logLimit)
	if err != nil {
		return
	}
	data = data[len(data)-int(s.logLimit/2):]
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[i+1:]
	}
	if err := s.write(servedLogName, data); err != nil {
		s.log.Debug("cutting the served log", "err", err)
	}
}

// readServedLog returns the versions the served log lists for path, oldest
// first. The caller holds diskMu.
func (s *versionStore) readServedLog(p string) []string {
	if !s.openDisk(false) {
		return nil
	}
	data, err := readRegular(s.dir, servedLogName, 4*s.logLimit)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		v, quoted, ok := strings.Cut(sc.Text(), " ")
		if !ok || !validVersion(v) {
			continue
		}
		if name, err := strconv.Unquote(quoted); err == nil && name == p {
			out = append(out, v)
		}
	}
	return out
}
