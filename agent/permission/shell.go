package permission

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxShellDepth bounds how deeply command strings inside command strings
// (sh -c "bash -c '...'") are read; deeper ones are undecidable.
const maxShellDepth = 8

// program is what command rules see of a shell program: the simple
// commands it can run, read from its syntax tree.
type program struct {
	// whole is the program's text with runs of white space made one space.
	whole string
	// commands are the simple commands, each as "NAME ARG...", NAME the
	// base name of argv[0] and the words unquoted.
	commands []command
	// undecidable, when set, says why what the program runs cannot be
	// known without running it; such a program meets every deny and ask
	// rule of its tool.
	undecidable string
}

// command is one simple command of a program.
type command struct {
	text string
	// open is set when words after text are only known at run time (a
	// parameter, a command substitution, the input of xargs): the command
	// is text followed by anything.
	open bool
}

// parseProgram reads src as a bash program.
func parseProgram(src string) *program {
	p := &program{whole: strings.Join(strings.Fields(src), " ")}
	p.parse(src, 0)
	return p
}

func (p *program) undecide(why string) {
	if p.undecidable == "" {
		p.undecidable = why
	}
}

// parse adds the commands of src, a program found at depth.
func (p *program) parse(src string, depth int) {
	if depth > maxShellDepth {
		p.undecide("command strings are nested too deeply to read")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		p.undecide("the command is not a shell program Praxis can read: " + err.Error())
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			ws := make([]word, len(c.Args))
			for i, a := range c.Args {
				ws[i] = staticWord(a)
			}
			p.command(ws, depth)
		}
		return true
	})
}

// word is a shell word: its value when known before the program runs.
type word struct {
	val    string
	static bool
	src    string // the word as written, for messages
}

// staticWord returns w's value after quote removal, or static false when
// the value depends on the run: expansions, substitutions, globs, braces.
func staticWord(w *syntax.Word) word {
	out := word{static: true}
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, "*?[{~") {
				out.static = false
			}
			b.WriteString(unescape(x.Value, false))
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				out.static = false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				out.static = false
			}
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					out.static = false
					continue
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			out.static = false
		}
	}
	out.val = b.String()
	if out.static {
		out.src = out.val
	} else {
		var src strings.Builder
		_ = syntax.NewPrinter().Print(&src, w)
		out.src = src.String()
	}
	return out
}

// unescape removes the backslashes quote removal removes: all of them
// outside quotes, before $ ` " \ and newline inside double quotes.
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if !dquoted || strings.IndexByte("$`\"\\\n", n) >= 0 {
				i++
				if n != '\n' {
					b.WriteByte(n)
				}
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// wrapper describes a command that runs the command in its arguments.
type wrapper struct {
	name string // the command's name
	// argOpts are the short options that take a value; longArg the long
	// options that take one when it is written as the next word.
	argOpts string
	longArg []string
	// operands are the words between the options and the command (the
	// duration of timeout, the directory of chroot).
	operands int
	// assigns: NAME=VALUE words before the command are skipped (env).
	assigns bool
	// stringOpt is a short option whose value is a command string
	// (su -c, flock -c); env's -S splits its value into words.
	stringOpt byte
	// open: the command gets further arguments at run time (xargs).
	open bool
	// shell: the words after the options are joined into a command string
	// (watch).
	shell bool
}

// wrappers are the commands that run another command given in their
// arguments, unwrapped before rules are matched. The table is laid out by
// the compiler, where a map would be built at every process's start (so
// are the shells and git's options below, as switches).
var wrappers = []wrapper{
	{name: "command"},
	{name: "builtin"},
	{name: "exec", argOpts: "a"},
	{name: "nohup"},
	{name: "setsid"},
	{name: "time", argOpts: "fo", longArg: []string{"--format", "--output"}},
	{name: "nice", argOpts: "n", longArg: []string{"--adjustment"}},
	{name: "ionice", argOpts: "cnp", longArg: []string{"--class", "--classdata", "--pid"}},
	{name: "chrt", operands: 1},
	{name: "taskset", operands: 1},
	{name: "stdbuf", argOpts: "ioe", longArg: []string{"--input", "--output", "--error"}},
	{name: "timeout", argOpts: "sk", longArg: []string{"--signal", "--kill-after"}, operands: 1},
	{name: "sudo", argOpts: "ughpCDrtUTR", longArg: []string{"--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout", "--chroot"}},
	{name: "doas", argOpts: "uC"},
	{name: "env", argOpts: "uCS", longArg: []string{"--unset", "--chdir", "--split-string"}, assigns: true, stringOpt: 'S'},
	{name: "xargs", argOpts: "IadELnPs", longArg: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--max-lines", "--process-slot-var"}, open: true},
	{name: "parallel", argOpts: "jS", open: true},
	{name: "flock", argOpts: "wEc", operands: 1, stringOpt: 'c'},
	{name: "su", argOpts: "sgGc", longArg: []string{"--shell", "--group", "--supp-group", "--command"}, stringOpt: 'c'},
	{name: "runuser", argOpts: "usgGc", longArg: []string{"--user", "--shell", "--group", "--supp-group", "--command"}, stringOpt: 'c'},
	{name: "chroot", longArg: []string{"--userspec", "--groups"}, operands: 1},
	{name: "watch", argOpts: "nqd", longArg: []string{"--interval", "--differences"}, shell: true},
	{name: "strace", argOpts: "oepsSuEIbPa"},
	{name: "ltrace", argOpts: "oepsSuEnaA"},
	{name: "unbuffer"},
	{name: "busybox"},
}

// wrapperOf returns the wrapper called name, if it is one.
func wrapperOf(name string) (wrapper, bool) {
	for _, w := range wrappers {
		if w.name == name {
			return w, true
		}
	}
	return wrapper{}, false
}

// isShell reports whether name is a shell, which runs the command string
// of -c, a script file, or its input.
func isShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish":
		return true
	}
	return false
}

// command adds the simple command ws, found at depth, unwrapping wrappers
// and reading command strings.
func (p *program) command(ws []word, depth int) {
	for len(ws) > 0 {
		if !ws[0].static {
			p.undecide("the command name " + ws[0].src + " is only known when the command runs")
			return
		}
		name := path.Base(ws[0].val)
		args := ws[1:]
		switch {
		case name == "eval":
			p.undecide("eval runs a command made at run time")
			return
		case name == "source" || name == ".":
			if len(args) == 0 || !args[0].static || strings.HasPrefix(args[0].val, "/dev/") || strings.HasPrefix(args[0].val, "/proc/") {
				p.undecide(name + " reads commands that are only known when the command runs")
				return
			}
		case name == "alias":
			for _, a := range args {
				if _, def, ok := strings.Cut(a.val, "="); ok && a.static {
					p.parse(def, depth+1)
				} else if ok {
					p.undecide("an alias is defined at run time")
				}
			}
		case name == "trap":
			if len(args) > 0 && args[0].val != "-" && !strings.HasPrefix(args[0].val, "-") {
				if !args[0].static {
					p.undecide("trap runs a command made at run time")
					return
				}
				p.parse(args[0].val, depth+1)
			}
		case isShell(name):
			p.shell(name, args, depth)
		case name == "find":
			p.find(args, depth)
		case name == "git":
			p.git(args)
			return
		}
		w, ok := wrapperOf(name)
		if !ok {
			p.add(name, args)
			return
		}
		p.add(name, args) // a rule may name the wrapper itself
		rest, open, done := p.unwrap(name, w, args, depth)
		if done {
			return
		}
		if open {
			p.openCommand(rest)
			return
		}
		ws = rest
	}
}

// add records the command name with args, open from the first word that
// is not static.
func (p *program) add(name string, args []word) {
	fields := []string{name}
	for _, a := range args {
		if !a.static {
			p.commands = append(p.commands, command{text: strings.Join(fields, " "), open: true})
			return
		}
		fields = append(fields, strings.Fields(a.val)...)
	}
	p.commands = append(p.commands, command{text: strings.Join(fields, " ")})
}

// openCommand records ws as a command that gets more words at run time.
func (p *program) openCommand(ws []word) {
	if len(ws) == 0 {
		return // xargs alone runs echo
	}
	if !ws[0].static {
		p.undecide("the command name " + ws[0].src + " is only known when the command runs")
		return
	}
	p.add(path.Base(ws[0].val), append(ws[1:len(ws):len(ws)], word{src: "…"}))
}

// unwrap returns the command a wrapper runs. done is set when there is
// none to match further (the wrapper was handled whole).
func (p *program) unwrap(name string, w wrapper, args []word, depth int) (rest []word, open, done bool) {
	if w.stringOpt != 0 {
		// The command string may follow operands (flock FILE -c CMD).
		for i, a := range args {
			if a.static && a.val == "-"+string(w.stringOpt) && i+1 < len(args) {
				if !args[i+1].static {
					p.undecide(name + " runs a command string made at run time")
				} else {
					p.parse(args[i+1].val, depth+1)
				}
				return nil, false, true
			}
		}
	}
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.static {
			if strings.HasPrefix(a.src, "-") {
				i++
				continue
			}
			break
		}
		v := a.val
		if v == "--" {
			i++
			break
		}
		if w.assigns && !strings.HasPrefix(v, "-") && strings.Contains(v, "=") {
			i++
			continue
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			break
		}
		if strings.HasPrefix(v, "--") {
			opt, val, hasVal := strings.Cut(v, "=")
			takes := false
			for _, l := range w.longArg {
				takes = takes || l == opt
			}
			if (opt == "--split-string" || opt == "--command") && w.stringOpt != 0 {
				if !hasVal {
					if i+1 >= len(args) {
						return nil, false, true
					}
					i++
					val = args[i].val
					if !args[i].static {
						p.undecide(name + " runs a command string made at run time")
						return nil, false, true
					}
				}
				p.parse(val, depth+1)
				return nil, false, true
			}
			i++
			if takes && !hasVal {
				i++
			}
			continue
		}
		// Short options, perhaps combined ("-lc", "-n5").
		i++
		for j := 1; j < len(v); j++ {
			c := v[j]
			if strings.IndexByte(w.argOpts, c) < 0 {
				continue
			}
			val := v[j+1:]
			static := true
			if val == "" {
				if i >= len(args) {
					break
				}
				val, static = args[i].val, args[i].static
				i++
			}
			if w.stringOpt != 0 && c == w.stringOpt {
				if !static {
					p.undecide(name + " runs a command string made at run time")
					return nil, false, true
				}
				p.parse(val, depth+1)
				return nil, false, true
			}
			break
		}
	}
	if i += w.operands; i > len(args) {
		return nil, false, true
	}
	rest = args[i:]
	if w.shell {
		var parts []string
		for _, a := range rest {
			if !a.static {
				p.undecide(name + " runs a command made at run time")
				return nil, false, true
			}
			parts = append(parts, a.val)
		}
		p.parse(strings.Join(parts, " "), depth+1)
		return nil, false, true
	}
	if len(rest) == 0 && (name == "sudo" || name == "su" || name == "runuser" || name == "doas") {
		for _, a := range args {
			if a.static && (a.val == "-s" || a.val == "-i" || a.val == "--shell" || a.val == "--login") {
				p.undecide(name + " starts a shell that reads its commands from its input")
			}
		}
		return nil, false, true
	}
	return rest, w.open, len(rest) == 0
}

// shell reads what a shell invocation runs: the string of -c, or a script
// file; a shell without either reads its commands from its input, which
// is undecidable.
func (p *program) shell(name string, args []word, depth int) {
	fromString, fromInput := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if strings.HasPrefix(a.src, "-") {
				continue
			}
			break
		}
		v := a.val
		if v == "--" || v == "-" {
			fromInput = fromInput || v == "-"
			i++
			break
		}
		if !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
			break
		}
		if strings.HasPrefix(v, "--") {
			switch v {
			case "--rcfile", "--init-file":
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'c':
				fromString = true
			case 's':
				fromInput = true
			case 'o', 'O':
				if j == len(v)-1 {
					i++
				}
			}
		}
	}
	switch {
	case fromString:
		if i >= len(args) {
			p.undecide(name + " -c without a command string")
			return
		}
		if !args[i].static {
			p.undecide(name + " -c runs a command string made at run time")
			return
		}
		p.parse(args[i].val, depth+1)
	case fromInput || i >= len(args):
		p.undecide(name + " reads its commands from its input")
	case !args[i].static:
		p.undecide(name + " runs a script named at run time")
	case strings.HasPrefix(args[i].val, "/dev/") || strings.HasPrefix(args[i].val, "/proc/"):
		p.undecide(name + " reads its commands from " + args[i].val)
	}
}

// find reads the commands of -exec, -execdir, -ok and -okdir: the words up
// to ";" or "+", followed by the file names find finds.
func (p *program) find(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		switch args[i].val {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].val != ";" && args[j].val != "+" {
				j++
			}
			p.openCommand(args[i+1 : j])
			i = j
		}
	}
}

// gitOptWithValue reports whether opt is one of git's global options that
// take the next word as their value.
func gitOptWithValue(opt string) bool {
	switch opt {
	case "-C", "-c", "--git-dir", "--work-tree", "--namespace",
		"--super-prefix", "--config-env", "--exec-path", "--attr-source", "--list-cmds":
		return true
	}
	return false
}

// git records a git command with its global options left out, so that
// "git -C dir push" is "git push". An alias defined on the command line
// (-c alias.x=...) makes the subcommand undecidable.
func (p *program) git(args []word) {
	i := 0
	for i < len(args) {
		a := args[i]
		v := a.val
		if !a.static || !strings.HasPrefix(v, "-") {
			break
		}
		i++
		opt, val, hasVal := strings.Cut(v, "=")
		if strings.HasPrefix(v, "-c") && len(v) > 2 && !strings.HasPrefix(v, "--") {
			val, hasVal = v[2:], true
			opt = "-c"
		}
		if gitOptWithValue(opt) && !hasVal && i < len(args) {
			val = args[i].val
			if !args[i].static {
				val = "?"
			}
			i++
		}
		if (opt == "-c" || opt == "--config-env") && strings.HasPrefix(strings.ToLower(val), "alias.") {
			p.undecide("git -c alias... defines a git command on the command line")
		}
	}
	p.add("git", args[i:])
}
