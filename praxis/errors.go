package praxis

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a stable, machine-readable error code. A failed tool call's text
// starts with the code, a colon and a one-line message. Codes never change
// meaning; new ones may be added. README.md lists them all.
type Code string

// The error codes. This is the one place they are defined.
const (
	EInvalidArgs    Code = "E_INVALID_ARGS"    // arguments missing, mistyped or out of range
	ENotFound       Code = "E_NOT_FOUND"       // the file, key or name does not exist
	EPathOutside    Code = "E_PATH_OUTSIDE"    // the path leads outside the workspace
	ENotRegular     Code = "E_NOT_REGULAR"     // a FIFO, socket or device where a file was expected
	EIsDir          Code = "E_IS_DIR"          // a directory where a file was expected
	ENotDir         Code = "E_NOT_DIR"         // a file where a directory was expected
	EBinary         Code = "E_BINARY"          // the file looks binary
	ENotUTF8        Code = "E_NOT_UTF8"        // the file is not valid UTF-8
	ETooLarge       Code = "E_TOO_LARGE"       // a size limit was hit
	EAnchorStale    Code = "E_ANCHOR_STALE"    // an anchor no longer matches the file
	EAnchorSyntax   Code = "E_ANCHOR_SYNTAX"   // an anchor is malformed or ambiguous
	EOverlap        Code = "E_OVERLAP"         // two ops of one edit touch the same lines
	EPatchFailed    Code = "E_PATCH_FAILED"    // a hunk of a patch does not apply to the file
	ENoop           Code = "E_NOOP"            // the edit would not change the file
	EConflict       Code = "E_CONFLICT"        // the file changed since the version the caller named
	EBudgetExceeded Code = "E_BUDGET_EXCEEDED" // the call exceeds a configured budget
	EPolicy         Code = "E_POLICY"          // the policy forbids the call
	ETimeout        Code = "E_TIMEOUT"         // the call ran out of time
	ECancelled      Code = "E_CANCELLED"       // the call was cancelled
	EUnavailable    Code = "E_UNAVAILABLE"     // a backing service or server is not available
	EIO             Code = "E_IO"              // an operating-system error while reading or writing
	EInternal       Code = "E_INTERNAL"        // a bug in Praxis: the call failed unexpectedly
	EExternal       Code = "E_EXTERNAL"        // an external (MCP server's) tool reported a failure
	EUnknownTool    Code = "E_UNKNOWN_TOOL"    // the model called a tool that does not exist
)

// Error is a tool failure. Handlers return it (or wrap it) to make a call
// fail with a code; Catalog.Call turns it into an error Result.
type Error struct {
	Code Code
	// Msg is one line saying what happened.
	Msg string
	// Detail is what the caller needs to retry safely (fresh anchors, the
	// allowed roots, the limit hit). It may span several lines.
	Detail string
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// WithDetail returns e with its Detail set.
func (e *Error) WithDetail(detail string) *Error {
	e.Detail = detail
	return e
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Msg }

// Text renders e as the text of an error result: the code line, then the
// detail.
func (e *Error) Text() string {
	if e.Detail == "" {
		return e.Error()
	}
	return e.Error() + "\n" + strings.TrimRight(e.Detail, "\n")
}

// CodeOf reports the Code of the first *Error in err's chain, or "" if there
// is none.
func CodeOf(err error) Code {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// ErrorResult converts err into an error Result. An error that is not an
// *Error becomes E_INTERNAL.
func ErrorResult(err error) Result {
	var pe *Error
	if !errors.As(err, &pe) {
		pe = &Error{Code: EInternal, Msg: err.Error()}
	}
	return Result{Text: pe.Text(), IsError: true, Code: pe.Code}
}

func prefixError(err error, prefix string) error {
	var pe *Error
	if errors.As(err, &pe) {
		return &Error{Code: pe.Code, Msg: prefix + pe.Msg, Detail: pe.Detail}
	}
	return err
}
