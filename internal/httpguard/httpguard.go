// Package httpguard holds the checks every Praxis HTTP endpoint makes
// before it serves a request: the Origin header (browsers on other sites),
// the Host header (DNS rebinding on loopback), the bearer token, and the
// bound on a request body. The MCP transport and the agent service share
// it, so that both refuse the same requests.
package httpguard

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a Guard.
type Options struct {
	// Token, if set, must be sent by every request as
	// "Authorization: Bearer TOKEN".
	Token string
	// AllowedOrigins are origins ("https://example.com:8443") allowed to
	// send requests besides loopback ones.
	AllowedOrigins []string
	// Loopback accepts only requests whose Host header names a loopback
	// host (DNS-rebinding protection): set it when listening on loopback.
	Loopback bool
	// AllowMethods, AllowHeaders and ExposeHeaders are the CORS headers
	// sent to allowed origins.
	AllowMethods, AllowHeaders, ExposeHeaders string
}

// Guard checks requests against its Options. It is safe for concurrent
// use.
type Guard struct {
	opts     Options
	tokenSum [sha256.Size]byte
	origins  map[string]bool
}

// New returns a Guard for opts.
func New(opts Options) *Guard {
	g := &Guard{opts: opts, origins: make(map[string]bool), tokenSum: sha256.Sum256([]byte(opts.Token))}
	for _, o := range opts.AllowedOrigins {
		g.origins[normalizeOrigin(o)] = true
	}
	return g
}

// Refusal is a request refused: the HTTP status and why, in words for the
// client.
type Refusal struct {
	Status  int
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Check judges r. It returns nil when r may be served, after setting the
// CORS headers for an allowed Origin; a Refusal when it must not be
// (403 for a foreign origin or host, 401 without the token, with
// WWW-Authenticate set). preflight reports a CORS preflight (OPTIONS) from
// an allowed origin, which Check has answered with 204.
func (g *Guard) Check(w http.ResponseWriter, r *http.Request) (preflight bool, refusal *Refusal) {
	origin := r.Header.Get("Origin")
	if origin != "" && !g.originAllowed(origin) {
		return false, &Refusal{http.StatusForbidden, "forbidden: origin " + origin + " is not allowed"}
	}
	if g.opts.Loopback && !LoopbackHost(r.Host) {
		return false, &Refusal{http.StatusForbidden, "forbidden: host " + r.Host + " is not a loopback host"}
	}
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		if g.opts.ExposeHeaders != "" {
			w.Header().Set("Access-Control-Expose-Headers", g.opts.ExposeHeaders)
		}
		w.Header().Add("Vary", "Origin")
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", g.opts.AllowMethods)
		w.Header().Set("Access-Control-Allow-Headers", g.opts.AllowHeaders)
		w.WriteHeader(http.StatusNoContent)
		return true, nil
	}
	if !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="praxis"`)
		return false, &Refusal{http.StatusUnauthorized, "unauthorized: a valid bearer token is required"}
	}
	return false, nil
}

// authorized compares the request's bearer token with the configured one in
// constant time (over digests, so the length is not revealed either).
func (g *Guard) authorized(r *http.Request) bool {
	if g.opts.Token == "" {
		return true
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1
}

// originAllowed reports whether origin is one given in AllowedOrigins, or
// an http(s) origin on a loopback host.
func (g *Guard) originAllowed(origin string) bool {
	if g.origins[normalizeOrigin(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return LoopbackHost(u.Host)
}

func normalizeOrigin(o string) string { return strings.TrimRight(strings.ToLower(o), "/") }

// LoopbackHost reports whether a Host header (or an origin's host) names
// this machine's loopback interface.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackAddr reports whether a listen address (host:port) is on the
// loopback interface: an IP literal of it, or "localhost". An empty host
// listens everywhere and is not loopback.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return LoopbackHost(host)
}

// LoopbackListener reports whether a listener's address is a loopback one.
func LoopbackListener(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// ErrTooLarge is the cause of a body over the bound (a *BodyError).
var ErrTooLarge = errors.New("request body too large")

// BodyError is a request body that could not be read: over the bound
// (Is ErrTooLarge, status 413) or cut short or too slow (status 400).
type BodyError struct {
	Status  int
	Message string
	tooBig  bool
}

func (e *BodyError) Error() string { return e.Message }

// Is reports ErrTooLarge for a body over the bound.
func (e *BodyError) Is(target error) bool { return target == ErrTooLarge && e.tooBig }

// ReadBody reads r's body, at most max bytes of it, within timeout (0: no
// deadline). The body is counted as it is read and never buffered past the
// bound. On failure it sets "Connection: close" (the rest of the body is
// not read) and returns a *BodyError; what the reply says is the caller's.
// what names the setting that bounds the body, for the message.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration, what string) ([]byte, error) {
	tooLarge := func() ([]byte, error) {
		w.Header().Set("Connection", "close")
		return nil, &BodyError{Status: http.StatusRequestEntityTooLarge, tooBig: true,
			Message: fmt.Sprintf("request body over the limit of %d bytes (%s)", max, what)}
	}
	if r.ContentLength > max {
		return tooLarge()
	}
	rc := http.NewResponseController(w)
	if timeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
	}
	// Grown as bytes arrive, from at most 64 KiB: a length announced but
	// not sent costs nothing.
	size := 512
	if r.ContentLength > 0 {
		size = int(min(r.ContentLength+1, 64<<10)) // one more to see the end
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, max)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return tooLarge()
		}
		w.Header().Set("Connection", "close") // a client too slow or gone: no next request
		return nil, &BodyError{Status: http.StatusBadRequest, Message: "reading the request body: " + err.Error()}
	}
	if timeout > 0 {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return buf.Bytes(), nil
}
