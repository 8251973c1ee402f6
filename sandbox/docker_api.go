package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The Engine API versions Praxis speaks: it asks for the engine's own
// version when that is older than maxAPIVersion, and refuses an engine
// older than minAPIVersion.
const (
	maxAPIVersion = "1.56"
	minAPIVersion = "1.40"
)

// defaultEngineHost is the engine's address when neither the policy nor
// DOCKER_HOST names one.
const defaultEngineHost = "unix:///var/run/docker.sock"

// engineAPI is a client of a Docker Engine API (Docker or Podman): plain
// HTTP requests over the engine's Unix socket, TCP (TLS with the
// certificates of DOCKER_CERT_PATH when that is set, verified unless
// DOCKER_TLS_VERIFY is empty, as the docker command does) or SSH, with the
// Engine API's own types for the bodies. It covers what the docker runner
// needs and nothing more, and links none of the engine's image-reference
// parsing, tracing or client-side validation.
type engineAPI struct {
	host   string // as given, for messages
	scheme string // http or https
	dial   func(ctx context.Context) (net.Conn, error)
	tls    *tls.Config // nil for plain HTTP
	hc     *http.Client

	mu      sync.Mutex
	version string // the API version negotiated by ping; maxAPIVersion before
	fixed   bool   // DOCKER_API_VERSION set it: no negotiation
}

// engineError is a failed Engine API request: the HTTP status and the
// engine's message.
type engineError struct {
	status int
	msg    string
}

func (e *engineError) Error() string {
	return fmt.Sprintf("engine: %s (HTTP %d)", e.msg, e.status)
}

// engineStatus reports whether err is an engine error with the status.
func engineStatus(err error, status int) bool {
	var e *engineError
	return errors.As(err, &e) && e.status == status
}

// newEngineAPI returns a client of the engine at host (default: the
// environment's DOCKER_HOST, else the local socket), and the address it
// talks to. It does not connect.
func newEngineAPI(host string) (*engineAPI, string, error) {
	if host == "" {
		host = os.Getenv("DOCKER_HOST")
	}
	if host == "" {
		host = defaultEngineHost
	}
	c := &engineAPI{host: host, scheme: "http", version: maxAPIVersion}
	if v := os.Getenv("DOCKER_API_VERSION"); v != "" {
		c.version, c.fixed = strings.TrimPrefix(v, "v"), true
	}
	var d net.Dialer
	proto, addr, ok := strings.Cut(host, "://")
	if !ok {
		return nil, host, fmt.Errorf("address %q: want unix://, tcp:// or ssh://", host)
	}
	switch proto {
	case "unix":
		if addr == "" {
			return nil, host, fmt.Errorf("address %q names no socket", host)
		}
		c.dial = func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", addr) }
	case "tcp", "http", "https":
		u, err := url.Parse("tcp://" + addr)
		if err != nil || u.Host == "" {
			return nil, host, fmt.Errorf("address %q: want tcp://HOST:PORT", host)
		}
		hostport := u.Host
		if u.Port() == "" {
			hostport = net.JoinHostPort(u.Hostname(), "2375")
		}
		c.dial = func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", hostport) }
		cfg, err := engineTLS(u.Hostname())
		if err != nil {
			return nil, host, err
		}
		if cfg != nil || proto == "https" {
			if cfg == nil {
				cfg = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
			}
			c.tls, c.scheme = cfg, "https"
		}
	case "ssh":
		sshDial, err := sshDialer(host)
		if err != nil {
			return nil, host, err
		}
		c.dial = func(ctx context.Context) (net.Conn, error) { return sshDial(ctx, "tcp", "") }
	default:
		return nil, host, fmt.Errorf("address %q: want unix://, tcp:// or ssh://", host)
	}
	dialTLS := c.connect
	c.hc = &http.Client{Transport: &http.Transport{
		DialContext:     func(ctx context.Context, _, _ string) (net.Conn, error) { return dialTLS(ctx) },
		DialTLSContext:  func(ctx context.Context, _, _ string) (net.Conn, error) { return dialTLS(ctx) },
		Proxy:           nil, // the engine is reached directly, never through HTTP_PROXY
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}}
	return c, host, nil
}

// engineTLS returns the TLS configuration of DOCKER_CERT_PATH's ca.pem,
// cert.pem and key.pem, or nil when DOCKER_CERT_PATH is not set. The
// engine's certificate is verified unless DOCKER_TLS_VERIFY is empty.
func engineTLS(server string) (*tls.Config, error) {
	dir := os.Getenv("DOCKER_CERT_PATH")
	if dir == "" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: server, MinVersion: tls.VersionTLS12}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %w", err)
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %s holds no certificate", filepath.Join(dir, "ca.pem"))
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %w", err)
	}
	if err == nil {
		cfg.Certificates = []tls.Certificate{cert}
	}
	cfg.InsecureSkipVerify = os.Getenv("DOCKER_TLS_VERIFY") == ""
	return cfg, nil
}

// connect opens a connection to the engine, TLS included.
func (c *engineAPI) connect(ctx context.Context) (net.Conn, error) {
	conn, err := c.dial(ctx)
	if err != nil || c.tls == nil {
		return conn, err
	}
	tc := tls.Client(conn, c.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// close drops the idle connections.
func (c *engineAPI) close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// ping checks that the engine answers and settles the API version: the
// engine's, if older than maxAPIVersion; an engine older than minAPIVersion
// is refused.
func (c *engineAPI) ping(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.scheme+"://docker/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
		return &engineError{resp.StatusCode, "ping: " + resp.Status}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed {
		return nil
	}
	v := resp.Header.Get("API-Version")
	if v == "" {
		return nil
	}
	if versionLess(v, minAPIVersion) {
		return fmt.Errorf("the engine speaks API version %s; Praxis needs %s or newer", v, minAPIVersion)
	}
	if versionLess(v, maxAPIVersion) {
		c.version = v
	}
	return nil
}

// versionLess compares API versions such as "1.41" numerically.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// request builds a request of the versioned API: path with query q, body
// encoded as JSON when not nil.
func (c *engineAPI) request(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	u := c.scheme + "://docker/v" + v + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends a request and decodes a successful response's JSON into out
// (when not nil); a failure is an *engineError with the engine's message.
func (c *engineAPI) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	req, err := c.request(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := responseError(resp); err != nil {
		return err
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// responseError returns the engine's error of a response of status 400 or
// more, nil for any other.
func responseError(resp *http.Response) error {
	if resp.StatusCode < 400 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e engineErrorBody
	if json.Unmarshal(b, &e) != nil || e.Message == "" {
		e.Message = strings.TrimSpace(string(b))
	}
	if e.Message == "" {
		e.Message = resp.Status
	}
	return &engineError{resp.StatusCode, e.Message}
}

// hijacked is the raw connection of an attached stream: the engine's
// multiplexed output is read from Reader, input written to Conn.
type hijacked struct {
	Conn   net.Conn
	Reader *bufio.Reader
}

// CloseWrite ends the input, keeping the output open.
func (h hijacked) CloseWrite() error {
	if cw, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection.
func (h hijacked) Close() error { return h.Conn.Close() }

// hijack sends a POST that upgrades its connection to a raw stream (attach,
// exec start) and returns the connection. It dials a connection of its own:
// the stream lives as long as the command.
func (c *engineAPI) hijack(ctx context.Context, path string, q url.Values, body any) (hijacked, error) {
	req, err := c.request(ctx, http.MethodPost, path, q, body)
	if err != nil {
		return hijacked{}, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	conn, err := c.connect(ctx)
	if err != nil {
		return hijacked{}, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return hijacked{}, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return hijacked{}, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusOK {
		err := responseError(resp)
		conn.Close()
		if err == nil {
			err = &engineError{resp.StatusCode, resp.Status}
		}
		return hijacked{}, err
	}
	if !stop() {
		conn.Close()
		return hijacked{}, ctx.Err()
	}
	return hijacked{Conn: conn, Reader: br}, nil
}

// imageInspect checks that the image is in the engine's store.
func (c *engineAPI) imageInspect(ctx context.Context, image string) error {
	return c.do(ctx, http.MethodGet, "/images/"+url.PathEscape(image)+"/json", nil, nil, nil)
}

// containerList lists the containers, running or not, with the label.
func (c *engineAPI) containerList(ctx context.Context, label string) ([]engineContainer, error) {
	f, err := json.Marshal(map[string][]string{"label": {label}})
	if err != nil {
		return nil, err
	}
	var list []engineContainer
	err = c.do(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"1"}, "filters": {string(f)}}, nil, &list)
	return list, err
}

// containerRemove removes a container, running or not.
func (c *engineAPI) containerRemove(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/containers/"+url.PathEscape(id), url.Values{"force": {"1"}}, nil, nil)
}

// containerExists reports whether the container is still known to the
// engine; an error other than "no such container" is returned.
func (c *engineAPI) containerExists(ctx context.Context, id string) (bool, error) {
	err := c.do(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/json", nil, nil, nil)
	if engineStatus(err, http.StatusNotFound) {
		return false, nil
	}
	return err == nil, err
}

// containerCreate creates a container and returns its ID.
func (c *engineAPI) containerCreate(ctx context.Context, name string, req engineCreateRequest) (string, error) {
	var out engineID
	err := c.do(ctx, http.MethodPost, "/containers/create", url.Values{"name": {name}}, req, &out)
	return out.ID, err
}

// containerAttach attaches to the container's standard streams.
func (c *engineAPI) containerAttach(ctx context.Context, id string) (hijacked, error) {
	q := url.Values{"stream": {"1"}, "stdin": {"1"}, "stdout": {"1"}, "stderr": {"1"}}
	return c.hijack(ctx, "/containers/"+url.PathEscape(id)+"/attach", q, nil)
}

// containerStart starts a created container.
func (c *engineAPI) containerStart(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/start", nil, nil, nil)
}

// execCreate creates a command in a running container and returns its ID.
func (c *engineAPI) execCreate(ctx context.Context, id string, req engineExecCreateRequest) (string, error) {
	var out engineID
	err := c.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/exec", nil, req, &out)
	return out.ID, err
}

// execStart starts a created command attached to its streams.
func (c *engineAPI) execStart(ctx context.Context, execID string) (hijacked, error) {
	return c.hijack(ctx, "/exec/"+url.PathEscape(execID)+"/start", nil, engineExecStartRequest{})
}

// execInspect returns a command's state.
func (c *engineAPI) execInspect(ctx context.Context, execID string) (engineExec, error) {
	var out engineExec
	err := c.do(ctx, http.MethodGet, "/exec/"+url.PathEscape(execID)+"/json", nil, nil, &out)
	return out, err
}
