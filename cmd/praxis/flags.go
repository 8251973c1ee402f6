package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-tools/praxis/internal/jsonerr"
	"github.com/praxis-tools/praxis/internal/lazyre"
	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/sandbox"
)

// newFlagSet returns a flag set for a command that prints its usage and
// flags on --help and reports errors without exiting. The flag package
// itself prints nothing: parseFlags reports in the user's terms.
func newFlagSet(name, synopsis, about string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("praxis "+name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: praxis %s %s\n\n%s\n", name, synopsis, about)
		if hasFlags(fs) {
			fmt.Fprintln(out, "\nFlags:")
			printFlags(out, fs)
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printFlags prints the flags of fs, each as --name with its usage and
// default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		bare := *f
		if c, ok := f.Value.(*checked); ok {
			bare.Value = c.Value // UnquoteUsage names the type of the value
		}
		arg, usage := flag.UnquoteUsage(&bare)
		if isBool(f) {
			arg = ""
		}
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		switch f.DefValue {
		case "", "0", "false", "0s", "[]":
		default:
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

func isBool(f *flag.Flag) bool {
	v := f.Value
	if c, ok := v.(*checked); ok {
		v = c.Value
	}
	b, ok := v.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseFlags parses args, flags before, between and after the positional
// arguments ("--" ends the flags), leaving the positional arguments in
// fs.Args(). It returns ok=false with the exit status when the command
// should stop: exitOK after --help (the usage printed once, on standard
// output), exitUsage after a bad flag (one line saying what is wrong).
// Every int, float and duration flag is refused negative unless a
// constraint of its own (atLeast, inRange, check) says otherwise.
func parseFlags(fs *flag.FlagSet, args []string, io stdio) (code int, ok bool) {
	guardNumbers(fs)
	fs.SetOutput(discard{})
	defer fs.SetOutput(io.err)
	var pos []string
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.SetOutput(io.out)
			fs.Usage()
			return exitOK, false
		case err != nil:
			fmt.Fprintf(io.err, "%s: %s; see \"%s --help\"\n", fs.Name(), flagProblem(fs, err), fs.Name())
			return exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...) // after "--", everything is positional
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	_ = fs.Parse(append([]string{"--"}, pos...))
	if err := afterParse(fs); err != nil {
		fmt.Fprintf(io.err, "%s: %v\n", fs.Name(), err)
		return exitUsage, false
	}
	return 0, true
}

// badArgs reports positional arguments a command cannot use, in one line,
// and returns exitUsage.
func badArgs(fs *flag.FlagSet, io stdio, format string, a ...any) int {
	fmt.Fprintf(io.err, "%s: %s; see \"%s --help\"\n", fs.Name(), fmt.Sprintf(format, a...), fs.Name())
	return exitUsage
}

// noArgs reports the arguments of a command that takes none.
func noArgs(fs *flag.FlagSet, io stdio) int {
	return badArgs(fs, io, "takes no arguments, and was given %q", strings.Join(fs.Args(), " "))
}

// fileProblem words an error of reading a file for the user: when err
// holds a file system error, the file and what is wrong with it ("does
// not exist"), after what, which says what the file is for (often the
// flag that named it); otherwise err's own text.
func fileProblem(what string, err error) string {
	var pe *fs.PathError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if what != "" && (errors.As(err, &syn) || errors.As(err, &typ)) {
		return fmt.Sprintf("%s is not valid JSON: %s", what, jsonerr.Describe(err))
	}
	if !errors.As(err, &pe) {
		return err.Error()
	}
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "does not exist"
	case errors.Is(err, fs.ErrPermission):
		why = "cannot be read: permission denied"
	case errors.Is(err, syscall.EISDIR):
		why = "is a directory, not a file"
	default:
		why = "cannot be read: " + pe.Err.Error()
	}
	if what != "" {
		what += " "
	}
	return fmt.Sprintf("%s%s %s", what, pe.Path, why)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

var (
	reUnknown  = lazyre.New(`^flag provided but not defined: -+(.*)$`)
	reNoValue  = lazyre.New(`^flag needs an argument: -+(.*)$`)
	reBadValue = lazyre.New(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): (.*)$`)
	reSyntax   = lazyre.New(`^bad flag syntax: (.*)$`)
)

// flagProblem says what is wrong with a command line, from an error of the
// flag package, in the user's terms.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := reUnknown.Get().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("there is no flag --%s", m[1])
	}
	if m := reNoValue.Get().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	if m := reSyntax.Get().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%q is not a flag (flags are written --name or --name=value)", m[1])
	}
	if m := reBadValue.Get().FindStringSubmatch(msg); m != nil {
		value, name, why := m[1], m[2], m[3]
		if f := fs.Lookup(name); f != nil && (why == "parse error" || why == "value out of range" || strings.HasPrefix(why, "time: ")) {
			why = "wants " + kindOfFlag(f)
		}
		if value == "" || strings.ContainsAny(value, " \t\"'") {
			value = strconv.Quote(value)
		}
		return fmt.Sprintf("--%s %s: %s", name, value, why)
	}
	return msg
}

// kindOfFlag names what a flag's value must be, for error messages.
func kindOfFlag(f *flag.Flag) string {
	if isBool(f) {
		return "true or false"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case time.Duration:
		return "a duration such as 30s, 10m or 1h30m"
	case float64:
		return "a number"
	case int, int64, uint, uint64:
		return "a whole number"
	}
	return "a valid value"
}

// checked is a flag value with a constraint, checked when it is set.
type checked struct {
	flag.Value
	check func(raw string, v any) error
}

func (c *checked) Set(s string) error {
	if err := c.Value.Set(s); err != nil {
		return err
	}
	var v any = s
	if g, ok := c.Value.(flag.Getter); ok {
		v = g.Get()
	}
	return c.check(s, v)
}

func (c *checked) Get() any {
	if g, ok := c.Value.(flag.Getter); ok {
		return g.Get()
	}
	return c.Value.String()
}

func (c *checked) String() string {
	if c == nil || c.Value == nil {
		return ""
	}
	return c.Value.String()
}

// check adds a constraint to the flag called name: fn says what is wrong
// with a value ("must be ..."), or returns nil.
func check(fs *flag.FlagSet, name string, fn func(raw string, v any) error) {
	f := fs.Lookup(name)
	f.Value = &checked{Value: f.Value, check: fn}
}

// number returns a numeric flag value as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case time.Duration:
		return float64(n), true
	}
	return 0, false
}

// atLeast refuses values of the numeric flag called name below min.
func atLeast(fs *flag.FlagSet, name string, min float64) {
	check(fs, name, func(_ string, v any) error {
		if n, ok := number(v); ok && n < min {
			return fmt.Errorf("must be at least %v", min)
		}
		return nil
	})
}

// positive refuses values of the numeric flag called name that are zero
// or less.
func positive(fs *flag.FlagSet, name string) {
	check(fs, name, func(_ string, v any) error {
		if n, ok := number(v); ok && n <= 0 {
			return errors.New("must be more than zero")
		}
		return nil
	})
}

// guardNumbers refuses negative values of every numeric flag that has no
// constraint of its own.
func guardNumbers(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, done := f.Value.(*checked); done {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		if _, ok := number(g.Get()); ok {
			atLeast(fs, f.Name, 0)
		}
	})
}

// afterParser is a flag value with work to do once every flag is parsed,
// such as loading a file named by one flag from a directory named by
// another. parseFlags calls it, and stops with exitUsage on its error.
type afterParser interface {
	afterParse() error
}

func afterParse(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value
		if c, ok := v.(*checked); ok {
			v = c.Value
		}
		if ap, ok := v.(afterParser); ok && err == nil {
			err = ap.afterParse()
		}
	})
	return err
}

// engineFlags are the flags of every command that builds an engine.
type engineFlags struct {
	workspace  string
	skillsDirs []string // nil: from PRAXIS_SKILLS_DIR
	// The sandbox policy: config files (see config.go), then --sandbox.
	sandbox   string
	config    string
	policy    *sandbox.Policy
	protected []string
	memoryDir string
	// maxChangedLines bounds one edit_file call (0: no bound).
	maxChangedLines int
}

func addEngineFlags(fs *flag.FlagSet) *engineFlags {
	ef := &engineFlags{}
	fs.StringVar(&ef.workspace, "workspace", ".", "the workspace `directory`: every file the tools touch is inside it")
	fs.Func("skills-dir", "a `directory` searched for skills before the workspace's and the user's (repeatable, or colon-separated; default $PRAXIS_SKILLS_DIR)", func(v string) error {
		ef.skillsDirs = append(ef.skillsDirs, filepath.SplitList(v)...)
		return nil
	})
	fs.StringVar(&ef.sandbox, "sandbox", "", "isolation of the bash tool's commands: auto, bwrap, docker or none (default: the config files', else auto: bwrap where it works; docker needs image: in a config file)")
	fs.Var(configFlag{ef}, "config", "a config `file` read after the user's and the workspace's (.praxis/config.yaml)")
	fs.IntVar(&ef.maxChangedLines, "max-changed-lines", 0, "refuse an edit_file or patch_file call, or a write_file over an existing file, that adds and removes more than `N` lines in all (E_BUDGET_EXCEEDED; default no limit)")
	fs.StringVar(&ef.memoryDir, "memory-dir", "", "the `directory` of the memory notes (default .praxis/memory in the workspace)")
	check(fs, "workspace", func(dir string, _ any) error {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return errors.New("no such directory; give the workspace's directory")
		case err != nil:
			return errors.New("the directory cannot be read")
		case !fi.IsDir():
			return errors.New("a file, not a directory; give the workspace's directory")
		}
		return nil
	})
	check(fs, "sandbox", func(mode string, _ any) error {
		modes := sandbox.Isolations()
		if !slices.Contains(modes, sandbox.Isolation(mode)) {
			names := make([]string, len(modes))
			for i, m := range modes {
				names[i] = string(m)
			}
			return errors.New("must be one of " + strings.Join(names, ", "))
		}
		return nil
	})
	return ef
}

// options returns the engine options the flags describe.
func (ef *engineFlags) options(log *slog.Logger) praxis.Options {
	skillsDirs := ef.skillsDirs
	if skillsDirs == nil {
		skillsDirs = filepath.SplitList(os.Getenv("PRAXIS_SKILLS_DIR"))
	}
	return praxis.Options{Workspace: ef.workspace, Logger: log, SkillsDirs: skillsDirs,
		Sandbox: ef.policy, Protected: ef.protected, MemoryDir: ef.memoryDir, MaxChangedLines: ef.maxChangedLines}
}

// open builds the engine the flags describe. On failure it reports the
// error as command cmd and returns nil.
func (ef *engineFlags) open(cmd string, io stdio) *praxis.Engine {
	eng, err := praxis.New(ef.options(newLogger(io)))
	if err != nil {
		fmt.Fprintf(io.err, "praxis %s: %v\n", cmd, err)
		return nil
	}
	return eng
}

// newLogger returns the logger every command uses: text on stderr.
func newLogger(io stdio) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
