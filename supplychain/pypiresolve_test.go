package supplychain

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/pkgspec"
)

// pypiIndex is a loopback index serving the project documents recorded
// from pypi.org (testdata/pypi/recorded, see its README) at
// /pypi/<name>/json, and release documents derived from them at
// /pypi/<name>/<version>/json (pypi.org's release endpoint was not
// reachable to record).
type pypiIndex struct {
	t      *testing.T
	prefix string
	docs   map[string][]byte
	// noReleaseDocs makes the release endpoint answer 404, as an index
	// that serves only project documents.
	noReleaseDocs bool
	// fail is how many requests answer status failStatus first.
	fail       int
	failStatus int

	mu    sync.Mutex
	paths []string
}

func newPyPIIndex(t *testing.T) *pypiIndex {
	t.Helper()
	files, err := filepath.Glob("testdata/pypi/recorded/*.project.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("recorded documents: %v %v", files, err)
	}
	ix := &pypiIndex{t: t, docs: map[string][]byte{}, failStatus: http.StatusServiceUnavailable}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ix.docs[strings.TrimSuffix(filepath.Base(f), ".project.json")] = data
	}
	return ix
}

// start serves the index and returns a client for it, retrying quickly.
func (ix *pypiIndex) start() *PyPI {
	srv := httptest.NewServer(ix)
	ix.t.Cleanup(srv.Close)
	return NewPyPI(srv.Client(), srv.URL+ix.prefix+"/").WithRetry(thirdparty.Retry{Attempts: 3, Backoff: time.Millisecond, MaxWait: time.Millisecond})
}

func (ix *pypiIndex) requests() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return slices.Clone(ix.paths)
}

func (ix *pypiIndex) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ix.mu.Lock()
	ix.paths = append(ix.paths, r.URL.Path)
	fail := ix.fail > 0
	if fail {
		ix.fail--
	}
	ix.mu.Unlock()
	if fail {
		http.Error(w, "try later", ix.failStatus)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, ix.prefix+"/pypi/"), "/")
	if !strings.HasPrefix(r.URL.Path, ix.prefix+"/pypi/") || parts[len(parts)-1] != "json" || len(parts) < 2 || len(parts) > 3 {
		http.NotFound(w, r)
		return
	}
	doc, ok := ix.docs[parts[0]]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if len(parts) == 3 {
		if ix.noReleaseDocs {
			http.NotFound(w, r)
			return
		}
		if doc, ok = pypiReleaseDoc(ix.t, doc, parts[1]); !ok {
			http.NotFound(w, r)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

// pypiReleaseDoc derives the release document of version from a project
// document: "info" describing the version, its files in "urls", no
// "releases" (the shape of pypi.org's release documents).
func pypiReleaseDoc(t *testing.T, project []byte, version string) ([]byte, bool) {
	var doc map[string]any
	if err := json.Unmarshal(project, &doc); err != nil {
		t.Error(err)
		return nil, false
	}
	files, ok := doc["releases"].(map[string]any)[version].([]any)
	if !ok {
		return nil, false
	}
	info := doc["info"].(map[string]any)
	info["version"], info["yanked"], info["yanked_reason"] = version, len(files) > 0, nil
	for _, f := range files {
		f := f.(map[string]any)
		if f["yanked"] != true {
			info["yanked"] = false
		} else if f["yanked_reason"] != nil {
			info["yanked_reason"] = f["yanked_reason"]
		}
	}
	doc["urls"] = files
	delete(doc, "releases")
	data, err := json.Marshal(doc)
	if err != nil {
		t.Error(err)
	}
	return data, true
}

// synthetic adds a project whose releases are the given versions, each
// with one wheel unless listed in noFiles, yanked when in yanked.
func (ix *pypiIndex) synthetic(name, latest string, versions []string, yanked, noFiles map[string]bool) {
	releases := map[string]any{}
	for i, v := range versions {
		if noFiles[v] {
			releases[v] = []any{}
			continue
		}
		releases[v] = []any{map[string]any{
			"filename": name + "-" + v + "-py3-none-any.whl", "url": "https://files.example/" + v + ".whl",
			"digests": map[string]any{"sha256": strings.Repeat("ab", 32)}, "packagetype": "bdist_wheel",
			"upload_time_iso_8601": time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.RFC3339Nano),
			"yanked":               yanked[v], "yanked_reason": nil,
		}}
	}
	data, err := json.Marshal(map[string]any{"info": map[string]any{"name": name, "version": latest}, "releases": releases, "urls": []any{}})
	if err != nil {
		ix.t.Fatal(err)
	}
	ix.docs[name] = data
}

func TestPyPIResolve(t *testing.T) {
	ix := newPyPIIndex(t)
	ix.synthetic("order", "1.0", []string{"1.0", "1.0.post1", "1.1.dev0", "1.1rc1", "2.0a1", "1!0.1", "1!0.2.dev1", "0.9+local.1", "3.0"},
		map[string]bool{"3.0": true}, nil)
	ix.synthetic("posts", "1.0", []string{"1.0", "1.0.post1", "1.0.post2", "1.0+local", "1.1a1"}, nil, nil)
	ix.synthetic("prereleases-only", "0.1b2", []string{"0.1a1", "0.1b2", "0.2.dev1"}, nil, nil)
	ix.synthetic("yanked-only", "1.0", []string{"1.0", "1.1"}, map[string]bool{"1.0": true, "1.1": true}, nil)
	p := ix.start()
	ctx := context.Background()
	tests := []struct {
		name, pkg, spec, want string
		yanked                bool
	}{
		{"latest", "mcp-server-time", "", "2026.10.19", false},
		{"latest by name", "mcp-server-fetch", "latest", "2026.10.24", false},
		{"name normalised", "Mcp_Server.Git", "", "2026.10.19", false},
		{"latest skips dev releases newer than it", "httpx", "", "0.28.1", false},
		{"latest skips yanked", "order", "", "1!0.1", false},
		{"pre-release only when no final exists", "prereleases-only", "", "0.2.dev1", false},
		{"exact", "mcp-server-time", "==2025.8.4", "2025.8.4", false},
		{"exact, bare", "mcp-server-time", "2025.8.4", "2025.8.4", false},
		{"exact, other spelling", "mcp-server-time", "==2025.08.04.0", "2025.8.4", false},
		{"exact yanked pin", "requests", "==2.32.0", "2.32.0", true},
		{"exact yanked pin, bare", "requests", "2.32.1", "2.32.1", true},
		{"exact yanked pin, ===", "requests", "===2.32.0", "2.32.0", true},
		{"exact dev release", "httpx", "==1.0.dev3", "1.0.dev3", false},
		{"range skips yanked", "requests", ">=2.32,<2.32.2", "", false},
		{"range", "requests", ">=2.32,<2.33", "2.32.5", false},
		{"range with spaces", "requests", " >= 2.30 , < 2.32 ", "2.31.0", false},
		{"< excludes pre-releases of the bound", "requests", "<2.34.1", "2.34.0", false},
		{"compatible release", "requests", "~=2.31.0", "2.31.0", false},
		{"compatible release, two numbers", "requests", "~=2.31", "2.34.2", false},
		{"exclusion", "requests", ">=2.34,!=2.34.2", "2.34.1", false},
		{"exclusion wildcard", "requests", "!=2.34.*,!=2.33.*", "2.32.5", false},
		{"wildcard", "requests", "==2.33.*", "2.33.1", false},
		{"pre-release named in a clause", "httpx", ">=1.0.dev1", "1.0.dev6", false},
		{"pre-release when no final matches", "httpx", ">0.28.1", "1.0.dev6", false},
		{"epoch sorts above", "order", ">=1.0", "1!0.1", false},
		{"epoch excluded", "order", "<1!0", "1.0.post1", false},
		{"post-release is a release", "posts", ">=1.0", "1.0.post2", false},
		{"> excludes post-releases of the bound", "posts", ">1.0,<1.1", "", false},
		{"> a post-release admits later ones", "posts", ">1.0.post1,<1.1", "1.0.post2", false},
		{"== admits a local label of the release", "posts", "==1.0", "1.0+local", false},
		{"local version pinned", "posts", "==1.0+local", "1.0+local", false},
		{"local version ordering", "order", "<1.0", "0.9+local.1", false},
		{"all yanked", "yanked-only", "", "", false},
		{"all yanked, pinned", "yanked-only", "==1.1", "1.1", true},
		{"nothing matches", "requests", ">=9", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := p.Resolve(ctx, tt.pkg, tt.spec)
			if tt.want == "" {
				if !errors.Is(err, ErrVersionNotFound) {
					t.Fatalf("Resolve(%q, %q) = %+v, %v; want ErrVersionNotFound", tt.pkg, tt.spec, r, err)
				}
				if !strings.Contains(err.Error(), "newest: ") || (tt.spec != "" && !strings.Contains(err.Error(), strings.TrimSpace(tt.spec))) {
					t.Errorf("error %q names neither the spec nor the newest releases", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q, %q): %v", tt.pkg, tt.spec, err)
			}
			if r.Version != tt.want || r.Yanked != tt.yanked || r.Requested != strings.TrimSpace(tt.spec) || r.Name != pkgspec.NormalizePyPIName(tt.pkg) {
				t.Errorf("Resolve(%q, %q) = %s %s yanked=%v requested=%q; want %s yanked=%v", tt.pkg, tt.spec, r.Name, r.Version, r.Yanked, r.Requested, tt.want, tt.yanked)
			}
			if len(r.Files) == 0 || r.Published == nil || len(r.Document) == 0 {
				t.Errorf("release without files, publish time or document: %+v", r)
			}
		})
	}
}

func TestPyPIResolveRelease(t *testing.T) {
	ix := newPyPIIndex(t)
	p := ix.start()
	ctx := context.Background()

	// The latest release: one request, the project document kept, which
	// PyPIMetadata reads with its history.
	r, err := p.Resolve(ctx, "Mcp_Server.Time", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.requests(); len(got) != 1 || got[0] != "/pypi/mcp-server-time/json" {
		t.Errorf("requests = %q", got)
	}
	if len(r.Files) != 2 || r.Published == nil || !r.Published.Equal(time.Date(2026, 10, 19, 6, 48, 51, 554744000, time.UTC)) {
		t.Errorf("files %d, published %v", len(r.Files), r.Published)
	}
	types := map[string]bool{}
	for _, f := range r.Files {
		types[f.PackageType] = true
		if len(f.SHA256) != 64 || f.RequiresPython != ">=3.10" || f.Uploaded == nil || f.Size == 0 || f.Yanked {
			t.Errorf("file %+v", f)
		}
		// The recorded URLs are relative; they are resolved against the document.
		if !strings.HasPrefix(f.URL, strings.TrimSuffix(p.Index(), "/")+"/packages/") || !strings.HasSuffix(f.URL, "/"+f.Filename) {
			t.Errorf("file URL %q", f.URL)
		}
	}
	if !types["bdist_wheel"] || !types["sdist"] {
		t.Errorf("package types %v", types)
	}
	meta, err := PyPIMetadata(r.Document, r.Version)
	if err != nil || meta.VersionCount == 0 || meta.Name != "mcp-server-time" {
		t.Errorf("PyPIMetadata of the project document: %+v, %v", meta, err)
	}

	// A yanked pin: the release document, which PyPIMetadata reads as yanked.
	r, err = p.Resolve(ctx, "requests", "==2.32.0")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Yanked || r.YankedReason != "Yanked due to conflicts with CVE-2024-35195 mitigation" {
		t.Errorf("yanked %v %q", r.Yanked, r.YankedReason)
	}
	if got := ix.requests(); got[len(got)-1] != "/pypi/requests/2.32.0/json" {
		t.Errorf("requests = %q", got)
	}
	for _, f := range r.Files {
		if !strings.HasPrefix(f.URL, "https://files.pythonhosted.org/packages/") || !f.Yanked {
			t.Errorf("file %+v", f)
		}
	}
	meta, err = PyPIMetadata(r.Document, r.Version)
	if err != nil || !strings.HasPrefix(meta.Deprecated, "yanked: ") || meta.Version != "2.32.0" {
		t.Errorf("PyPIMetadata of the release document: %+v, %v", meta, err)
	}

	// An index without release documents: the project document stays.
	ix.noReleaseDocs = true
	r, err = p.Resolve(ctx, "requests", "==2.31.0")
	if err != nil || r.Version != "2.31.0" || !strings.Contains(string(r.Document), `"releases"`) {
		t.Fatalf("without release documents: %v", err)
	}
	if _, err := PyPIMetadata(r.Document, r.Version); !errors.Is(err, ErrVersionNotFound) {
		t.Errorf("PyPIMetadata of the project document for an old version: %v", err)
	}
}

func TestPyPIResolveMirror(t *testing.T) {
	ix := newPyPIIndex(t)
	ix.prefix = "/root/pypi/+simple-mirror"
	p := ix.start()
	if !strings.HasSuffix(p.Index(), ix.prefix) {
		t.Errorf("Index() = %q", p.Index())
	}
	if r, err := p.Resolve(context.Background(), "mcp-server-git", "<2026"); err != nil || r.Version != "2025.12.18" {
		t.Fatalf("Resolve under a base path: %+v, %v", r, err)
	}
	for _, path := range ix.requests() {
		if !strings.HasPrefix(path, ix.prefix+"/pypi/mcp-server-git/") {
			t.Errorf("request %s outside the base path", path)
		}
	}
}

func TestPyPIResolveErrors(t *testing.T) {
	ix := newPyPIIndex(t)
	ix.synthetic("empty", "1.0", []string{"1.0", "2.0"}, nil, map[string]bool{"1.0": true, "2.0": true})
	p := ix.start()
	ctx := context.Background()

	_, err := p.Resolve(ctx, "No_Such.Project", "")
	if !errors.Is(err, ErrPackageNotFound) || !strings.Contains(err.Error(), "no-such-project") {
		t.Errorf("unknown project: %v", err)
	}
	// requests 2.15.0 and 0.0.1 were registered without files.
	for _, spec := range []string{"==2.15.0", "0.0.1"} {
		_, err = p.Resolve(ctx, "requests", spec)
		if !errors.Is(err, ErrVersionNotFound) || !strings.Contains(err.Error(), "has no files") {
			t.Errorf("release without files %s: %v", spec, err)
		}
	}
	if _, err = p.Resolve(ctx, "requests", "<2.0,>=1.2.3,==1.2.3"); err != nil {
		t.Errorf("release with files: %v", err)
	}
	if _, err = p.Resolve(ctx, "empty", ""); !errors.Is(err, ErrVersionNotFound) {
		t.Errorf("no release with files: %v", err)
	}

	before := len(ix.requests())
	for _, tc := range []struct{ name, spec string }{
		{"", ""}, {"-bad", ""}, {"a b", ""}, {"requests/../x", ""},
		{"requests", ">="}, {"requests", "=>1.0"}, {"requests", "=1.0"}, {"requests", "~=1"},
		{"requests", "==1.*.2"}, {"requests", "==1.0a1.*"}, {"requests", "<1.*"}, {"requests", ">=1.0+local"},
		{"requests", "~=1.0+local"}, {"requests", ">=1.0,"}, {"requests", ">=1.0 <2"}, {"requests", "newest"},
		{"requests", "1.0.0-foo"}, {"requests", "^1.2"}, {"requests", "==1.0; python_version<'3'"}, {"requests", "==99999999999999999999999"},
	} {
		_, err := p.Resolve(ctx, tc.name, tc.spec)
		if !errors.Is(err, ErrBadName) && !errors.Is(err, ErrBadRequirement) {
			t.Errorf("Resolve(%q, %q) = %v, want ErrBadName or ErrBadRequirement", tc.name, tc.spec, err)
		}
	}
	if after := len(ix.requests()); after != before {
		t.Errorf("malformed requirements made %d requests", after-before)
	}
}

func TestPyPIResolveRetries(t *testing.T) {
	ix := newPyPIIndex(t)
	p := ix.start()
	ctx := context.Background()

	ix.fail = 2
	if r, err := p.Resolve(ctx, "mcp-server-fetch", ""); err != nil || r.Version != "2026.10.24" {
		t.Fatalf("after two 503s: %+v, %v", r, err)
	}
	if n := len(ix.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}

	ix.fail, ix.failStatus = 100, http.StatusBadGateway
	_, err := p.Resolve(ctx, "mcp-server-fetch", "")
	if !errors.Is(err, ErrRegistryUnreachable) || !errors.Is(err, thirdparty.ErrUnavailable) {
		t.Errorf("always 502: %v", err)
	}
	if n := len(ix.requests()); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}

	// A 404 is an answer, not retried; a 403 is not retried either.
	ix.fail = 0
	_, _ = p.Resolve(ctx, "missing", "")
	ix.fail, ix.failStatus = 1, http.StatusForbidden
	if _, err := p.Resolve(ctx, "mcp-server-fetch", ""); !errors.Is(err, ErrRegistryUnreachable) {
		t.Errorf("403: %v", err)
	}
	if n := len(ix.requests()); n != 8 {
		t.Errorf("%d requests, want 8", n)
	}

	// A timeout is retried, then unreachable.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	hc := slow.Client()
	hc.Timeout = 20 * time.Millisecond
	sp := NewPyPI(hc, slow.URL).WithRetry(thirdparty.Retry{Attempts: 2, Backoff: time.Millisecond})
	if _, err := sp.Resolve(ctx, "mcp-server-fetch", ""); !errors.Is(err, ErrRegistryUnreachable) {
		t.Errorf("timeout: %v", err)
	}
}
