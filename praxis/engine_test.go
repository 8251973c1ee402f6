package praxis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/praxis-tools/praxis/praxis/hashline"
)

// newTestEngine returns an engine on a fresh workspace holding files.
func newTestEngine(t *testing.T, files map[string]string, opts ...func(*Options)) (*Engine, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	o := Options{Workspace: dir, NoSync: true}
	for _, f := range opts {
		f(&o)
	}
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, dir
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call runs a tool with args (marshalled to JSON unless already a string).
func call(t *testing.T, e *Engine, tool string, args any) Result {
	t.Helper()
	var raw []byte
	if s, ok := args.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Catalog().Call(context.Background(), tool, raw)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// mustOK fails the test unless res succeeded.
func mustOK(t *testing.T, res Result) Result {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result:\n%s", res.Text)
	}
	return res
}

// mustFail fails the test unless res failed with code and its text
// contains every fragment.
func mustFail(t *testing.T, res Result, code Code, fragments ...string) {
	t.Helper()
	if !res.IsError || res.Code != code {
		t.Fatalf("want %s, got isError=%v code=%s:\n%s", code, res.IsError, res.Code, res.Text)
	}
	if !strings.HasPrefix(res.Text, string(code)+": ") {
		t.Errorf("text does not start with %q:\n%s", code, res.Text)
	}
	for _, f := range fragments {
		if !strings.Contains(res.Text, f) {
			t.Errorf("text lacks %q:\n%s", f, res.Text)
		}
	}
}

var renderedLine = regexp.MustCompile(`(?m)^(\d+):([0-9a-f]{8})\|(.*)$`)

// anchors reads path and returns the anchor ("LINE:TAG") of each line.
func anchors(t *testing.T, e *Engine, path string) []string {
	t.Helper()
	res := mustOK(t, call(t, e, "read_file", map[string]any{"path": path}))
	var out []string
	for _, m := range renderedLine.FindAllStringSubmatch(res.Text, -1) {
		out = append(out, m[1]+":"+m[2])
	}
	return out
}

func TestCatalogValidatesArguments(t *testing.T) {
	e, _ := newTestEngine(t, map[string]string{"a.txt": "x\n"})
	for _, tc := range []struct {
		tool, args string
		want       string
	}{
		{"read_file", `{}`, `arguments: required: missing properties: ["path"]` + "\nArguments: path (string, required), offset (integer), limit (integer)"},
		{"read_file", `{"path": 3}`, `field path: type: 3 has type "integer", want "string"` + "\nField path takes {\"type\":\"string\"}"},
		{"read_file", `{"path": "a.txt", "offset": "2"}`, `field offset: type: 2 has type "string", want "integer"`},
		{"read_file", `{"path": "a.txt", "offset": 1.5}`, `field offset: type: 1.5 has type "number", want "integer"`},
		{"read_file", `{"path": "a.txt", "offset": 0}`, "field offset: minimum: 0 is less than 1\nField offset takes {\"type\":\"integer\",\"default\":1,\"minimum\":1}"},
		{"read_file", `{"path": "a.txt", "bogus": 1}`, `arguments: unexpected additional properties ["bogus"]`},
		{"read_file", `{"path": null}`, `field path: type: null has type "null", want "string"`},
		{"read_file", `[1]`, "arguments must be a JSON object, got array"},
		{"read_file", `{"path":`, "arguments are not valid JSON"},
		{"read_file", `{"path": "a.txt"} {}`, "arguments are not valid JSON"},
		{"edit_file", `{"path": "a.txt", "ops": [{"op": "nope"}]}`, `field ops[].op: enum: nope does not equal any of: [replace_line insert_after`},
		{"edit_file", `{"path": "a.txt", "ops": []}`, "field ops: minItems: array length 0 is less than 1"},
		{"edit_file", `{"files": [{"path": "a.txt", "ops": [{"op": "append", "new_text": 1}]}]}`, `field files[].ops[].new_text: type: 1 has type "integer", want "string"`},
		{"edit_file", `{"files": [{"ops": [{"op": "append", "new_text": "x"}]}]}`, `field files[]: required: missing properties: ["path"]`},
		{"list_memory", `{"x": 1}`, "arguments: unexpected additional properties [\"x\"]\nThe tool takes no arguments."},
		{"job_kill", `{"job": true}`, `field job: type: true has type "boolean", want one of "string, integer"`},
		{"grep", `{"pattern": "x", "output": "lines"}`, "field output: enum: lines does not equal any of: [content files count]"},
		{"write_memory", `{"key": "", "content": "x"}`, `field key: minLength: "" contains 0 Unicode code points, fewer than 1`},
	} {
		mustFail(t, call(t, e, tc.tool, tc.args), EInvalidArgs, tc.want)
	}
	if _, err := e.Catalog().Call(context.Background(), "no_such_tool", nil); err == nil {
		t.Error("unknown tool: no error")
	}
}

func TestCatalogRecoversPanics(t *testing.T) {
	c, err := NewCatalog(Tool{Name: "boom", Handler: func(context.Context, json.RawMessage) (Result, error) { panic("kaboom") }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(context.Background(), "boom", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustFail(t, res, EInternal, "kaboom")
}

func TestEveryToolIsDescribed(t *testing.T) {
	e, _ := newTestEngine(t, nil)
	for _, tool := range e.Catalog().Tools() {
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too short: %q", tool.Name, tool.Description)
		}
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: input schema is not an object schema: %v", tool.Name, err)
		}
		if len(tool.OutputSchema) > 0 && !json.Valid(tool.OutputSchema) {
			t.Errorf("%s: output schema is not JSON", tool.Name)
		}
		if tool.Annotations.ReadOnly && tool.Annotations.Destructive {
			t.Errorf("%s: read-only and destructive", tool.Name)
		}
	}
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("é", 1500) // 3000 bytes
	e, dir := newTestEngine(t, map[string]string{
		"a.go":      "package a\n\nfunc A() {}\n",
		"crlf.txt":  "one\r\ntwo",
		"bom.txt":   "\xEF\xBB\xBFhi\n",
		"empty.txt": "",
		"long.txt":  long + "\nshort\n",
		"bin.dat":   "ab\x00cd",
		"latin.txt": "caf\xe9\n",
		"big.txt":   strings.Repeat("line\n", 100),
		"sub/x.txt": "x\n",
	}, func(o *Options) { o.MaxFileBytes = 5000 })
	_ = dir

	res := mustOK(t, call(t, e, "read_file", map[string]any{"path": "a.go"}))
	version := hashline.Version([]byte("package a\n\nfunc A() {}\n"))
	want := "# a.go version=" + version + " lines=1-3 of 3 eol=lf\n" +
		"1:" + hashline.Tag(1, []byte("package a")) + "|package a\n" +
		"2:" + hashline.Tag(2, nil) + "|\n" +
		"3:" + hashline.Tag(3, []byte("func A() {}")) + "|func A() {}\n"
	if res.Text != want {
		t.Errorf("read_file a.go:\n%s\nwant:\n%s", res.Text, want)
	}
	info := res.Structured.(fileInfo)
	if info.Version != version || info.Total != 3 || info.From != 1 || info.To != 3 {
		t.Errorf("structured = %+v", info)
	}

	res = mustOK(t, call(t, e, "read_file", map[string]any{"path": "crlf.txt"}))
	if !strings.HasPrefix(res.Text, "# crlf.txt version=") || !strings.Contains(res.Text, "eol=mixed no-final-newline\n") && !strings.Contains(res.Text, "eol=crlf no-final-newline\n") {
		t.Errorf("crlf header: %s", res.Text)
	}
	res = mustOK(t, call(t, e, "read_file", map[string]any{"path": "bom.txt"}))
	if !strings.Contains(res.Text, " bom\n1:"+hashline.Tag(1, []byte("hi"))+"|hi\n") {
		t.Errorf("bom: %s", res.Text)
	}
	res = mustOK(t, call(t, e, "read_file", map[string]any{"path": "empty.txt"}))
	if !strings.Contains(res.Text, "version="+hashline.Version(nil)+" empty (0 lines)") {
		t.Errorf("empty: %s", res.Text)
	}
	res = mustOK(t, call(t, e, "read_file", map[string]any{"path": "long.txt"}))
	if !strings.Contains(res.Text, "1:"+hashline.Tag(1, []byte(long))+"|"+long[:2000]+" …[clipped 1000 bytes]\n") {
		t.Errorf("long line not clipped with the tag of the whole line:\n%.300s", res.Text)
	}

	res = mustOK(t, call(t, e, "read_file", map[string]any{"path": "big.txt", "offset": 11, "limit": 20}))
	if !strings.Contains(res.Text, "lines=11-30 of 100") || !strings.HasSuffix(res.Text, "# 70 more lines: read_file with offset=31 to continue\n") ||
		!strings.Contains(res.Text, "\n11:") || strings.Contains(res.Text, "\n31:") {
		t.Errorf("paging:\n%s", res.Text)
	}
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "big.txt", "offset": 101}), EInvalidArgs, "past the end", "100 lines")

	mustFail(t, call(t, e, "read_file", map[string]any{"path": "bin.dat"}), EBinary, "5 bytes")
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "latin.txt"}), ENotUTF8, "offset 3")
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "missing.txt"}), ENotFound, "missing.txt")
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "sub"}), EIsDir)
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "sub/x.txt/y"}), ENotDir)
	writeTestFile(t, filepath.Join(dir, "huge.txt"), strings.Repeat("x", 5001))
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "huge.txt"}), ETooLarge, "5001 bytes", "5000 bytes")
}

func TestWriteFile(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{"old.sh": "echo hi\n"})
	res := mustOK(t, call(t, e, "write_file", map[string]any{"path": "new/deep/f.txt", "content": "a\nb\n"}))
	if got := readTestFile(t, filepath.Join(dir, "new/deep/f.txt")); got != "a\nb\n" {
		t.Errorf("content %q", got)
	}
	if info := res.Structured.(writeInfo); !info.Created || info.Lines != 2 || info.Version != hashline.Version([]byte("a\nb\n")) {
		t.Errorf("structured %+v", info)
	}

	if err := os.Chmod(filepath.Join(dir, "old.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	oldVersion := hashline.Version([]byte("echo hi\n"))
	mustFail(t, call(t, e, "write_file", map[string]any{"path": "old.sh", "content": "x", "expect_version": "0000000000000000"}),
		EConflict, oldVersion)
	mustOK(t, call(t, e, "write_file", map[string]any{"path": "old.sh", "content": "echo bye\n", "expect_version": oldVersion}))
	fi, err := os.Stat(filepath.Join(dir, "old.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode not kept: %v %v", fi.Mode(), err)
	}
	mustFail(t, call(t, e, "write_file", map[string]any{"path": "nope.txt", "content": "x", "expect_version": oldVersion}), EConflict, "does not exist")
	mustFail(t, call(t, e, "write_file", map[string]any{"path": "new", "content": "x"}), EIsDir)
	big, _ := newTestEngine(t, nil, func(o *Options) { o.MaxFileBytes = 10 })
	mustFail(t, call(t, big, "write_file", map[string]any{"path": "f.txt", "content": strings.Repeat("x", 11)}), ETooLarge, "11 bytes", "limit of 10")
	assertNoTempFiles(t, dir)
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".praxis-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestListDir(t *testing.T) {
	e, dir := newTestEngine(t, map[string]string{
		"b.txt": "bb", "a.txt": "a", "dir/inner.txt": "123", "dir/sub/deeper.txt": "x", ".hidden": "",
	})
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, call(t, e, "list_dir", map[string]any{}))
	want := "# .: 5 entries, depth 1\n.hidden  0\na.txt  1\nb.txt  2\ndir/\nlink -> a.txt\n"
	if res.Text != want {
		t.Errorf("list_dir:\n%s\nwant:\n%s", res.Text, want)
	}
	res = mustOK(t, call(t, e, "list_dir", map[string]any{"path": "dir", "depth": 2}))
	if res.Text != "# dir: 3 entries, depth 2\ninner.txt  3\nsub/\nsub/deeper.txt  1\n" {
		t.Errorf("depth 2:\n%s", res.Text)
	}
	res = mustOK(t, call(t, e, "list_dir", map[string]any{"depth": 3, "limit": 2}))
	if !strings.HasSuffix(res.Text, "# truncated: 6 more entries; raise limit (max 10000) or list a subdirectory\n") {
		t.Errorf("truncated:\n%s", res.Text)
	}
	mustFail(t, call(t, e, "list_dir", map[string]any{"path": "a.txt"}), ENotDir)
	mustFail(t, call(t, e, "list_dir", map[string]any{"path": "../"}), EPathOutside, dir)
}

// TestReadFileLarge reads files large enough for loadText to hash their
// version beside checking them: the version is the same, and an invalid
// byte far into one is still found.
func TestReadFileLarge(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 2*concurrentVersionBytes; i++ {
		fmt.Fprintf(&b, "line %d of a large file\n", i)
	}
	text := b.String()
	e, _ := newTestEngine(t, map[string]string{
		"large.txt": text,
		"bad.txt":   text + "\xff\n",
		"nul.txt":   "\x00" + text,
	})
	res := mustOK(t, call(t, e, "read_file", map[string]any{"path": "large.txt", "limit": 3}))
	if want := "version=" + hashline.Version([]byte(text)) + " "; !strings.Contains(res.Text, want) {
		t.Errorf("read_file of %d bytes: no %q in\n%.200s", len(text), want, res.Text)
	}
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "bad.txt"}), ENotUTF8, fmt.Sprintf("offset %d", len(text)))
	mustFail(t, call(t, e, "read_file", map[string]any{"path": "nul.txt"}), EBinary)
}
