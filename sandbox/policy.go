// Package sandbox runs shell commands under a Policy: in the workspace, with
// an allowlisted environment, bounded time, bounded output and resource
// limits, and, where bubblewrap works, inside a sandbox that makes the host
// read-only, hides credentials, refuses Unix-domain sockets and can cut the
// network.
//
// A Runner never hangs on a command's output (both streams are drained while
// the command runs), never leaks its processes (every process a command
// starts, whether it left the process group, the session or its parent, is
// killed on timeout, cancellation, and when the command's shell exits), and
// never runs with less isolation than the policy asks for: under
// IsolationBwrap New fails with ErrUnavailable instead, and under
// IsolationAuto the runner reports the mode it fell back to.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Isolation is how strongly commands are separated from the host.
type Isolation string

const (
	// IsolationNone runs commands as ordinary child processes. Limits,
	// timeouts, the environment allowlist and the working directory are
	// enforced; the file system and the network are not restricted.
	IsolationNone Isolation = "none"
	// IsolationBwrap runs commands under bubblewrap: the host root
	// read-only, the workspace read-write, a private /tmp, a new PID
	// namespace, a seccomp filter, and, with the network off (its default),
	// a new network namespace.
	IsolationBwrap Isolation = "bwrap"
	// IsolationAuto is IsolationBwrap where bubblewrap works on this
	// machine and IsolationNone where it does not; Runner.Isolation says
	// which. The network is on by default.
	IsolationAuto Isolation = "auto"
	// IsolationDocker runs commands in a container of Policy.Image through
	// a Docker Engine API (Docker or Podman): one container per Runner,
	// holding only the workspace and the Writable paths of the host, with
	// the limits as totals of the container.
	IsolationDocker Isolation = "docker"
)

// isolations lists the values of Isolation, from the weakest to the
// strongest; a new runner adds its value here and a case in New.
var isolations = []Isolation{IsolationNone, IsolationAuto, IsolationBwrap, IsolationDocker}

// strength orders isolation levels for Loosens; an unknown one is the
// strongest, so that no setting is taken for a loosening by mistake.
func (i Isolation) strength() int {
	if n := slices.Index(isolations, i); n >= 0 {
		return n
	}
	return len(isolations)
}

// Network says whether commands may use the network.
type Network string

const (
	// NetworkDefault leaves the choice to the isolation level: off under
	// bwrap, on under auto and none.
	NetworkDefault Network = ""
	NetworkOn      Network = "on"
	// NetworkOff gives commands a network namespace of their own with only
	// a loopback interface. Only bwrap can enforce it; asking for it with
	// IsolationNone is an error, not a silent no-op.
	NetworkOff Network = "off"
)

// Limits are resource limits applied to a command and every process it
// starts. Zero means the default; a negative value means no limit.
type Limits struct {
	// CPUSeconds is the CPU time each process may use (RLIMIT_CPU).
	CPUSeconds int64
	// AddressSpace is the virtual memory, in bytes, each process may map
	// (RLIMIT_AS).
	AddressSpace int64
	// Processes is the most processes a command may have at once, counted
	// wherever they went (its session, its descendants, their orphans). It
	// is enforced by RLIMIT_NPROC where the kernel applies it (not to root)
	// and by counting the command's processes while it runs.
	Processes int64
	// FileSize is the largest file, in bytes, a process may write
	// (RLIMIT_FSIZE).
	FileSize int64
	// Memory is the memory, in bytes, all of the commands' processes may
	// use together (swap included). Only IsolationDocker enforces it.
	// Zero or negative means no limit.
	Memory int64
	// CPUs is how many CPUs' worth of time the commands may use together
	// (1.5: one and a half). Only IsolationDocker enforces it. Zero or
	// negative means no limit.
	CPUs float64
}

// Policy says whether and how commands run. The zero Policy disables the
// shell; DefaultPolicy returns the recommended settings.
type Policy struct {
	// Workspace is the directory commands run in and, under bwrap, the
	// only one they may write (with Writable). Required when Shell is set.
	Workspace string
	// Shell enables running commands at all.
	Shell bool
	// Isolation is auto, bwrap, docker or none. Default auto.
	Isolation Isolation
	// Network is on, off, or the isolation's default.
	Network Network
	// UnixSockets, under bwrap, lets commands create Unix-domain sockets,
	// with which they can reach any socket of the host they can see (an
	// SSH agent, the Docker daemon: root on the host). Off by default: a
	// seccomp filter refuses socket(AF_UNIX, ...); socketpair still works.
	UnixSockets bool
	// Env lists the variables of Praxis's own environment that commands
	// inherit: exact names, or prefix patterns ending in "*" ("GO*" admits
	// every variable whose name starts with GO). Everything else is
	// absent; an empty, non-nil list passes none at all. Nil means
	// DefaultEnv.
	Env []string
	// Writable lists further absolute paths that commands may write under
	// bwrap (a build cache, say). Paths that do not exist are skipped.
	Writable []string
	// Hide lists paths that commands do not see under bwrap: a directory
	// appears empty, a file empty. A leading "~/" is the home directory;
	// paths that do not exist are skipped. Nil means DefaultHide; an empty
	// list hides nothing.
	Hide []string
	// ReadOnly lists paths, absolute or relative to the workspace, that
	// stay read-only under bwrap although they lie in a writable tree: the
	// files that set Praxis's own policy. Paths that do not exist are
	// skipped.
	ReadOnly []string
	// Timeout is a command's time limit when the call names none. Default
	// 2 minutes.
	Timeout time.Duration
	// MaxTimeout is the longest time limit a call may ask for. Default
	// 30 minutes.
	MaxTimeout time.Duration
	// BackgroundAfter is how long a tool waits for a command before it
	// leaves it running as a background job and returns. The Runner does
	// not use it; the engine's bash tool does. Default 30 seconds;
	// negative means never.
	BackgroundAfter time.Duration
	// OutputBytes is how much of each stream (stdout, stderr) is kept: the
	// first and the last OutputBytes/2 bytes, with a marker saying how much
	// was dropped between them. Default 32 KiB.
	OutputBytes int
	// Limits are the resource limits.
	Limits Limits
	// KillGrace is how long a command's processes have between SIGTERM and
	// SIGKILL. Default 1 second.
	KillGrace time.Duration
	// Image is the container image commands run in under IsolationDocker:
	// a name or an ID present in the engine's image store. It is never
	// pulled. Required with IsolationDocker.
	Image string
	// Engine is the Docker Engine API endpoint under IsolationDocker, as
	// in DOCKER_HOST (unix:///run/podman/podman.sock, tcp://host:2376,
	// ssh://user@host). Default: DOCKER_HOST, else the local socket.
	Engine string
}

// DefaultHide lists where credentials usually live. Under bwrap they are
// hidden by default, so that a command cannot show them to the model.
var DefaultHide = []string{
	"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
	"~/.docker", "~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.npmrc", "~/.pypirc",
}

// LocaleEnv names the locale variables: POSIX's and the GNU C library's
// further categories. DefaultEnv admits them by name, not by the prefix
// "LC_", so that a variable such as LC_SECRET does not pass.
var LocaleEnv = []string{
	"LANG", "LANGUAGE", "LC_ALL", "LC_COLLATE", "LC_CTYPE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
	"LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",
}

// DefaultEnv is the environment allowlist used when Policy.Env is nil.
var DefaultEnv = append([]string{"PATH", "HOME", "TERM", "TMPDIR", "USER"}, LocaleEnv...)

// Defaults of the zero-valued fields.
const (
	DefaultTimeout         = 2 * time.Minute
	DefaultMaxTimeout      = 30 * time.Minute
	DefaultOutputBytes     = 32 << 10
	DefaultBackgroundAfter = 30 * time.Second
	DefaultCPUSeconds      = 600
	DefaultAddressSpace    = 8 << 30
	DefaultProcesses       = 1024
	DefaultFileSize        = 1 << 30
	DefaultKillGrace       = time.Second
)

// DefaultPolicy returns the recommended policy for workspace: the shell
// enabled, isolation auto, the default environment, timeouts, output cap
// and limits.
func DefaultPolicy(workspace string) Policy {
	return Policy{Workspace: workspace, Shell: true, Isolation: IsolationAuto}.withDefaults()
}

// withDefaults returns p with every zero field set to its default.
func (p Policy) withDefaults() Policy {
	if p.Isolation == "" {
		p.Isolation = IsolationAuto
	}
	if p.Env == nil {
		p.Env = DefaultEnv
	}
	if p.Hide == nil {
		p.Hide = DefaultHide
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.MaxTimeout <= 0 {
		p.MaxTimeout = DefaultMaxTimeout
	}
	if p.BackgroundAfter == 0 {
		p.BackgroundAfter = DefaultBackgroundAfter
	}
	if p.OutputBytes <= 0 {
		p.OutputBytes = DefaultOutputBytes
	}
	if p.KillGrace <= 0 {
		p.KillGrace = DefaultKillGrace
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.Limits.CPUSeconds, DefaultCPUSeconds)
	def(&p.Limits.AddressSpace, DefaultAddressSpace)
	def(&p.Limits.Processes, DefaultProcesses)
	def(&p.Limits.FileSize, DefaultFileSize)
	return p
}

// Errors a Runner returns. Each is wrapped with the particulars; test with
// errors.Is.
var (
	// ErrDisabled: the policy does not allow commands.
	ErrDisabled = errors.New("the shell is disabled by policy")
	// ErrOutside: the working directory is not inside the workspace.
	ErrOutside = errors.New("the directory is outside the workspace")
	// ErrNoDir: the working directory does not exist or is not a
	// directory.
	ErrNoDir = errors.New("the working directory is not a directory")
	// ErrTimeoutTooLong: the call asked for more time than MaxTimeout.
	ErrTimeoutTooLong = errors.New("the timeout is over the policy maximum")
	// ErrUnavailable: the policy asks for isolation this machine cannot
	// provide. Nothing was run.
	ErrUnavailable = errors.New("the isolation the policy asks for is unavailable")
	// ErrInvalid: the policy itself is malformed.
	ErrInvalid = errors.New("invalid sandbox policy")
)

// validate checks p, which has its defaults set.
func (p Policy) validate() error {
	if !slices.Contains(isolations, p.Isolation) {
		return fmt.Errorf("%w: isolation %q: want %s", ErrInvalid, p.Isolation, isolationNames())
	}
	if p.Isolation == IsolationDocker && p.Image == "" {
		return fmt.Errorf("%w: isolation docker needs image: the container image to run commands in (present in the engine's store; it is never pulled)", ErrInvalid)
	}
	if p.Isolation != IsolationDocker && (p.Limits.Memory > 0 || p.Limits.CPUs > 0) {
		return fmt.Errorf("%w: limits.memory and limits.cpus are totals that only isolation docker enforces; with isolation %s nothing would", ErrUnavailable, p.Isolation)
	}
	switch p.Network {
	case NetworkDefault, NetworkOn:
	case NetworkOff:
		if p.Isolation == IsolationNone {
			return fmt.Errorf("%w: network off needs isolation bwrap; with isolation none nothing would enforce it", ErrUnavailable)
		}
	default:
		return fmt.Errorf("%w: network %q: want on or off", ErrInvalid, p.Network)
	}
	if p.MaxTimeout < p.Timeout {
		return fmt.Errorf("%w: timeout %v is over max_timeout %v", ErrInvalid, p.Timeout, p.MaxTimeout)
	}
	if !p.Shell {
		return nil
	}
	if p.Workspace == "" || !filepath.IsAbs(p.Workspace) {
		return fmt.Errorf("%w: the workspace must be an absolute path, not %q", ErrInvalid, p.Workspace)
	}
	for _, w := range p.Writable {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("%w: writable path %q is not absolute", ErrInvalid, w)
		}
	}
	for _, h := range p.Hide {
		if !filepath.IsAbs(h) && !strings.HasPrefix(h, "~/") {
			return fmt.Errorf("%w: hidden path %q is neither absolute nor under ~/", ErrInvalid, h)
		}
	}
	return nil
}

// Isolations returns the values Policy.Isolation may take, from the
// weakest to the strongest.
func Isolations() []Isolation { return slices.Clone(isolations) }

// isolationNames lists the isolation values for messages.
func isolationNames() string {
	names := make([]string, len(isolations))
	for i, v := range isolations {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// networkOff reports whether commands get no network.
func (p Policy) networkOff() bool {
	return p.Network == NetworkOff || (p.Network == NetworkDefault && (p.Isolation == IsolationBwrap || p.Isolation == IsolationDocker))
}

// environ builds a command's environment: the allowlisted variables of
// base (in "KEY=value" form), then extra, which wins over base. It is
// never nil: os/exec gives a nil environment the whole of Praxis's own.
func (p Policy) environ(base []string, extra map[string]string) []string {
	env := []string{}
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if _, override := extra[k]; !ok || override {
			continue
		}
		if allowed(p.Env, k) {
			env = append(env, kv)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// admits reports whether every variable the allowlist entry e admits is
// admitted by list.
func admits(list []string, e string) bool {
	prefix, pattern := strings.CutSuffix(e, "*")
	if !pattern {
		return allowed(list, e)
	}
	for _, a := range list {
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(prefix, p) {
			return true
		}
	}
	return false
}

// allowed reports whether the allowlist admits the variable name: an entry
// ending in "*" is a prefix pattern, any other an exact name.
func allowed(list []string, name string) bool {
	for _, a := range list {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// openDir opens the working directory dir, absolute or relative to the
// workspace, through an os.Root of the workspace, so that neither .. nor a
// symlink, nor one swapped in meanwhile, can lead outside. The command
// then starts in the opened directory itself, not at a path.
func (p Policy) openDir(dir string) (*os.File, error) {
	ws, err := filepath.EvalSymlinks(p.Workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", p.Workspace, err)
	}
	rel := filepath.Clean(dir)
	if filepath.IsAbs(dir) {
		rel = ""
		for _, base := range []string{filepath.Clean(p.Workspace), ws} {
			if r, err := filepath.Rel(base, dir); err == nil && filepath.IsLocal(r) || r == "." {
				rel = r
				break
			}
		}
	}
	outside := fmt.Errorf("%w: %s (workspace %s; give a directory inside it, relative to it or absolute)", ErrOutside, dir, p.Workspace)
	if !filepath.IsLocal(rel) && rel != "." {
		return nil, outside
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", p.Workspace, err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		if escapes(err) {
			return nil, outside
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrNoDir, dir, errors.Unwrap(err))
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrNoDir, dir)
	}
	return f, nil
}

// escapes reports whether err is os.Root's refusal of a path that leaves
// the root. The os package does not export that error, so it is recognised
// by its text.
func escapes(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// Loosens returns the settings in which q allows more than p: the shell
// enabled, weaker isolation, the network on, more variables, more writable
// or fewer hidden paths, a longer max_timeout, a higher limit, or another
// Docker engine (commands and their environment would go elsewhere; a
// different image is not a loosening). It is empty when q is as
// strict as p or stricter. Praxis uses it to let a workspace's own config
// file tighten the policy but never loosen it.
func (p Policy) Loosens(q Policy) []string {
	p, q = p.withDefaults(), q.withDefaults()
	var out []string
	if q.Shell && !p.Shell {
		out = append(out, "shell")
	}
	if q.Isolation.strength() < p.Isolation.strength() {
		out = append(out, "isolation")
	}
	if q.UnixSockets && !p.UnixSockets {
		out = append(out, "unix_sockets")
	}
	if q.Isolation == IsolationDocker && q.Engine != p.Engine {
		out = append(out, "engine")
	}
	if p.networkOff() && !q.networkOff() {
		out = append(out, "network")
	}
	for _, e := range q.Env {
		if !admits(p.Env, e) {
			out = append(out, "env")
			break
		}
	}
	for _, w := range q.Writable {
		if !slices.Contains(p.Writable, w) {
			out = append(out, "writable")
			break
		}
	}
	for _, h := range p.Hide {
		if !slices.Contains(q.Hide, h) {
			out = append(out, "hide")
			break
		}
	}
	if q.MaxTimeout > p.MaxTimeout {
		out = append(out, "max_timeout")
	}
	higher := func(name string, a, b int64) {
		if a >= 0 && (b < 0 || b > a) {
			out = append(out, "limits."+name)
		}
	}
	higher("cpu_seconds", p.Limits.CPUSeconds, q.Limits.CPUSeconds)
	higher("address_space", p.Limits.AddressSpace, q.Limits.AddressSpace)
	higher("processes", p.Limits.Processes, q.Limits.Processes)
	higher("file_size", p.Limits.FileSize, q.Limits.FileSize)
	if p.Limits.Memory > 0 && (q.Limits.Memory <= 0 || q.Limits.Memory > p.Limits.Memory) {
		out = append(out, "limits.memory")
	}
	if p.Limits.CPUs > 0 && (q.Limits.CPUs <= 0 || q.Limits.CPUs > p.Limits.CPUs) {
		out = append(out, "limits.cpus")
	}
	return out
}
