package supplychain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain"
)

// mcpFixture is a recorded server.json (see testdata/mcpregistry/README.md)
// and the registry metadata the fake serves with it.
type mcpFixture struct {
	file          string
	status        string // "" serves no official metadata at all
	statusMessage string
	latest        bool
}

// fakeMCPRegistry is a local MCP registry speaking the part of the API the
// client uses: GET /v0.1/servers/{serverName}/versions/{version} (and the
// same under /v0 unless v0Only), with "latest", the include_deleted query
// parameter, huma's problem+json 404 for an unknown server, and the Go
// ServeMux's plain-text 404 for a path it does not route (including a
// server name whose "/" was not escaped).
type fakeMCPRegistry struct {
	t       *testing.T
	servers map[string][]mcpFixture
	// v0Only serves only the /v0 prefix, as registries before 2025-10-17.
	v0Only bool
	// The first fail requests get failStatus; delay holds every answer.
	fail       int
	failStatus int
	delay      time.Duration

	mu       sync.Mutex
	requests []*url.URL
}

func (f *fakeMCPRegistry) seen() []*url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*url.URL(nil), f.requests...)
}

func (f *fakeMCPRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	u := *r.URL
	f.requests = append(f.requests, &u)
	n := len(f.requests)
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if n <= f.fail {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(f.failStatus)
		fmt.Fprintf(w, `{"title":%q,"status":%d,"detail":"upstream unavailable"}`, http.StatusText(f.failStatus), f.failStatus)
		return
	}
	p := r.URL.EscapedPath()
	prefix := "/v0.1/servers/"
	if f.v0Only {
		prefix = "/v0/servers/"
	}
	if r.Method != http.MethodGet || !strings.HasPrefix(p, prefix) {
		http.NotFound(w, r)
		return
	}
	parts := strings.Split(strings.TrimPrefix(p, prefix), "/")
	if len(parts) != 3 || parts[1] != "versions" {
		http.NotFound(w, r)
		return
	}
	name, err1 := url.PathUnescape(parts[0])
	version, err2 := url.PathUnescape(parts[2])
	if err1 != nil || err2 != nil {
		problem(w, http.StatusBadRequest, "Invalid server name encoding")
		return
	}
	includeDeleted := r.URL.Query().Get("include_deleted") == "true"
	for _, fx := range f.servers[name] {
		raw := mcpServerJSON(f.t, fx.file)
		var sj struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &sj); err != nil {
			f.t.Errorf("fixture %s: %v", fx.file, err)
		}
		if (version == "latest" && !fx.latest) || (version != "latest" && version != sj.Version) {
			continue
		}
		if fx.status == "deleted" && !includeDeleted {
			break
		}
		resp := map[string]any{"server": raw}
		if fx.status != "" {
			official := map[string]any{
				"status":      fx.status,
				"publishedAt": "2026-03-02T17:41:09.123456Z",
				"updatedAt":   "2026-03-02T17:41:09.123456Z",
				"isLatest":    fx.latest,
			}
			if fx.statusMessage != "" {
				official["statusMessage"] = fx.statusMessage
				official["statusChangedAt"] = "2026-04-01T08:00:00Z"
			}
			resp["_meta"] = map[string]any{"io.modelcontextprotocol.registry/official": official}
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(resp); err != nil {
			f.t.Errorf("encode: %v", err)
		}
		return
	}
	problem(w, http.StatusNotFound, "Server not found")
}

// problem answers as huma does: application/problem+json.
func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"$schema":"https://registry.modelcontextprotocol.io/schemas/ErrorModel.json","title":%q,"status":%d,"detail":%q}`, http.StatusText(status), status, detail)
}

func mcpServerJSON(t *testing.T, file string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mcpregistry", file))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// fastMCPRetry keeps the retry tests quick: four attempts, milliseconds apart.
var fastMCPRetry = thirdparty.Retry{Attempts: 4, Backoff: 5 * time.Millisecond, MaxWait: time.Second}

const (
	airtableName = "io.github.domdomegg/airtable-mcp-server"
	githubName   = "io.github.github/github-mcp-server"
	pubmedName   = "io.github.cyanheads/pubmed-mcp-server"
	tandemName   = "ac.tandem/docs-mcp"
	timePyPIName = "io.github.domdomegg/time-mcp-pypi"
	context7Name = "io.github.upstash/context7"
	fsName       = "io.github.modelcontextprotocol/filesystem"
	dbName       = "io.github.example/database-manager"
)

// mcpRecorded is every recorded server, active and latest.
func mcpRecorded() map[string][]mcpFixture {
	return map[string][]mcpFixture{
		airtableName: {
			{file: "airtable-mcp-server-1.7.2.server.json", status: "active"},
			{file: "airtable-mcp-server-1.7.3.server.json", status: "active", latest: true},
		},
		githubName:   {{file: "github-mcp-server-0.28.1.server.json", status: "active", latest: true}},
		pubmedName:   {{file: "pubmed-mcp-server-2.9.9.server.json", status: "active", latest: true}},
		tandemName:   {{file: "tandem-docs-mcp-0.3.2.server.json", status: "active", latest: true}},
		timePyPIName: {{file: "time-mcp-pypi-1.0.6.server.json", status: "active", latest: true}},
		context7Name: {{file: "context7-1.0.0.server.json", status: "active", latest: true}},
		fsName:       {{file: "example-filesystem-1.0.2.server.json", status: "active", latest: true}},
		dbName:       {{file: "example-database-manager-3.1.0.server.json", latest: true}},
	}
}

func mcpServe(t *testing.T, f *fakeMCPRegistry) *supplychain.MCPRegistry {
	t.Helper()
	f.t = t
	if f.servers == nil {
		f.servers = mcpRecorded()
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return supplychain.NewMCPRegistry(&http.Client{Timeout: 2 * time.Second}, srv.URL+"/").WithRetry(fastMCPRetry)
}

func mcpServer(t *testing.T, name, version string) *supplychain.RegistryServer {
	t.Helper()
	reg := mcpServe(t, &fakeMCPRegistry{})
	s, err := reg.Server(context.Background(), name, version)
	if err != nil {
		t.Fatalf("Server(%s, %q): %v", name, version, err)
	}
	return s
}

func TestMCPRegistryBase(t *testing.T) {
	if got := supplychain.NewMCPRegistry(nil, "").Base(); got != "https://registry.modelcontextprotocol.io" {
		t.Errorf("default Base = %q", got)
	}
	if got := supplychain.NewMCPRegistry(nil, "http://127.0.0.1:8080/").Base(); got != "http://127.0.0.1:8080" {
		t.Errorf("Base = %q, want the trailing slash trimmed", got)
	}
}

func TestMCPRegistryLatestAndExactVersion(t *testing.T) {
	f := &fakeMCPRegistry{}
	reg := mcpServe(t, f)

	latest, err := reg.Server(context.Background(), airtableName, "")
	if err != nil {
		t.Fatalf("Server latest: %v", err)
	}
	exact, err := reg.Server(context.Background(), airtableName, "1.7.2")
	if err != nil {
		t.Fatalf("Server 1.7.2: %v", err)
	}
	reqs := f.seen()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range []string{
		"/v0.1/servers/io.github.domdomegg%2Fairtable-mcp-server/versions/latest",
		"/v0.1/servers/io.github.domdomegg%2Fairtable-mcp-server/versions/1.7.2",
	} {
		if got := reqs[i].EscapedPath(); got != want {
			t.Errorf("request %d path = %s, want %s", i, got, want)
		}
		if got := reqs[i].Query().Get("include_deleted"); got != "true" {
			t.Errorf("request %d include_deleted = %q, want true", i, got)
		}
	}

	if latest.Version != "1.7.3" || !latest.IsLatest || exact.Version != "1.7.2" || exact.IsLatest {
		t.Errorf("versions: latest %s (isLatest %v), exact %s (isLatest %v)", latest.Version, latest.IsLatest, exact.Version, exact.IsLatest)
	}
	wantPub := time.Date(2026, 3, 2, 17, 41, 9, 123456000, time.UTC)
	if latest.PublishedAt == nil || !latest.PublishedAt.Equal(wantPub) {
		t.Errorf("PublishedAt = %v, want %v", latest.PublishedAt, wantPub)
	}
	got := struct{ Name, Description, Schema, Status, Repo string }{latest.Name, latest.Description, latest.SchemaURL, latest.Status, latest.Repository}
	want := struct{ Name, Description, Schema, Status, Repo string }{
		airtableName,
		"Read and write access to Airtable database schemas, tables, and records.",
		"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
		"active",
		"https://github.com/domdomegg/airtable-mcp-server.git",
	}
	if got != want {
		t.Errorf("server:\n got %+v\nwant %+v", got, want)
	}
	if len(latest.Packages) != 3 || len(latest.Remotes) != 0 {
		t.Fatalf("%d packages, %d remotes; want 3, 0", len(latest.Packages), len(latest.Remotes))
	}
	mcpb := latest.Packages[2]
	if mcpb.RegistryType != "mcpb" || mcpb.FileSHA256 != "0f28a9129cfebd262dfb77854c872355d21401bb3e056575b3027081f5d570ca" {
		t.Errorf("mcpb package = %+v", mcpb)
	}

	p, notes, err := latest.Choose()
	if err != nil {
		t.Fatalf("Choose: %v", err)
	}
	if p.RegistryType != "npm" || p.Identifier != "airtable-mcp-server" || p.Version != "1.7.3" || p.Transport != "stdio" || p.RuntimeHint != "npx" {
		t.Errorf("chosen = %+v", p)
	}
	wantNotes := []string{"also declares, not scanned: oci docker.io/domdomegg/airtable-mcp-server:1.7.3; mcpb https://github.com/domdomegg/airtable-mcp-server/releases/download/v1.7.3/airtable-mcp-server.mcpb"}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("notes:\n got %q\nwant %q", notes, wantNotes)
	}
	if p, _, err := exact.Choose(); err != nil || p.Version != "1.7.2" {
		t.Errorf("Choose on 1.7.2 = %+v, %v", p, err)
	}
}

func TestMCPRegistryNotFound(t *testing.T) {
	for _, tc := range []struct{ name, version, wantIn string }{
		{"io.github.nobody/nothing", "", "io.github.nobody/nothing is not in the MCP registry"},
		{airtableName, "9.9.9", airtableName + " version 9.9.9 is not in the MCP registry"},
	} {
		t.Run(tc.name+"@"+tc.version, func(t *testing.T) {
			f := &fakeMCPRegistry{}
			reg := mcpServe(t, f)
			s, err := reg.Server(context.Background(), tc.name, tc.version)
			if !errors.Is(err, supplychain.ErrServerNotFound) {
				t.Fatalf("Server = %+v, %v; want ErrServerNotFound", s, err)
			}
			if errors.Is(err, supplychain.ErrRegistryUnreachable) {
				t.Errorf("not found must not read as unreachable: %v", err)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not say %q", err, tc.wantIn)
			}
			if n := len(f.seen()); n != 1 {
				t.Errorf("%d requests, want 1: a registry 404 is an answer, not a reason to retry", n)
			}
		})
	}
}

func TestMCPRegistryMalformedNameMakesNoRequest(t *testing.T) {
	for _, name := range []string{
		"",
		"weather",
		"@modelcontextprotocol/server-everything",
		"io.github.owner/server/extra",
		"io.github.owner/",
		"/server",
		"io.github.owner/my server",
		"io_github_owner/server",
		"a/",
		"io.github.owner/" + strings.Repeat("x", 200),
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeMCPRegistry{}
			reg := mcpServe(t, f)
			s, err := reg.Server(context.Background(), name, "")
			if !errors.Is(err, supplychain.ErrBadServerName) {
				t.Fatalf("Server(%q) = %+v, %v; want ErrBadServerName", name, s, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
				t.Errorf("error %q does not name %q", err, name)
			}
			if n := len(f.seen()); n != 0 {
				t.Errorf("%d requests for a malformed name, want none", n)
			}
		})
	}
	for _, name := range []string{"io.github.owner/server", "com.example/weather", "io.modelcontextprotocol.anonymous/mcp-fs", "ac.tandem/docs-mcp"} {
		if err := supplychain.ValidMCPServerName(name); err != nil {
			t.Errorf("ValidMCPServerName(%q) = %v", name, err)
		}
	}
}

func TestMCPRegistryRetries(t *testing.T) {
	t.Run("503 then success", func(t *testing.T) {
		f := &fakeMCPRegistry{fail: 2, failStatus: http.StatusServiceUnavailable}
		s, err := mcpServe(t, f).Server(context.Background(), airtableName, "")
		if err != nil {
			t.Fatalf("Server: %v", err)
		}
		if s.Version != "1.7.3" {
			t.Errorf("version = %s", s.Version)
		}
		if n := len(f.seen()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("503 with the default backoff", func(t *testing.T) {
		f := &fakeMCPRegistry{fail: 1, failStatus: http.StatusServiceUnavailable}
		f.t, f.servers = t, mcpRecorded()
		srv := httptest.NewServer(f)
		defer srv.Close()
		start := time.Now()
		if _, err := supplychain.NewMCPRegistry(nil, srv.URL).Server(context.Background(), airtableName, "1.7.3"); err != nil {
			t.Fatalf("Server: %v", err)
		}
		if d := time.Since(start); d < 400*time.Millisecond {
			t.Errorf("retried after %s, want a backoff of about half a second", d)
		}
	})
	t.Run("persistent 503 is unreachable", func(t *testing.T) {
		f := &fakeMCPRegistry{fail: 1000, failStatus: http.StatusServiceUnavailable}
		s, err := mcpServe(t, f).Server(context.Background(), airtableName, "")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) || errors.Is(err, supplychain.ErrServerNotFound) {
			t.Fatalf("Server = %+v, %v; want ErrRegistryUnreachable only", s, err)
		}
		if !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "503") {
			t.Errorf("error %q should say the registry is unreachable and why", err)
		}
		if n := len(f.seen()); n != 4 {
			t.Errorf("%d requests, want 4 (the first and three retries)", n)
		}
	})
	t.Run("429 then success", func(t *testing.T) {
		f := &fakeMCPRegistry{fail: 1, failStatus: http.StatusTooManyRequests}
		if _, err := mcpServe(t, f).Server(context.Background(), airtableName, ""); err != nil {
			t.Fatalf("Server: %v", err)
		}
		if n := len(f.seen()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("400 is not retried", func(t *testing.T) {
		f := &fakeMCPRegistry{fail: 1000, failStatus: http.StatusBadRequest}
		_, err := mcpServe(t, f).Server(context.Background(), airtableName, "")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) || !strings.Contains(err.Error(), "upstream unavailable") {
			t.Fatalf("error = %v, want ErrRegistryUnreachable with the registry's detail", err)
		}
		if n := len(f.seen()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("timeouts are retried, then unreachable", func(t *testing.T) {
		f := &fakeMCPRegistry{delay: 5 * time.Second}
		f.t, f.servers = t, mcpRecorded()
		srv := httptest.NewServer(f)
		defer srv.Close()
		reg := supplychain.NewMCPRegistry(&http.Client{Timeout: 50 * time.Millisecond}, srv.URL).WithRetry(fastMCPRetry)
		_, err := reg.Server(context.Background(), airtableName, "")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("error = %v, want ErrRegistryUnreachable", err)
		}
		if n := len(f.seen()); n != 4 {
			t.Errorf("%d requests, want 4", n)
		}
	})
	t.Run("closed port", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = supplychain.NewMCPRegistry(nil, "http://"+addr).WithRetry(fastMCPRetry).Server(context.Background(), airtableName, "")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("error = %v, want ErrRegistryUnreachable", err)
		}
	})
	t.Run("context ends during the backoff", func(t *testing.T) {
		f := &fakeMCPRegistry{fail: 1000, failStatus: http.StatusBadGateway}
		f.t, f.servers = t, mcpRecorded()
		srv := httptest.NewServer(f)
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := supplychain.NewMCPRegistry(nil, srv.URL).Server(ctx, airtableName, "")
		if !errors.Is(err, supplychain.ErrRegistryUnreachable) {
			t.Fatalf("error = %v, want ErrRegistryUnreachable", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Server took %s after its context ended", d)
		}
	})
}

func TestMCPRegistryV0Fallback(t *testing.T) {
	f := &fakeMCPRegistry{v0Only: true}
	s, err := mcpServe(t, f).Server(context.Background(), airtableName, "1.7.2")
	if err != nil {
		t.Fatalf("Server: %v", err)
	}
	if s.Version != "1.7.2" {
		t.Errorf("version = %s", s.Version)
	}
	reqs := f.seen()
	if len(reqs) != 2 || !strings.HasPrefix(reqs[0].Path, "/v0.1/") || !strings.HasPrefix(reqs[1].EscapedPath(), "/v0/servers/io.github.domdomegg%2Fairtable-mcp-server/") {
		t.Errorf("requests = %v, want /v0.1 then /v0", reqs)
	}
	// An unknown server on a /v0-only registry is not found, not unreachable.
	_, err = mcpServe(t, &fakeMCPRegistry{v0Only: true}).Server(context.Background(), "io.github.nobody/nothing", "")
	if !errors.Is(err, supplychain.ErrServerNotFound) {
		t.Errorf("error = %v, want ErrServerNotFound", err)
	}
}

func TestMCPRegistryDeletedAndDeprecated(t *testing.T) {
	servers := mcpRecorded()
	servers[context7Name] = []mcpFixture{{file: "context7-1.0.0.server.json", status: "deleted", statusMessage: "Removed under the moderation policy", latest: true}}
	servers[pubmedName] = []mcpFixture{{file: "pubmed-mcp-server-2.9.9.server.json", status: "deprecated", statusMessage: "Use version 3", latest: true}}
	reg := mcpServe(t, &fakeMCPRegistry{servers: servers})

	s, err := reg.Server(context.Background(), context7Name, "")
	if !errors.Is(err, supplychain.ErrServerDeleted) {
		t.Fatalf("deleted: Server = %+v, %v; want ErrServerDeleted", s, err)
	}
	if !strings.Contains(err.Error(), "1.0.0") || !strings.Contains(err.Error(), "Removed under the moderation policy") {
		t.Errorf("error %q should name the version and the registry's message", err)
	}

	s, err = reg.Server(context.Background(), pubmedName, "2.9.9")
	if err != nil {
		t.Fatalf("deprecated: %v", err)
	}
	if s.Status != "deprecated" || s.StatusMessage != "Use version 3" {
		t.Errorf("status = %q %q", s.Status, s.StatusMessage)
	}
	_, notes, err := s.Choose()
	if err != nil {
		t.Fatalf("Choose: %v", err)
	}
	if last := notes[len(notes)-1]; last != "the registry lists this server as deprecated: Use version 3" {
		t.Errorf("last note = %q", last)
	}

	// A server without official metadata has no status, rather than "active".
	if s := mcpServer(t, dbName, ""); s.Status != "" || s.PublishedAt != nil {
		t.Errorf("no _meta: status %q, published %v", s.Status, s.PublishedAt)
	}
}

func TestMCPRegistryChooseRemoteOnly(t *testing.T) {
	s := mcpServer(t, tandemName, "")
	if len(s.Remotes) != 1 || s.Remotes[0] != (supplychain.RegistryRemote{Type: "streamable-http", URL: "https://tandem.ac/mcp"}) {
		t.Errorf("remotes = %+v", s.Remotes)
	}
	p, notes, err := s.Choose()
	if !errors.Is(err, supplychain.ErrRemoteOnly) {
		t.Fatalf("Choose = %+v, %v, %v; want ErrRemoteOnly", p, notes, err)
	}
	if !strings.Contains(err.Error(), "streamable-http https://tandem.ac/mcp") {
		t.Errorf("error %q should name the remote", err)
	}
}

// TestMCPRegistryChoosePyPI: a server whose only package is a PyPI
// package run over stdio is scanned as that package.
func TestMCPRegistryChoosePyPI(t *testing.T) {
	s := mcpServer(t, timePyPIName, "")
	p, notes, err := s.Choose()
	if err != nil || p.RegistryType != "pypi" || p.Identifier != "time-mcp-pypi" || p.Version != "1.0.6" || len(notes) != 0 {
		t.Errorf("Choose = %+v, %v, %v; want the PyPI package", p, notes, err)
	}
}

// TestMCPRegistryChooseOCI: a server whose only package is an image run
// over stdio is scanned as that image, and what its runtime arguments
// leave unfixed is noted.
func TestMCPRegistryChooseOCI(t *testing.T) {
	for _, tc := range []struct{ name, id, note string }{
		{githubName, "ghcr.io/github/github-mcp-server:0.28.1", `variable {token} (no value or default) not fixed`},
		{dbName, "docker.io/example/database-manager-mcp:3.1.0", `"database_name": required, with no value or default`},
	} {
		s := mcpServer(t, tc.name, "")
		p, notes, err := s.Choose()
		if err != nil || p.RegistryType != "oci" || p.Identifier != tc.id {
			t.Errorf("%s: Choose = %+v, %v; want the oci package %s", tc.name, p, err, tc.id)
			continue
		}
		if !strings.Contains(strings.Join(notes, "\n"), tc.note) {
			t.Errorf("%s: notes %q should say %q", tc.name, notes, tc.note)
		}
	}
}

func TestMCPRegistryChooseAmongSeveralPackages(t *testing.T) {
	s := mcpServer(t, pubmedName, "")
	if len(s.Packages) != 2 || s.Packages[1].Transport != "streamable-http" {
		t.Fatalf("packages = %+v", s.Packages)
	}
	p, notes, err := s.Choose()
	if err != nil {
		t.Fatalf("Choose: %v", err)
	}
	if p.Identifier != "@cyanheads/pubmed-mcp-server" || p.Transport != "stdio" || !reflect.DeepEqual(p.PackageArgs, []string{"run", "start:stdio"}) || p.RuntimeHint != "bun" {
		t.Errorf("chosen = %+v", p)
	}
	want := []string{
		"also declares, not scanned: npm @cyanheads/pubmed-mcp-server@2.9.9 (streamable-http)",
		"also declares remote streamable-http https://pubmed.caseyjhand.com/mcp, another track, not scanned",
	}
	if !reflect.DeepEqual(notes, want) {
		t.Errorf("notes:\n got %q\nwant %q", notes, want)
	}

	// The filesystem example: npm first, then oci; the npm one is taken
	// with its default as the positional argument.
	s = mcpServer(t, fsName, "")
	p, notes, err = s.Choose()
	if err != nil {
		t.Fatalf("Choose: %v", err)
	}
	if p.Identifier != "@modelcontextprotocol/server-filesystem" || !reflect.DeepEqual(p.PackageArgs, []string{"/Users/username/Desktop"}) {
		t.Errorf("chosen = %+v", p)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "oci docker.io/mcp/filesystem:1.0.2") {
		t.Errorf("notes = %q", notes)
	}
}

func TestMCPRegistryArgumentResolution(t *testing.T) {
	type args struct {
		Runtime, Package, Unfixed []string
	}
	check := func(t *testing.T, p supplychain.RegistryPackage, want args) {
		t.Helper()
		got := args{p.RuntimeArgs, p.PackageArgs, p.Unfixed}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s arguments:\n got %q\nwant %q", p.Identifier, got, want)
		}
	}
	t.Run("github-mcp-server: positional, named, a secret variable", func(t *testing.T) {
		p := mcpServer(t, githubName, "").Packages[0]
		check(t, p, args{
			Runtime: []string{"run", "-i=true", "--rm=true", "ghcr.io/github/github-mcp-server"},
			Unfixed: []string{`runtimeArguments[3] named "-e": variable {token} (no value or default) not fixed`},
		})
	})
	t.Run("filesystem: default, fixed value, variable with and without default", func(t *testing.T) {
		s := mcpServer(t, fsName, "")
		check(t, s.Packages[0], args{Package: []string{"/Users/username/Desktop"}})
		check(t, s.Packages[1], args{
			Package: []string{"/project"},
			Unfixed: []string{`runtimeArguments[0] named "--mount": variable {source_path} (no value or default) not fixed`},
		})
	})
	t.Run("database-manager: named with default, optional left out, required unfixed", func(t *testing.T) {
		p := mcpServer(t, dbName, "").Packages[0]
		check(t, p, args{
			Runtime: []string{"--network=host"},
			Package: []string{"--host=localhost"},
			Unfixed: []string{
				`runtimeArguments[1] named "-e": variable {db_type} (no value or default) not fixed`,
				`packageArguments[2] positional "database_name": required, with no value or default`,
			},
		})
	})
	t.Run("fixed arguments only", func(t *testing.T) {
		p := mcpServer(t, pubmedName, "").Packages[1]
		check(t, p, args{Package: []string{"run", "start:http"}})
	})
}

func TestMCPRegistryEnvironmentNamesWithoutValues(t *testing.T) {
	p := mcpServer(t, dbName, "").Packages[0]
	if want := []string{"DB_USERNAME", "DB_PASSWORD", "SSL_MODE"}; !reflect.DeepEqual(p.EnvNames, want) {
		t.Errorf("EnvNames = %q, want %q", p.EnvNames, want)
	}
	if want := map[string]bool{"DB_USERNAME": false, "DB_PASSWORD": true, "SSL_MODE": false}; !reflect.DeepEqual(p.EnvSecret, want) {
		t.Errorf("EnvSecret = %v, want %v", p.EnvSecret, want)
	}
	if want := map[string]bool{"DB_USERNAME": true, "DB_PASSWORD": true, "SSL_MODE": false}; !reflect.DeepEqual(p.EnvRequired, want) {
		t.Errorf("EnvRequired = %v, want %v", p.EnvRequired, want)
	}
	// SSL_MODE's default and the LOG_LEVEL default below are values: they
	// must not be anywhere in what the client returns.
	if dump := fmt.Sprintf("%#v", p); strings.Contains(dump, "prefer") {
		t.Errorf("an environment value leaked: %s", dump)
	}
	fs := mcpServer(t, fsName, "").Packages[0]
	if !reflect.DeepEqual(fs.EnvNames, []string{"LOG_LEVEL"}) || fs.EnvSecret["LOG_LEVEL"] {
		t.Errorf("filesystem env = %q %v", fs.EnvNames, fs.EnvSecret)
	}
	if dump := fmt.Sprintf("%#v", fs); strings.Contains(dump, `"info"`) {
		t.Errorf("an environment value leaked: %s", dump)
	}
	c7 := mcpServer(t, context7Name, "")
	p, notes, err := c7.Choose()
	if err != nil {
		t.Fatalf("Choose: %v", err)
	}
	if !reflect.DeepEqual(p.EnvNames, []string{"CONTEXT7_API_KEY"}) || !p.EnvSecret["CONTEXT7_API_KEY"] || p.EnvRequired["CONTEXT7_API_KEY"] {
		t.Errorf("context7 env = %q secret %v required %v", p.EnvNames, p.EnvSecret, p.EnvRequired)
	}
	// Context7's registry entry is version 1.0.0 but its npm package 1.0.26.
	if want := []string{"the npm package's version 1.0.26 differs from the server's version 1.0.0"}; !reflect.DeepEqual(notes, want) {
		t.Errorf("notes = %q, want %q", notes, want)
	}
}
