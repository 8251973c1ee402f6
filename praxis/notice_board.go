package praxis

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// How the engine finds out that a file changed. A watcher
// (github.com/fsnotify/fsnotify) watches the directories of the files each
// session was shown and marks a file whose name an event names as possibly
// changed; the next call of a session checks those files, and only a
// different version on disk makes a notice. Watching directories, not
// files, sees a file renamed over, an editor's atomic save, a file
// deleted or replaced by a directory. What a watcher can miss (events
// lost to an overflow, a directory it could not watch, no watcher at all)
// is checked at every call: after an overflow every file of every session
// once, and each file whose directory is not watched at each call. After
// bash, and in Session.Notices, all of a session's files are checked,
// watched or not.
const (
	// maxSessionFiles bounds the files one session is told about; past it
	// the file used least recently is forgotten.
	maxSessionFiles = 256
	// maxSessionSubscriptions bounds one session's subscriptions.
	maxSessionSubscriptions = 256
	// subscriptionDelay is how long after an event a subscribed file is
	// checked, so that the events of one save make one update.
	subscriptionDelay = 50 * time.Millisecond
	// racyWindow: a file whose modification time is this close to the
	// moment it was last checked is read again even when its size, time
	// and inode look unchanged, as file times are coarse (git's "racily
	// clean" entries).
	racyWindow = time.Second
)

// fileState is what a name held when it was last checked.
type fileState struct {
	kind    stateKind
	version string // of a regular file
	why     string // stateOther: what it is; stateUnreadable: why not
}

type stateKind int

const (
	stateFile stateKind = iota
	stateAbsent
	stateOther
	stateUnreadable
)

// statSig is what a stat tells of a file: when size, time, mode and
// identity (inode) are unchanged and the time is not racy, so is the file.
type statSig struct {
	fi fs.FileInfo // nil: unknown
}

func sigOf(fi fs.FileInfo) statSig { return statSig{fi} }

// same reports whether s and o describe the same file, unchanged.
func (s statSig) same(o statSig) bool {
	a, b := s.fi, o.fi
	return a != nil && b != nil && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) &&
		a.Mode() == b.Mode() && os.SameFile(a, b)
}

// noticeBoard is one engine's memory of its sessions: the files each was
// shown and at which state, the notices not yet delivered, the
// subscriptions, and the watcher.
type noticeBoard struct {
	ws    *Workspace
	max   int64
	log   *slog.Logger
	texts *versionStore // the texts of versions, to diff a change

	mu        sync.Mutex
	views     map[*Session]*view
	names     map[string]map[*view]int // a watched name -> the views that use it, how often
	dirs      map[string]int           // a watched directory -> the names in it
	watcher   *fsnotify.Watcher        // started with the first watch
	noWatcher bool                     // none could be started
	seq       uint64
	closed    bool
}

// view is one session's part of a board.
type view struct {
	s       *Session
	files   map[string]*tracked // by the path the session used
	pending []*pendingNotice
	subs    map[string]*subscription
	pollAll bool // events were lost: check every file at the next call
	marked  bool // some file is dirty or not watched: the next call looks
}

type tracked struct {
	rel     string
	names   []string // rel, and the file a symlink at rel leads to
	watched []string // the names whose directories are watched
	state   fileState
	sig     statSig
	checked time.Time
	dirty   bool // a watcher event named it
	used    uint64
	gen     uint64 // counts changes of state
}

type pendingNotice struct {
	rel    string
	old    fileState
	notice Notice
}

type subscription struct {
	rel     string
	names   []string
	watched []string
	state   fileState // when last notified
	notify  func()
	timer   *time.Timer
}

func newNoticeBoard(ws *Workspace, max int64, log *slog.Logger, texts *versionStore) *noticeBoard {
	return &noticeBoard{ws: ws, max: max, log: log, texts: texts,
		views: make(map[*Session]*view), names: make(map[string]map[*view]int), dirs: make(map[string]int)}
}

// watcherLocked returns the board's watcher, started when first needed,
// or nil when none can be had. Called with b.mu held.
func (b *noticeBoard) watcherLocked() *fsnotify.Watcher {
	if b.watcher != nil || b.noWatcher {
		return b.watcher
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		b.noWatcher = true
		b.log.Warn("no file watcher; the files sessions were shown are checked at every call", "err", err)
		return nil
	}
	b.watcher = w
	go b.watch(w)
	return w
}

// close stops the watcher and the subscriptions' timers.
func (b *noticeBoard) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for _, v := range b.views {
		for _, sub := range v.subs {
			if sub.timer != nil {
				sub.timer.Stop()
			}
		}
	}
	b.views = nil
	if b.watcher != nil {
		b.watcher.Close()
	}
}

// viewOf returns s's view, made if needed; nil once the board is closed
// or s is. Called with b.mu held.
func (b *noticeBoard) viewOf(s *Session) *view {
	if b.closed {
		return nil
	}
	if v := b.views[s]; v != nil {
		return v
	}
	if !s.join(b) {
		return nil
	}
	v := &view{s: s, files: make(map[string]*tracked), subs: make(map[string]*subscription)}
	b.views[s] = v
	return v
}

// leave forgets s.
func (b *noticeBoard) leave(s *Session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.views[s]
	if v == nil {
		return
	}
	for _, t := range v.files {
		b.unwatch(v, t.watched)
	}
	for _, sub := range v.subs {
		b.dropSub(v, sub)
	}
	delete(b.views, s)
}

// linkNames returns the names a file is watched under: rel, and the file
// a symlink at rel leads to, when it lies in the workspace.
func (b *noticeBoard) linkNames(rel string) []string {
	names := []string{rel}
	if to, err := b.ws.resolveLinks(rel); err == nil && to != rel {
		names = append(names, to)
	}
	return names
}

// watchNames watches the directories of names for v and returns the
// names it watches. Called with b.mu held.
func (b *noticeBoard) watchNames(v *view, names []string) []string {
	var watched []string
	for _, n := range names {
		dir := path.Dir(n)
		if b.dirs[dir] == 0 {
			if w := b.watcherLocked(); w == nil || w.Add(b.abs(dir)) != nil {
				continue
			}
		}
		watched = append(watched, n)
		b.dirs[dir]++
		if b.names[n] == nil {
			b.names[n] = make(map[*view]int)
		}
		b.names[n][v]++
	}
	return watched
}

// unwatch undoes watchNames for the names it returned. Called with b.mu
// held.
func (b *noticeBoard) unwatch(v *view, names []string) {
	for _, n := range names {
		users := b.names[n]
		if users[v] == 0 {
			continue
		}
		if users[v]--; users[v] == 0 {
			delete(users, v)
			if len(users) == 0 {
				delete(b.names, n)
			}
		}
		dir := path.Dir(n)
		if b.dirs[dir]--; b.dirs[dir] <= 0 {
			delete(b.dirs, dir)
			if b.watcher != nil {
				b.watcher.Remove(b.abs(dir))
			}
		}
	}
}

func (b *noticeBoard) abs(rel string) string {
	return filepath.Join(b.ws.real, filepath.FromSlash(rel))
}

// watch takes the watcher's events until it is closed.
func (b *noticeBoard) watch(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			b.event(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			b.log.Debug("file watcher", "err", err)
			b.lost()
		}
	}
}

// event marks the files and subscriptions an event names.
func (b *noticeBoard) event(ev fsnotify.Event) {
	rel, ok := strings.CutPrefix(ev.Name, b.ws.real+string(filepath.Separator))
	if !ok {
		return
	}
	rel = filepath.ToSlash(rel)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if b.dirs[rel] > 0 && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		// A watched directory went away: what lay in it is checked at
		// every call until it can be watched again.
		for _, v := range b.views {
			for _, t := range v.files {
				if w := b.unwatchDir(v, t.watched, rel); len(w) < len(t.watched) {
					t.watched, t.dirty, v.marked = w, true, true
				}
			}
			for _, sub := range v.subs {
				if w := b.unwatchDir(v, sub.watched, rel); len(w) < len(sub.watched) {
					sub.watched = w
					b.schedule(v, sub)
				}
			}
		}
		return
	}
	for v := range b.names[rel] {
		for _, t := range v.files {
			if contains(t.names, rel) {
				t.dirty, v.marked = true, true
			}
		}
		for _, sub := range v.subs {
			if contains(sub.names, rel) {
				b.schedule(v, sub)
			}
		}
	}
}

// lost handles events the watcher lost: every file is checked at the next
// call, every subscription now.
func (b *noticeBoard) lost() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, v := range b.views {
		v.pollAll = true
		for _, sub := range v.subs {
			b.schedule(v, sub)
		}
	}
}

// unwatchDir unwatches the names of watched that lie in dir and returns
// the others. Called with b.mu held.
func (b *noticeBoard) unwatchDir(v *view, watched []string, dir string) []string {
	var keep, drop []string
	for _, n := range watched {
		if path.Dir(n) == dir {
			drop = append(drop, n)
		} else {
			keep = append(keep, n)
		}
	}
	b.unwatch(v, drop)
	return keep
}

func contains(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

// probe returns the state of rel now. When the stat matches sig and the
// file was not modified close to checked, the file is taken as unchanged
// and old is returned without reading it; otherwise data is its content,
// when it is a regular file that can be read.
func (b *noticeBoard) probe(rel string, old fileState, sig statSig, checked time.Time) (st fileState, newSig statSig, data []byte) {
	fi, err := b.ws.root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return fileState{kind: stateAbsent}, statSig{}, nil
	case err != nil:
		return fileState{kind: stateUnreadable, why: errLine(b.ws.fail(rel, err))}, statSig{}, nil
	case !fi.Mode().IsRegular():
		return fileState{kind: stateOther, why: fileKind(fi.Mode())}, sigOf(fi), nil
	}
	newSig = sigOf(fi)
	if old.kind == stateFile && newSig.same(sig) && !checked.IsZero() && fi.ModTime().Before(checked.Add(-racyWindow)) {
		return old, newSig, nil
	}
	data, fi, err = b.ws.ReadFile(rel, b.max)
	if err != nil {
		if CodeOf(err) == ENotFound {
			return fileState{kind: stateAbsent}, statSig{}, nil
		}
		return fileState{kind: stateUnreadable, why: errLine(err)}, statSig{}, nil
	}
	return fileState{kind: stateFile, version: hashline.Version(data)}, sigOf(fi), data
}

func errLine(err error) string {
	s, _, _ := strings.Cut(ErrorResult(err).Text, "\n")
	return s
}

// served records that the session of ctx was shown rel at version, whose
// text is data and whose stat fi. A different state shown before makes a
// notice.
func (b *noticeBoard) served(ctx context.Context, rel, version string, data []byte, fi fs.FileInfo) {
	s := SessionFrom(ctx)
	if s == nil {
		return
	}
	checked := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.viewOf(s)
	if v == nil {
		return
	}
	if v.files[rel] == nil {
		// Resolving links takes system calls: only for a file new to the
		// session, and without the lock.
		b.mu.Unlock()
		names := b.linkNames(rel)
		b.mu.Lock()
		if v = b.views[s]; v == nil {
			return
		}
		if v.files[rel] == nil {
			b.track(v, rel, names)
		}
	}
	now := fileState{kind: stateFile, version: version}
	t := b.track(v, rel, nil)
	if t.state != now && t.gen > 0 {
		b.queue(v, rel, t.state, now, data)
	}
	t.set(now, sigOf(fi), checked)
}

// track returns v's entry for rel, made (and its directories watched) if
// needed, forgetting the entry used least recently past the bound. Called
// with b.mu held.
func (b *noticeBoard) track(v *view, rel string, names []string) *tracked {
	b.seq++
	if t := v.files[rel]; t != nil {
		t.used = b.seq
		return t
	}
	if len(v.files) >= maxSessionFiles {
		var oldest *tracked
		for _, t := range v.files {
			if oldest == nil || t.used < oldest.used {
				oldest = t
			}
		}
		b.unwatch(v, oldest.watched)
		delete(v.files, oldest.rel)
	}
	t := &tracked{rel: rel, names: names, used: b.seq}
	t.watched = b.watchNames(v, names)
	if len(t.watched) < len(names) {
		v.marked = true
	}
	v.files[rel] = t
	return t
}

func (t *tracked) set(st fileState, sig statSig, checked time.Time) {
	t.state, t.sig, t.checked, t.dirty = st, sig, checked, false
	t.gen++
}

// queue adds the notice of rel going from old to now to v's pending ones,
// coalesced with one not yet delivered. Called with b.mu held.
func (b *noticeBoard) queue(v *view, rel string, old, now fileState, newText []byte) {
	for i, p := range v.pending {
		if p.rel != rel {
			continue
		}
		if p.old == now { // changed back
			v.pending = append(v.pending[:i], v.pending[i+1:]...)
			return
		}
		old = p.old
		v.pending = append(v.pending[:i], v.pending[i+1:]...)
		break
	}
	var oldText []byte
	if old.kind == stateFile && now.kind == stateFile {
		if t, ok := b.texts.get(old.version); ok {
			oldText = t
		}
		if newText != nil {
			// The next change is told from this version: keep its text.
			b.texts.keep(now.version, newText, "")
		}
	}
	v.pending = append(v.pending, &pendingNotice{rel: rel, old: old, notice: newNotice(rel, old, now, oldText, newText)})
}

// written records the files a commit of the session of ctx wrote: the
// session knows their new text, so they make no notice for it; a file
// that had changed on disk since the session saw it, before this commit,
// does.
func (b *noticeBoard) written(ctx context.Context, ws []fileWrite) {
	s := SessionFrom(ctx)
	if s == nil {
		return
	}
	type done struct {
		w     fileWrite
		names []string
		fi    fs.FileInfo
	}
	started := time.Now()
	list := make([]done, len(ws))
	for i, w := range ws {
		list[i] = done{w: w, names: []string{w.Path}}
		if !w.Delete {
			list[i].fi, _ = b.ws.root.Stat(w.Path)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.viewOf(s)
	if v == nil {
		return
	}
	for _, d := range list {
		w := d.w
		now := fileState{kind: stateAbsent}
		if !w.Delete {
			version := w.Version
			if version == "" {
				version = hashline.Version(w.Data)
			}
			now = fileState{kind: stateFile, version: version}
			b.texts.keep(version, w.Data, "") // a later change is told from it
		}
		var ts []*tracked
		for _, t := range v.files {
			if contains(t.names, w.Path) {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 && !w.Delete {
			ts = append(ts, b.track(v, w.Path, d.names))
		}
		for _, t := range ts {
			if w.Check && t.gen > 0 {
				base := fileState{kind: stateAbsent}
				if !w.Absent {
					bv := w.BaseVersion
					if bv == "" {
						bv = hashline.Version(w.Base)
					}
					base = fileState{kind: stateFile, version: bv}
				}
				if t.state != base {
					b.queue(v, t.rel, t.state, base, w.Base)
				}
			}
			t.set(now, sigOf(d.fi), started)
		}
	}
}

// collect checks the files of s that may have changed (all of them when
// all is set) and returns its pending notices, which are then delivered.
func (b *noticeBoard) collect(s *Session, all bool) []Notice {
	type check struct {
		t       *tracked
		gen     uint64
		state   fileState
		sig     statSig
		checked time.Time
	}
	b.mu.Lock()
	v := b.views[s]
	if v == nil || b.closed {
		b.mu.Unlock()
		return nil
	}
	var todo []check
	if all || v.pollAll || v.marked {
		v.marked = false
		for _, t := range v.files {
			unwatched := len(t.watched) < len(t.names)
			if all || v.pollAll || t.dirty || unwatched {
				todo = append(todo, check{t, t.gen, t.state, t.sig, t.checked})
				t.dirty = false
			}
			v.marked = v.marked || unwatched
		}
	}
	v.pollAll = false
	b.mu.Unlock()

	for _, c := range todo {
		started := time.Now()
		st, sig, data := b.probe(c.t.rel, c.state, c.sig, c.checked)
		b.mu.Lock()
		if !b.closed && b.views[s] == v && c.t.gen == c.gen && v.files[c.t.rel] == c.t { // not changed or forgotten meanwhile
			if st != c.state {
				b.queue(v, c.t.rel, c.state, st, data)
			}
			c.t.set(st, sig, started)
			if len(c.t.watched) < len(c.t.names) && st.kind == stateFile {
				b.unwatch(v, c.t.watched) // and try again
				c.t.watched = b.watchNames(v, c.t.names)
			}
		}
		b.mu.Unlock()
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(v.pending) == 0 {
		return nil
	}
	out := make([]Notice, len(v.pending))
	for i, p := range v.pending {
		out[i] = p.notice
	}
	v.pending = nil
	return out
}

// subscribe makes notify run whenever the regular file at p changes on
// disk, until unsubscribe or the end of s. It returns the file's path in
// the workspace.
func (b *noticeBoard) subscribe(s *Session, p string, notify func()) (string, error) {
	rel, err := b.ws.Rel(p)
	if err != nil {
		return "", err
	}
	data, _, err := b.ws.ReadFile(rel, b.max)
	if err != nil {
		return "", err
	}
	names := b.linkNames(rel)
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.viewOf(s)
	if v == nil {
		return "", Errorf(EUnavailable, "the session has ended")
	}
	st := fileState{kind: stateFile, version: hashline.Version(data)}
	if sub := v.subs[rel]; sub != nil {
		sub.notify, sub.state = notify, st
		return rel, nil
	}
	if len(v.subs) >= maxSessionSubscriptions {
		return "", Errorf(ETooLarge, "this session already has %d subscriptions, the most allowed", maxSessionSubscriptions).
			WithDetail("Unsubscribe from a file first.")
	}
	sub := &subscription{rel: rel, names: names, state: st, notify: notify}
	sub.watched = b.watchNames(v, names)
	v.subs[rel] = sub
	return rel, nil
}

// unsubscribe ends s's subscription to p, if any.
func (b *noticeBoard) unsubscribe(s *Session, p string) error {
	rel, err := b.ws.Rel(p)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if v := b.views[s]; v != nil {
		if sub := v.subs[rel]; sub != nil {
			b.dropSub(v, sub)
		}
	}
	return nil
}

// dropSub ends a subscription. Called with b.mu held.
func (b *noticeBoard) dropSub(v *view, sub *subscription) {
	if sub.timer != nil {
		sub.timer.Stop()
	}
	b.unwatch(v, sub.watched)
	delete(v.subs, sub.rel)
}

// schedule checks sub shortly, once for the events of that while. Called
// with b.mu held.
func (b *noticeBoard) schedule(v *view, sub *subscription) {
	if sub.timer != nil {
		return
	}
	sub.timer = time.AfterFunc(subscriptionDelay, func() { b.checkSub(v, sub) })
}

// checkSub notifies sub's subscriber when its file is in another state
// than when it was last notified.
func (b *noticeBoard) checkSub(v *view, sub *subscription) {
	b.mu.Lock()
	sub.timer = nil
	old := sub.state
	b.mu.Unlock()
	st, _, _ := b.probe(sub.rel, old, statSig{}, time.Time{})
	b.mu.Lock()
	if b.closed || v.subs[sub.rel] != sub || st == old {
		b.mu.Unlock()
		return
	}
	sub.state = st
	notify := sub.notify
	if len(sub.watched) < len(sub.names) && st.kind == stateFile {
		b.unwatch(v, sub.watched) // and try again
		sub.watched = b.watchNames(v, sub.names)
	}
	b.mu.Unlock()
	notify()
}

// Subscribe makes notify run whenever the file at path changes on disk,
// coalescing the events of one save, until Unsubscribe or the end of s.
// The path is taken as read_file takes it and must name a regular file in
// the workspace that the engine can read. It returns the file's absolute
// path in the workspace (under Workspace().Dir()). notify runs on a
// goroutine of its own and must not block for long.
func (e *Engine) Subscribe(s *Session, path string, notify func()) (string, error) {
	rel, err := e.board.subscribe(s, path, notify)
	if err != nil {
		return "", err
	}
	return filepath.Join(e.ws.dir, filepath.FromSlash(rel)), nil
}

// Unsubscribe ends s's subscription to the file at path, if it has one.
func (e *Engine) Unsubscribe(s *Session, path string) error {
	return e.board.unsubscribe(s, path)
}

// ReadRaw returns the content of the regular file at path, taken as
// read_file takes it, whole, up to the engine's MaxFileBytes; a text the
// session in ctx is shown this way counts as read, for its notices. It
// also returns the file's path in the workspace.
func (e *Engine) ReadRaw(ctx context.Context, path string) ([]byte, string, error) {
	rel, err := e.ws.Rel(path)
	if err != nil {
		return nil, "", err
	}
	data, fi, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
	if err != nil {
		return nil, "", err
	}
	version := hashline.Version(data)
	e.versions.keep(version, data, "")
	e.board.served(ctx, rel, version, data, fi)
	return data, rel, nil
}
