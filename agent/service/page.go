package service

import (
	_ "embed"
	"net/http"
)

// pageHTML is the page GET / serves: plain HTML, CSS and JavaScript, no
// build step and nothing fetched from elsewhere.
//
//go:embed page/index.html
var pageHTML []byte

func (s *Service) page(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	// The page runs its own script only and talks to this service only.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(pageHTML)
}
