package praxis

import (
	"bytes"
	"errors"
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

type memoryKeyArgs struct {
	Key string `json:"key" minLength:"1" maxLength:"64" jsonschema:"Note name: letters, digits, _ and -, with / for topics (project/build)."`
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
