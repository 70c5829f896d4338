package web

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePage is a folder with every file of the page (not built: the
// handler serves bytes, whatever they are) and one file that is not.
func fakePage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range append(Files, "secret.txt") {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("content of "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestHandler(t *testing.T) {
	h, err := Handler(fakePage(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/", 200, "content of index.html"},
		{"GET", "/app.js", 200, "content of app.js"},
		{"HEAD", "/configscan.wasm.js", 200, ""},
		{"GET", "/secret.txt", 404, ""},
		{"GET", "/../secret.txt", 404, ""},
		{"GET", "/nothing", 404, ""},
		{"POST", "/", 405, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || (tt.body != "" && rec.Body.String() != tt.body) {
			t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
		if got := rec.Header().Get("Content-Security-Policy"); got != Policy {
			t.Errorf("%s %s: policy %q", tt.method, tt.path, got)
		}
		if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: headers %v", tt.method, tt.path, rec.Header())
		}
	}
	// The policy the page states for itself is the one it is served with.
	index, err := static.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if meta := strings.TrimSuffix(Policy, "; frame-ancestors 'none'"); !strings.Contains(string(index), `content="`+meta+`"`) {
		t.Errorf("index.html's policy is not %q", meta)
	}
}

func TestHandlerRefusesAFolderThatIsNotThePage(t *testing.T) {
	dir := fakePage(t)
	if err := os.Remove(filepath.Join(dir, "configscan.wasm.js")); err != nil {
		t.Fatal(err)
	}
	if _, err := Handler(dir); err == nil || !strings.Contains(err.Error(), "configscan.wasm.js is missing") {
		t.Errorf("err = %v", err)
	}
}

func TestLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8765": true, "[::1]:8765": true, "localhost:0": true, "127.0.0.2:80": true,
		"0.0.0.0:8765": false, ":8765": false, "192.168.1.2:8765": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if err := Loopback(addr); (err == nil) != ok {
			t.Errorf("Loopback(%q) = %v", addr, err)
		}
	}
}
