package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/praxis-tools/praxis/internal/procgroup"
)

// result is what one mcpbench run measured. Durations are in
// microseconds, sizes in MiB; zero means not measured.
type result struct {
	Label       string  `json:"label,omitempty"`
	Transport   string  `json:"transport"`
	Call        string  `json:"call"`
	Clients     int     `json:"clients"`
	Calls       int     `json:"calls"`
	ColdStartUs float64 `json:"cold_start_us,omitempty"`
	ColdUntil   string  `json:"cold_until,omitempty"` // the response a cold start ends with
	IdleRSSMiB  float64 `json:"idle_rss_mib,omitempty"`
	PeakRSSMiB  float64 `json:"peak_rss_mib,omitempty"`
	P50Us       float64 `json:"p50_us"`
	P90Us       float64 `json:"p90_us"`
	P99Us       float64 `json:"p99_us"`
	MaxUs       float64 `json:"max_us"`
	MeanUs      float64 `json:"mean_us"`
	CallsPerSec float64 `json:"calls_per_sec"`
	// CPU time per measured call: the spawned server's (all its threads
	// and descendants) and mcpbench's own. Unlike latency, these hardly
	// depend on how busy the machine is.
	ServerCPUUs   float64 `json:"server_cpu_us_per_call,omitempty"`
	ClientCPUUs   float64 `json:"client_cpu_us_per_call,omitempty"`
	ResponseBytes int     `json:"response_bytes"`
}

func (r *result) print(w io.Writer) {
	if r.Label != "" {
		fmt.Fprintf(w, "%s\n", r.Label)
	}
	fmt.Fprintf(w, "transport    %s, %d client(s), %d calls of %s (%d-byte response)\n", r.Transport, r.Clients, r.Calls, r.Call, r.ResponseBytes)
	if r.ColdStartUs > 0 {
		fmt.Fprintf(w, "cold start   %.1f ms to the %s response (median)\n", r.ColdStartUs/1000, r.ColdUntil)
	}
	if r.IdleRSSMiB > 0 {
		fmt.Fprintf(w, "RSS          idle %.1f MiB, peak %.1f MiB\n", r.IdleRSSMiB, r.PeakRSSMiB)
	}
	fmt.Fprintf(w, "latency      p50 %s  p90 %s  p99 %s  max %s  mean %s\n",
		fmtUs(r.P50Us), fmtUs(r.P90Us), fmtUs(r.P99Us), fmtUs(r.MaxUs), fmtUs(r.MeanUs))
	fmt.Fprintf(w, "throughput   %.0f calls/s\n", r.CallsPerSec)
	if r.ServerCPUUs > 0 {
		fmt.Fprintf(w, "CPU/call     server %s, client %s\n", fmtUs(r.ServerCPUUs), fmtUs(r.ClientCPUUs))
	} else {
		fmt.Fprintf(w, "CPU/call     client %s\n", fmtUs(r.ClientCPUUs))
	}
}

func fmtUs(us float64) string {
	if us >= 10000 {
		return fmt.Sprintf("%.1fms", us/1000)
	}
	return fmt.Sprintf("%.0fus", us)
}

// server is a spawned server process.
type server struct {
	cmd  *exec.Cmd
	conn *stdioConn // stdio servers only
	out  *os.File   // the read end of the server's stdout (stdio only)
	done chan struct{}
}

func spawn(c config, stdio bool) (*server, error) {
	cmd := exec.Command(c.command[0], c.command[1:]...)
	cmd.Dir = c.dir
	if c.showLog {
		cmd.Stderr = os.Stderr
	}
	procgroup.Own(cmd)
	s := &server{cmd: cmd, done: make(chan struct{})}
	var childEnds []*os.File
	if stdio {
		// Blocking pipes: a read then waits in the kernel instead of the
		// runtime's poller, which keeps mcpbench's own share of each
		// round trip small.
		inR, inW, err := blockingPipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := blockingPipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, err
		}
		cmd.Stdin, cmd.Stdout = inR, outW
		childEnds = []*os.File{inR, outW}
		s.conn = newStdioConn(inW, outR)
		s.out = outR
	} else {
		cmd.Stdout = cmd.Stderr
	}
	err := cmd.Start()
	for _, f := range childEnds {
		f.Close()
	}
	if err != nil {
		if s.conn != nil {
			s.conn.close()
			s.out.Close()
		}
		return nil, err
	}
	go func() { cmd.Wait(); close(s.done) }()
	return s, nil
}

// blockingPipe returns a pipe whose ends are in blocking mode, so that
// the os package reads and writes them with plain system calls.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// stop closes the server's stdin, then kills its process group if it has
// not exited within a second.
func (s *server) stop() {
	if s.conn != nil {
		s.conn.close()
	} else {
		procgroup.Terminate(s.cmd)
	}
	select {
	case <-s.done:
	case <-time.After(time.Second):
	}
	procgroup.Kill(s.cmd)
	<-s.done
	if s.out != nil {
		s.out.Close()
	}
}

// startServer spawns the server and initializes a session with it,
// returning the time from spawn to the initialize response.
func startServer(ctx context.Context, c config, client *http.Client, wd *watchdog) (*server, conn, time.Duration, error) {
	start := time.Now()
	s, err := spawn(c, c.url == "")
	if err != nil {
		return nil, nil, 0, err
	}
	wd.watch(s)
	if c.url == "" {
		if err := handshake(ctx, c, s.conn); err != nil {
			s.stop()
			return nil, nil, 0, err
		}
		return s, s.conn, time.Since(start), nil
	}
	// HTTP: retry initialize until the server listens.
	for {
		hc := newHTTPConn(c.url, client)
		err := handshake(ctx, c, hc)
		if err == nil {
			return s, hc, time.Since(start), nil
		}
		if !isConnRefused(err) {
			s.stop()
			return nil, nil, 0, err
		}
		select {
		case <-s.done:
			return nil, nil, 0, fmt.Errorf("server exited before listening: %s", s.cmd.ProcessState)
		case <-ctx.Done():
			s.stop()
			return nil, nil, 0, ctx.Err() // explained by the caller
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// handshake initializes a session on cn and, with -cold-until tools/list,
// lists the tools.
func handshake(ctx context.Context, c config, cn conn) error {
	if err := initialize(ctx, cn); err != nil || c.coldUntil != "tools/list" {
		return err
	}
	resp, _, err := cn.call(ctx, "tools/list", json.RawMessage(`{}`))
	if err == nil {
		err = checkResponse(resp)
	}
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	return nil
}

func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

func measure(ctx context.Context, c config) (*result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := &result{Label: c.label, Transport: "stdio", Clients: c.clients, Calls: c.n, Call: c.method}
	if c.method == "tools/call" {
		res.Call = c.tool + " " + c.args
	}
	client := &http.Client{Timeout: c.timeout, Transport: &http.Transport{
		MaxIdleConnsPerHost: c.clients + 4,
		DialContext:         loopbackDialer,
	}}
	wd := &watchdog{limit: c.timeout}
	wd.tick()
	go wd.run(ctx, cancel)
	if c.url != "" {
		res.Transport = "http"
		u, err := url.Parse(c.url)
		if err != nil || !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("-url must be an http URL on a loopback address: %q", c.url)
		}
	}

	// Spawned servers: cold starts, the last one kept for the run.
	var srv *server
	var first conn
	if len(c.command) > 0 {
		var colds []time.Duration
		for i := range max(c.cold, 1) {
			s, cn, d, err := startServer(ctx, c, client, wd)
			if err != nil {
				return nil, wd.explain(fmt.Errorf("starting server: %w", err))
			}
			wd.tick()
			colds = append(colds, d)
			if i == max(c.cold, 1)-1 {
				srv, first = s, cn
				break
			}
			if hc, ok := cn.(*httpConn); ok {
				hc.close()
			}
			s.stop()
		}
		defer srv.stop()
		if c.cold > 0 {
			slices.Sort(colds)
			res.ColdStartUs, res.ColdUntil = us(colds[len(colds)/2]), c.coldUntil
		}
		// The idle wait is no call in flight: the watchdog does not count it.
		wd.pause(true)
		select {
		case <-time.After(c.idleWait):
		case <-ctx.Done():
			return nil, wd.explain(ctx.Err())
		}
		wd.tick()
		wd.pause(false)
		res.IdleRSSMiB, _ = treeMemory(srv.cmd.Process.Pid)
	}

	// One session per client over HTTP; over stdio, the clients share the
	// one connection.
	conns := make([]conn, c.clients)
	if sc, ok := first.(*stdioConn); ok && c.clients > 1 {
		first = newStdioMux(sc)
	}
	for i := range conns {
		if first != nil && (i == 0 || c.url == "") {
			conns[i] = first
			continue
		}
		hc := newHTTPConn(c.url, client)
		if err := initialize(ctx, hc); err != nil {
			return nil, wd.explain(fmt.Errorf("client %d: %w", i, err))
		}
		wd.tick()
		conns[i] = hc
	}
	defer func() {
		for _, cn := range conns {
			if hc, ok := cn.(*httpConn); ok {
				hc.close()
			}
		}
	}()

	params := c.params()
	// Warm up, checking that the call succeeds.
	for _, cn := range conns {
		for i := range max(c.warmup, 1) {
			resp, _, err := cn.call(ctx, c.method, params)
			if err == nil {
				err = checkResponse(resp)
			}
			if err != nil {
				return nil, wd.explain(fmt.Errorf("warm-up call: %w", err))
			}
			wd.tick()
			if i == 0 {
				res.ResponseBytes = len(resp)
			}
		}
	}

	lat := make([][]time.Duration, c.clients)
	errs := make([]error, c.clients)
	var wg sync.WaitGroup
	var serverCPU0 time.Duration
	if srv != nil {
		serverCPU0 = treeCPU(srv.cmd.Process.Pid)
	}
	clientCPU0 := selfCPU()
	begin := time.Now()
	for i, cn := range conns {
		share := c.n / c.clients
		if i < c.n%c.clients {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := make([]time.Duration, 0, share)
			for range share {
				t0 := time.Now()
				resp, done, err := cn.call(ctx, c.method, params)
				if err == nil {
					err = checkResponse(resp)
				}
				if err != nil {
					errs[i] = err
					cancel()
					return
				}
				l = append(l, done.Sub(t0))
				wd.tick()
			}
			lat[i] = l
		}()
	}
	wg.Wait()
	wall := time.Since(begin)
	clientCPU := selfCPU() - clientCPU0
	var serverCPU time.Duration
	if srv != nil {
		serverCPU = treeCPU(srv.cmd.Process.Pid) - serverCPU0
	}
	if err := errors.Join(errs...); err != nil {
		return nil, wd.explain(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	res.P50Us = us(pct(all, 50))
	res.P90Us = us(pct(all, 90))
	res.P99Us = us(pct(all, 99))
	res.MaxUs = us(all[len(all)-1])
	res.MeanUs = us(sum / time.Duration(len(all)))
	res.CallsPerSec = float64(len(all)) / wall.Seconds()
	res.ClientCPUUs = us(clientCPU / time.Duration(len(all)))
	if serverCPU > 0 {
		res.ServerCPUUs = us(serverCPU / time.Duration(len(all)))
	}
	if srv != nil {
		_, res.PeakRSSMiB = treeMemory(srv.cmd.Process.Pid)
	}
	return res, nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// pct is the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackDialer refuses any address that is not loopback: mcpbench is a
// load generator and must never aim at another machine.
func loopbackDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) {
		return nil, fmt.Errorf("refusing non-loopback address %q", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// treeMemory returns the resident set size and its high-water mark, in
// MiB, summed over pid and its descendants. It reads /proc and returns
// zeros where that is not available.
func treeMemory(pid int) (rss, hwm float64) {
	for _, p := range descendants(pid) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			name, val, ok := strings.Cut(line, ":")
			if !ok || (name != "VmRSS" && name != "VmHWM") {
				continue
			}
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 64)
			if err != nil {
				continue
			}
			if name == "VmRSS" {
				rss += kb / 1024
			} else {
				hwm += kb / 1024
			}
		}
	}
	return rss, hwm
}

// descendants lists pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: fields
		// resume after the last ')'.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 1 {
				if pp, err := strconv.Atoi(f[1]); err == nil {
					children[pp] = append(children[pp], p)
				}
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// selfCPU is the CPU time this process has used, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// treeCPU is the CPU time used so far by pid's threads and its
// descendants' threads, from /proc/PID/task/TID/schedstat (nanoseconds on
// the CPU); zero where that is not available.
func treeCPU(pid int) time.Duration {
	var total time.Duration
	for _, p := range descendants(pid) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(p), "task", "*", "schedstat"))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) == 0 {
				continue
			}
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				total += time.Duration(ns)
			}
		}
	}
	return total
}

// watchdog ends a run that stops making progress: when no call has
// completed for limit, it cancels the run and kills the current server,
// whose closed pipes then unblock any read.
type watchdog struct {
	limit time.Duration
	last  atomic.Int64
	cur   atomic.Pointer[server]
	fired atomic.Bool
	idle  atomic.Bool // no call is expected: the limit does not apply
}

func (w *watchdog) tick()             { w.last.Store(time.Now().UnixNano()) }
func (w *watchdog) watch(s *server)   { w.cur.Store(s) }
func (w *watchdog) pause(paused bool) { w.idle.Store(paused) }

func (w *watchdog) run(ctx context.Context, cancel context.CancelFunc) {
	t := time.NewTicker(max(w.limit/8, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if w.idle.Load() || time.Since(time.Unix(0, w.last.Load())) < w.limit {
			continue
		}
		w.fired.Store(true)
		cancel()
		if s := w.cur.Load(); s != nil {
			procgroup.Kill(s.cmd)
		}
		return
	}
}

// explain names the -timeout when it caused err: the watchdog fired, or
// the HTTP client's own timeout (the same limit) ran out first.
func (w *watchdog) explain(err error) error {
	var ne net.Error
	timedOut := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	if err != nil && (w.fired.Load() || timedOut) {
		return fmt.Errorf("no response for %s (-timeout): %w", w.limit, err)
	}
	return err
}
