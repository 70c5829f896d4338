package web

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/verifymcp/verifymcp/internal/hostport"
)

// Policy is the Content-Security-Policy the page is served with, the one
// its own meta element states, and frame-ancestors, which only a header
// can: scripts and styles of the page's own folder, WebAssembly compiled
// from them, and nothing fetched, framed, submitted or loaded else.
const Policy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'none'; " +
	"connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Handler serves the built page in dir: its files and nothing else (no
// listing, no other file of the folder), GET and HEAD only, each with the
// page's policy, no caching and no referrer. dir must hold every file
// Build writes.
func Handler(dir string) (http.Handler, error) {
	files := map[string]string{}
	for _, name := range Files {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a built config scan page: %s is missing (build it with `make web`, or use the web folder of a release archive)", dir, name)
		}
		files["/"+name] = p
	}
	files["/"] = files["/index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", Policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, p)
	}), nil
}

// Loopback checks that addr (host:port) listens on this machine only: a
// page that reads people's config files is not served to a network.
func Loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %v (want HOST:PORT, e.g. 127.0.0.1:8765)", addr, err)
	}
	if hostport.Loopback(host) {
		return nil
	}
	return fmt.Errorf("address %q is not a loopback address: the page is served to this machine only (127.0.0.1, ::1 or localhost)", addr)
}
