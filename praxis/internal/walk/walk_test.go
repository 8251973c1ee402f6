package walk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

type ignoreCase struct {
	name  string
	rules string
	path  string
	isDir bool
	want  verdict
}

func ignoreCases() []ignoreCase {
	return []ignoreCase{
		{"name anywhere", "*.log", "a/b/c.log", false, ignored},
		{"no match", "*.log", "a/b/c.txt", false, noRule},
		{"comment", "#x\n", "#x", false, noRule},
		{"escaped hash", `\#x`, "#x", false, ignored},
		{"escaped bang", `\!x`, "!x", false, ignored},
		{"negation last wins", "*.log\n!keep.log", "d/keep.log", false, kept},
		{"order matters", "!keep.log\n*.log", "keep.log", false, ignored},
		{"dir only, dir", "build/", "x/build", true, ignored},
		{"dir only, file", "build/", "x/build", false, noRule},
		{"anchored leading slash", "/top.txt", "top.txt", false, ignored},
		{"anchored not deeper", "/top.txt", "a/top.txt", false, noRule},
		{"middle slash anchors", "a/b", "x/a/b", false, noRule},
		{"middle slash", "a/b", "a/b", false, ignored},
		{"double star prefix", "**/gen", "x/y/gen", true, ignored},
		{"double star middle", "a/**/z", "a/b/c/z", false, ignored},
		{"double star middle zero dirs", "a/**/z", "a/z", false, ignored},
		{"trailing double star", "a/**", "a/b/c", false, ignored},
		{"question", "?.go", "x.go", false, ignored},
		{"class", "[ab].go", "b.go", false, ignored},
		{"negated class", "[!ab].go", "b.go", false, noRule},
		{"braces are literal", "{a,b}.go", "a.go", false, noRule},
		{"braces literal match", "{a,b}.go", "{a,b}.go", false, ignored},
		{"trailing spaces dropped", "x.txt   ", "x.txt", false, ignored},
		{"escaped trailing space", `x\ `, "x ", false, ignored},
		{"crlf lines", "x.txt\r\ny.txt\r\n", "y.txt", false, ignored},
		{"star stays in a segment", "a*c", "ab/c", false, noRule},
		{"blank and slash only", "\n/\n", "x", false, noRule},
		{"dir pattern on file inside", "*.md\n!important/\n", "important/x.md", false, ignored},
		{"dir re-included", "*.md\n!important/\n", "important", true, kept},
		{"star star alone", "**", "a/b", false, ignored},
		{"leading star star file", "**/x.txt", "x.txt", false, ignored},
		{"inner star star as star", "a**b", "aXYb", false, ignored},
		{"range", "[0-9].txt", "5.txt", false, ignored},
		{"escaped star", `\*.txt`, "*.txt", false, ignored},
		{"escaped star literal only", `\*.txt`, "a.txt", false, noRule},
	}
}

func TestIgnoreRules(t *testing.T) {
	for _, tt := range ignoreCases() {
		t.Run(tt.name, func(t *testing.T) {
			s := (*ignores)(nil).push("", []byte(tt.rules), nil)
			if got := s.check(tt.path, tt.isDir); got != tt.want {
				t.Errorf("rules %q on %q (dir %v): got %v, want %v", tt.rules, tt.path, tt.isDir, got, tt.want)
			}
		})
	}
}

// TestIgnoreRulesMatchGit asks git check-ignore the questions of
// TestIgnoreRules and wants git's answers.
func TestIgnoreRulesMatchGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, tt := range ignoreCases() {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			run := func(args ...string) string {
				cmd := exec.Command(git, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "XDG_CONFIG_HOME="+dir)
				out, err := cmd.Output()
				if ee, ok := errors.AsType[*exec.ExitError](err); err != nil && !(ok && ee.ExitCode() == 1) {
					t.Fatalf("git %v: %v %s", args, err, ee.Stderr)
				}
				return string(out)
			}
			run("init", "-q")
			if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(tt.rules), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tt.path)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if tt.isDir {
				os.Mkdir(p, 0o755)
			} else {
				os.WriteFile(p, nil, 0o644)
			}
			// -v -n prints "source:line:pattern<TAB>path", with empty fields
			// when nothing matches.
			out := strings.TrimSpace(run("check-ignore", "--no-index", "-v", "-n", tt.path))
			fields := strings.SplitN(strings.SplitN(out, "\t", 2)[0], ":", 3)
			got := noRule
			switch {
			case len(fields) < 3 || fields[2] == "":
			case strings.HasPrefix(fields[2], "!"):
				got = kept
			default:
				got = ignored
			}
			if got != tt.want {
				t.Errorf("git says %v for rules %q on %q (dir %v), the test wants %v (%s)", got, tt.rules, tt.path, tt.isDir, tt.want, out)
			}
		})
	}
}

func TestIgnorePrecedence(t *testing.T) {
	root := (*ignores)(nil).push("", []byte("*.txt\n!keep.txt\n"), []byte("!dot.txt\n"))
	sub := root.push("sub", []byte("!*.txt\nlocal.md\n"), nil)
	deep := sub.push("sub/deep", nil, []byte("*.txt\n"))
	tests := []struct {
		s    *ignores
		path string
		want verdict
	}{
		{root, "a.txt", ignored},
		{root, "keep.txt", kept},
		{root, "dot.txt", kept},        // .ignore beats .gitignore
		{sub, "sub/a.txt", kept},       // the nearer .gitignore wins
		{sub, "sub/local.md", ignored}, // rules are relative to their directory
		{root, "local.md", noRule},     // and do not apply above it
		{deep, "sub/deep/a.txt", ignored},
		{deep, "sub/deep/dot.txt", ignored}, // the nearest .ignore rule decides
	}
	for _, tt := range tests {
		if got := tt.s.check(tt.path, false); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.path, got, tt.want)
		}
	}
}

func tree(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func walkPaths(t *testing.T, dir, start string, opts Options) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	walkFiles(t, dir, start, opts, func(f *File) {
		mu.Lock()
		got = append(got, f.Path())
		mu.Unlock()
	})
	slices.Sort(got)
	return got
}

// walkFiles walks dir from start and calls fn, from the walk's workers,
// for each file, once it has read as its path and a line break (ignore
// files as anything).
func walkFiles(t *testing.T, dir, start string, opts Options, fn func(f *File)) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = Walk(context.Background(), root, start, opts, func(w int, f *File) error {
		data, err := f.Read(nil, 1<<20)
		if err != nil {
			return err
		}
		if string(data) != f.Path()+"\n" && f.Name != ".gitignore" && f.Name != ".ignore" {
			return errors.New(f.Path() + " holds " + string(data))
		}
		fn(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testBuffers make the buffers the read tests read into: none, one smaller
// than most files, one of a page, one of the size readFile starts with,
// one larger than any file.
var testBuffers = map[string]func() []byte{
	"none":   func() []byte { return nil },
	"small":  func() []byte { return make([]byte, 10) },
	"page":   func() []byte { return make([]byte, 0, 4096) },
	"exact":  func() []byte { return make([]byte, 0, 16384) },
	"larger": func() []byte { return make([]byte, 0, 1<<20) },
}

// openFiles writes files, by name, into a new directory and opens it.
func openFiles(t *testing.T, files map[string][]byte) *os.Root {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

func TestWalk(t *testing.T) {
	dir := tree(t, "a.go", "b/c.go", "b/d/e.txt", ".h/x", "b/.y", ".git/HEAD", "ig/z", "n/keep/k", "n/drop/d")
	mustWrite := func(p, s string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(".gitignore", "ig/\n")
	mustWrite("n/.ignore", "drop/\n")
	if err := os.Symlink("..", filepath.Join(dir, "b", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(dir, "rootlink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		start string
		opts  Options
		want  []string
	}{
		{"default", "", Options{}, []string{"a.go", "b/c.go", "b/d/e.txt", "ig/z", "n/drop/d", "n/keep/k"}},
		{"ignore", "", Options{Ignore: true}, []string{"a.go", "b/c.go", "b/d/e.txt", "n/keep/k"}},
		{"hidden", "", Options{Hidden: true, Ignore: true}, []string{".gitignore", ".h/x", "a.go", "b/.y", "b/c.go", "b/d/e.txt", "n/.ignore", "n/keep/k"}},
		{"start below", "b", Options{Ignore: true}, []string{"b/c.go", "b/d/e.txt"}},
		{"ignored start is walked", "ig", Options{Ignore: true}, []string{"ig/z"}},
		{"ancestor rules apply", "n", Options{Ignore: true, Workers: 1}, []string{"n/keep/k"}},
		{"select", "", Options{Ignore: true, Select: func(sub, name string, isDir bool) Choice {
			switch {
			case isDir && name == "ig":
				return Include
			case !isDir && strings.HasSuffix(name, ".go"):
				return Include
			case !isDir:
				return Exclude
			}
			return Default
		}}, []string{"a.go", "b/c.go"}},
		{"select reads an ignored dir", "", Options{Ignore: true, Select: func(sub, name string, isDir bool) Choice {
			if sub == "ig" || sub == "ig/z" {
				return Include
			}
			return Exclude
		}}, []string{"ig/z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := walkPaths(t, dir, tt.start, tt.opts); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestWalkClosesEverything walks a tree many times, stopping some walks
// early, and checks that no descriptor is left open.
func TestWalkClosesEverything(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	var files []string
	for i := range 300 {
		files = append(files, filepath.Join("d"+string(rune('a'+i%7)), "e"+string(rune('a'+i%11)), "f"+string(rune('a'+i%13)), "x"))
	}
	dir := tree(t, files...)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	count := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		return len(ents)
	}
	list := func() (out []string) {
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			out = append(out, e.Name()+"->"+l)
		}
		return out
	}
	beforeList := list()
	// The first walk may make the runtime open descriptors of its own
	// (the poller's), which stay open.
	Walk(context.Background(), root, "", Options{}, func(int, *File) error { return nil })
	before := count()
	stop := errors.New("stop")
	for i := range 50 {
		n := 0
		var mu sync.Mutex
		_, err := Walk(context.Background(), root, "", Options{}, func(int, *File) error {
			mu.Lock()
			defer mu.Unlock()
			if n++; i%2 == 1 && n == 5 {
				return stop
			}
			return nil
		})
		if i%2 == 1 && !errors.Is(err, stop) {
			t.Fatalf("walk %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Walk(ctx, root, "", Options{}, func(int, *File) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk: %v", err)
	}
	for i := range 50 { // cancelled while directories wait to be read
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		_, err := Walk(ctx, root, "", Options{}, func(int, *File) error {
			once.Do(cancel)
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("walk %d cancelled midway: %v", i, err)
		}
	}
	if after := count(); after != before {
		t.Fatalf("%d descriptors open before the walks, %d after\n%v\n%v", before, after, beforeList, list())
	}
}

func TestWalkErrors(t *testing.T) {
	dir := tree(t, "f")
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	if _, err := Walk(context.Background(), root, "f", Options{}, nil); err == nil {
		t.Error("walking a file succeeded")
	}
	if _, err := Walk(context.Background(), root, "missing", Options{}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("walking a missing directory: %v", err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := Walk(context.Background(), root, "out", Options{}, nil); err == nil {
		t.Error("walking a symlink out of the root succeeded")
	}
}

func TestReadLimit(t *testing.T) {
	dir := tree(t, "big")
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 1000), 0o644)
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	for _, limit := range []int64{999, 1000} {
		var got error
		Walk(context.Background(), root, "", Options{}, func(_ int, f *File) error {
			_, got = f.Read(nil, limit)
			return nil
		})
		if want := limit < 1000; errors.Is(got, ErrTooLarge) != want {
			t.Errorf("limit %d: %v", limit, got)
		}
	}
}

// TestReadSizes reads files of sizes around the page size and the read
// buffer's, into no buffer, a small one and one reused across the files in
// either order: every read must give the file's bytes exactly, and a file
// over the limit must be refused whatever the buffer.
func TestReadSizes(t *testing.T) {
	sizes := []int{0, 1, 100, 4095, 4096, 4097, 8192, 16383, 16384, 16385, 20000, 65536, 65537, 300000}
	want := map[string][]byte{}
	for i, n := range sizes {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte('a' + (i+j)%26)
		}
		want[fmt.Sprintf("f%06d", n)] = data
	}
	root := openFiles(t, want)
	for name, mk := range testBuffers {
		t.Run(name, func(t *testing.T) {
			reused := mk()
			_, err := Walk(context.Background(), root, "", Options{Workers: 1}, func(_ int, f *File) error {
				for _, buf := range [][]byte{mk(), reused} {
					got, err := f.Read(buf, 1<<20)
					if err != nil {
						return fmt.Errorf("%s: %w", f.Name, err)
					}
					if !bytes.Equal(got, want[f.Name]) {
						return fmt.Errorf("%s: read %d bytes, want %d", f.Name, len(got), len(want[f.Name]))
					}
					reused = got[:0]
				}
				limit := int64(len(want[f.Name]) - 1)
				if _, err := f.Read(mk(), limit); limit >= 0 && !errors.Is(err, ErrTooLarge) {
					return fmt.Errorf("%s with limit %d: %v, want ErrTooLarge", f.Name, limit, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestScanSizes scans files of lines, around the page size and the
// buffers' sizes, some with a line longer than the buffer, some without a
// final line break or with a last line of one byte, into each kind of buffer: the pieces must be the
// file in order, each but the last ending with a line break, a file that
// fits the buffer one whole piece; a piece refused must end the scan, and
// a file over the limit must be refused.
func TestScanSizes(t *testing.T) {
	sizes := []int{0, 1, 100, 4095, 4096, 4097, 16383, 16384, 16385, 65537, 300000}
	want := map[string][]byte{}
	for i, n := range sizes {
		for _, kind := range []string{"lines", "final", "long", "tail1"} {
			data := make([]byte, n)
			for j := range data {
				data[j] = byte('a' + (i+j)%26)
				if kind != "long" && (i+j)%(7+j%90) == 0 {
					data[j] = '\n'
				}
			}
			if kind == "long" && n > 2 {
				data[1] = '\n' // then one line to the end
			}
			if kind == "final" && n > 0 {
				data[n-1] = '\n'
			}
			if kind == "tail1" && n > 2 {
				data[n-2], data[n-1] = '\n', 'x' // a last line of one byte
			}
			want[fmt.Sprintf("%s%06d", kind, n)] = data
		}
	}
	root := openFiles(t, want)
	for name, mk := range testBuffers {
		t.Run(name, func(t *testing.T) {
			reused := mk()
			_, err := Walk(context.Background(), root, "", Options{Workers: 1}, func(_ int, f *File) error {
				data := want[f.Name]
				for _, buf := range [][]byte{mk(), reused} {
					var got [][]byte
					var wholes []bool
					longs := 0
					next, err := f.Scan(buf, 1<<20, pieceFuncs{func(p []byte, whole bool) bool {
						got = append(got, bytes.Clone(p))
						wholes = append(wholes, whole)
						return true
					}, func(start []byte) bool {
						if bytes.IndexByte(start, '\n') >= 0 || !bytes.HasPrefix(data[len(bytes.Join(got, nil)):], start) {
							t.Errorf("%s: Long given %d bytes that are not the start of a line", f.Name, len(start))
						}
						longs++
						return true
					}})
					if err != nil {
						return fmt.Errorf("%s: %w", f.Name, err)
					}
					if !bytes.Equal(bytes.Join(got, nil), data) {
						return fmt.Errorf("%s: the pieces are not the file", f.Name)
					}
					for i, p := range got[:len(got)-1] {
						if !bytes.HasSuffix(p, []byte("\n")) {
							return fmt.Errorf("%s: piece %d of %d cuts a line", f.Name, i, len(got))
						}
					}
					if strings.HasPrefix(f.Name, "long") && cap(buf) > 0 && len(data) > cap(buf)+2 && longs == 0 {
						return fmt.Errorf("%s (%d bytes, buffer %d): Long never called", f.Name, len(data), cap(buf))
					}
					if len(got) > 1 && slices.Contains(wholes, true) {
						return fmt.Errorf("%s: a piece of %d is marked whole", f.Name, len(got))
					}
					if cap(buf) > len(data) && (len(got) != 1 || !wholes[0]) {
						return fmt.Errorf("%s (%d bytes, buffer %d): %d pieces, whole %v", f.Name, len(data), cap(buf), len(got), wholes)
					}
					reused = next
				}
				calls := 0
				stop := func([]byte, bool) bool { calls++; return false }
				if _, err := f.Scan(mk(), 1<<20, pieceFuncs{stop, func([]byte) bool { return false }}); err != nil || calls > 1 {
					return fmt.Errorf("%s: refusing the first piece or long line: %d calls, %v", f.Name, calls, err)
				}
				all := pieceFuncs{func([]byte, bool) bool { return true }, func([]byte) bool { return true }}
				limit := int64(len(data) - 1)
				if _, err := f.Scan(mk(), limit, all); limit >= 0 && !errors.Is(err, ErrTooLarge) {
					return fmt.Errorf("%s with limit %d: %v, want ErrTooLarge", f.Name, limit, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pieceFuncs is a Pieces made of two functions.
type pieceFuncs struct {
	piece func(p []byte, whole bool) bool
	long  func(start []byte) bool
}

func (f pieceFuncs) Piece(p []byte, whole bool) bool { return f.piece(p, whole) }
func (f pieceFuncs) Long(start []byte) bool          { return f.long(start) }
