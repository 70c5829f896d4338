// Package e2e holds what the end-to-end tests of the shipped ecosystems
// share: the program built once and run as a user runs it, and an MCP
// registry that serves one server.json. Tests only; standard library only.
package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build builds the program from the package at cmd (a path relative to the
// test's directory) into a new temporary directory, statically (it runs
// in the helper containers too), and returns the binary and what removes
// it.
func Build(cmd string) (binary string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "verifymcp-e2e")
	if err != nil {
		return "", nil, err
	}
	binary = filepath.Join(dir, "verifymcp")
	build := exec.Command("go", "build", "-o", binary, cmd)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("build %s: %w\n%s", cmd, err, out)
	}
	return binary, func() { os.RemoveAll(dir) }, nil
}

// Result is what one run of the program gave.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs binary with args as a user would, with no config file, no
// offline OSV database, the host's CA bundle unless the environment names
// one, and env after all of that.
func Run(t *testing.T, binary string, env []string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "VERIFYMCP_CONFIG=", "VERIFYMCP_OSV_OFFLINE_DB=")
	if _, ok := os.LookupEnv("VERIFYMCP_CA_BUNDLE"); !ok {
		cmd.Env = append(cmd.Env, "VERIFYMCP_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt")
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return Result{code, out.String(), errb.String()}
}

// MCPRegistry serves one server.json the way the official registry's API
// answers (GET /v0.1/servers/{name}/versions[/{version}], problem+json
// 404s), as supplychain/supplytest.MCPRegistry does for its recorded
// entries, and returns its URL; it stops when the test ends.
func MCPRegistry(t *testing.T, name, version, serverJSON string) string {
	t.Helper()
	entry := fmt.Sprintf(`{"server": %s, "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "publishedAt": "2026-12-01T00:00:00Z", "updatedAt": "2026-12-01T00:00:00Z", "isLatest": true}}}`, serverJSON)
	base := "/v0.1/servers/" + url.PathEscape(name) + "/versions"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.EscapedPath() {
		case base:
			_, _ = fmt.Fprintf(w, `{"servers": [%s], "metadata": {"count": 1}}`, entry)
		case base + "/" + version, base + "/latest":
			_, _ = w.Write([]byte(entry))
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"title":"Not Found","status":404,"detail":"Server not found"}`))
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}
