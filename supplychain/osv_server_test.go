package supplychain

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
)

// osvAPI is a local OSV API on loopback. It serves what osv-scanner's
// client (osv.dev/bindings/go/osvdev, as osv-scalibr's vulnmatch/osvdev
// enricher drives it) calls: POST /v1/querybatch, answering each query
// with the ids and modification times of the matching records, and GET
// /v1/vulns/{id} with the full record. It matches versions on its own
// (Masterminds semver over the records' SEMVER and ECOSYSTEM ranges), not
// with osv-scalibr's matcher, so the API path and the offline database path
// are checked against two independent implementations.
type osvAPI struct {
	*httptest.Server
	records map[string][]byte
	parsed  map[string]osvAPIRecord

	mu sync.Mutex
	// fail says how the next requests fail: "" (answer), "503", "429"
	// (for tooMany requests, then answer), "slow" (answer after delay,
	// unless the client gives up), "malformed" (querybatch body is not
	// JSON), "malformed-vuln" (the records are not JSON).
	fail    string
	tooMany int
	delay   time.Duration
	// pageSize, when positive, pages each query's result as the real API
	// does for long lists, with next_page_token.
	pageSize int

	requests atomic.Int64
	batches  atomic.Int64
}

type osvAPIRecord struct {
	ID       string `json:"id"`
	Modified string `json:"modified"`
	Affected []struct {
		Package struct {
			Ecosystem string `json:"ecosystem"`
			Name      string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string              `json:"type"`
			Events []map[string]string `json:"events"`
		} `json:"ranges"`
		Versions []string `json:"versions"`
	} `json:"affected"`
	Withdrawn string `json:"withdrawn"`
}

func osvRecords(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "osv", "records", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no OSV records in testdata/osv/records: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out
}

func newOSVAPI(t *testing.T) *osvAPI {
	t.Helper()
	a := &osvAPI{records: osvRecords(t), parsed: map[string]osvAPIRecord{}}
	for id, b := range a.records {
		var r osvAPIRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("record %s: %v", id, err)
		}
		if r.ID != id {
			t.Fatalf("record file %s.json holds id %s", id, r.ID)
		}
		a.parsed[id] = r
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/querybatch", a.querybatch)
	mux.HandleFunc("GET /v1/vulns/{id}", a.vuln)
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.requests.Add(1)
		// Reading the whole body first lets the server notice a client
		// that gives up (it watches the connection only after the body).
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if a.failed(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *osvAPI) setFail(mode string, tooMany int, delay time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail, a.tooMany, a.delay = mode, tooMany, delay
}

// failed writes the configured failure, if any, and reports whether it did.
func (a *osvAPI) failed(w http.ResponseWriter, r *http.Request) bool {
	a.mu.Lock()
	mode, delay := a.fail, a.delay
	if mode == "429" {
		if a.tooMany <= 0 {
			mode = ""
		} else {
			a.tooMany--
		}
	}
	a.mu.Unlock()
	switch mode {
	case "503":
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("<html><body><h1>503 Service Unavailable</h1></body></html>"))
		return true
	case "429":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"code":8,"message":"Quota exceeded."}`))
		return true
	case "slow":
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return true
		}
	}
	return false
}

type osvAPIQuery struct {
	Package struct {
		Name      string `json:"name"`
		Ecosystem string `json:"ecosystem"`
	} `json:"package"`
	Version        string `json:"version"`
	PageToken      string `json:"page_token"`
	PageTokenCamel string `json:"pageToken"`
}

func (a *osvAPI) querybatch(w http.ResponseWriter, r *http.Request) {
	a.batches.Add(1)
	var body struct {
		Queries []osvAPIQuery `json:"queries"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"code":3,"message":"Invalid query."}`, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	mode, pageSize := a.fail, a.pageSize
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if mode == "malformed" {
		w.Write([]byte(`{"results":[{"vulns":[{"id":"GHSA-hc55-p739-j48w","modified":`))
		return
	}
	type vulnRef struct {
		ID       string `json:"id"`
		Modified string `json:"modified"`
	}
	type result struct {
		Vulns         []vulnRef `json:"vulns,omitempty"`
		NextPageToken string    `json:"next_page_token,omitempty"`
	}
	results := make([]result, 0, len(body.Queries))
	for _, q := range body.Queries {
		var refs []vulnRef
		for _, id := range slices.Sorted(func(yield func(string) bool) {
			for id := range a.parsed {
				if !yield(id) {
					return
				}
			}
		}) {
			if rec := a.parsed[id]; q.Package.Ecosystem == "npm" && osvAPIAffects(rec, q.Package.Name, q.Version) {
				refs = append(refs, vulnRef{ID: rec.ID, Modified: rec.Modified})
			}
		}
		res := result{Vulns: refs}
		if pageSize > 0 {
			start, _ := strconv.Atoi(cmpOr(q.PageToken, q.PageTokenCamel))
			end := min(start+pageSize, len(refs))
			res.Vulns = refs[min(start, len(refs)):end]
			if end < len(refs) {
				res.NextPageToken = strconv.Itoa(end)
			}
		}
		results = append(results, res)
	}
	json.NewEncoder(w).Encode(map[string]any{"results": results})
}

func (a *osvAPI) vuln(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	b, ok := a.records[r.PathValue("id")]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"code":5,"message":"Bug not found."}`))
		return
	}
	a.mu.Lock()
	mode := a.fail
	a.mu.Unlock()
	if mode == "malformed-vuln" {
		w.Write([]byte(`<!doctype html><title>Error</title>`))
		return
	}
	w.Write(b)
}

// osvAPIAffects evaluates a record for one npm package version as the OSV
// schema describes: the listed versions, or a range's events in version
// order, where introduced opens, fixed closes at its version and
// last_affected closes after it.
func osvAPIAffects(rec osvAPIRecord, name, version string) bool {
	if rec.Withdrawn != "" {
		return false
	}
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return false
	}
	for _, af := range rec.Affected {
		if af.Package.Ecosystem != "npm" || af.Package.Name != name {
			continue
		}
		if slices.Contains(af.Versions, version) {
			return true
		}
		for _, rg := range af.Ranges {
			if (rg.Type == "SEMVER" || rg.Type == "ECOSYSTEM") && osvAPIInRange(rg.Events, v) {
				return true
			}
		}
	}
	return false
}

func osvAPIInRange(events []map[string]string, v *semver.Version) bool {
	type event struct {
		kind string
		at   *semver.Version // nil for introduced "0"
	}
	var evs []event
	for _, e := range events {
		for kind, at := range e {
			if kind == "introduced" && at == "0" {
				evs = append(evs, event{kind: kind})
				continue
			}
			sv, err := semver.StrictNewVersion(at)
			if err != nil {
				continue
			}
			evs = append(evs, event{kind: kind, at: sv})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		switch {
		case a.at == nil && b.at == nil:
			return 0
		case a.at == nil:
			return -1
		case b.at == nil:
			return 1
		}
		return a.at.Compare(b.at)
	})
	affected := false
	for _, e := range evs {
		switch e.kind {
		case "introduced":
			if e.at == nil || !v.LessThan(e.at) {
				affected = true
			}
		case "fixed":
			if !v.LessThan(e.at) {
				affected = false
			}
		case "last_affected":
			if v.GreaterThan(e.at) {
				affected = false
			}
		}
	}
	return affected
}

// osvOfflineDB writes osv-scanner's local database layout in a temporary
// directory: <dir>/osv-scalibr/npm/all.zip, a zip of one OSV JSON file per
// record at its root, as the osv-vulnerabilities bucket serves it.
func osvOfflineDB(t *testing.T, records map[string][]byte, mtime time.Time) string {
	t.Helper()
	dir := t.TempDir()
	p := osvOfflineZip(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range records {
			if !yield(id) {
				return
			}
		}
	}) {
		w, err := zw.Create(id + ".json")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(records[id])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return dir
}

// osvMemCache is an in-memory Cache that counts reads and writes.
type osvMemCache struct {
	mu      sync.Mutex
	entries map[string]osvMemEntry
	gets    int
	puts    int
}

type osvMemEntry struct {
	value    []byte
	storedAt time.Time
	ttl      time.Duration
}

func newOSVMemCache() *osvMemCache { return &osvMemCache{entries: map[string]osvMemEntry{}} }

func (c *osvMemCache) Get(_ context.Context, namespace, key string) ([]byte, time.Time, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	e, ok := c.entries[namespace+"\x00"+key]
	if !ok || time.Since(e.storedAt) > e.ttl {
		return nil, time.Time{}, false, nil
	}
	return e.value, e.storedAt, true, nil
}

func (c *osvMemCache) Put(_ context.Context, namespace, key string, value []byte, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.puts++
	c.entries[namespace+"\x00"+key] = osvMemEntry{value: value, storedAt: time.Now(), ttl: ttl}
	return nil
}
