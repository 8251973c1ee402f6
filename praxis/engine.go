package praxis

import (
	"fmt"
	"log/slog"

	"github.com/praxis-tools/praxis/sandbox"
	"github.com/praxis-tools/praxis/skills"
)

// Options configure an Engine. The zero value of every field is a safe
// default.
type Options struct {
	// Workspace is the directory the engine works in. Default ".".
	Workspace string
	// MaxFileBytes is the largest file read_file and edit_file will load.
	// Default 64 MiB.
	MaxFileBytes int64
	// MaxChangedLines, if positive, refuses an edit_file or patch_file
	// call, or a write_file over an existing file, that would remove and
	// add more lines than this in total, counted from the diff
	// (E_BUDGET_EXCEEDED).
	MaxChangedLines int
	// HistoryBytes bounds the memory of file versions the engine keeps so
	// that anchors read from an earlier version can be relocated; the
	// versions are also kept on disk in the workspace's state directory
	// (see versionStore). Default 64 MiB.
	HistoryBytes int64
	// Protected lists workspace-relative paths that the engine's writers
	// (write_file, edit_file, the memory tools) refuse to change (E_POLICY),
	// such as the files that set the engine's own policy. A path ending in
	// "/" protects a directory tree. Protection follows the file, not its
	// spelling: see checkProtected.
	Protected []string
	// NoSync skips fsync on writes. Writes stay atomic, but not durable
	// across a power loss. For tests and benchmarks.
	NoSync bool
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
	// SkillsDirs are directories searched for skills before the
	// workspace's .praxis/skills, .agents/skills and .claude/skills and the
	// user's ~/.agents/skills and ~/.claude/skills, in order; the first
	// skill of a name wins. Relative paths are taken from the current
	// directory.
	SkillsDirs []string
	// Sandbox is the policy of the bash tool and its background jobs. Nil,
	// or a policy without Shell, disables the shell: bash refuses every
	// command (E_POLICY). An empty Workspace means the engine's; the
	// Protected paths are added to its ReadOnly ones, so that under bwrap
	// commands cannot change them either. New fails when the policy asks
	// for isolation this machine cannot provide.
	Sandbox *sandbox.Policy
	// MemoryDir is the directory of the memory tools' notes, one Markdown
	// file per key. A relative path is taken from the workspace root; the
	// directory may lie outside the workspace. Default ".praxis/memory".
	MemoryDir string
	// MaxMemoryBytes caps the size of one note (E_TOO_LARGE past it).
	// Default 256 KiB.
	MaxMemoryBytes int64
}

const (
	defaultMaxFileBytes = 64 << 20
	defaultHistoryBytes = 64 << 20
	lineClip            = 2000 // bytes of one line shown before it is clipped
)

// Engine is the Praxis tool engine for one workspace. It is safe for
// concurrent use.
type Engine struct {
	opts    Options
	ws      *Workspace
	log     *slog.Logger
	catalog *Catalog
	commits *committer    // every write of a workspace file
	memSem  chan struct{} // the in-process half of a memory store's lock outside the workspace
	history *history
	// versions holds the contents of the versions the engine served and
	// wrote, in memory and under the state directory, shared by processes.
	versions *versionStore
	skills   *skills.Catalog

	// testHook, when set by a test, runs before each file of a commit is
	// checked again ("verify") and before it is renamed ("write"); an
	// error it returns fails that step.
	testHook func(stage, rel string) error

	shell   *shell       // the bash tool's runner and background jobs
	protect *protection  // the files no writer may change
	board   *noticeBoard // what each session was shown, for change notices
}

func (e *Engine) hook(stage, rel string) error {
	if e.testHook == nil {
		return nil
	}
	return e.testHook(stage, rel)
}

// New opens the workspace and builds the engine's catalog. It first
// finishes the commits a killed process left in the workspace (and in a
// memory store outside it): each is rolled forward or back, and its
// temporary files are removed; see README.md, "Guarantees".
func New(opts Options) (*Engine, error) {
	if opts.Workspace == "" {
		opts.Workspace = "."
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = defaultMaxFileBytes
	}
	if opts.HistoryBytes <= 0 {
		opts.HistoryBytes = defaultHistoryBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ws, err := OpenWorkspace(opts.Workspace)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		opts:    opts,
		ws:      ws,
		log:     opts.Logger,
		history: newHistory(),
		memSem:  make(chan struct{}, 1),
	}
	e.versions = newVersionStore(ws.root, opts.HistoryBytes, opts.MaxFileBytes, opts.Logger)
	e.protect = newProtection(ws, opts.Protected)
	e.board = newNoticeBoard(ws, opts.MaxFileBytes, opts.Logger, e.versions)
	e.commits = &committer{root: ws.root, state: StateDir, lock: newCommitLock(ws.root, StateDir),
		sync: !opts.NoSync, log: opts.Logger, allowed: e.checkWritable, hook: e.hook, written: e.board.written}
	e.recoverCommits()
	e.skills = newSkills(opts, ws)
	if e.shell, err = newShell(opts.Sandbox, ws, opts.Protected, opts.Logger); err != nil {
		e.board.close()
		ws.Close()
		return nil, err
	}
	tools := e.tools()
	for i, t := range tools {
		tools[i] = withPregenerated(t)
		tools[i].Handler = e.noticing(t)
	}
	e.catalog, err = NewCatalog(tools...)
	if err != nil {
		e.shell.close()
		e.board.close()
		ws.Close()
		return nil, fmt.Errorf("building the catalog: %w", err)
	}
	return e, nil
}

// tools is the catalog of built-in tools, one line each: the tool's name,
// its description (name.md), its annotations and its handler (name.go).
func (e *Engine) tools() []Tool {
	return []Tool{
		NewTool("read_file", describe("read_file"), Annotations{ReadOnly: true, Idempotent: true}, e.readFile),
		NewTool("write_file", describe("write_file"), Annotations{Destructive: true, Idempotent: true}, e.writeFile),
		NewTool("list_dir", describe("list_dir"), Annotations{ReadOnly: true, Idempotent: true}, e.listDir),
		NewTool("edit_file", describe("edit_file"), Annotations{Destructive: true}, e.editFile),
		NewTool("patch_file", describe("patch_file"), Annotations{Destructive: true}, e.patchFile),
		NewTool("list_skills", describe("list_skills"), Annotations{ReadOnly: true, Idempotent: true}, e.listSkills),
		NewTool("load_skill", describe("load_skill"), Annotations{ReadOnly: true, Idempotent: true}, e.loadSkill),
		NewTool("read_skill_file", describe("read_skill_file"), Annotations{ReadOnly: true, Idempotent: true}, e.readSkillFile),
		NewTool("bash", describe("bash"), Annotations{Destructive: true, OpenWorld: true}, e.bash),
		NewTool("job_output", describe("job_output"), Annotations{ReadOnly: true}, e.jobOutput),
		NewTool("job_kill", describe("job_kill"), Annotations{Destructive: true, Idempotent: true}, e.jobKill),
		NewTool("glob", describe("glob"), Annotations{ReadOnly: true, Idempotent: true}, e.glob),
		NewTool("grep", describe("grep"), Annotations{ReadOnly: true, Idempotent: true}, e.grep),
		NewTool("write_memory", describe("write_memory"), Annotations{Destructive: true}, e.writeMemory),
		NewTool("read_memory", describe("read_memory"), Annotations{ReadOnly: true, Idempotent: true}, e.readMemory),
		NewTool("list_memory", describe("list_memory"), Annotations{ReadOnly: true, Idempotent: true}, e.listMemory),
		NewTool("search_memory", describe("search_memory"), Annotations{ReadOnly: true, Idempotent: true}, e.searchMemory),
		NewTool("delete_memory", describe("delete_memory"), Annotations{Destructive: true, Idempotent: true}, e.deleteMemory),
	}
}

// Catalog returns the engine's tools.
func (e *Engine) Catalog() *Catalog { return e.catalog }

// Sandbox describes in one line how the bash tool runs commands: the
// isolation actually in force (under isolation auto, bwrap or none as
// probed, and why none), the network and Unix sockets; or that the shell
// is disabled, or why it cannot run commands. Its first call checks
// bubblewrap where the policy may use it (a run of bwrap); the engine
// itself starts none.
func (e *Engine) Sandbox() string {
	if r := e.shell.runner; r != nil {
		return r.Describe()
	}
	return "shell disabled"
}

// SandboxKnown describes the sandbox as Sandbox does, without starting a
// process: until the first command (or a call of Sandbox) has checked
// bubblewrap, it names the policy's isolation and says that bwrap is
// tried at the first command.
func (e *Engine) SandboxKnown() string {
	if r := e.shell.runner; r != nil {
		return r.Known()
	}
	return "shell disabled"
}

// Workspace returns the engine's workspace.
func (e *Engine) Workspace() *Workspace { return e.ws }

// Close releases the engine's resources. Calls in flight may fail. Every
// command the engine started, background jobs included, is killed, and
// Close returns once their processes are gone and the file versions the
// engine kept are written to the state directory.
func (e *Engine) Close() error {
	e.shell.close()
	e.board.close()
	e.versions.close()
	return e.ws.Close()
}

// served records that the engine showed anchors of rel at version, whose
// content is data: an anchor read from it can be relocated later.
func (e *Engine) served(rel, version string, data []byte) {
	e.history.served(rel, version)
	e.versions.served(rel, version, data)
}

// recoverCommits finishes the commits a killed process left, when no other
// engine is committing (one that is recovers them itself first).
func (e *Engine) recoverCommits() {
	cs := []*committer{e.commits}
	if mc, _ := e.memoryCommitter(false); mc != nil {
		defer mc.root.Close()
		cs = append(cs, mc)
	}
	for _, c := range cs {
		if release, ok := c.lock.tryAcquire(); ok {
			c.recover()
			release()
		}
	}
}
