package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/praxis-tools/praxis/praxis"
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
	return 0, true
}

// engineFlags are the flags of every command that builds an engine.
type engineFlags struct {
	workspace string
}

func addEngineFlags(fs *flag.FlagSet) *engineFlags {
	ef := &engineFlags{}
	fs.StringVar(&ef.workspace, "workspace", ".", "the workspace `directory`: every file the tools touch is inside it")
	return ef
}

// options returns the engine options the flags describe.
func (ef *engineFlags) options(log *slog.Logger) praxis.Options {
	return praxis.Options{Workspace: ef.workspace, Logger: log}
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
