// Package journal is the append-only record of an agent session: one JSON
// line per event, numbered from 1 and chained by BLAKE3 checksums, so that a
// session can be audited, replayed and resumed.
//
// A journal lives at DIR/ID.jsonl. Each line is
//
//	{"seq":N,"event":{...},"sum":"HEX"}
//
// where sum is the BLAKE3-256 of the previous line's sum (for the first line,
// of the genesis string "praxis-journal-v1\n" followed by the session ID), the
// decimal seq and a newline, and the exact bytes of event. Changing, removing
// or reordering a line breaks the chain from there on.
//
// Reading tells a torn last line (a crash in the middle of a write: the
// final line has no newline) from corruption (a complete line that does not
// parse, breaks the sequence or fails its checksum). The torn line is
// dropped and reported in Log.Torn; corruption stops the read with a
// *CorruptError naming the line, after the good records before it.
package journal

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/praxis-tools/praxis/internal/blake3"
	"github.com/praxis-tools/praxis/internal/filelock"
	"github.com/praxis-tools/praxis/internal/lazyre"
)

// Ext is the file name extension of a journal.
const Ext = ".jsonl"

// MaxLine bounds one line of a journal. A longer line is corruption.
const MaxLine = 64 << 20

var validID = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can name a session: letters, digits, '.', '_'
// and '-', starting with a letter or digit, at most 128 bytes.
func ValidID(id string) bool { return validID.Get().MatchString(id) && !strings.Contains(id, "..") }

// Path returns the journal file of session id in dir.
func Path(dir, id string) string { return filepath.Join(dir, id+Ext) }

// Record is one line of a journal.
type Record struct {
	Seq   int64           `json:"seq"`
	Event json.RawMessage `json:"event"`
	Sum   string          `json:"sum"`
}

// genesis is the chain value before the first record of session id.
func genesis(id string) []byte {
	h := blake3.Sum256([]byte("praxis-journal-v1\n" + id))
	return h[:]
}

// chain returns the checksum of a record given the previous one.
func chain(prev []byte, seq int64, event []byte) []byte {
	buf := make([]byte, 0, len(prev)+21+len(event))
	buf = append(buf, prev...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, '\n')
	buf = append(buf, event...)
	sum := blake3.Sum256(buf)
	return sum[:]
}

// ErrInUse is returned when another writer holds the session's journal.
var ErrInUse = errors.New("journal: the session is in use by another process")

// Writer appends records to one session's journal. It is safe for
// concurrent use; records are written in the order Append is called.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	id   string
	path string
	seq  int64
	prev []byte
	err  error // the first write error; every later call returns it
}

// Create starts the journal of a new session id in dir (created if
// missing). It fails if the journal exists.
func Create(dir, id string) (*Writer, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("journal: invalid session ID %q", id)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	p := Path(dir, id)
	f, err := openIn(dir, id+Ext, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, err
	}
	syncDir(dir)
	return &Writer{f: f, id: id, path: p, prev: genesis(id)}, nil
}

// Resume opens the journal of session id in dir to append to it, after
// reading it back. A torn last line is cut off the file before anything is
// appended; a corrupt journal is not opened (the error is a *CorruptError).
// It returns the log as read.
func Resume(dir, id string) (*Writer, *Log, error) {
	if !ValidID(id) {
		return nil, nil, fmt.Errorf("journal: invalid session ID %q", id)
	}
	p := Path(dir, id)
	f, err := openIn(dir, id+Ext, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	log, err := read(f, id)
	if err != nil {
		f.Close()
		return nil, log, err
	}
	if log.Torn != nil {
		if err := f.Truncate(log.Size); err != nil {
			f.Close()
			return nil, log, fmt.Errorf("journal: cutting the torn last line: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, log, fmt.Errorf("journal: %w", err)
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, log, fmt.Errorf("journal: %w", err)
	}
	w := &Writer{f: f, id: id, path: p, prev: genesis(id)}
	if n := len(log.Records); n > 0 {
		last := log.Records[n-1]
		w.seq = last.Seq
		w.prev, _ = hex.DecodeString(last.Sum)
	}
	return w, log, nil
}

// ID returns the session ID.
func (w *Writer) ID() string { return w.id }

// Path returns the journal's file name.
func (w *Writer) Path() string { return w.path }

// Seq returns the sequence number of the last record written, 0 before the
// first.
func (w *Writer) Seq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Append marshals event as JSON and appends it as the next record, in one
// write. It does not sync: call Sync at the points that must survive a
// crash. After a failed write every later call fails.
func (w *Writer) Append(event any) (seq int64, err error) {
	b, err := json.Marshal(event)
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	if _, raw := event.(json.RawMessage); raw {
		return w.AppendRaw(b) // Marshal keeps a RawMessage's layout
	}
	return w.appendLine(b) // Marshal's output is compact: one line
}

// AppendRaw appends event, a JSON value, as the next record, compacted
// onto one line.
func (w *Writer) AppendRaw(event json.RawMessage) (seq int64, err error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, event); err != nil {
		return 0, fmt.Errorf("journal: event is not JSON: %w", err)
	}
	return w.appendLine(buf.Bytes())
}

// appendLine appends ev, compact JSON, as the next record.
func (w *Writer) appendLine(ev []byte) (seq int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if w.f == nil {
		return 0, errors.New("journal: closed")
	}
	seq = w.seq + 1
	sum := chain(w.prev, seq, ev)
	line := make([]byte, 0, len(ev)+120)
	line = append(line, `{"seq":`...)
	line = strconv.AppendInt(line, seq, 10)
	line = append(line, `,"event":`...)
	line = append(line, ev...)
	line = append(line, `,"sum":"`...)
	line = hex.AppendEncode(line, sum)
	line = append(line, "\"}\n"...)
	if len(line) > MaxLine {
		return 0, fmt.Errorf("journal: record of %d bytes exceeds the %d-byte line limit", len(line), MaxLine)
	}
	if _, err := w.f.Write(line); err != nil {
		w.err = fmt.Errorf("journal: %w", err)
		return 0, w.err
	}
	w.seq, w.prev = seq, sum
	return seq, nil
}

// Sync flushes the journal to stable storage.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.f == nil {
		return errors.New("journal: closed")
	}
	if err := w.f.Sync(); err != nil {
		w.err = fmt.Errorf("journal: %w", err)
	}
	return w.err
}

// Close syncs and closes the journal.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.err
	}
	return errors.Join(serr, cerr)
}

// Log is a journal as read back.
type Log struct {
	ID      string
	Records []Record
	// Size is the byte length of the good records.
	Size int64
	// Torn, when not nil, is an incomplete last line that was ignored.
	Torn *Torn
}

// Torn describes an incomplete last line.
type Torn struct {
	Line   int   // line number, from 1
	Offset int64 // byte offset of the line
	Bytes  int   // its length
}

// CorruptError reports a complete line that is not a valid next record.
type CorruptError struct {
	Path   string
	Line   int
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal %s: line %d (byte %d) is corrupt: %s; the records before it are intact", e.Path, e.Line, e.Offset, e.Reason)
}

// Read reads the journal of session id in dir. On corruption it returns the
// records before the bad line together with a *CorruptError.
func Read(dir, id string) (*Log, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("journal: invalid session ID %q", id)
	}
	f, err := openIn(dir, id+Ext, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	return read(f, id)
}

// openIn opens name inside dir through an os.Root, so that a journal file
// swapped for a symlink cannot lead the journal outside dir.
func openIn(dir, name string, flag int, perm os.FileMode) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.OpenFile(name, flag, perm)
}

func read(f *os.File, id string) (*Log, error) {
	log := &Log{ID: id}
	br := bufio.NewReaderSize(f, 64<<10)
	prev := genesis(id)
	var off int64
	for line := 1; ; line++ {
		b, err := readLine(br)
		if len(b) == 0 && errors.Is(err, io.EOF) {
			return log, nil
		}
		if err == errLong {
			return log, &CorruptError{Path: f.Name(), Line: line, Offset: off, Reason: fmt.Sprintf("longer than %d bytes", MaxLine)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return log, fmt.Errorf("journal %s: %w", f.Name(), err)
		}
		if errors.Is(err, io.EOF) { // no newline: the write was cut short
			log.Torn = &Torn{Line: line, Offset: off, Bytes: len(b)}
			return log, nil
		}
		rec, sum, reason := parse(b[:len(b)-1], int64(line), prev)
		if reason != "" {
			return log, &CorruptError{Path: f.Name(), Line: line, Offset: off, Reason: reason}
		}
		log.Records = append(log.Records, rec)
		prev = sum
		off += int64(len(b))
		log.Size = off
	}
}

var errLong = errors.New("line too long")

// readLine returns the next line with its newline, or what is left before
// EOF without one.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > MaxLine {
			return nil, errLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

// parse checks one line against the expected seq and the previous sum.
func parse(b []byte, seq int64, prev []byte) (Record, []byte, string) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, nil, "not a journal record: " + err.Error()
	}
	if dec.More() {
		return rec, nil, "trailing data after the record"
	}
	if rec.Seq != seq {
		return rec, nil, fmt.Sprintf("sequence number %d where %d was expected", rec.Seq, seq)
	}
	if len(rec.Event) == 0 {
		return rec, nil, "no event"
	}
	sum := chain(prev, seq, rec.Event)
	if hex.EncodeToString(sum) != rec.Sum {
		return rec, nil, "checksum mismatch: the line, or one before it, was changed"
	}
	return rec, sum, ""
}

// Info describes a stored session.
type Info struct {
	ID      string
	Path    string
	Size    int64
	ModTime time.Time
}

// List returns the sessions in dir, oldest first (by modification time,
// then ID), without reading them. A missing dir holds no sessions.
func List(dir string) ([]Info, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var out []Info
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), Ext)
		if !ok || !e.Type().IsRegular() || !ValidID(id) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Info{ID: id, Path: filepath.Join(dir, e.Name()), Size: fi.Size(), ModTime: fi.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ModTime.Equal(out[j].ModTime) {
			return out[i].ModTime.Before(out[j].ModTime)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Latest returns the ID of the most recently written session in dir.
func Latest(dir string) (string, error) {
	list, err := List(dir)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", fmt.Errorf("journal: no sessions in %s", dir)
	}
	return list[len(list)-1].ID, nil
}

// syncDir makes a new directory entry durable; failures are ignored (not
// every file system supports it).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// lock takes an exclusive advisory lock on f, failing at once with
// ErrInUse if another process (or another open file) holds it. The lock goes
// with the file's close.
func lock(f *os.File) error {
	err := filelock.TryLock(f)
	switch {
	case errors.Is(err, filelock.ErrLocked):
		return ErrInUse
	case errors.Is(err, errors.ErrUnsupported):
		return nil // no cross-process lock on this system
	case err != nil:
		return fmt.Errorf("journal: lock: %w", err)
	}
	return nil
}
