package praxis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/praxis-tools/praxis/praxis/internal/walk"
)

// searchDir resolves a caller's directory argument for a search: the
// workspace-relative path, and whether it names a directory (a file is
// searched on its own).
func (e *Engine) searchDir(p string) (rel string, isDir bool, err error) {
	rel, err = e.ws.Rel(p)
	if err != nil {
		return "", false, err
	}
	fi, err := e.ws.root.Stat(rel)
	if err != nil {
		return "", false, e.ws.fail(rel, err)
	}
	return rel, fi.IsDir(), nil
}

// walkFailure maps an error from walk.Walk to an *Error.
func (e *Engine) walkFailure(ctx context.Context, tool, rel string, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return Errorf(ECancelled, "%s cancelled: %v", tool, ctx.Err())
	}
	return e.ws.fail(rel, err)
}

// walkOptions are the walk options for a search's arguments.
func walkOptions(hidden, respectIgnore bool) walk.Options {
	return walk.Options{Hidden: hidden, Ignore: respectIgnore}
}

// checkGlob validates a doublestar pattern and reports the first problem
// with its position, as an E_INVALID_ARGS error naming field.
func checkGlob(field, p string) error {
	if p == "" {
		return Errorf(EInvalidArgs, "%s is empty", field)
	}
	pos, msg := globProblem(p)
	if pos < 0 {
		return nil
	}
	return Errorf(EInvalidArgs, "%s %q: %s at position %d", field, p, msg, pos+1).
		WithDetail(fmt.Sprintf("%s\n%s^\nPatterns use doublestar syntax: * ? [a-z] {a,b} and ** for any number of directories.", p, strings.Repeat(" ", pos)))
}

// globProblem returns the byte offset of the first problem in p and what
// it is, or -1.
func globProblem(p string) (int, string) {
	if strings.HasPrefix(p, "/") {
		return 0, "a pattern is relative to path and cannot start with /"
	}
	for i, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return len(strings.Join(strings.Split(p, "/")[:i], "/")) + min(i, 1), `a pattern cannot climb out of path with ".."`
		}
	}
	var braces []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 == len(p) {
				return i, "a trailing backslash escapes nothing"
			}
			i++
		case '[':
			j := i + 1
			if j < len(p) && (p[j] == '!' || p[j] == '^') {
				j++
			}
			for ; j < len(p) && p[j] != ']'; j++ {
				if p[j] == '\\' {
					j++
				}
			}
			if j >= len(p) {
				return i, `"[" is never closed by "]"`
			}
			i = j
		case '{':
			braces = append(braces, i)
		case '}':
			if len(braces) == 0 {
				return i, `"}" closes no "{"`
			}
			braces = braces[:len(braces)-1]
		}
	}
	if len(braces) > 0 {
		return braces[len(braces)-1], `"{" is never closed by "}"`
	}
	if !doublestar.ValidatePattern(p) {
		return 0, "not a valid pattern"
	}
	return -1, ""
}
