package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	g := New(Options{Token: "s3cret", AllowedOrigins: []string{"https://app.example.com"}, Loopback: true, AllowMethods: "GET"})
	tests := []struct {
		name                 string
		method, host, origin string
		auth                 string
		status               int // 0: served
		preflight            bool
	}{
		{"token", "GET", "127.0.0.1:8", "", "Bearer s3cret", 0, false},
		{"token any case scheme", "GET", "localhost:8", "", "bearer s3cret", 0, false},
		{"no token", "GET", "127.0.0.1:8", "", "", 401, false},
		{"wrong token", "GET", "127.0.0.1:8", "", "Bearer s3cre", 401, false},
		{"foreign origin", "GET", "127.0.0.1:8", "https://evil.example", "Bearer s3cret", 403, false},
		{"origin null", "GET", "127.0.0.1:8", "null", "Bearer s3cret", 403, false},
		{"allowed origin", "GET", "127.0.0.1:8", "https://app.example.com/", "Bearer s3cret", 0, false},
		{"loopback origin", "GET", "[::1]:8", "http://localhost:3000", "Bearer s3cret", 0, false},
		{"rebinding host", "GET", "attacker.example:8", "", "Bearer s3cret", 403, false},
		{"preflight without token", "OPTIONS", "127.0.0.1:8", "http://127.0.0.1:3000", "", 0, true},
		{"preflight foreign", "OPTIONS", "127.0.0.1:8", "https://evil.example", "", 403, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			pre, ref := g.Check(w, r)
			got := 0
			if ref != nil {
				got = ref.Status
			}
			if got != tt.status || pre != tt.preflight {
				t.Fatalf("Check = (%v, %v), want status %d preflight %v", pre, ref, tt.status, tt.preflight)
			}
			if tt.status == 0 && tt.origin != "" && w.Header().Get("Access-Control-Allow-Origin") != tt.origin {
				t.Errorf("no CORS header for an allowed origin: %v", w.Header())
			}
			if tt.status == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestReadBody(t *testing.T) {
	for _, tt := range []struct {
		body    string
		max     int64
		tooBig  bool
		wantErr bool
	}{
		{"hello", 5, false, false},
		{"hello!", 5, true, true},
		{"", 5, false, false},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
		w := httptest.NewRecorder()
		b, err := ReadBody(w, r, tt.max, 0, "--max-body")
		if (err != nil) != tt.wantErr || errors.Is(err, ErrTooLarge) != tt.tooBig {
			t.Fatalf("ReadBody(%q, %d) = %q, %v", tt.body, tt.max, b, err)
		}
		if err == nil && string(b) != tt.body {
			t.Errorf("ReadBody = %q, want %q", b, tt.body)
		}
		if tt.tooBig {
			if be, _ := errors.AsType[*BodyError](err); be.Status != http.StatusRequestEntityTooLarge || !strings.Contains(be.Message, "--max-body") {
				t.Errorf("too large: %+v", be)
			}
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": true, "localhost:1": true, "[::1]:1": true, ":1": false, "0.0.0.0:1": false, "10.0.0.1:1": false,
	} {
		if got := LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v", addr, got)
		}
	}
}
