// Package walk lists the regular files below a directory of a workspace,
// quickly and without leaving it. Several goroutines read directories at
// once; each directory and file is opened relative to its parent directory
// without following symbolic links, so a walk never leaves the tree it
// starts in and a link cycle cannot trap it. Symbolic links are neither
// followed nor reported, as ripgrep and fd do by default.
//
// Hidden entries (names starting with ".") are skipped unless asked for,
// and so are entries that .gitignore or .ignore files exclude, with the
// rules of gitignore(5); a ".git" directory is always skipped.
package walk

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Options configure a walk. The zero value skips hidden entries and
// disregards ignore files.
type Options struct {
	// Hidden includes entries whose names start with ".".
	Hidden bool
	// Ignore honours .gitignore and .ignore files in the directories walked
	// and in the workspace directories above the start.
	Ignore bool
	// Workers is the number of goroutines reading directories and visiting
	// files. Default GOMAXPROCS.
	Workers int
	// Select, if set, decides on each entry before the hidden and ignore
	// rules do, as ripgrep's --glob does: Include takes it (a directory is
	// then read even if hidden or ignored), Exclude drops it, and Default
	// leaves it to the rules. sub is the entry's path relative to the start
	// directory. Select is called from several goroutines at once.
	Select func(sub, name string, isDir bool) Choice
}

// Choice is what an Options.Select function decides.
type Choice int8

// The choices of Options.Select.
const (
	Default Choice = iota
	Include
	Exclude
)

// Stats count what a walk saw.
type Stats struct {
	Dirs       int64 // directories read
	Files      int64 // files visited
	Unreadable int64 // directories that could not be opened or read, and were skipped
}

// ErrNotRegular is returned by File.Read when the file was replaced by
// something else than a regular file during the walk.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned by File.Read for a file over the size limit.
var ErrTooLarge = errors.New("file too large")

// File is a regular file found by a walk. It is valid only during the visit
// call it is passed to.
type File struct {
	dir *dirNode
	// Name is the file's name in its directory.
	Name string
}

// Path returns the file's workspace-relative, slash-separated path.
func (f *File) Path() string { return join(f.dir.rel, f.Name) }

// Read reads the whole file into buf, growing it as needed, and returns
// the bytes read: they stay valid until buf is used again. A file over max
// bytes is ErrTooLarge.
func (f *File) Read(buf []byte, max int64) ([]byte, error) {
	return f.dir.fd.readFile(f.Name, buf, max, nil)
}

// Scan reads the file into buf in pieces and gives each to to.Piece, in
// order, until it returns false. Every piece but the last ends with "\n",
// so that no line is cut; a file smaller than buf is one piece, with
// whole set. buf grows only for a line longer than itself, after to.Long has
// seen the start of that line and not stopped the scan; Scan returns buf
// for the next call. A file over max bytes is ErrTooLarge, which may come
// after some of its pieces.
//
// The memory a search holds is then its buffer's, whatever the size of the
// files it reads: growing a buffer to the largest file of a tree churns
// fresh memory and brings on the garbage collector mid-walk.
func (f *File) Scan(buf []byte, max int64, to Pieces) ([]byte, error) {
	return f.dir.fd.readFile(f.Name, buf, max, to)
}

// Pieces takes the pieces of a file File.Scan reads.
type Pieces interface {
	// Piece takes the next piece; false stops the scan.
	Piece(p []byte, whole bool) bool
	// Long takes the start of a line longer than the buffer, before the
	// buffer grows to hold it; false stops the scan.
	Long(start []byte) bool
}

// nextPiece gives to, if any, the lines buf holds whole, keeps the rest at
// buf's start and adds what it gave to *done; ok is false when to asks to
// stop. buf is full: without a line break in it, or without to, it is
// returned as it is, to be grown.
func nextPiece(buf []byte, to Pieces, done *int64) (rest []byte, ok bool) {
	if to == nil {
		return buf, true
	}
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 {
		if !to.Long(buf) {
			return buf[:0], false
		}
		return buf, true
	}
	if !to.Piece(buf[:i+1], false) {
		return buf[:0], false
	}
	*done += int64(i + 1)
	return buf[:copy(buf, buf[i+1:])], true
}

// endRead ends a read at the end of the file: whole, it returns the bytes
// read; in pieces, it gives to the last one and returns the buffer.
func endRead(buf []byte, to Pieces, whole bool) ([]byte, error) {
	if to == nil {
		return buf, nil
	}
	if len(buf) > 0 || whole {
		to.Piece(buf, whole)
	}
	return buf[:0], nil
}

// ModTime returns the file's modification time in nanoseconds since the
// Unix epoch.
func (f *File) ModTime() (int64, error) { return f.dir.fd.modTime(f.Name) }

// Visit is called for every file a walk finds, from several goroutines at
// once; worker, from 0 to Options.Workers-1, tells which, so that a caller
// can keep one buffer per worker. An error stops the walk and is returned
// by Walk.
type Visit func(worker int, f *File) error

// Walk visits the regular files below start, a workspace-relative directory
// of root ("." or "" for the root itself), in no particular order. The start
// directory itself is never skipped, hidden or ignored. Walk stops when ctx
// is done and returns its error. Directories that cannot be read are
// skipped and counted.
func Walk(ctx context.Context, root *os.Root, start string, opts Options, visit Visit) (Stats, error) {
	start = path.Clean("/" + start)[1:] // "" for the root
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	fd, err := openStart(root, start)
	if err != nil {
		return Stats{}, err
	}
	w := &walker{ctx: ctx, opts: opts, visit: visit, prefix: len(start) + 1}
	if start == "" {
		w.prefix = 0
	}
	w.cond = sync.NewCond(&w.mu)
	top := &dirNode{rel: start, fd: fd}
	if opts.Ignore {
		top.outer = ancestorIgnores(root, start)
	}
	top.refs.Store(1)
	w.stack = append(w.stack, top)
	w.pending = 1

	stop := context.AfterFunc(ctx, func() { w.fail(ctx.Err()) })
	defer stop()
	var wg sync.WaitGroup
	for i := range opts.Workers {
		wg.Go(func() { w.run(i) })
	}
	wg.Wait()
	for _, d := range w.stack { // left over after a failure: never read
		d.parent.release()
		d.release() // closes the start directory if the walk stopped before it
	}
	st := Stats{Dirs: w.dirs.Load(), Files: w.files.Load(), Unreadable: w.unreadable.Load()}
	if w.err != nil {
		return st, w.err
	}
	return st, ctx.Err()
}

// ancestorIgnores loads the ignore files of the directories from the
// workspace root down to start's parent.
func ancestorIgnores(root *os.Root, start string) *ignores {
	var s *ignores
	if start == "" {
		return nil
	}
	dir := ""
	for _, part := range strings.Split(start, "/") {
		s = s.push(dir, readIgnoreFile(root, join(dir, gitignoreName)), readIgnoreFile(root, join(dir, dotignoreName)))
		dir = join(dir, part)
	}
	return s
}

// readIgnoreFile returns the contents of the ignore file name, or nil if
// it is missing, unreadable, not a regular file or too large. A FIFO is
// never waited on.
func readIgnoreFile(root *os.Root, name string) []byte {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreBytes {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes))
	if err != nil {
		return nil
	}
	return data
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// dirNode is a directory waiting to be read or being read.
type dirNode struct {
	parent *dirNode
	name   string // name in parent
	rel    string // workspace-relative path, "" for the root
	fd     dirFD
	outer  *ignores     // the rules in force in the parent directory
	refs   atomic.Int32 // one for its own reading, one per child not yet opened
}

// release drops a reference and closes the directory with the last one.
func (d *dirNode) release() {
	if d != nil && d.refs.Add(-1) == 0 {
		d.fd.close()
	}
}

type walker struct {
	ctx    context.Context
	opts   Options
	visit  Visit
	prefix int // length of the start directory's path and its "/"

	mu      sync.Mutex
	cond    *sync.Cond
	stack   []*dirNode // directories to read, the deepest last
	pending int        // directories in the stack or being read
	err     error

	dirs, files, unreadable atomic.Int64
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

// next returns a directory to read, or nil when the walk is over.
func (w *walker) next() *dirNode {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 && w.pending > 0 && w.err == nil {
		w.cond.Wait()
	}
	if w.err != nil || len(w.stack) == 0 {
		return nil
	}
	d := w.stack[len(w.stack)-1]
	w.stack[len(w.stack)-1] = nil
	w.stack = w.stack[:len(w.stack)-1]
	return d
}

func (w *walker) push(ds []*dirNode) {
	if len(ds) == 0 {
		return
	}
	w.mu.Lock()
	w.stack = append(w.stack, ds...)
	w.pending += len(ds)
	if len(ds) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

func (w *walker) finished() {
	w.mu.Lock()
	if w.pending--; w.pending == 0 {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

// worker is one goroutine's scratch space.
type worker struct {
	id      int
	entries []entry
	buf     []byte
	subdirs []*dirNode
	file    File
}

func (w *walker) run(id int) {
	wk := &worker{id: id, buf: make([]byte, 32<<10)}
	for {
		d := w.next()
		if d == nil {
			return
		}
		err := w.read(wk, d)
		d.release()
		if err != nil {
			w.fail(err)
		}
		w.finished()
	}
}

// read opens d, reads its entries, queues its subdirectories and visits
// its files.
func (w *walker) read(wk *worker, d *dirNode) error {
	if err := w.ctx.Err(); err != nil {
		d.parent.release()
		return err
	}
	if d.parent != nil {
		fd, err := d.parent.fd.openDir(d.name)
		d.parent.release()
		if err != nil {
			w.unreadable.Add(1)
			d.fd = noDir
			return nil
		}
		d.fd = fd
	}
	var err error
	wk.entries, err = d.fd.readDir(wk.buf, wk.entries[:0])
	if err != nil {
		w.unreadable.Add(1)
		return nil
	}
	w.dirs.Add(1)
	rules := d.outer
	if w.opts.Ignore {
		rules = w.loadIgnores(wk, d)
	}
	wk.subdirs = wk.subdirs[:0]
	for i := range wk.entries {
		e := &wk.entries[i]
		if e.typ == typeUnknown {
			e.typ = d.fd.lstatType(e.name)
		}
		if e.typ != typeDir && e.typ != typeFile {
			continue // symlinks, devices, FIFOs, sockets, vanished entries
		}
		isDir := e.typ == typeDir
		if isDir && e.name == ".git" {
			continue
		}
		choice := Default
		if w.opts.Select != nil {
			choice = w.opts.Select(join(d.rel, e.name)[w.prefix:], e.name, isDir)
		}
		switch choice {
		case Exclude:
			continue
		case Default:
			v := noRule
			if rules != nil {
				v = rules.check(join(d.rel, e.name), isDir)
			}
			if v == ignored || (v == noRule && !w.opts.Hidden && e.name[0] == '.') {
				continue
			}
		}
		if isDir {
			child := &dirNode{parent: d, name: e.name, rel: join(d.rel, e.name), fd: noDir, outer: rules}
			child.refs.Store(1)
			d.refs.Add(1)
			wk.subdirs = append(wk.subdirs, child)
			continue
		}
		if err := w.ctx.Err(); err != nil {
			w.push(wk.subdirs)
			return err
		}
		w.files.Add(1)
		wk.file = File{dir: d, Name: e.name}
		if err := w.visit(wk.id, &wk.file); err != nil {
			w.push(wk.subdirs)
			return err
		}
	}
	w.push(wk.subdirs)
	return nil
}

// loadIgnores returns the rules in force in d: those above it and those of
// its own ignore files.
func (w *walker) loadIgnores(wk *worker, d *dirNode) *ignores {
	var git, dot []byte
	for _, e := range wk.entries {
		if e.typ == typeDir || e.typ == typeSymlink || e.typ == typeOther {
			continue
		}
		switch e.name {
		case gitignoreName:
			git, _ = d.fd.readFile(e.name, nil, maxIgnoreBytes, nil)
		case dotignoreName:
			dot, _ = d.fd.readFile(e.name, nil, maxIgnoreBytes, nil)
		}
	}
	if git == nil && dot == nil {
		return d.outer
	}
	return d.outer.push(d.rel, git, dot)
}

const maxIgnoreBytes = 1 << 20 // ignore files past this size are disregarded

type entryType uint8

const (
	typeUnknown entryType = iota
	typeFile
	typeDir
	typeSymlink
	typeOther
)

type entry struct {
	name string
	typ  entryType
}
