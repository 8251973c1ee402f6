package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
)

// The scripts the container runs: the agent is its main process, the
// wrapper runs each command. Both are bash, which the image must provide
// (commands are run by bash -c under every isolation).
var (
	//go:embed docker_lib.sh
	dockerLib string
	//go:embed docker_agent.sh
	dockerAgent string
	//go:embed docker_wrap.sh
	dockerWrap string
)

// Labels of a session's container. Praxis removes the containers of its
// workspace whose owner is gone when it starts.
const (
	labelWorkspace = "praxis.workspace"
	labelOwner     = "praxis.owner"
	labelSession   = "praxis.session"
)

// markerVar names the environment variable that marks a command's
// processes inside the container, so that the agent can find them all.
const markerVar = "PRAXIS_COMMAND"

// hostVars describe the host, not the container: under docker commands
// get the image's values (the engine sets PATH and HOME from the image and
// the user) and TMPDIR=/tmp, unless the call sets them itself.
var hostVars = []string{"PATH", "HOME", "TMPDIR"}

// docker runs a Runner's commands in one container per session through a
// Docker Engine API. The container is created at the first command, each
// command is an exec in it, and Close removes it.
type docker struct {
	policy  Policy
	cli     *engineAPI
	ws      string // the workspace with symlinks resolved: its path inside the container too
	user    string // uid:gid the commands run as
	session string
	owner   string
	seccomp string // the containers' seccomp profile (see dockerSeccomp), or "" for the engine's default

	mu     sync.Mutex
	closed bool
	box    *box
}

// box is a session's running container and the connection to its agent.
type box struct {
	id   string
	conn hijacked

	mu      sync.Mutex // one request to the agent at a time
	replies chan string
	dead    chan struct{} // closed when the agent's output ends: the container is gone or going
}

// newDocker connects to the engine, checks that the image is present and
// removes the containers its workspace's earlier sessions left behind.
func newDocker(p Policy) (*docker, error) {
	ws := realPath(p.Workspace)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: workspace %s is not a directory", ErrInvalid, p.Workspace)
	}
	cli, where, err := newEngineAPI(p.Engine)
	if err != nil {
		return nil, fmt.Errorf("%w: docker engine (setting engine:) %s: %v", ErrInvalid, where, err)
	}
	d := &docker{
		policy:  p,
		cli:     cli,
		ws:      ws,
		user:    fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		session: randomID(),
		owner:   ownerID(),
	}
	if d.seccomp, err = dockerSeccomp(); err != nil {
		cli.close()
		return nil, fmt.Errorf("building the containers' seccomp profile: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cli.ping(ctx); err != nil {
		cli.close()
		return nil, fmt.Errorf("%w: isolation docker: no Docker engine answers at %s (setting engine:, or DOCKER_HOST): %v", ErrUnavailable, where, err)
	}
	if err := cli.imageInspect(ctx, p.Image); err != nil {
		cli.close()
		if engineStatus(err, http.StatusNotFound) {
			return nil, fmt.Errorf("%w: image %q (setting image:) is not in the store of the Docker engine at %s; Praxis never pulls: build, load or pull it first", ErrUnavailable, p.Image, where)
		}
		return nil, fmt.Errorf("%w: image %q (setting image:): %v", ErrUnavailable, p.Image, err)
	}
	if err := d.removeOrphans(ctx); err != nil {
		cli.close()
		return nil, fmt.Errorf("%w: removing the containers of earlier sessions: %v", ErrUnavailable, err)
	}
	return d, nil
}

// removeOrphans removes the containers of this workspace whose owning
// Praxis process is gone.
func (d *docker) removeOrphans(ctx context.Context) error {
	list, err := d.cli.containerList(ctx, labelWorkspace+"="+d.ws)
	if err != nil {
		return err
	}
	for _, c := range list {
		if c.State == "running" && ownerAlive(c.Labels[labelOwner]) {
			continue
		}
		err := d.cli.containerRemove(ctx, c.ID)
		if engineStatus(err, http.StatusConflict) {
			// Already being removed (its auto-removal, once its owner
			// died): wait until it is gone, so that none is left
			// when New returns.
			err = d.waitGone(ctx, c.ID)
		}
		if err != nil && !engineStatus(err, http.StatusNotFound) {
			return fmt.Errorf("container %.12s: %w", c.ID, err)
		}
	}
	return nil
}

// close removes the session's container and closes the connection.
func (d *docker) close() error {
	d.mu.Lock()
	d.closed = true
	b := d.box
	d.box = nil
	d.mu.Unlock()
	var err error
	if b != nil {
		err = d.remove(b)
	}
	return errors.Join(err, d.cli.close())
}

// remove removes b's container, ending everything in it.
func (d *docker) remove(b *box) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := d.cli.containerRemove(ctx, b.id)
	if b.conn.Conn != nil {
		b.conn.Close()
	}
	if engineStatus(err, http.StatusConflict) {
		// The engine is removing it already (its auto-removal at exit):
		// wait until it is gone.
		err = d.waitGone(ctx, b.id)
	}
	if err != nil && !engineStatus(err, http.StatusNotFound) {
		return fmt.Errorf("removing container %.12s: %w", b.id, err)
	}
	return nil
}

// waitGone returns once the container id, which the engine is removing,
// is gone, or ctx's error.
func (d *docker) waitGone(ctx context.Context, id string) error {
	for {
		exists, err := d.cli.containerExists(ctx, id)
		if !exists {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// container returns the session's running container, creating it first
// when there is none (the first command, or the last one died).
func (d *docker) container(ctx context.Context) (*box, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: the runner is closed", ErrUnavailable)
	}
	if b := d.box; b != nil {
		select {
		case <-b.dead:
			d.remove(b)
			d.box = nil
		default:
			return b, nil
		}
	}
	b, err := d.create(ctx)
	if err != nil {
		return nil, err
	}
	d.box = b
	return b, nil
}

// create creates and starts the session's container and waits for its
// agent.
func (d *docker) create(ctx context.Context) (*box, error) {
	p := d.policy
	yes := true
	hc := &engineHostConfig{
		Mounts:      d.mounts(),
		CapDrop:     []string{"ALL"},
		SecurityOpt: []string{"no-new-privileges"},
		Init:        &yes,
		AutoRemove:  true,
		IpcMode:     "private",
		Tmpfs:       map[string]string{"/tmp": "rw,nosuid,nodev,mode=1777"},
	}
	if d.seccomp != "" {
		hc.SecurityOpt = append(hc.SecurityOpt, "seccomp="+d.seccomp)
	}
	if p.networkOff() {
		hc.NetworkMode = "none"
	}
	if n := p.Limits.Processes; n > 0 {
		// The agent and the engine's init run in the container too.
		n += 2
		hc.PidsLimit = &n
	}
	if m := p.Limits.Memory; m > 0 {
		hc.Memory, hc.MemorySwap = m, m // no swap beyond the limit
	}
	if c := p.Limits.CPUs; c > 0 {
		hc.NanoCPUs = int64(c * 1e9)
	}
	req := engineCreateRequest{
		Image:        p.Image,
		User:         d.user,
		WorkingDir:   d.ws,
		Entrypoint:   []string{"bash", "-c", dockerLib + dockerAgent, "praxis-agent"},
		OpenStdin:    true,
		StdinOnce:    true, // stdin closes when Praxis's connection does: the agent then exits
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		Labels: map[string]string{
			labelWorkspace: d.ws,
			labelOwner:     d.owner,
			labelSession:   d.session,
		},
		HostConfig: hc,
	}
	id, err := d.cli.containerCreate(ctx, "praxis-"+d.session, req)
	if err != nil {
		return nil, fmt.Errorf("%w: creating the container from image %q: %v", ErrUnavailable, p.Image, err)
	}
	b := &box{id: id, replies: make(chan string, 1), dead: make(chan struct{})}
	fail := func(err error) (*box, error) {
		d.remove(b)
		return nil, err
	}
	att, err := d.cli.containerAttach(ctx, b.id)
	if err != nil {
		return fail(fmt.Errorf("%w: attaching to the container: %v", ErrUnavailable, err))
	}
	b.conn = att
	stderr := &headWriter{max: 4 << 10}
	go b.read(stderr)
	if err := d.cli.containerStart(ctx, b.id); err != nil {
		return fail(fmt.Errorf("%w: starting a container from image %q: %v (the image must provide bash)", ErrUnavailable, p.Image, err))
	}
	select {
	case r := <-b.replies:
		if r != "ready" {
			return fail(fmt.Errorf("%w: the container's agent answered %q", ErrUnavailable, r))
		}
	case <-b.dead:
		return fail(fmt.Errorf("%w: the container from image %q ended at once (the image must provide bash): %s", ErrUnavailable, p.Image, strings.TrimSpace(stderr.String())))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	return b, nil
}

// mounts returns the container's bind mounts: the workspace and the
// writable paths read-write at their own paths, and the protected files
// read-only again, the directories leading to them pinned as under bwrap.
func (d *docker) mounts() []engineMount {
	ms := []engineMount{{Type: "bind", Source: d.ws, Target: d.ws}}
	for _, w := range d.policy.Writable {
		if _, err := os.Stat(w); err == nil {
			w = realPath(w)
			ms = append(ms, engineMount{Type: "bind", Source: w, Target: w})
		}
	}
	pinned := make(map[string]bool)
	for _, ro := range d.policy.ReadOnly {
		if !filepath.IsAbs(ro) {
			ro = filepath.Join(d.ws, ro)
		}
		if _, err := os.Lstat(ro); err != nil {
			continue
		}
		ro = realPath(ro)
		if rel, err := filepath.Rel(d.ws, filepath.Dir(ro)); err == nil && filepath.IsLocal(rel) {
			dir := d.ws
			for _, part := range strings.Split(rel, string(filepath.Separator)) {
				dir = filepath.Join(dir, part)
				if !pinned[dir] {
					pinned[dir] = true
					ms = append(ms, engineMount{Type: "bind", Source: dir, Target: dir})
				}
			}
		}
		ms = append(ms, engineMount{Type: "bind", Source: ro, Target: ro, ReadOnly: true})
	}
	return ms
}

// read passes the agent's answers to replies and its error output to
// stderr until the stream ends, then marks the box dead.
func (b *box) read(stderr io.Writer) {
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, stderr, b.conn.Reader)
		pw.CloseWithError(err)
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		select {
		case b.replies <- sc.Text():
		default: // nobody asked: a line the agent did not write for us
		}
	}
	pr.Close()
	close(b.dead)
}

// ask sends one request to the agent and returns its answer's fields
// after the first, which must be want.
func (b *box) ask(req, want string, wait time.Duration) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Drop an answer left over from a request that timed out.
	select {
	case <-b.replies:
	default:
	}
	if _, err := io.WriteString(b.conn.Conn, req+"\n"); err != nil {
		return nil, fmt.Errorf("container agent: %w", err)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case r := <-b.replies:
		f := strings.Fields(r)
		if len(f) == 0 || f[0] != want {
			return nil, fmt.Errorf("container agent: %q answered %q", req, r)
		}
		return f[1:], nil
	case <-b.dead:
		return nil, errors.New("container agent: the container is gone")
	case <-t.C:
		return nil, fmt.Errorf("container agent: no answer to %q in %v", req, wait)
	}
}

// counters are the container cgroup's event counts: how often a fork
// failed at the pids limit, and how many processes the OOM killer killed;
// and how many processes a finished command left behind.
type counters struct{ pidsMax, oomKill, left int64 }

// stat returns the counters, with the leftovers of command id if not "".
func (b *box) stat(id string) (counters, error) {
	f, err := b.ask(strings.TrimSpace("stat "+id), "stat", 10*time.Second)
	if err != nil {
		return counters{}, err
	}
	if len(f) != 3 {
		return counters{}, fmt.Errorf("container agent: stat answered %q", f)
	}
	var c counters
	c.pidsMax, _ = strconv.ParseInt(f[0], 10, 64)
	c.oomKill, _ = strconv.ParseInt(f[1], 10, 64)
	c.left, _ = strconv.ParseInt(f[2], 10, 64)
	return c, nil
}

// signal sends sig (TERM or KILL) to command id's processes. The wait is
// short: when the agent does not answer, the caller removes the container.
func (b *box) signal(id, sig string) error {
	_, err := b.ask("kill "+id+" "+sig, "kill", 10*time.Second)
	return err
}

// top returns the id of the command with the most processes.
func (b *box) top() (string, error) {
	f, err := b.ask("top", "top", 30*time.Second)
	if err != nil || len(f) != 1 {
		return "", err
	}
	return f[0], nil
}

// start runs c, already checked, in dir (inside the workspace) as an exec
// in the session's container.
func (d *docker) start(ctx context.Context, c Command, dir string, timeout time.Duration) (*Process, error) {
	b, err := d.container(ctx)
	if err != nil {
		return nil, err
	}
	before, err := b.stat("")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	id := randomID()
	cfg := engineExecCreateRequest{
		User:         d.user,
		AttachStdin:  c.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          d.environ(c.Env, id),
		WorkingDir:   dir,
		Cmd:          []string{"bash", "-c", dockerLib + dockerWrap, "praxis", dockerLimits(d.policy.Limits) + c.Script},
	}
	execID, err := d.cli.execCreate(ctx, b.id, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: creating the command in container %.12s: %v", ErrUnavailable, b.id, err)
	}
	proc := &Process{
		timeout: timeout,
		cap:     newCapture(d.policy.OutputBytes),
		killc:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	proc.start = time.Now()
	att, err := d.cli.execStart(ctx, execID)
	if err != nil {
		return nil, fmt.Errorf("%w: starting the command in container %.12s: %v", ErrUnavailable, b.id, err)
	}
	if in, err := d.cli.execInspect(ctx, execID); err == nil {
		proc.pid = in.Pid
	}
	streams := make(chan struct{})
	go func() {
		defer close(streams)
		stdcopy.StdCopy(captureWriter{proc.cap, stdout}, captureWriter{proc.cap, stderr}, att.Reader)
	}()
	if c.Stdin != nil {
		go func() {
			io.Copy(att.Conn, c.Stdin)
			att.CloseWrite()
		}()
	}
	go d.supervise(ctx, proc, b, id, execID, att, streams, before)
	return proc, nil
}

// supervise waits for the command's wrapper to exit, enforcing the
// timeout, ctx, Kill and the process limit on the way, then records the
// result.
func (d *docker) supervise(ctx context.Context, p *Process, b *box, id, execID string, conn hijacked, streams <-chan struct{}, before counters) {
	defer close(p.done)
	defer conn.Close()
	pol := d.policy
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	var tick <-chan time.Time
	if pol.Limits.Processes > 0 {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	seen := before.pidsMax
wait:
	for {
		select {
		case <-streams:
			break wait
		case <-timer.C:
			p.res.TimedOut = true
			d.stop(b, id, streams, true)
			break wait
		case <-ctx.Done():
			p.res.Killed = true
			d.stop(b, id, streams, true)
			break wait
		case <-p.killc:
			p.res.Killed = true
			d.stop(b, id, streams, true)
			break wait
		case <-b.dead:
			p.res.Killed = true
			break wait
		case <-tick:
			// A fork failed at the container's pids limit since the last
			// look: end the command with the most processes.
			c, err := b.stat("")
			if err != nil || c.pidsMax == seen {
				continue
			}
			seen = c.pidsMax
			if top, err := b.top(); err == nil && top == id {
				p.res.Limit = "processes"
				d.stop(b, id, streams, false)
				break wait
			}
		}
	}
	select {
	case <-streams:
	case <-time.After(pol.KillGrace):
		conn.Close() // the container is gone or going; do not wait for it
		<-streams
	}
	p.res.Duration = time.Since(p.start)
	p.res.ExitCode = -1
	ictx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
inspect:
	for {
		in, err := d.cli.execInspect(ictx, execID)
		switch {
		case err != nil:
			break inspect
		case !in.Running:
			if in.ExitCode != nil {
				p.res.ExitCode = *in.ExitCode
			}
			break inspect
		}
		select {
		case <-ictx.Done():
			break inspect
		case <-time.After(5 * time.Millisecond):
		}
	}
	// The container's counters say whether a limit was hit while the
	// command ran: a fork refused at the pids limit (the command may have
	// gone on, its forks failing), a process killed for memory (the
	// command fails then).
	after, err := b.stat(id)
	if err == nil {
		p.res.Leftovers = int(after.left)
	}
	if err == nil && p.res.Limit == "" {
		switch {
		case after.pidsMax > before.pidsMax && pol.Limits.Processes > 0:
			p.res.Limit = "processes"
		case after.oomKill > before.oomKill && p.res.ExitCode != 0:
			p.res.Limit = "memory"
		}
	}
	if p.res.Limit == "" {
		// The wrapper reports a signal as 128+N, as a shell does.
		switch p.res.ExitCode {
		case 128 + 24: // SIGXCPU
			p.res.Limit = "cpu"
		case 128 + 25: // SIGXFSZ
			p.res.Limit = "file size"
		}
	}
	out, _ := p.cap.since(0)
	p.res.Stdout, p.res.Stderr = out[0], out[1]
}

// stop ends command id: SIGTERM to its processes, then (at once when not
// graceful) SIGKILL after the policy's grace. When the agent cannot do it,
// the container itself is removed: nothing may outlive its command.
func (d *docker) stop(b *box, id string, streams <-chan struct{}, graceful bool) {
	grace := d.policy.KillGrace
	if graceful {
		if b.signal(id, "TERM") == nil {
			select {
			case <-streams:
				return
			case <-time.After(grace):
			}
		}
	}
	if b.signal(id, "KILL") == nil {
		select {
		case <-streams:
			return
		case <-time.After(grace):
		}
	}
	d.mu.Lock()
	if d.box == b {
		d.box = nil
	}
	d.mu.Unlock()
	d.remove(b)
}

// environ returns a command's environment: the allowlisted variables of
// Praxis's own but those that describe the host, the call's own, TMPDIR,
// and the marker, last so that nothing overrides it.
func (d *docker) environ(extra map[string]string, id string) []string {
	var env []string
	for _, kv := range d.policy.environ(os.Environ(), extra) {
		k, _, _ := strings.Cut(kv, "=")
		if _, own := extra[k]; !own && slices.Contains(hostVars, k) || k == markerVar {
			continue
		}
		env = append(env, kv)
	}
	if _, ok := extra["TMPDIR"]; !ok {
		env = append(env, "TMPDIR=/tmp")
	}
	return append(env, markerVar+"="+id)
}

// dockerLimits returns the bash commands that set the per-process limits
// of l as soft and hard limits before the script (the same line, so the
// script keeps its line numbers), or stop it with status 126.
func dockerLimits(l Limits) string {
	var b strings.Builder
	add := func(flag string, v, unit int64) {
		if v > 0 {
			fmt.Fprintf(&b, " %s %d", flag, max(v/unit, 1))
		}
	}
	add("-t", l.CPUSeconds, 1)
	add("-v", l.AddressSpace, 1024)
	add("-f", l.FileSize, 1024)
	if b.Len() == 0 {
		return ""
	}
	return "ulimit" + b.String() + ` 2>/dev/null || { echo "praxis: cannot set resource limits" >&2; exit 126; }; `
}

// captureWriter writes to one stream of a capture.
type captureWriter struct {
	c *capture
	i int
}

func (w captureWriter) Write(b []byte) (int, error) {
	w.c.write(w.i, b)
	return len(b), nil
}

// randomID returns 16 random hex digits.
func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// headWriter keeps the first max bytes written to it. It is safe for
// concurrent use.
type headWriter struct {
	max int
	mu  sync.Mutex
	b   []byte
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := min(len(p), w.max-len(w.b)); n > 0 {
		w.b = append(w.b, p[:n]...)
	}
	return len(p), nil
}

func (w *headWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
