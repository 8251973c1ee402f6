package praxis

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-tools/praxis/internal/filelock"
	"github.com/praxis-tools/praxis/praxis/hashline"
)

// TestRecoverInterruptedCommit leaves the state a commit killed at each of
// its steps would leave, then starts an engine: every batch ends all old or
// all new, and no temporary file or record remains.
func TestRecoverInterruptedCommit(t *testing.T) {
	const oldA, oldB, newA, newB = "old a\n", "old b\n", "new a\n", "new b\n"
	type file struct{ path, temp, data, old string }
	a := file{"a.txt", ".a.txt.praxis-000000000001.tmp", newA, oldA}
	b := file{"sub/b.txt", "sub/.b.txt.praxis-000000000002.tmp", newB, oldB}
	tests := []struct {
		name     string
		temps    map[string]string // temporary files present, by temp name
		disk     map[string]string // targets as the crash left them
		record   string            // "" for the intent record of a and b
		wantA    string
		wantB    string
		wantKeep bool // the record is left (a forged one)
	}{
		{name: "killed while writing temps", temps: map[string]string{a.temp: newA, b.temp: "new"},
			disk: map[string]string{"a.txt": oldA, "sub/b.txt": oldB}, wantA: oldA, wantB: oldB},
		{name: "killed before the second temp", temps: map[string]string{a.temp: newA},
			disk: map[string]string{"a.txt": oldA, "sub/b.txt": oldB}, wantA: oldA, wantB: oldB},
		{name: "killed before the renames", temps: map[string]string{a.temp: newA, b.temp: newB},
			disk: map[string]string{"a.txt": oldA, "sub/b.txt": oldB}, wantA: newA, wantB: newB},
		{name: "killed between the renames", temps: map[string]string{b.temp: newB},
			disk: map[string]string{"a.txt": newA, "sub/b.txt": oldB}, wantA: newA, wantB: newB},
		{name: "killed before the record was dropped",
			disk: map[string]string{"a.txt": newA, "sub/b.txt": newB}, wantA: newA, wantB: newB},
		{name: "a file changed since the crash is kept", temps: map[string]string{a.temp: newA, b.temp: newB},
			disk: map[string]string{"a.txt": oldA, "sub/b.txt": "edited by hand\n"}, wantA: newA, wantB: "edited by hand\n"},
		{name: "a record cut short", record: `{"files":[{"path":"a.t`,
			disk: map[string]string{"a.txt": oldA, "sub/b.txt": oldB}, wantA: oldA, wantB: oldB},
		{name: "a forged record naming the state directory",
			record: `{"files":[{"path":".praxis/state/lock","temp":".praxis/state/.lock.praxis-000000000003.tmp","version":"x","old":"?"}]}`,
			disk:   map[string]string{"a.txt": oldA, "sub/b.txt": oldB}, wantA: oldA, wantB: oldB, wantKeep: true},
		{name: "a forged record naming a temp elsewhere",
			record: `{"files":[{"path":"a.txt","temp":"sub/.b.txt.praxis-000000000002.tmp","version":"` + hashline.Version([]byte(newB)) + `","old":"?"}]}`,
			temps:  map[string]string{b.temp: newB},
			disk:   map[string]string{"a.txt": oldA, "sub/b.txt": oldB}, wantA: oldA, wantB: oldB, wantKeep: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.disk {
				writeTestFile(t, filepath.Join(dir, name), content)
			}
			for name, content := range tc.temps {
				writeTestFile(t, filepath.Join(dir, name), content)
			}
			rec := tc.record
			if rec == "" {
				var r intent
				for _, f := range []file{a, b} {
					r.Files = append(r.Files, intentFile{Path: f.path, Temp: f.temp, Version: hashline.Version([]byte(f.data)),
						Old: hashline.Version([]byte(f.old)), Perm: 0o644})
				}
				data, _ := json.Marshal(r)
				rec = string(data)
			}
			recPath := filepath.Join(dir, StateDir, "intent-00000000000000aa.json")
			writeTestFile(t, recPath, rec)

			e, err := New(Options{Workspace: dir, NoSync: true, Protected: []string{".praxis/config.yaml"}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != tc.wantA {
				t.Errorf("a.txt = %q, want %q", got, tc.wantA)
			}
			if got := readTestFile(t, filepath.Join(dir, "sub/b.txt")); got != tc.wantB {
				t.Errorf("sub/b.txt = %q, want %q", got, tc.wantB)
			}
			if _, err := os.Stat(recPath); (err == nil) != tc.wantKeep {
				t.Errorf("record kept: %v, want %v", err == nil, tc.wantKeep)
			}
			if !tc.wantKeep {
				assertNoTempFiles(t, dir)
			}
		})
	}
}

// TestStateDirIsTheEngines checks that the file tools refuse to write into
// the engine's state directory.
func TestStateDirIsTheEngines(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "x\n"})
	mustOK(t, call(t, e, "write_file", map[string]any{"path": "f.txt", "content": "y\n"}))
	if _, err := os.Stat(filepath.Join(dir, StateDir, "lock")); err != nil {
		t.Fatalf("no commit lock after a write: %v", err)
	}
	for _, p := range []string{StateDir + "/intent-00000000000000aa.json", StateDir + "/lock", StateDir} {
		res := call(t, e, "write_file", map[string]any{"path": p, "content": "{}"})
		mustFail(t, res, EPolicy, "engine's own state")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, StateDir))
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), "intent-") {
			t.Errorf("intent record left after the commits: %s", de.Name())
		}
	}
}

// TestCommitWaitsForTheLock holds the workspace's commit lock through
// another open file, as another process would: a write waits for it, is
// cancelled with its context, and goes through once the lock is free.
func TestCommitWaitsForTheLock(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"f.txt": "x\n"})
	mustOK(t, call(t, e, "write_file", map[string]any{"path": "f.txt", "content": "y\n"})) // creates the lock file
	f, err := os.OpenFile(filepath.Join(dir, StateDir, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := filelock.TryLock(f); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := e.Catalog().Call(ctx, "write_file", json.RawMessage(`{"path":"f.txt","content":"z\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	mustFail(t, res, ECancelled, "commit lock")
	if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != "y\n" {
		t.Fatalf("written while the lock was held: %q", got)
	}
	done := make(chan Result, 1)
	go func() {
		res, _ := e.Catalog().Call(context.Background(), "write_file", json.RawMessage(`{"path":"f.txt","content":"z\n"}`))
		done <- res
	}()
	time.Sleep(20 * time.Millisecond)
	if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != "y\n" {
		t.Fatalf("written while the lock was held: %q", got)
	}
	filelock.Unlock(f)
	mustOK(t, <-done)
	if got := readTestFile(t, filepath.Join(dir, "f.txt")); got != "z\n" {
		t.Fatalf("after the lock was released: %q", got)
	}
}

// TestRecoverInterruptedRemoval checks that a commit that removes a file
// (a patch's deleted file, a rename's old name) is rolled forward or back
// with the rest of its record after a crash.
func TestRecoverInterruptedRemoval(t *testing.T) {
	const oldA, newA, gone = "old a\n", "new a\n", "to be removed\n"
	const temp = ".a.txt.praxis-000000000001.tmp"
	tests := []struct {
		name     string
		temp     string // the temporary file of a.txt, "" for none
		disk     map[string]string
		delTemp  string // a forged Temp on the removal
		wantA    string
		wantB    string // "" when b.txt must be gone
		wantKeep bool
	}{
		{name: "killed before the renames", temp: newA,
			disk: map[string]string{"a.txt": oldA, "b.txt": gone}, wantA: newA},
		{name: "killed after the rename, before the removal",
			disk: map[string]string{"a.txt": newA, "b.txt": gone}, wantA: newA},
		{name: "killed while writing the temp", temp: "new",
			disk: map[string]string{"a.txt": oldA, "b.txt": gone}, wantA: oldA, wantB: gone},
		{name: "a removed file changed since the crash is kept", temp: newA,
			disk: map[string]string{"a.txt": oldA, "b.txt": "edited by hand\n"}, wantA: newA, wantB: "edited by hand\n"},
		{name: "a forged removal with a temp", temp: newA, delTemp: ".b.txt.praxis-000000000002.tmp",
			disk: map[string]string{"a.txt": oldA, "b.txt": gone}, wantA: oldA, wantB: gone, wantKeep: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.disk {
				writeTestFile(t, filepath.Join(dir, name), content)
			}
			if tc.temp != "" {
				writeTestFile(t, filepath.Join(dir, temp), tc.temp)
			}
			rec := intent{Files: []intentFile{
				{Path: "a.txt", Temp: temp, Version: hashline.Version([]byte(newA)), Old: hashline.Version([]byte(oldA)), Perm: 0o644},
				{Path: "b.txt", Temp: tc.delTemp, Old: hashline.Version([]byte(gone)), Delete: true},
			}}
			data, _ := json.Marshal(rec)
			recPath := filepath.Join(dir, StateDir, "intent-00000000000000bb.json")
			writeTestFile(t, recPath, string(data))

			e, err := New(Options{Workspace: dir, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != tc.wantA {
				t.Errorf("a.txt = %q, want %q", got, tc.wantA)
			}
			got, err := os.ReadFile(filepath.Join(dir, "b.txt"))
			if tc.wantB == "" && err == nil {
				t.Errorf("b.txt is still there: %q", got)
			} else if tc.wantB != "" && string(got) != tc.wantB {
				t.Errorf("b.txt = %q (%v), want %q", got, err, tc.wantB)
			}
			if _, err := os.Stat(recPath); (err == nil) != tc.wantKeep {
				t.Errorf("record kept: %v, want %v", err == nil, tc.wantKeep)
			}
		})
	}
}

// The plain checks of the state directory's names accept exactly what the
// regular expressions of their forms accept.
func TestStateNames(t *testing.T) {
	intent := regexp.MustCompile(`^` + intentPrefix + `[0-9a-f]{16}\` + intentExt + `$`)
	temp := regexp.MustCompile(`^\..+\.praxis-[0-9a-f]{12}\.tmp$`)
	names := []string{
		"", ".", "intent-", "intent-.json", "intent-0123456789abcdef.json", "intent-0123456789ABCDEF.json",
		"intent-0123456789abcde.json", "intent-0123456789abcdef0.json", "intent-0123456789abcdeg.json",
		"xintent-0123456789abcdef.json", "intent-0123456789abcdef.jsonx", "intent-0123456789abcdef.json\n",
		".a.praxis-0123456789ab.tmp", "..praxis-0123456789ab.tmp", ".praxis-0123456789ab.tmp",
		"a.b.praxis-0123456789ab.tmp", ".main.go.praxis-0123456789ab.tmp", ".main.go.praxis-0123456789AB.tmp",
		".main.go.praxis-0123456789a.tmp", ".main.go.praxis-0123456789abc.tmp", ".main.go.praxis-0123456789ab.tmpx",
		".a\nb.praxis-0123456789ab.tmp", ".\n.praxis-0123456789ab.tmp", ".é.praxis-0123456789ab.tmp",
		"..praxis-0123456789ab.praxis-0123456789ab.tmp", ".x.praxis-.praxis-0123456789ab.tmp",
		".x.praxis-0123456789ab.tmp.praxis-0123456789ab.tmp", ".x.praxis-0123456789ab.tmp\n",
	}
	for _, n := range names {
		if got, want := isIntentName(n), intent.MatchString(n); got != want {
			t.Errorf("isIntentName(%q) = %v, the form says %v", n, got, want)
		}
		if got, want := isTempName(n), temp.MatchString(n); got != want {
			t.Errorf("isTempName(%q) = %v, the form says %v", n, got, want)
		}
	}
}
