package praxis

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/praxis-tools/praxis/internal/filelock"
	"github.com/praxis-tools/praxis/praxis/hashline"
)

// StateDir is the directory, relative to the workspace root, where the
// engine keeps its commit lock ("lock") and the intent records of commits
// in progress. The file tools refuse to write into it.
const StateDir = ".praxis/state"

const (
	lockName     = "lock"
	intentPrefix = "intent-"
	intentExt    = ".json"
)

// commitLock is the lock every commit of files under one directory tree
// takes: a mutex within the process, then an flock on a lock file, which
// excludes the commits of every other process that takes it. A killed
// holder's flock goes with its process.
type commitLock struct {
	root *os.Root // holds the lock file
	dir  string   // the lock file's directory in root
	sem  chan struct{}
}

func newCommitLock(root *os.Root, dir string) *commitLock {
	return &commitLock{root: root, dir: dir, sem: make(chan struct{}, 1)}
}

// acquire takes the lock, waiting until ctx is done (E_CANCELLED), and
// returns the function that releases it.
func (l *commitLock) acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, Errorf(ECancelled, "waiting for the commit lock: %v", ctx.Err())
	}
	f, err := l.open()
	if err == nil {
		err = filelock.Lock(ctx, f)
		if errors.Is(err, errors.ErrUnsupported) {
			err = nil // no cross-process lock on this system: the mutex alone
		}
		if err != nil {
			f.Close()
			if ctx.Err() != nil {
				err = Errorf(ECancelled, "waiting for the commit lock: %v", ctx.Err())
			}
		}
	}
	if err != nil {
		<-l.sem
		var pe *Error
		if !errors.As(err, &pe) {
			err = Errorf(EIO, "taking the commit lock %s: %v", path.Join(l.dir, lockName), err)
		}
		return nil, err
	}
	return func() {
		filelock.Unlock(f)
		f.Close()
		<-l.sem
	}, nil
}

// tryAcquire takes the lock if it is free at once; ok is false when it is
// not, or when the state directory does not exist (nothing to recover).
func (l *commitLock) tryAcquire() (release func(), ok bool) {
	select {
	case l.sem <- struct{}{}:
	default:
		return nil, false
	}
	if _, err := l.root.Stat(l.dir); err != nil {
		<-l.sem
		return nil, false
	}
	f, err := l.open()
	if err == nil {
		if err = filelock.TryLock(f); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			f.Close()
		} else {
			err = nil
		}
	}
	if err != nil {
		<-l.sem
		return nil, false
	}
	return func() {
		filelock.Unlock(f)
		f.Close()
		<-l.sem
	}, true
}

// open opens the lock file, creating the state directory on first use.
func (l *commitLock) open() (*os.File, error) {
	name := path.Join(l.dir, lockName)
	f, err := l.root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	if err := makeStateDir(l.root, l.dir); err != nil {
		return nil, err
	}
	return l.root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
}

// makeStateDir creates the state directory dir in root if it does not
// exist, with a .gitignore that keeps it out of version control.
func makeStateDir(root *os.Root, dir string) error {
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if f, err := root.OpenFile(path.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		f.WriteString("*\n")
		f.Close()
	}
	return nil
}

// fileWrite is one file a commit replaces.
type fileWrite struct {
	Path string // in the committer's root, symlinks resolved
	Data []byte
	Perm fs.FileMode
	// Check asks that the file still hold Base (or, with Absent, that it
	// still not exist) right before it is replaced; if it does not, the
	// commit is prepared again. Without Check the write replaces whatever
	// is there.
	Check  bool
	Base   []byte
	Absent bool
	// Version and BaseVersion are the versions of Data and Base, when the
	// caller has them; the commit computes them otherwise.
	Version, BaseVersion string
	// Delete removes the file instead of replacing it; Data is unused.
	Delete bool
}

// intent is the record of a commit in progress, written and synced before
// its first temporary file, removed after its last rename.
type intent struct {
	Files []intentFile `json:"files"`
}

type intentFile struct {
	Path string `json:"path"`
	Temp string `json:"temp"`
	// Version is the new content's; Old the replaced content's, "" when
	// the file did not exist, "?" when it was not checked.
	Version string `json:"version"`
	Old     string `json:"old"`
	Perm    uint32 `json:"perm"`
	// Delete marks a file the commit removes: it has no temporary file.
	Delete bool `json:"delete,omitempty"`
}

// errChanged reports that a file changed between its preparation and its
// rename: the commit is prepared again.
var errChanged = errors.New("changed on disk while being committed")

// committer writes files under one root: one commit at a time across
// processes, each all or nothing. A commit's steps are: take the lock;
// finish any commit a killed process left (recover); prepare the writes
// from the files as they are now; write the intent record (targets,
// temporary names, new versions) and sync it; write and sync every
// temporary file; check that no file changed meanwhile; rename each over
// its target; sync the directories; remove the record; release the lock.
type committer struct {
	root  *os.Root
	state string // the directory of the intent records, in root
	lock  *commitLock
	sync  bool
	log   *slog.Logger
	// allowed refuses a target the engine's tools may not write (a
	// protected file, by identity, or the engine's own state). It runs
	// under the lock for every file of every commit, just before the
	// intent record is written, and for every target of a recovered
	// record (which a forged record could name).
	allowed func(rel string) error
	// hook, when set by a test, runs before each file is checked ("verify")
	// and before it is renamed ("write"); an error it returns fails the
	// step.
	hook func(stage, rel string) error
	// written, if set, learns of every commit that succeeded, with the
	// context of the call that made it.
	written func(ctx context.Context, ws []fileWrite)
}

// commit runs prepare under the lock and writes what it returns, all or
// nothing. prepare reads the files as they are on disk now, so that a
// change by another process is seen (an anchor it moved is stale); it is
// called again, up to five times, when a file changes between prepare
// and the rename, and after that the commit fails with E_CONFLICT.
func (c *committer) commit(ctx context.Context, prepare func() ([]fileWrite, error)) error {
	release, err := c.lock.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	c.recover()
	for attempt := 1; ; attempt++ {
		ws, err := prepare()
		if err != nil || len(ws) == 0 {
			return err
		}
		err = c.write(ws)
		if err == nil && c.written != nil {
			c.written(ctx, ws)
		}
		if !errors.Is(err, errChanged) {
			return err
		}
		if attempt == 5 {
			return Errorf(EConflict, "%v; another program keeps writing it", err).
				WithDetail("Nothing was written. Read the file again, or try later.")
		}
	}
}

// write commits ws, which the caller prepared under the lock.
func (c *committer) write(ws []fileWrite) error {
	if c.allowed != nil {
		for _, w := range ws {
			if err := c.allowed(w.Path); err != nil {
				return err
			}
		}
	}
	rec := intent{Files: make([]intentFile, len(ws))}
	for i, w := range ws {
		dir, base := path.Split(w.Path)
		old := "?"
		if w.Check {
			old = ""
			if !w.Absent {
				if old = w.BaseVersion; old == "" {
					old = hashline.Version(w.Base)
				}
			}
		}
		if w.Delete {
			rec.Files[i] = intentFile{Path: w.Path, Old: old, Delete: true}
			continue
		}
		version := w.Version
		if version == "" {
			version = hashline.Version(w.Data)
		}
		rec.Files[i] = intentFile{Path: w.Path, Temp: dir + "." + base + ".praxis-" + randomHex(6) + ".tmp",
			Version: version, Old: old, Perm: uint32(w.Perm.Perm())}
	}
	name, err := c.writeIntent(rec)
	if err != nil {
		return Errorf(EIO, "writing the intent record of the commit: %v", err).WithDetail("Nothing was written.")
	}
	temps := 0
	abort := func(err error) error {
		for _, f := range rec.Files[:temps] {
			if !f.Delete {
				c.root.Remove(f.Temp)
			}
		}
		c.root.Remove(name)
		return err
	}
	for i, w := range ws {
		if w.Delete {
			temps = i + 1
			continue
		}
		if err := writeTemp(c.root, rec.Files[i].Temp, w.Data, w.Perm, c.sync); err != nil {
			return abort(c.fail(w.Path, err, "Nothing was written.")) // writeTemp removed its own file
		}
		temps = i + 1
	}
	for _, w := range ws {
		if err := c.runHook("verify", w.Path); err != nil {
			return abort(err)
		}
		if !w.Check {
			continue
		}
		cur, err := readRegular(c.root, w.Path, int64(len(w.Base))+1)
		absent := errors.Is(err, fs.ErrNotExist)
		if err != nil && !absent && !errors.Is(err, errTooLarge) {
			return abort(c.fail(w.Path, err, "Nothing was written."))
		}
		if absent != w.Absent || (!absent && (err != nil || !bytes.Equal(cur, w.Base))) {
			return abort(fmt.Errorf("%s %w", w.Path, errChanged))
		}
	}
	for i, w := range ws {
		err := c.runHook("write", w.Path)
		switch {
		case err == nil && w.Delete:
			err = c.root.Remove(w.Path)
		case err == nil:
			err = c.root.Rename(rec.Files[i].Temp, w.Path)
		}
		if err == nil {
			continue
		}
		ferr := c.fail(w.Path, err, "")
		if i == 0 {
			ferr.Detail = "Nothing was written."
			return abort(ferr)
		}
		ferr.Detail = c.restore(ws[:i], rec.Files[:i], w.Path, len(ws))
		return abort(ferr)
	}
	if c.sync {
		for _, dir := range uniqueDirs(ws) {
			if err := syncDir(c.root, dir); err != nil {
				c.log.Warn("syncing a directory after a commit", "dir", dir, "err", err)
			}
		}
	}
	if err := c.root.Remove(name); err != nil {
		c.log.Warn("removing the intent record of a finished commit", "record", name, "err", err)
	}
	return nil
}

// restore puts back the files of a failed batch that were already renamed,
// and returns the detail of the error saying what became of them.
func (c *committer) restore(done []fileWrite, recs []intentFile, failed string, total int) string {
	var restored, lost []string
	for i, w := range done {
		if !w.Check {
			lost = append(lost, fmt.Sprintf("%s (now version %s: its old content was not kept)", w.Path, recs[i].Version))
			continue
		}
		var err error
		if w.Absent {
			err = c.root.Remove(w.Path)
		} else {
			err = writeAtomic(c.root, w.Path, w.Base, w.Perm, c.sync)
		}
		if err != nil {
			lost = append(lost, fmt.Sprintf("%s (still at the new version %s: %v)", w.Path, recs[i].Version, err))
		} else {
			restored = append(restored, w.Path+" (back at version "+recs[i].Old+")")
		}
	}
	var d strings.Builder
	fmt.Fprintf(&d, "Writing %s failed after %d of %d files were written.\n", failed, len(done), total)
	if len(restored) > 0 {
		fmt.Fprintf(&d, "Restored: %s\n", strings.Join(restored, ", "))
	}
	if len(lost) > 0 {
		fmt.Fprintf(&d, "NOT restored: %s\n", strings.Join(lost, ", "))
	}
	fmt.Fprintf(&d, "Files after %s were not touched.", failed)
	return d.String()
}

func (c *committer) runHook(stage, rel string) error {
	if c.hook == nil {
		return nil
	}
	return c.hook(stage, rel)
}

// fail maps an operating-system error on rel to an *Error with detail.
func (c *committer) fail(rel string, err error, detail string) *Error {
	var pe *Error
	if !errors.As(err, &pe) {
		var pathErr *fs.PathError
		var linkErr *os.LinkError
		switch {
		case errors.As(err, &pathErr):
			err = pathErr.Err
		case errors.As(err, &linkErr):
			err = linkErr.Err
		}
		pe = Errorf(EIO, "%s: %v", rel, err)
	}
	if detail != "" {
		pe.Detail = detail
	}
	return pe
}

// writeIntent writes rec as a new record in the state directory, synced
// with its directory entry, and returns its name in root.
func (c *committer) writeIntent(rec intent) (string, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	name := path.Join(c.state, intentPrefix+randomHex(8)+intentExt)
	err = writeTemp(c.root, name, data, 0o600, c.sync)
	if errors.Is(err, fs.ErrNotExist) {
		if err = c.root.MkdirAll(c.state, 0o755); err == nil {
			err = writeTemp(c.root, name, data, 0o600, c.sync)
		}
	}
	if err != nil {
		return "", err
	}
	if c.sync {
		if err := syncDir(c.root, c.state); err != nil {
			c.root.Remove(name)
			return "", err
		}
	}
	return name, nil
}

// isIntentName reports whether name is an intent record's:
// intentPrefix, 16 lowercase hex digits, intentExt. A plain check, not a
// regular expression: every start in a workspace with a state directory
// looks at its names.
func isIntentName(name string) bool {
	rest, ok := strings.CutPrefix(name, intentPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, intentExt)
	return ok && isLowerHex(rest, 16)
}

// recover finishes the commits a killed process left: each intent record
// in the state directory is rolled forward when every temporary file it
// names is complete (or already renamed), and back otherwise, its
// temporary files removed either way. The caller holds the lock, so no
// record is a live commit's.
func (c *committer) recover() {
	f, err := c.root.Open(c.state)
	if err != nil {
		return // no state yet: nothing to recover
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		c.log.Warn("reading the engine's state directory", "dir", c.state, "err", err)
		return
	}
	for _, de := range entries {
		if !isIntentName(de.Name()) {
			continue
		}
		name := path.Join(c.state, de.Name())
		if err := c.recoverOne(name); err != nil {
			c.log.Error("an interrupted commit could not be recovered", "record", name, "err", err)
			continue
		}
		if err := c.root.Remove(name); err != nil {
			c.log.Warn("removing a recovered intent record", "record", name, "err", err)
		}
	}
}

// isTempName reports whether name has the form of a commit's temporary
// file: ".", a name of at least one byte without a line break,
// ".praxis-", 12 lowercase hex digits, ".tmp".
func isTempName(name string) bool {
	rest, ok := strings.CutSuffix(name, ".tmp")
	if !ok || len(rest) < 12 || !isLowerHex(rest[len(rest)-12:], 12) {
		return false
	}
	rest, ok = strings.CutSuffix(rest[:len(rest)-12], ".praxis-")
	return ok && len(rest) >= 2 && rest[0] == '.' && !strings.Contains(rest, "\n")
}

// isLowerHex reports whether s is n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// recoverOne rolls the commit of record name forward or back.
func (c *committer) recoverOne(name string) error {
	data, err := readRegular(c.root, name, 16<<20)
	if err != nil {
		return err
	}
	var rec intent
	if err := json.Unmarshal(data, &rec); err != nil {
		// Cut short while being written: no temporary file existed yet.
		c.log.Warn("dropping an incomplete intent record", "record", name)
		return nil
	}
	for _, f := range rec.Files {
		dir, base := path.Split(f.Path)
		tdir, tbase := path.Split(f.Temp)
		if !fs.ValidPath(f.Path) || f.Path == "." || (f.Delete && f.Temp != "") || (!f.Delete && (tdir != dir ||
			!isTempName(tbase) || !strings.HasPrefix(tbase, "."+base+".praxis-"))) {
			return fmt.Errorf("the record names %q and %q, which no commit writes; it is left alone", f.Path, f.Temp)
		}
		if c.allowed != nil {
			if err := c.allowed(f.Path); err != nil {
				return fmt.Errorf("the record names %s: %v; it is left alone", f.Path, err)
			}
		}
	}
	// Temporary files are all written and synced before the first rename,
	// so a missing or incomplete one whose target is not yet new means the
	// renames never started.
	forward := true
	ready := make([]bool, len(rec.Files))
	for i, f := range rec.Files {
		if f.Delete {
			ready[i] = true // nothing to write: a removal is always ready
			continue
		}
		if v, ok := c.versionOf(f.Temp); ok && v == f.Version {
			ready[i] = true
			continue
		}
		if v, ok := c.versionOf(f.Path); !ok || v != f.Version {
			forward = false
		}
	}
	for i, f := range rec.Files {
		if f.Delete {
			if forward {
				if err := c.recoverDelete(f); err != nil {
					return err
				}
			}
			continue
		}
		if !ready[i] {
			c.root.Remove(f.Temp)
			continue
		}
		if !forward {
			c.root.Remove(f.Temp)
			continue
		}
		if f.Old != "?" {
			v, ok := c.versionOf(f.Path)
			if (f.Old == "" && ok) || (f.Old != "" && (!ok || v != f.Old)) {
				c.log.Warn("an interrupted commit's file was changed since; it is kept, the commit's version dropped",
					"path", f.Path, "version", v, "commit_version", f.Version)
				c.root.Remove(f.Temp)
				continue
			}
		}
		if err := c.root.Rename(f.Temp, f.Path); err != nil {
			return err
		}
	}
	if c.sync {
		for _, f := range rec.Files {
			syncDir(c.root, path.Dir(f.Path))
		}
	}
	how := "rolled back"
	if forward {
		how = "rolled forward"
	}
	c.log.Info("recovered a commit interrupted by a crash", "how", how, "files", len(rec.Files))
	return nil
}

// recoverDelete finishes the removal of f by a commit rolled forward: the
// file is removed if it is still at the version the commit removed.
func (c *committer) recoverDelete(f intentFile) error {
	v, ok := c.versionOf(f.Path)
	if !ok {
		return nil // already removed
	}
	if f.Old != "?" && v != f.Old {
		c.log.Warn("an interrupted commit's removed file was changed since; it is kept",
			"path", f.Path, "version", v)
		return nil
	}
	return c.root.Remove(f.Path)
}

// versionOf returns the version of the regular file rel, false when it
// does not exist or cannot be read.
func (c *committer) versionOf(rel string) (string, bool) {
	data, err := readRegular(c.root, rel, 1<<40)
	if err != nil {
		return "", false
	}
	return hashline.Version(data), true
}

// errTooLarge is readRegular's error for a file over its limit.
var errTooLarge = errors.New("over the size limit")

// readRegular reads the regular file rel, at most max bytes, without
// waiting on a FIFO.
func readRegular(root *os.Root, rel string, max int64) ([]byte, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	if fi.Size() > max {
		return nil, errTooLarge
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		if int64(len(data)) > max {
			return nil, errTooLarge
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// writeAtomic replaces rel with data so that a reader, or a crash at any
// moment, sees either the old bytes or the new ones: the data goes to a
// temporary file beside rel (see writeTemp), which is renamed over rel;
// then the directory is synced. The temporary file is removed on any
// failure. With sync false nothing is synced.
func writeAtomic(root *os.Root, rel string, data []byte, perm fs.FileMode, sync bool) error {
	dir, base := path.Split(rel)
	var tmp string
	var err error
	for range 100 {
		tmp = dir + "." + base + ".praxis-" + randomHex(6) + ".tmp"
		if err = writeTemp(root, tmp, data, perm, sync); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return err
	}
	if sync {
		return syncDir(root, dir+".")
	}
	return nil
}

// writeTemp creates rel (which must not exist) with data and mode perm,
// synced when sync is set. A failed write removes it.
func writeTemp(root *os.Root, rel string, data []byte, perm fs.FileMode, sync bool) (err error) {
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(rel)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if perm != 0o600 {
		if err = f.Chmod(perm); err != nil {
			return err
		}
	}
	if sync {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	return f.Close()
}

func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(path.Clean(dir))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func uniqueDirs(ws []fileWrite) []string {
	dirs := make([]string, 0, len(ws))
	for _, w := range ws {
		dirs = append(dirs, path.Dir(w.Path))
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
