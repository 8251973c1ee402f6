package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

type ev struct {
	Type string `json:"type"`
	N    int    `json:"n"`
}

func writeN(t *testing.T, dir, id string, n int) *Writer {
	t.Helper()
	w, err := Create(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		seq, err := w.Append(ev{"step", i})
		if err != nil {
			t.Fatal(err)
		}
		if seq != int64(i) {
			t.Fatalf("Append %d: seq %d", i, seq)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	return w
}

func events(t *testing.T, log *Log) []ev {
	t.Helper()
	var out []ev
	for _, r := range log.Records {
		var e ev
		if err := json.Unmarshal(r.Event, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := writeN(t, dir, "s1", 5)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := Read(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := events(t, log)
	if len(got) != 5 || log.Torn != nil {
		t.Fatalf("got %d records, torn %v", len(got), log.Torn)
	}
	for i, e := range got {
		if e.N != i+1 || log.Records[i].Seq != int64(i+1) {
			t.Errorf("record %d: %+v seq %d", i, e, log.Records[i].Seq)
		}
	}
	fi, _ := os.Stat(Path(dir, "s1"))
	if log.Size != fi.Size() {
		t.Errorf("Size %d, file %d", log.Size, fi.Size())
	}
}

// The checksum is bound to the session ID: the same lines under another
// name do not verify.
func TestChainBoundToID(t *testing.T) {
	dir := t.TempDir()
	writeN(t, dir, "a", 2).Close()
	b, _ := os.ReadFile(Path(dir, "a"))
	os.WriteFile(Path(dir, "b"), b, 0o644)
	_, err := Read(dir, "b")
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != 1 {
		t.Fatalf("err = %v, want corruption at line 1", err)
	}
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	writeN(t, dir, "s", 3).Close()
	p := Path(dir, "s")
	full, _ := os.ReadFile(p)
	// Every cut inside the last line is a torn write.
	lines := bytes.SplitAfter(full, []byte("\n"))
	start := len(full) - len(lines[2]) - len(lines[3]) // lines[3] is empty
	for cut := start + 1; cut < len(full); cut++ {
		os.WriteFile(p, full[:cut], 0o644)
		log, err := Read(dir, "s")
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if len(log.Records) != 2 || log.Torn == nil || log.Torn.Line != 3 || log.Torn.Bytes != cut-start {
			t.Fatalf("cut %d: %d records, torn %+v", cut, len(log.Records), log.Torn)
		}
	}
}

func TestCorruptMiddleLine(t *testing.T) {
	dir := t.TempDir()
	writeN(t, dir, "s", 4).Close()
	p := Path(dir, "s")
	full, _ := os.ReadFile(p)
	lines := bytes.SplitAfter(full, []byte("\n"))
	cases := []struct {
		name   string
		edit   func([][]byte)
		line   int
		reason string
	}{
		{"changed event", func(l [][]byte) { l[1] = bytes.Replace(l[1], []byte(`"n":2`), []byte(`"n":9`), 1) }, 2, "checksum"},
		{"garbage", func(l [][]byte) { l[2] = []byte("not json\n") }, 3, "not a journal record"},
		{"missing line", func(l [][]byte) { l[1] = nil }, 2, "sequence number 3 where 2"},
		{"swapped lines", func(l [][]byte) { l[1], l[2] = l[2], l[1] }, 2, "sequence number"},
		{"bit flip in sum", func(l [][]byte) {
			i := bytes.Index(l[0], []byte(`"sum":"`)) + 8
			l[0] = append([]byte(nil), l[0]...)
			l[0][i] ^= 1
		}, 1, ""},
		{"extra field", func(l [][]byte) { l[1] = bytes.Replace(l[1], []byte(`{"seq"`), []byte(`{"x":1,"seq"`), 1) }, 2, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := make([][]byte, len(lines))
			copy(l, lines)
			tc.edit(l)
			os.WriteFile(p, bytes.Join(l, nil), 0o644)
			log, err := Read(dir, "s")
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *CorruptError", err)
			}
			if ce.Line != tc.line || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("line %d reason %q; want line %d, %q", ce.Line, ce.Reason, tc.line, tc.reason)
			}
			if len(log.Records) != tc.line-1 {
				t.Errorf("%d good records before line %d", len(log.Records), tc.line)
			}
			// Resume refuses a corrupt journal and leaves it as it is.
			before, _ := os.ReadFile(p)
			if _, _, err := Resume(dir, "s"); !errors.As(err, &ce) {
				t.Errorf("Resume: %v", err)
			}
			after, _ := os.ReadFile(p)
			if !bytes.Equal(before, after) {
				t.Error("Resume changed a corrupt journal")
			}
		})
	}
}

func TestResumeCutsTornLineAndContinuesChain(t *testing.T) {
	dir := t.TempDir()
	writeN(t, dir, "s", 3).Close()
	p := Path(dir, "s")
	full, _ := os.ReadFile(p)
	os.WriteFile(p, full[:len(full)-10], 0o644) // tear line 3

	w, log, err := Resume(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Records) != 2 || log.Torn == nil {
		t.Fatalf("resume read %d records, torn %v", len(log.Records), log.Torn)
	}
	if w.Seq() != 2 {
		t.Fatalf("Seq = %d", w.Seq())
	}
	for i := 3; i <= 5; i++ {
		if seq, err := w.Append(ev{"again", i}); err != nil || seq != int64(i) {
			t.Fatalf("Append: %d %v", seq, err)
		}
	}
	w.Close()
	log, err = Read(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	got := events(t, log)
	want := []ev{{"step", 1}, {"step", 2}, {"again", 3}, {"again", 4}, {"again", 5}}
	if fmt.Sprint(got) != fmt.Sprint(want) || log.Torn != nil {
		t.Fatalf("got %v torn %v", got, log.Torn)
	}
}

func TestOneWriterAtATime(t *testing.T) {
	dir := t.TempDir()
	w := writeN(t, dir, "s", 1)
	if _, _, err := Resume(dir, "s"); !errors.Is(err, ErrInUse) {
		t.Fatalf("second writer: %v, want ErrInUse", err)
	}
	if _, err := Create(dir, "s"); err == nil {
		t.Fatal("Create over an existing journal succeeded")
	}
	// Readers are not locked out.
	if _, err := Read(dir, "s"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w2, _, err := Resume(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
}

func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	w, _ := Create(dir, "s")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := w.Append(ev{fmt.Sprint(g), i}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	log, err := Read(dir, "s")
	if err != nil || len(log.Records) != 400 {
		t.Fatalf("%d records, %v", len(log.Records), err)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"", "../x", "a/b", ".hidden", "a..b", strings.Repeat("x", 129), "a b"} {
		if _, err := Create(dir, id); err == nil {
			t.Errorf("Create(%q) succeeded", id)
		}
		if _, err := Read(dir, id); err == nil {
			t.Errorf("Read(%q) succeeded", id)
		}
	}
	w, _ := Create(dir, "s")
	defer w.Close()
	if _, err := w.AppendRaw(json.RawMessage("{bad")); err == nil {
		t.Error("AppendRaw of invalid JSON succeeded")
	}
	if _, err := w.Append(func() {}); err == nil {
		t.Error("Append of a func succeeded")
	}
	if w.Seq() != 0 {
		t.Errorf("failed appends moved Seq to %d", w.Seq())
	}
	// A line with embedded newlines in strings stays one line.
	if _, err := w.AppendRaw(json.RawMessage("{\n\"text\": \"a\\nb\"\n}")); err != nil {
		t.Fatal(err)
	}
	log, err := Read(dir, "s")
	if err != nil || len(log.Records) != 1 || string(log.Records[0].Event) != `{"text":"a\nb"}` {
		t.Fatalf("%v %v", log, err)
	}
	if _, err := Read(dir, "missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(missing) = %v", err)
	}
}

func TestOverlongLineIsCorruption(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	dir := t.TempDir()
	writeN(t, dir, "s", 1).Close()
	f, _ := os.OpenFile(Path(dir, "s"), os.O_APPEND|os.O_WRONLY, 0)
	f.Write(bytes.Repeat([]byte("x"), MaxLine+1))
	f.Write([]byte("\n"))
	f.Close()
	log, err := Read(dir, "s")
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != 2 || len(log.Records) != 1 {
		t.Fatalf("%v", err)
	}
}

func TestListAndLatest(t *testing.T) {
	dir := t.TempDir()
	if l, err := List(dir + "/none"); err != nil || len(l) != 0 {
		t.Fatalf("missing dir: %v %v", l, err)
	}
	if _, err := Latest(dir); err == nil {
		t.Fatal("Latest of an empty dir succeeded")
	}
	writeN(t, dir, "20260101-000000-aa", 2).Close()
	writeN(t, dir, "20260101-000001-bb", 3).Close()
	os.WriteFile(dir+"/notes.txt", []byte("x"), 0o644)
	os.WriteFile(dir+"/bad.jsonl", []byte("garbage\n"), 0o644)
	// Make the order by modification time explicit.
	old := mustStat(t, Path(dir, "20260101-000001-bb")).ModTime()
	os.Chtimes(Path(dir, "bad"), old.Add(-1e9), old.Add(-1e9))
	os.Chtimes(Path(dir, "20260101-000000-aa"), old.Add(-2e9), old.Add(-2e9))
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range list {
		ids = append(ids, in.ID)
	}
	if strings.Join(ids, " ") != "20260101-000000-aa bad 20260101-000001-bb" {
		t.Fatalf("ids %v", ids)
	}
	if list[2].Size != mustStat(t, Path(dir, "20260101-000001-bb")).Size() || list[1].Path != Path(dir, "bad") {
		t.Errorf("infos %+v", list)
	}
	if id, _ := Latest(dir); id != "20260101-000001-bb" {
		t.Errorf("Latest = %s", id)
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// A journal swapped for a symlink leading out of the sessions directory is
// neither read nor appended to.
func TestSymlinkedJournalOutsideIsRefused(t *testing.T) {
	base := t.TempDir()
	dir, outside := base+"/sessions", base+"/outside"
	w := writeN(t, outside, "s1", 2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(Path(outside, "s1"), Path(dir, "s1")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(Path(outside, "s1"))
	if _, err := Read(dir, "s1"); err == nil {
		t.Error("Read followed a symlink out of the sessions directory")
	}
	if w, _, err := Resume(dir, "s1"); err == nil {
		w.Close()
		t.Error("Resume followed a symlink out of the sessions directory")
	}
	if after, _ := os.ReadFile(Path(outside, "s1")); !bytes.Equal(before, after) {
		t.Error("the journal outside changed")
	}
}
