package journal

import (
	"errors"
	"os"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the reader: it never panics, the good
// part it reports is a prefix of the file, and a clean read covers it all.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	w, _ := Create(dir, "seed")
	w.Append(map[string]any{"type": "run_start", "task": "x"})
	w.Append(map[string]any{"type": "run_complete"})
	w.Close()
	good, _ := os.ReadFile(Path(dir, "seed"))
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"seq":1,"event":{},"sum":"00"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(Path(dir, "seed"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		log, err := Read(dir, "seed")
		if log == nil {
			t.Fatalf("no log: %v", err)
		}
		if log.Size > int64(len(data)) {
			t.Fatalf("size %d of %d bytes", log.Size, len(data))
		}
		var ce *CorruptError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("error %v is not a corruption", err)
		}
		if err == nil && log.Torn == nil && log.Size != int64(len(data)) {
			t.Fatalf("a clean read covers %d of %d bytes", log.Size, len(data))
		}
		if err == nil && log.Torn != nil && log.Size+int64(log.Torn.Bytes) != int64(len(data)) {
			t.Fatalf("good part %d + torn %d != %d", log.Size, log.Torn.Bytes, len(data))
		}
	})
}
