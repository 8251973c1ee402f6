package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/praxis-tools/praxis/praxis"
	"github.com/praxis-tools/praxis/sandbox"
)

// newFlagSet returns a flag set for a command that prints its usage and
// flags on --help and reports errors without exiting.
func newFlagSet(name, synopsis, about string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("praxis "+name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: praxis %s %s\n\n%s\n", name, synopsis, about)
		if hasFlags(fs) {
			fmt.Fprintln(out, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses args. It returns ok=false with the exit status when the
// command should stop: exitOK after --help, exitUsage after a bad flag.
func parseFlags(fs *flag.FlagSet, args []string, io stdio) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(io.out)
		fs.Usage()
		return exitOK, false
	case err != nil:
		return exitUsage, false
	}
	if err := afterParse(fs); err != nil {
		fmt.Fprintf(io.err, "%s: %v\n", fs.Name(), err)
		return exitUsage, false
	}
	return 0, true
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
		if ap, ok := f.Value.(afterParser); ok && err == nil {
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
	fs.StringVar(&ef.sandbox, "sandbox", "", "isolation of the bash tool's commands: auto, bwrap or none (default: the config files', else auto: bwrap where it works)")
	fs.Var(configFlag{ef}, "config", "a config `file` read after the user's and the workspace's (.praxis/config.yaml)")
	fs.IntVar(&ef.maxChangedLines, "max-changed-lines", 0, "refuse an edit_file call that adds and removes more than `N` lines in all (E_BUDGET_EXCEEDED; default no limit)")
	fs.StringVar(&ef.memoryDir, "memory-dir", "", "the `directory` of the memory notes (default .praxis/memory in the workspace)")
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
