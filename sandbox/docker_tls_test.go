//go:build linux

package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// TestDockerTLSEngine reaches the engine at a tcp:// address with mutual
// TLS, the certificates taken from DOCKER_CERT_PATH as the docker command
// takes them. The engine's end is a TLS proxy on loopback in front of the
// local engine's socket; the workspace is the same on both ends.
func TestDockerTLSEngine(t *testing.T) {
	img := needDocker(t)
	local, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	sock, ok := strings.CutPrefix(local.DaemonHost(), "unix://")
	local.Close()
	if !ok {
		t.Skip("the local engine is not on a Unix socket")
	}
	certs := t.TempDir()
	serverCfg := writeTestPKI(t, certs)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go proxy(c.(*tls.Conn), sock)
		}
	}()
	engine := "tcp://" + ln.Addr().String()

	t.Run("no client certificate", func(t *testing.T) {
		t.Setenv("DOCKER_CERT_PATH", "")
		t.Setenv("DOCKER_TLS_VERIFY", "")
		p := DefaultPolicy(t.TempDir())
		p.Isolation, p.Image, p.Engine = IsolationDocker, img, engine
		r, err := New(p)
		if err == nil {
			r.Close()
			t.Fatal("New succeeded without TLS")
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("mutual TLS", func(t *testing.T) {
		t.Setenv("DOCKER_CERT_PATH", certs)
		t.Setenv("DOCKER_TLS_VERIFY", "1")
		p := DefaultPolicy(t.TempDir())
		p.Isolation, p.Image, p.Engine = IsolationDocker, img, engine
		r, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		res := drun(t, r, Command{Script: "echo over tls > f; cat f; cat", Stdin: strings.NewReader("in\n")})
		if res.Stdout.Text != "over tls\nin\n" {
			t.Errorf("%+v", res)
		}
		if b, _ := os.ReadFile(filepath.Join(r.Policy().Workspace, "f")); string(b) != "over tls\n" {
			t.Errorf("the workspace holds %q", b)
		}
		if res := drun(t, r, Command{Script: "sleep 60", Timeout: time.Second}); !res.TimedOut {
			t.Errorf("timeout over tls: %+v", res)
		}
	})
}

// proxy copies between c and the engine's Unix socket, both ways, passing
// on half-closes (attached streams use them).
func proxy(c *tls.Conn, sock string) {
	defer c.Close()
	e, err := net.Dial("unix", sock)
	if err != nil {
		return
	}
	defer e.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(e, c)
		e.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, e)
	c.CloseWrite()
	<-done
}

// writeTestPKI writes ca.pem, cert.pem and key.pem (a client certificate)
// into dir and returns the server's TLS config, which requires a client
// certificate of the same CA.
func writeTestPKI(t *testing.T, dir string) *tls.Config {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k := key()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clientDER, clientKey := issue(2, x509.ExtKeyUsageClientAuth, nil)
	kb, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	write("ca.pem", "CERTIFICATE", caDER)
	write("cert.pem", "CERTIFICATE", clientDER)
	write("key.pem", "EC PRIVATE KEY", kb)
	serverDER, serverKey := issue(3, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{serverDER}, PrivateKey: serverKey}},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}
}
