package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ownerID names this process for the labels of its containers: the host,
// its boot, the process id and the process's start time (so that a reused
// pid is not taken for the owner).
func ownerID() string {
	host, _ := os.Hostname()
	return strings.Join([]string{host, bootID(), strconv.Itoa(os.Getpid()), procStart(os.Getpid())}, "/")
}

// ownerAlive reports whether the process an owner label names may still
// run. An owner on another host, or one this system cannot check, counts
// as alive.
func ownerAlive(owner string) bool {
	f := strings.Split(owner, "/")
	if len(f) != 4 {
		return false // not written by Praxis: a container of this workspace nobody owns
	}
	host, _ := os.Hostname()
	if f[0] != host {
		return true
	}
	boot := bootID()
	if boot == "" {
		return true
	}
	if f[1] != boot {
		return false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil {
		return false
	}
	start := procStart(pid)
	return start != "" && start == f[3]
}

// bootID returns the kernel's id of the current boot, or "" where there
// is none to read.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart returns process pid's start time in clock ticks since boot,
// or "" when the process does not exist or the system has no /proc.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	// Fields after the command name start at field 3 (state); starttime
	// is field 22.
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// sshDialer returns a dialer that reaches the engine of an ssh:// host the
// way the docker command does: ssh to the host and run "docker system
// dial-stdio" there, which needs the docker command on that host. The ssh
// program, its configuration and agent are the user's own.
func sshDialer(host string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, err
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("want ssh://[user@]host[:port], not %q", host)
	}
	args := []string{"-o", "ConnectTimeout=30"}
	if u.User != nil {
		args = append(args, "-l", u.User.Username())
	}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	args = append(args, "--", u.Hostname(), "docker", "system", "dial-stdio")
	if _, err := exec.LookPath("ssh"); err != nil {
		return nil, fmt.Errorf("an ssh:// engine needs the ssh program: %v", err)
	}
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		// The connection outlives ctx (the transport keeps it for later
		// requests): ssh ends when the connection is closed.
		cmd := exec.Command("ssh", args...)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &cmdConn{cmd: cmd, in: in, out: out}, nil
	}, nil
}

// cmdConn is a connection over a program's standard input and output.
type cmdConn struct {
	cmd  *exec.Cmd
	once sync.Once
	in   interface {
		Write([]byte) (int, error)
		Close() error
	}
	out interface{ Read([]byte) (int, error) }
}

func (c *cmdConn) Read(b []byte) (int, error)  { return c.out.Read(b) }
func (c *cmdConn) Write(b []byte) (int, error) { return c.in.Write(b) }

// CloseWrite closes the program's input, as a half-closed socket.
func (c *cmdConn) CloseWrite() error { return c.in.Close() }

// Close ends the program.
func (c *cmdConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		c.cmd.Process.Kill()
		c.cmd.Wait()
	})
	return nil
}

func (c *cmdConn) LocalAddr() net.Addr                { return cmdAddr{} }
func (c *cmdConn) RemoteAddr() net.Addr               { return cmdAddr{} }
func (c *cmdConn) SetDeadline(t time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(t time.Time) error { return nil }

type cmdAddr struct{}

func (cmdAddr) Network() string { return "ssh" }
func (cmdAddr) String() string  { return "ssh" }
