package praxis_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/praxis-tools/praxis/praxis"
)

// searchTree copies testdata/searchtree to a new workspace and adds what
// git cannot hold: a .git directory, a symlink cycle, symlinks to a file
// and a directory inside, and symlinks pointing out of the workspace.
func searchTree(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	ws := filepath.Join(top, "ws")
	if err := os.CopyFS(ws, os.DirFS("testdata/searchtree")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(top, "outside")
	mustWrite(t, filepath.Join(outside, "escaped.txt"), "needle outside the workspace\n")
	mustWrite(t, filepath.Join(ws, ".git", "HEAD"), "needle in .git\n")
	for link, target := range map[string]string{
		"src/sub/loop":    "..",                     // a cycle
		"src/sub/self":    ".",                      // another
		"linked.txt":      "README.md",              // a file inside
		"srclink":         "src",                    // a directory inside
		"out":             "../outside",             // a directory outside
		"out.txt":         "../outside/escaped.txt", // a file outside
		"src/dangling.go": "nowhere.go",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func mustWrite(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newEngine(t *testing.T, ws string) *praxis.Engine {
	t.Helper()
	e, err := praxis.New(praxis.Options{Workspace: ws, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func call(t *testing.T, e *praxis.Engine, tool string, args any) praxis.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Catalog().Call(context.Background(), tool, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, raw, err)
	}
	return res
}

func callOK(t *testing.T, e *praxis.Engine, tool string, args any) praxis.Result {
	t.Helper()
	res := call(t, e, tool, args)
	if res.IsError {
		t.Fatalf("%s %v failed: %s", tool, args, res.Text)
	}
	return res
}

// needRG returns the path of rg, or skips the test when it is missing,
// unless PRAXIS_REQUIRE_RG=1 makes that a failure.
func needRG(t *testing.T) string {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("PRAXIS_REQUIRE_RG") == "1" {
			t.Fatal("rg (ripgrep) is not installed, and PRAXIS_REQUIRE_RG=1")
		}
		t.Skip("rg (ripgrep) is not installed; set PRAXIS_REQUIRE_RG=1 to make this a failure")
	}
	return rg
}

// rgBase are the options that make ripgrep read exactly the ignore files
// Praxis reads: .gitignore and .ignore, in or out of a git repository, and
// no global or per-repository excludes or configuration.
var rgBase = []string{"--no-config", "--no-require-git", "--no-ignore-global", "--no-ignore-exclude"}

// runRG runs rg in dir and returns the set of "path:line" it reports
// (matches and context lines), or with files, the set of paths.
func runRG(t *testing.T, rg, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(rg, append(slices.Clone(rgBase), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RIPGREP_CONFIG_PATH=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 1 {
		err = nil // no match
	}
	if err != nil {
		t.Fatalf("rg %v: %v\n%s", args, err, stderr.String())
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !slices.Contains(args, "--json") {
			got = append(got, filepath.ToSlash(strings.TrimPrefix(line, "./")))
			continue
		}
		var msg struct {
			Type string `json:"type"`
			Data struct {
				Path struct {
					Text string `json:"text"`
				} `json:"path"`
				LineNumber int `json:"line_number"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type == "match" || msg.Type == "context" {
			got = append(got, fmt.Sprintf("%s:%d", strings.TrimPrefix(msg.Data.Path.Text, "./"), msg.Data.LineNumber))
		}
	}
	slices.Sort(got)
	return got
}

var (
	fileHeader = regexp.MustCompile(`^# (\S+) version=([0-9a-f]{16}) matches=(\d+)`)
	hashLine   = regexp.MustCompile(`^(\d+):([0-9a-f]{8})\|`)
)

// grepLines returns the "path:line" of every line grep's content output
// shows.
func grepLines(t *testing.T, text string) []string {
	t.Helper()
	var got []string
	file := ""
	for _, line := range strings.Split(text, "\n") {
		if m := fileHeader.FindStringSubmatch(line); m != nil {
			file = m[1]
			continue
		}
		if m := hashLine.FindStringSubmatch(line); m != nil {
			if file == "" {
				t.Fatalf("a line before any file header: %q", line)
			}
			got = append(got, file+":"+m[1])
		}
	}
	slices.Sort(got)
	return got
}

// TestGrepEqualsRipgrep runs grep and rg with the same options on the
// fixture tree and wants the same lines, files and counts.
func TestGrepEqualsRipgrep(t *testing.T) {
	rg := needRG(t)
	ws := searchTree(t)
	writeLargeFiles(t, ws)
	// (Not a byte that is not UTF-8 between e and d: Go's expressions
	// take it for U+FFFD, which [^"] matches, and rg's for no character.)
	mustWrite(t, filepath.Join(ws, "src", "calls.txt"), "x = f(1)\nx=f(\nx = (1)\n  y =  g\t(2)\nd := f(x)\n"+
		"e \"needle\" d\ne\"d\n\"e \u00e9 d\"\ne\n\"d\n"+
		"theta and iota\nupsilon\nmachine\nalphabet\nlambda (λ)\nΩmega, Δelta and Über\nPlain Words\n"+
		"isWord(c)\nx.newFooBar()\nIsWord(c)\nos.Stat\nxOs.Stat\nA.b\n_isWord(c)\nisword(c)\nfoo 12 x12 12x (42) 3.14\n")
	e := newEngine(t, ws)
	tests := []struct {
		name string
		args map[string]any
		rg   []string
	}{
		{"plain", map[string]any{"pattern": "needle"}, []string{"needle"}},
		{"ignore case", map[string]any{"pattern": "needle", "ignore_case": true}, []string{"-i", "needle"}},
		{"literal", map[string]any{"pattern": "a.b(needle", "literal": true}, []string{"-F", "a.b(needle"}},
		{"regex", map[string]any{"pattern": `func \w+\(ctx context\.Context`}, []string{`func \w+\(ctx context\.Context`}},
		{"line anchors", map[string]any{"pattern": `^needle|needle$`}, []string{`^needle|needle$`}},
		{"class excludes newline", map[string]any{"pattern": `needle[^x]`}, []string{`needle[^x]`}},
		{"dot", map[string]any{"pattern": `e.d.e`}, []string{`e.d.e`}},
		{"unicode fold", map[string]any{"pattern": "ünïcödé", "ignore_case": true}, []string{"-i", "ünïcödé"}},
		{"no ignore files", map[string]any{"pattern": "needle", "respect_ignore": false}, []string{"--no-ignore", "needle"}},
		{"hidden", map[string]any{"pattern": "needle", "include_hidden": true, "ignore_case": true}, []string{"--hidden", "-g", "!.git", "-i", "needle"}},
		{"hidden, no ignore", map[string]any{"pattern": "needle", "include_hidden": true, "respect_ignore": false}, []string{"--hidden", "--no-ignore", "-g", "!.git", "needle"}},
		{"glob name", map[string]any{"pattern": "needle", "glob": "*.go"}, []string{"-g", "*.go", "needle"}},
		{"glob path", map[string]any{"pattern": "needle", "glob": "src/**/*.txt"}, []string{"-g", "src/**/*.txt", "needle"}},
		{"subdirectory", map[string]any{"pattern": "needle", "path": "src"}, []string{"needle", "src"}},
		{"deeper subdirectory", map[string]any{"pattern": "needle", "path": "src/sub"}, []string{"needle", "src/sub"}},
		{"ignored directory named", map[string]any{"pattern": "needle", "path": "build"}, []string{"needle", "build"}},
		{"context", map[string]any{"pattern": "needle", "context": 2}, []string{"-C", "2", "needle"}},
		{"context in one file", map[string]any{"pattern": "needle", "context": 1, "path": "src/sub/deep"}, []string{"-C", "1", "needle", "src/sub/deep"}},
		{"no match", map[string]any{"pattern": "haystackless"}, []string{"haystackless"}},
		{"alternation", map[string]any{"pattern": "needle|haystack|thread"}, []string{"needle|haystack|thread"}},
		{"alternation, ignore case", map[string]any{"pattern": "NEEDLE|Thread", "ignore_case": true}, []string{"-i", "NEEDLE|Thread"}},
		{"alternation in a regex", map[string]any{"pattern": `(nee|hay)[a-z]+\b`}, []string{`(nee|hay)[a-z]+\b`}},
		{"word", map[string]any{"pattern": `\bneedle\b`}, []string{`\bneedle\b`}},
		{"runs one after another", map[string]any{"pattern": `\w+\s*=\s*\w+\(`}, []string{`\w+\s*=\s*\w+\(`}},
		{"a negated class", map[string]any{"pattern": `e[^"]*d`}, []string{`e[^"]*d`}},
		{"a class beyond ASCII", map[string]any{"pattern": `\p{Greek}`}, []string{`\p{Greek}`}},
		{"classes beyond ASCII", map[string]any{"pattern": `\p{Lu}\p{Ll}+`}, []string{`\p{Lu}\p{Ll}+`}},
		{"a word boundary past a run", map[string]any{"pattern": `\b[a-z]+[A-Z]\w*\(`}, []string{`\b[a-z]+[A-Z]\w*\(`}},
		{"whole runs between word boundaries", map[string]any{"pattern": `\b[0-9]+\b`}, []string{`\b[0-9]+\b`}},
		{"a word's first byte", map[string]any{"pattern": `\b[A-Z]\w+\.`}, []string{`\b[A-Z]\w+\.`}},
		{"many words", map[string]any{"pattern": "needle|haystack|thread|alpha|beta|gamma|delta|epsilon|zeta|theta|iota|kappa|lambda|omicron|sigma|tau|upsilon|phi|chi|psi"}, []string{"needle|haystack|thread|alpha|beta|gamma|delta|epsilon|zeta|theta|iota|kappa|lambda|omicron|sigma|tau|upsilon|phi|chi|psi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"limit": 100000}
			for k, v := range tt.args {
				args[k] = v
			}
			res := callOK(t, e, "grep", args)
			want := runRG(t, rg, ws, append([]string{"--json"}, tt.rg...)...)
			if got := grepLines(t, res.Text); !slices.Equal(got, want) {
				t.Errorf("grep lines differ from rg's\n got: %v\nwant: %v\noutput:\n%s", got, want, res.Text)
			}

			args["output"] = "files"
			res = callOK(t, e, "grep", args)
			got := resultLines(res.Text)
			slices.Sort(got)
			wantFiles := runRG(t, rg, ws, append([]string{"-l"}, tt.rg...)...)
			if !slices.Equal(got, wantFiles) {
				t.Errorf("grep files differ from rg -l\n got: %v\nwant: %v", got, wantFiles)
			}

			args["output"] = "count"
			res = callOK(t, e, "grep", args)
			got = resultLines(res.Text)
			slices.Sort(got)
			wantCounts := runRG(t, rg, ws, append([]string{"-c"}, tt.rg...)...)
			if !slices.Equal(got, wantCounts) {
				t.Errorf("grep counts differ from rg -c\n got: %v\nwant: %v", got, wantCounts)
			}
		})
	}
}

// writeLargeFiles adds files that grep reads in pieces: larger than a
// search worker's buffer, one with a line longer than it.
func writeLargeFiles(t *testing.T, ws string) {
	t.Helper()
	var b strings.Builder
	for i := 0; b.Len() < 700<<10; i++ {
		switch {
		case i%37 == 0:
			fmt.Fprintf(&b, "line %d holds a needle\n", i)
		case i%101 == 0:
			fmt.Fprintf(&b, "func f%d(ctx context.Context) Needle a.b(needle\n", i)
		default:
			fmt.Fprintf(&b, "line %d of hay %s\n", i, strings.Repeat("h", i%80))
		}
	}
	mustWrite(t, filepath.Join(ws, "src", "big.txt"), b.String())
	mustWrite(t, filepath.Join(ws, "src", "longline.txt"), "needle "+strings.Repeat("x", 300<<10)+" needle\nneedle\n")
}

// TestGrepLargeFiles counts matches in files read in pieces: larger than a
// worker's buffer, with a line longer than it, with a NUL byte far in (a
// binary file, with none counted, as with one early on or in a line longer
// than the buffer).
func TestGrepLargeFiles(t *testing.T) {
	ws := t.TempDir()
	writeLargeFiles(t, ws)
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "needle %d %s\n", i, strings.Repeat("h", i%90))
		}
		return b.String()
	}
	mustWrite(t, filepath.Join(ws, "late.dat"), text(20000)+"\x00"+text(10))
	mustWrite(t, filepath.Join(ws, "early.dat"), "\x00"+text(20000))
	mustWrite(t, filepath.Join(ws, "blob.dat"), "needle\x00"+strings.Repeat("x", 1<<20)+"\nneedle\n")
	mustWrite(t, filepath.Join(ws, "bom.txt"), "\ufeffneedle first\n"+text(20000))
	e := newEngine(t, ws)
	res := callOK(t, e, "grep", map[string]any{"pattern": "^needle|needle$", "output": "count"})
	got := resultLines(res.Text)
	slices.Sort(got)
	want := []string{"bom.txt:20001", "src/big.txt:" + strconv.Itoa(countMatching(t, ws, "src/big.txt", "^needle|needle$")), "src/longline.txt:2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// countMatching counts the lines of a workspace file that pattern matches.
func countMatching(t *testing.T, ws, name, pattern string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, name))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(pattern)
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// resultLines returns the lines of a result that are not comments.
func resultLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestGlobEqualsRipgrepFiles compares glob with the files rg --files lists
// and filters with the same pattern.
func TestGlobEqualsRipgrepFiles(t *testing.T) {
	rg := needRG(t)
	ws := searchTree(t)
	e := newEngine(t, ws)
	tests := []struct {
		name    string
		args    map[string]any
		rg      []string
		pattern string // filters rg's list, relative to dir
		dir     string
	}{
		{"all", map[string]any{"pattern": "**"}, nil, "**", ""},
		{"txt", map[string]any{"pattern": "**/*.txt"}, nil, "**/*.txt", ""},
		{"top level only", map[string]any{"pattern": "*"}, nil, "*", ""},
		{"under src", map[string]any{"pattern": "src/**/*.go"}, nil, "src/**/*.go", ""},
		{"path", map[string]any{"pattern": "**/*.txt", "path": "src"}, []string{"src"}, "**/*.txt", "src"},
		{"hidden", map[string]any{"pattern": "**", "include_hidden": true}, []string{"--hidden", "-g", "!.git"}, "**", ""},
		{"no ignore", map[string]any{"pattern": "**", "respect_ignore": false}, []string{"--no-ignore"}, "**", ""},
		{"braces", map[string]any{"pattern": "**/*.{go,md}", "respect_ignore": false, "include_hidden": true}, []string{"--no-ignore", "--hidden", "-g", "!.git"}, "**/*.{go,md}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"limit": 100000}
			for k, v := range tt.args {
				args[k] = v
			}
			res := callOK(t, e, "glob", args)
			got := resultLines(res.Text)
			slices.Sort(got)
			var want []string
			for _, p := range runRG(t, rg, ws, append([]string{"--files"}, tt.rg...)...) {
				rel := p
				if tt.dir != "" {
					rel = strings.TrimPrefix(p, tt.dir+"/")
				}
				if ok, _ := doublestar.Match(tt.pattern, rel); ok {
					want = append(want, p)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("glob differs from rg --files\n got: %v\nwant: %v", got, want)
			}
		})
	}
}

// TestGrepHitsAreAnchors checks that every line grep shows is the line
// read_file shows, with the same version, and that edit_file takes a hit's
// anchor as it is.
func TestGrepHitsAreAnchors(t *testing.T) {
	ws := searchTree(t)
	e := newEngine(t, ws)
	res := callOK(t, e, "grep", map[string]any{"pattern": "needle", "context": 1, "include_hidden": true, "limit": 1000})
	files := 0
	var file, version string
	var read string
	for _, line := range strings.Split(res.Text, "\n") {
		if m := fileHeader.FindStringSubmatch(line); m != nil {
			file, version = m[1], m[2]
			files++
			r := callOK(t, e, "read_file", map[string]any{"path": file})
			if !strings.Contains(r.Text, " version="+version+" ") {
				t.Errorf("%s: grep's version %s is not read_file's:\n%s", file, version, strings.SplitN(r.Text, "\n", 2)[0])
			}
			read = r.Text
			continue
		}
		if hashLine.MatchString(line) && !strings.Contains(read, "\n"+line+"\n") {
			t.Errorf("%s: grep shows %q, which read_file does not", file, line)
		}
	}
	if files < 10 {
		t.Fatalf("only %d files matched:\n%s", files, res.Text)
	}

	// Edit straight from a hit.
	res = callOK(t, e, "grep", map[string]any{"pattern": `fmt\.Println`, "path": "src/main.go"})
	var anchor, ver string
	for _, line := range strings.Split(res.Text, "\n") {
		if m := fileHeader.FindStringSubmatch(line); m != nil {
			ver = m[2]
		}
		if m := hashLine.FindStringSubmatch(line); m != nil {
			anchor = m[1] + ":" + m[2]
		}
	}
	callOK(t, e, "edit_file", map[string]any{"path": "src/main.go", "expect_version": ver,
		"ops": []map[string]any{{"op": "replace_line", "tag": anchor, "new_text": "\t\tfmt.Println(\"edited\", err)"}}})
	data, _ := os.ReadFile(filepath.Join(ws, "src/main.go"))
	if !strings.Contains(string(data), `fmt.Println("edited", err)`) {
		t.Fatalf("edit through a grep anchor did not land:\n%s", data)
	}
}

func TestGrepOutput(t *testing.T) {
	ws := searchTree(t)
	e := newEngine(t, ws)
	tests := []struct {
		name  string
		args  map[string]any
		want  []string // substrings of the text, in order
		never []string
	}{
		{"header and totals", map[string]any{"pattern": "needle", "path": "src/sub/deep"},
			[]string{"# 2 matching lines in 1 files\n", "# src/sub/deep/x.txt version=", " matches=2\n", "2:", "|needle deep\n", "6:", "|needle again\n"},
			[]string{"--", "lines="}},
		{"context groups", map[string]any{"pattern": "needle", "path": "src/sub/deep", "context": 1},
			[]string{" matches=2 lines=2,6\n", "1:", "|deep\n", "2:", "|needle deep\n", "3:", "|\n", "--\n", "5:", "|\n", "6:", "7:", "|end\n"},
			nil},
		{"context merges", map[string]any{"pattern": "needle", "path": "src/sub/deep", "context": 2},
			[]string{"1:", "2:", "3:", "4:", "5:", "6:", "7:"}, []string{"--"}},
		{"limit truncates", map[string]any{"pattern": "needle", "limit": 3},
			[]string{"# truncated: showing 3 of "}, nil},
		{"limit within a file", map[string]any{"pattern": "needle", "path": "src/sub/deep", "limit": 1},
			[]string{" matches=2 showing=1\n", "|needle deep\n", "# truncated: showing 1 of 2 matching lines in 1 files"}, []string{"needle again"}},
		{"files", map[string]any{"pattern": "needle", "path": "src", "output": "files"},
			[]string{"src/important.log\nsrc/main.go\nsrc/sub/build\nsrc/sub/deep/x.txt\nsrc/sub/rootonly.txt\nsrc/util_test.go\n"}, []string{"generated.go"}},
		{"count", map[string]any{"pattern": "needle", "path": "src", "output": "count", "ignore_case": true},
			[]string{"src/main.go:3\n", "src/util_test.go:2\n"}, nil},
		{"files limit", map[string]any{"pattern": "needle", "output": "files", "limit": 2},
			[]string{"# truncated: showing 2 of "}, nil},
		{"single file", map[string]any{"pattern": "needle", "path": "crlf.txt"},
			[]string{"# crlf.txt version=", "1:", "|needle with CRLF\n", "3:", "|last needle\n"}, []string{"\r"}},
		{"bom", map[string]any{"pattern": "^needle", "path": "bom.txt"},
			[]string{"1:", "|needle after a BOM\n"}, nil},
		{"no final newline", map[string]any{"pattern": "newline$", "path": "noeol.txt"},
			[]string{"2:", "|needle without a final newline\n"}, nil},
		{"long line clipped", map[string]any{"pattern": "needle", "path": "long.txt"},
			[]string{" …[clipped "}, nil},
		{"binary skipped", map[string]any{"pattern": "binary", "include_hidden": true, "respect_ignore": false},
			[]string{"# 0 matching lines in 0 files\n"}, []string{"bin.dat"}},
		{"symlinks not followed", map[string]any{"pattern": "outside|needle"},
			nil, []string{"escaped", "linked.txt", "srclink", "loop/", "self/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callOK(t, e, "grep", tt.args)
			rest := res.Text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, res.Text)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tt.never {
				if strings.Contains(res.Text, n) {
					t.Errorf("output holds %q:\n%s", n, res.Text)
				}
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	ws := searchTree(t)
	e := newEngine(t, ws)
	tests := []struct {
		tool string
		args map[string]any
		code praxis.Code
		text string
	}{
		{"grep", map[string]any{"pattern": "a("}, praxis.EInvalidArgs, "missing closing )"},
		{"grep", map[string]any{"pattern": `a\nb`}, praxis.EInvalidArgs, "line break"},
		{"grep", map[string]any{"pattern": "x", "glob": "src/[a-"}, praxis.EInvalidArgs, "position 5"},
		{"grep", map[string]any{"pattern": "x", "output": "lines"}, praxis.EInvalidArgs, "output"},
		{"grep", map[string]any{"pattern": "x", "context": 21}, praxis.EInvalidArgs, "context"},
		{"grep", map[string]any{"pattern": "x", "path": "../"}, praxis.EPathOutside, "outside"},
		{"grep", map[string]any{"pattern": "x", "path": "out"}, praxis.EPathOutside, "outside"},
		{"grep", map[string]any{"pattern": "x", "path": "out.txt"}, praxis.EPathOutside, "outside"},
		{"grep", map[string]any{"pattern": "x", "path": "missing"}, praxis.ENotFound, "does not exist"},
		{"grep", map[string]any{"pattern": "x", "path": "bin.dat"}, "", "bin.dat is binary (it holds a NUL byte) and was not searched"},
		{"glob", map[string]any{"pattern": "src/{a,b"}, praxis.EInvalidArgs, `"{" is never closed by "}" at position 5`},
		{"glob", map[string]any{"pattern": "a/b]/[x"}, praxis.EInvalidArgs, "position 6"},
		{"glob", map[string]any{"pattern": `x\`}, praxis.EInvalidArgs, "trailing backslash"},
		{"glob", map[string]any{"pattern": "../**"}, praxis.EInvalidArgs, ".."},
		{"glob", map[string]any{"pattern": "/etc/*"}, praxis.EInvalidArgs, "cannot start with /"},
		{"glob", map[string]any{"pattern": "*", "path": "README.md"}, praxis.ENotDir, "not a directory"},
		{"glob", map[string]any{"pattern": "*", "path": "out"}, praxis.EPathOutside, "outside"},
		{"glob", map[string]any{"pattern": "*", "limit": 0}, praxis.EInvalidArgs, "limit"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.tool, tt.args), func(t *testing.T) {
			res := call(t, e, tt.tool, tt.args)
			if res.Code != tt.code || !strings.Contains(res.Text, tt.text) {
				t.Fatalf("got code %q, text:\n%s\nwant code %q and %q", res.Code, res.Text, tt.code, tt.text)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	ws := searchTree(t)
	e := newEngine(t, ws)
	// Give the files distinct times: newest first is the order.
	base := time.Now().Add(-time.Hour)
	order := []string{"src/util_test.go", "src/main.go", "README.md"}
	for i, p := range order {
		tm := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(ws, p), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args map[string]any
		want []string
		head string
	}{
		{"newest first", map[string]any{"pattern": "**/{main.go,util_test.go,README.md}"}, []string{"README.md", "src/main.go", "src/util_test.go"}, "# 3 files match"},
		{"limit", map[string]any{"pattern": "**/{main.go,util_test.go,README.md}", "limit": 2}, []string{"README.md", "src/main.go"}, "# 3 files match"},
		{"hidden dir named", map[string]any{"pattern": ".hidden/*"}, []string{".hidden/h.txt"}, "# 1 files match"},
		{"hidden skipped", map[string]any{"pattern": "**/h.txt"}, nil, "# 0 files match"},
		{"hidden included", map[string]any{"pattern": "**/h.txt", "include_hidden": true}, []string{".hidden/h.txt"}, "# 1 files match"},
		{"ignored", map[string]any{"pattern": "**/*.log"}, []string{"keep.log", "src/important.log"}, "# 2 files match"},
		{"not ignored", map[string]any{"pattern": "**/*.log", "respect_ignore": false}, []string{"app.log", "keep.log", "src/important.log"}, "# 3 files match"},
		{"git never", map[string]any{"pattern": "**/HEAD", "include_hidden": true, "respect_ignore": false}, nil, "# 0 files match"},
		{"dot slash", map[string]any{"pattern": "./src/*.go"}, []string{"src/main.go", "src/util_test.go"}, "# 2 files match"},
		{"missing base", map[string]any{"pattern": "nope/**"}, nil, "# 0 files match"},
		{"no symlinks", map[string]any{"pattern": "**/*", "include_hidden": true}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callOK(t, e, "glob", tt.args)
			got := resultLines(res.Text)
			if tt.name == "no symlinks" {
				for _, p := range got {
					if strings.Contains(p, "loop") || strings.Contains(p, "self") || strings.Contains(p, "link") || strings.HasPrefix(p, "out") || strings.Contains(p, "dangling") {
						t.Errorf("a symlink was followed or listed: %s", p)
					}
				}
				return
			}
			if tt.name == "newest first" || tt.name == "limit" {
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			} else {
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %v, want %v\n%s", got, tt.want, res.Text)
				}
			}
			if !strings.HasPrefix(res.Text, tt.head) {
				t.Errorf("text starts %q, want %q", res.Text, tt.head)
			}
			if strings.Contains(tt.name, "limit") && !strings.Contains(res.Text, "# truncated: showing 2 of 3 files") {
				t.Errorf("no truncation note:\n%s", res.Text)
			}
		})
	}
}

// TestSearchCancelled checks that a cancelled context stops a search with
// E_CANCELLED.
func TestSearchCancelled(t *testing.T) {
	ws := t.TempDir()
	for i := range 200 {
		mustWrite(t, filepath.Join(ws, "d"+strconv.Itoa(i%20), "f"+strconv.Itoa(i)+".txt"), strings.Repeat("needle\n", 100))
	}
	e := newEngine(t, ws)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for tool, args := range map[string]string{"grep": `{"pattern": "needle"}`, "glob": `{"pattern": "**"}`} {
		res, err := e.Catalog().Call(ctx, tool, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		if res.Code != praxis.ECancelled {
			t.Errorf("%s with a cancelled context: %s", tool, res.Text)
		}
	}
}

// TestGrepProgress checks that a long search reports progress.
func TestGrepProgress(t *testing.T) {
	ws := t.TempDir()
	for i := range 1200 {
		mustWrite(t, filepath.Join(ws, "d"+strconv.Itoa(i%12), strconv.Itoa(i)+".txt"), "x\n")
	}
	e := newEngine(t, ws)
	var mu sync.Mutex
	var got []float64
	ctx := praxis.WithProgress(context.Background(), func(progress, total float64, message string) {
		mu.Lock()
		got = append(got, progress)
		mu.Unlock()
	})
	res, err := e.Catalog().Call(ctx, "grep", json.RawMessage(`{"pattern": "x", "output": "count"}`))
	if err != nil || res.IsError || !strings.HasPrefix(res.Text, "# 1200 matching lines in 1200 files") {
		t.Fatalf("%v %s", err, res.Text)
	}
	if !slices.Equal(got, []float64{1000}) {
		t.Fatalf("progress reports %v, want one at 1000 files", got)
	}
}

// TestSearchConcurrentCalls runs searches from several goroutines while
// files change under them: every call must succeed, and every grep hit must
// carry a version read_file also gave for that file.
func TestSearchConcurrentCalls(t *testing.T) {
	ws := searchTree(t)
	e := newEngine(t, ws)
	done := make(chan struct{})
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			callOK(t, e, "write_file", map[string]any{"path": "src/sub/deep/x.txt", "content": fmt.Sprintf("needle %d\nand needle\n", i)})
		}
	})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for range 10 {
				if g%2 == 0 {
					res := callOK(t, e, "grep", map[string]any{"pattern": "needle", "path": "src"})
					for _, m := range fileHeader.FindAllStringSubmatch(res.Text, -1) {
						if m[1] == "src/sub/deep/x.txt" && m[3] != "2" {
							t.Errorf("x.txt shown with %s matches:\n%s", m[3], res.Text)
						}
					}
				} else {
					callOK(t, e, "glob", map[string]any{"pattern": "**/*.txt"})
				}
			}
		})
	}
	wg.Wait()
	close(done)
	writer.Wait()
}
