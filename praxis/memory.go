package praxis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	defaultMemoryDir      = ".praxis/memory"
	defaultMaxMemoryBytes = 256 << 10
	maxMemoryKey          = 64
	memoryExt             = ".md"
	memoryStateDir        = ".state" // the store's intent records, and its lock when it lies outside the workspace
	maxMemoryHits         = 200
	memoryLineClip        = 300
)

// memoryKeyRule is what E_INVALID_ARGS says of a bad key.
const memoryKeyRule = "a key is 1-64 characters of A-Z a-z 0-9 _ -, with / between topic parts (notes/build, not /notes, notes/ or notes//build)"

// MemoryNote describes one note of the engine's memory store.
type MemoryNote struct {
	Key       string    `json:"key"`
	Size      int64     `json:"size"`
	FirstLine string    `json:"first_line"`
	Modified  time.Time `json:"modified"`
}

// MemoryKeys returns the notes of the memory store, sorted by key. A store
// that does not exist yet has no notes. Front ends use it to list notes as
// resources (memory://KEY).
func (e *Engine) MemoryKeys() ([]MemoryNote, error) {
	root, err := e.memoryRoot(false)
	if err != nil || root == nil {
		return nil, err
	}
	defer root.Close()
	return memoryNotes(root, true)
}

// ReadMemory returns the content of the note key. A key that breaks the
// key rule is an *Error with code E_INVALID_ARGS; a missing note, one with
// E_NOT_FOUND.
func (e *Engine) ReadMemory(key string) (string, error) {
	if err := checkMemoryKey(key); err != nil {
		return "", err
	}
	root, err := e.memoryRoot(false)
	if err != nil {
		return "", err
	}
	if root == nil {
		return "", Errorf(ENotFound, "memory note %s does not exist", key)
	}
	defer root.Close()
	data, err := readNote(root, key, e.maxMemoryBytes())
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// readNote reads the note key from root. A missing note is E_NOT_FOUND;
// anything but a regular file is E_NOT_REGULAR, and a FIFO is never waited
// on; a note over limit bytes (edited by hand, say) is E_TOO_LARGE.
func readNote(root *os.Root, key string, limit int64) ([]byte, error) {
	f, err := openNote(root, key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, Errorf(EIO, "reading memory note %s: %v", key, errors.Unwrap(err))
	}
	if int64(len(data)) > limit {
		return nil, Errorf(ETooLarge, "memory note %s is over the limit of %d bytes", key, limit).
			WithDetail("Shorten it by hand, or replace it with write_memory.")
	}
	return data, nil
}

// openNote opens the note key for reading; see readNote.
func openNote(root *os.Root, key string) (*os.File, error) {
	f, err := root.OpenFile(key+memoryExt, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(ENotFound, "memory note %s does not exist", key)
		}
		return nil, Errorf(EIO, "reading memory note %s: %v", key, errors.Unwrap(err))
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = Errorf(ENotRegular, "memory note %s is not a regular file (%s)", key, fileKind(fi.Mode()))
	} else if err != nil {
		err = Errorf(EIO, "reading memory note %s: %v", key, errors.Unwrap(err))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkMemoryWritable checks a key that is to be written or deleted: it
// must follow the key rule and, when the store lies in the workspace, its
// file must not be one of the protected paths.
func (e *Engine) checkMemoryWritable(key string) error {
	if err := checkMemoryKey(key); err != nil {
		return err
	}
	if rel, err := e.ws.Rel(e.memoryDir()); err == nil {
		return e.checkWritable(path.Join(rel, key+memoryExt))
	}
	return nil
}

// checkMemoryKey enforces the key rule.
func checkMemoryKey(key string) error {
	bad := len(key) == 0 || len(key) > maxMemoryKey || key[0] == '/' || key[len(key)-1] == '/' || strings.Contains(key, "//")
	for i := 0; !bad && i < len(key); i++ {
		c := key[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '/')
	}
	if bad {
		return Errorf(EInvalidArgs, "memory key %q is not valid: %s", key, memoryKeyRule)
	}
	return nil
}

// memoryDir returns the absolute directory of the notes.
func (e *Engine) memoryDir() string {
	dir := e.opts.MemoryDir
	if dir == "" {
		dir = defaultMemoryDir
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.ws.Dir(), filepath.FromSlash(dir))
	}
	return dir
}

// memoryRoot opens the notes directory. With create unset, a missing
// directory gives a nil root and no error. A directory inside the
// workspace is created and opened through the workspace's root, so that a
// symlink cannot move the notes out of it.
func (e *Engine) memoryRoot(create bool) (*os.Root, error) {
	dir := e.memoryDir()
	rel, relErr := e.ws.Rel(dir)
	var root *os.Root
	var err error
	if relErr == nil {
		if create {
			err = e.ws.root.MkdirAll(rel, 0o755)
		}
		if err == nil {
			root, err = e.ws.root.OpenRoot(rel)
		}
	} else {
		if create {
			err = os.MkdirAll(dir, 0o755)
		}
		if err == nil {
			root, err = os.OpenRoot(dir)
		}
	}
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, Errorf(EIO, "opening the memory directory %s: %v", dir, err)
	}
	return root, nil
}

func (e *Engine) maxMemoryBytes() int64 {
	if e.opts.MaxMemoryBytes > 0 {
		return e.opts.MaxMemoryBytes
	}
	return defaultMaxMemoryBytes
}

type writeMemoryArgs struct {
	Key     string `json:"key" minLength:"1" maxLength:"64" jsonschema:"Note name: letters, digits, _ and -, with / for topics (project/build)."`
	Content string `json:"content" jsonschema:"Markdown text."`
	Mode    string `json:"mode,omitempty" enum:"replace,append" default:"replace" jsonschema:"replace the note or append to it."`
}

// writeMemoryInfo is write_memory's structured result.
type writeMemoryInfo struct {
	Key     string `json:"key"`
	Size    int    `json:"size"`
	Created bool   `json:"created"`

	text string
}

func (w writeMemoryInfo) Text() string { return w.text }

func (e *Engine) writeMemory(ctx context.Context, a writeMemoryArgs) (writeMemoryInfo, error) {
	if err := e.checkMemoryWritable(a.Key); err != nil {
		return writeMemoryInfo{}, err
	}
	if !utf8.ValidString(a.Content) {
		return writeMemoryInfo{}, Errorf(EInvalidArgs, "content is not valid UTF-8")
	}
	c, err := e.memoryCommitter(true)
	if err != nil {
		return writeMemoryInfo{}, err
	}
	defer c.root.Close()
	root := c.root
	file := a.Key + memoryExt
	var data []byte
	created := false
	err = c.commit(ctx, func() ([]fileWrite, error) {
		var old []byte
		var err error
		if a.Mode == "append" {
			old, err = readNote(root, a.Key, e.maxMemoryBytes())
			created = CodeOf(err) == ENotFound
		} else {
			_, err = root.Lstat(file)
			if created = errors.Is(err, fs.ErrNotExist); !created && err != nil {
				err = Errorf(EIO, "reading memory note %s: %v", a.Key, errors.Unwrap(err))
			}
		}
		if err != nil && !created {
			return nil, err
		}
		data = []byte(a.Content)
		if a.Mode == "append" {
			data = make([]byte, 0, len(old)+len(a.Content)+2)
			data = append(data, old...)
			if len(old) > 0 && old[len(old)-1] != '\n' {
				data = append(data, '\n')
			}
			data = append(data, a.Content...)
			if len(a.Content) > 0 && a.Content[len(a.Content)-1] != '\n' {
				data = append(data, '\n')
			}
		}
		if limit := e.maxMemoryBytes(); int64(len(data)) > limit {
			return nil, Errorf(ETooLarge, "memory note %s would be %d bytes, over the limit of %d bytes", a.Key, len(data), limit).
				WithDetail("Nothing was written. Shorten the note, or split it into several keys (topic/part).")
		}
		if dir := path.Dir(file); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, Errorf(EIO, "creating the topic directory of %s: %v", a.Key, err)
			}
		}
		// An append is made from the note as read: it must still hold that.
		return []fileWrite{{Path: file, Data: data, Perm: 0o644, Check: a.Mode == "append", Base: old, Absent: created}}, nil
	})
	if err != nil {
		if CodeOf(err) == EIO {
			err = prefixError(err, "writing memory note "+a.Key+": ")
		}
		return writeMemoryInfo{}, err
	}
	verb := "replaced"
	switch {
	case created:
		verb = "created"
	case a.Mode == "append":
		verb = "appended to"
	}
	return writeMemoryInfo{Key: a.Key, Size: len(data), Created: created,
		text: fmt.Sprintf("%s memory note %s: %d bytes", verb, a.Key, len(data))}, nil
}

type memoryKeyArgs struct {
	Key string `json:"key" minLength:"1" maxLength:"64" jsonschema:"Note name: letters, digits, _ and -, with / for topics (project/build)."`
}

// readMemoryInfo is read_memory's structured result; Size is set when the
// note exists.
type readMemoryInfo struct {
	Key    string `json:"key"`
	Exists bool   `json:"exists"`
	Size   *int   `json:"size,omitempty"`

	text string
}

func (r readMemoryInfo) Text() string { return r.text }

func (e *Engine) readMemory(ctx context.Context, a memoryKeyArgs) (readMemoryInfo, error) {
	content, err := e.ReadMemory(a.Key)
	if CodeOf(err) == ENotFound {
		keys, lerr := e.MemoryKeys()
		if lerr != nil {
			return readMemoryInfo{}, lerr
		}
		text := fmt.Sprintf("memory note %s does not exist.", a.Key)
		if len(keys) == 0 {
			text += " The memory store has no notes yet; write_memory creates one."
		} else {
			text += " Existing keys:"
			for _, k := range keys {
				text += "\n" + k.Key
			}
		}
		return readMemoryInfo{Key: a.Key, Exists: false, text: text}, nil
	}
	if err != nil {
		return readMemoryInfo{}, err
	}
	size := len(content)
	return readMemoryInfo{Key: a.Key, Exists: true, Size: &size, text: content}, nil
}

// noArgs are the arguments of a tool that takes none.
type noArgs struct{}

// listMemoryInfo is list_memory's structured result.
type listMemoryInfo struct {
	Notes []MemoryNote `json:"notes"`

	text string
}

func (l listMemoryInfo) Text() string { return l.text }

func (e *Engine) listMemory(ctx context.Context, _ noArgs) (listMemoryInfo, error) {
	notes, err := e.MemoryKeys()
	if err != nil {
		return listMemoryInfo{}, err
	}
	if len(notes) == 0 {
		return listMemoryInfo{Notes: []MemoryNote{}, text: "# no memory notes yet; write_memory creates one"}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %d memory notes: key, size in bytes, first line\n", len(notes))
	for _, n := range notes {
		fmt.Fprintf(&b, "%s  %d  %s\n", n.Key, n.Size, n.FirstLine)
	}
	return listMemoryInfo{Notes: notes, text: b.String()}, nil
}

// memoryNotes lists the notes below root, sorted by key, with their first
// lines if firstLines is set.
func memoryNotes(root *os.Root, firstLines bool) ([]MemoryNote, error) {
	var notes []MemoryNote
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable topic is left out
		}
		name := d.Name()
		if p != "." && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // the lock and temporary files
		}
		key, ok := strings.CutSuffix(p, memoryExt)
		if d.IsDir() || !d.Type().IsRegular() || !ok || checkMemoryKey(key) != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // deleted meanwhile
		}
		note := MemoryNote{Key: key, Size: info.Size(), Modified: info.ModTime()}
		if firstLines {
			if f, err := openNote(root, key); err == nil {
				head, _ := io.ReadAll(io.LimitReader(f, 4096))
				f.Close()
				note.FirstLine = firstLine(head)
			}
		}
		notes = append(notes, note)
		return nil
	})
	if err != nil {
		return nil, Errorf(EIO, "listing memory notes: %v", err)
	}
	slices.SortFunc(notes, func(a, b MemoryNote) int { return strings.Compare(a.Key, b.Key) })
	return notes, nil
}

// firstLine returns the first non-blank line of a note, clipped.
func firstLine(data []byte) string {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return clipText(string(line), 120)
		}
	}
	return ""
}

// clipText cuts s to at most n bytes at a character boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

type searchMemoryArgs struct {
	Query string `json:"query" minLength:"1" jsonschema:"Words to find; a line matches when it holds all of them, in any case."`
}

// searchMemoryInfo is search_memory's structured result.
type searchMemoryInfo struct {
	Matches int `json:"matches"`
	Notes   int `json:"notes"`

	text string
}

func (s searchMemoryInfo) Text() string { return s.text }

func (e *Engine) searchMemory(ctx context.Context, a searchMemoryArgs) (searchMemoryInfo, error) {
	words := strings.Fields(strings.ToLower(a.Query))
	if len(words) == 0 {
		return searchMemoryInfo{}, Errorf(EInvalidArgs, "query holds no words")
	}
	root, err := e.memoryRoot(false)
	if err != nil {
		return searchMemoryInfo{}, err
	}
	var notes []MemoryNote
	if root != nil {
		defer root.Close()
		if notes, err = memoryNotes(root, false); err != nil {
			return searchMemoryInfo{}, err
		}
	}
	var body strings.Builder
	hits, files := 0, 0
	for _, n := range notes {
		if err := ctx.Err(); err != nil {
			return searchMemoryInfo{}, Errorf(ECancelled, "search_memory cancelled")
		}
		data, err := readNote(root, n.Key, e.maxMemoryBytes())
		if err != nil {
			continue // deleted meanwhile, or grown past the cap by hand
		}
		content := string(data)
		found := false
		for i, line := range strings.Split(content, "\n") {
			lower := strings.ToLower(line)
			all := true
			for _, w := range words {
				if !strings.Contains(lower, w) {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			if hits < maxMemoryHits {
				fmt.Fprintf(&body, "%s:%d: %s\n", n.Key, i+1, clipText(strings.TrimRight(line, "\r"), memoryLineClip))
			}
			hits++
			found = true
		}
		if found {
			files++
		}
	}
	head := fmt.Sprintf("# %d matching lines in %d notes for %q\n", hits, files, a.Query)
	if hits > maxMemoryHits {
		body.WriteString(fmt.Sprintf("# truncated: showing %d of %d lines; use more words\n", maxMemoryHits, hits))
	}
	return searchMemoryInfo{Matches: hits, Notes: files, text: head + body.String()}, nil
}

// deleteMemoryInfo is delete_memory's structured result.
type deleteMemoryInfo struct {
	Key string `json:"key"`

	text string
}

func (d deleteMemoryInfo) Text() string { return d.text }

func (e *Engine) deleteMemory(ctx context.Context, a memoryKeyArgs) (deleteMemoryInfo, error) {
	if err := e.checkMemoryWritable(a.Key); err != nil {
		return deleteMemoryInfo{}, err
	}
	c, err := e.memoryCommitter(false)
	if err != nil {
		return deleteMemoryInfo{}, err
	}
	if c == nil {
		return deleteMemoryInfo{}, Errorf(ENotFound, "memory note %s does not exist; the memory store has no notes", a.Key)
	}
	root := c.root
	defer root.Close()
	release, err := c.lock.acquire(ctx)
	if err != nil {
		return deleteMemoryInfo{}, err
	}
	defer release()
	c.recover()
	if err := root.Remove(a.Key + memoryExt); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return deleteMemoryInfo{}, Errorf(ENotFound, "memory note %s does not exist", a.Key).WithDetail("list_memory shows the existing keys.")
		}
		return deleteMemoryInfo{}, Errorf(EIO, "deleting memory note %s: %v", a.Key, errors.Unwrap(err))
	}
	// Remove topic directories left empty; Remove fails on one that is not.
	for dir := path.Dir(a.Key); dir != "."; dir = path.Dir(dir) {
		if root.Remove(dir) != nil {
			break
		}
	}
	return deleteMemoryInfo{Key: a.Key, text: "deleted memory note " + a.Key}, nil
}

// memoryCommitter returns the committer of the memory store, on a root of
// the store's directory that the caller closes. With create unset, a store
// that does not exist gives nil and no error. A store inside the workspace
// shares the workspace's commit lock, so that its notes are not written by
// edit_file and write_memory at once; one outside has a lock of its own.
func (e *Engine) memoryCommitter(create bool) (*committer, error) {
	root, err := e.memoryRoot(create)
	if err != nil || root == nil {
		return nil, err
	}
	lock := &commitLock{root: root, dir: memoryStateDir, sem: e.memSem}
	if _, err := e.ws.Rel(e.memoryDir()); err == nil {
		lock = e.commits.lock
	}
	return &committer{root: root, state: memoryStateDir, lock: lock, sync: !e.opts.NoSync, log: e.log, hook: e.hook,
		allowed: func(rel string) error {
			key, ok := strings.CutSuffix(rel, memoryExt)
			if !ok {
				return Errorf(EInvalidArgs, "%s is not a memory note", rel)
			}
			return e.checkMemoryWritable(key)
		}}, nil
}
