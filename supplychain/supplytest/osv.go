package supplytest

import (
	"archive/zip"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
)

// OSV is a fake OSV API on loopback. It serves what osv-scanner's client
// (osv.dev/bindings/go/osvdev, as osv-scalibr's vulnmatch/osvdev enricher
// drives it) calls: POST /v1/querybatch, answering each query with the ids
// and modification times of the matching records, and GET /v1/vulns/{id}
// with the full record, from supplychain/testdata/osv/records. It matches
// versions on its own (Masterminds semver over the records' SEMVER and
// ECOSYSTEM ranges), not with osv-scalibr's matcher, so the API path and
// the offline database path are checked against two independent
// implementations.
type OSV struct {
	s       *server
	records map[string][]byte
	parsed  map[string]osvRecord
	ids     []string // sorted

	mu       sync.Mutex
	pageSize int
	batches  int
}

type osvRecord struct {
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

// OSVRecords returns the recorded OSV records by id, read from
// supplychain/testdata/osv/records.
func OSVRecords() (map[string][]byte, error) {
	dir, err := RecordedDir()
	if err != nil {
		return nil, err
	}
	fsys := os.DirFS(filepath.Join(dir, "osv", "records"))
	files, err := fs.Glob(fsys, "*.json")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("supplytest: no OSV records in %s: %w", filepath.Join(dir, "osv", "records"), err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("supplytest: OSV record: %w", err)
		}
		out[strings.TrimSuffix(f, ".json")] = b
	}
	return out, nil
}

// NewOSV starts a fake OSV API serving the recorded records. It panics when
// they cannot be read.
func NewOSV() *OSV {
	records, err := OSVRecords()
	if err != nil {
		panic(err)
	}
	o := &OSV{records: records, parsed: map[string]osvRecord{}}
	for id, b := range records {
		var r osvRecord
		if err := json.Unmarshal(b, &r); err != nil {
			panic(fmt.Errorf("supplytest: OSV record %s: %w", id, err))
		}
		if r.ID != id {
			panic(fmt.Errorf("supplytest: OSV record file %s.json holds id %s", id, r.ID))
		}
		o.parsed[id] = r
	}
	o.ids = slices.Sorted(maps.Keys(records))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/querybatch", o.querybatch)
	mux.HandleFunc("GET /v1/vulns/{id}", o.vuln)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { osvError(w, http.StatusNotFound) })
	o.s = newServer(api{
		observe: func(r *http.Request, _ []byte) {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/querybatch" {
				o.mu.Lock()
				o.batches++
				o.mu.Unlock()
			}
		},
		fail:    func(w http.ResponseWriter, _ *http.Request, f Fault) { osvError(w, f.Status) },
		headers: func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Content-Type", "application/json") },
		serve:   mux,
	})
	return o
}

// URL returns the API base URL (supplychain.OSVOptions.Endpoint).
func (o *OSV) URL() string { return o.s.url() }

// Close stops the fake; it then refuses connections. It is idempotent.
func (o *OSV) Close() { o.s.close() }

// Requests returns how many requests the fake received, faulted or not.
func (o *OSV) Requests() int { return o.s.count() }

// Batches returns how many POST /v1/querybatch requests it received.
func (o *OSV) Batches() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.batches
}

// SetFault sets how the next requests misbehave; Fault{} ends it.
func (o *OSV) SetFault(f Fault) { o.s.setFault(f) }

// Intercept offers every request to i first; nil removes it.
func (o *OSV) Intercept(i Interceptor) { o.s.setIntercept(i) }

// SetPageSize pages each query's result by n vulnerabilities, with
// next_page_token, as the real API does for long lists; 0 turns paging
// off.
func (o *OSV) SetPageSize(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pageSize = n
}

// osvError writes the OSV API's answer for status: Google's HTML page for
// a 503 from its front end, else the API's JSON error with its gRPC code.
func osvError(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("<html><body><h1>503 Service Unavailable</h1></body></html>"))
		return
	}
	code, msg := 2, http.StatusText(status) // UNKNOWN
	switch status {
	case http.StatusBadRequest:
		code, msg = 3, "Invalid query."
	case http.StatusUnauthorized:
		code = 16
	case http.StatusForbidden:
		code = 7
	case http.StatusNotFound:
		code, msg = 5, "Bug not found."
	case http.StatusTooManyRequests:
		code, msg = 8, "Quota exceeded."
	case http.StatusInternalServerError:
		code = 13
	case http.StatusGatewayTimeout:
		code = 4
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"code":%d,"message":%q}`, code, msg)
}

type osvQuery struct {
	Package struct {
		Name      string `json:"name"`
		Ecosystem string `json:"ecosystem"`
	} `json:"package"`
	Version        string `json:"version"`
	PageToken      string `json:"page_token"`
	PageTokenCamel string `json:"pageToken"`
}

func (o *OSV) querybatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Queries []osvQuery `json:"queries"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		osvError(w, http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	pageSize := o.pageSize
	o.mu.Unlock()
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
		for _, id := range o.ids {
			if rec := o.parsed[id]; q.Package.Ecosystem == "npm" && osvAffects(rec, q.Package.Name, q.Version) {
				refs = append(refs, vulnRef{ID: rec.ID, Modified: rec.Modified})
			}
		}
		res := result{Vulns: refs}
		if pageSize > 0 {
			start, _ := strconv.Atoi(cmp.Or(q.PageToken, q.PageTokenCamel))
			end := min(start+pageSize, len(refs))
			res.Vulns = refs[min(start, len(refs)):end]
			if end < len(refs) {
				res.NextPageToken = strconv.Itoa(end)
			}
		}
		results = append(results, res)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
}

func (o *OSV) vuln(w http.ResponseWriter, r *http.Request) {
	b, ok := o.records[r.PathValue("id")]
	if !ok {
		osvError(w, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// osvAffects evaluates a record for one npm package version as the OSV
// schema describes: the listed versions, or a range's events in version
// order, where introduced opens, fixed closes at its version and
// last_affected closes after it.
func osvAffects(rec osvRecord, name, version string) bool {
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
			if (rg.Type == "SEMVER" || rg.Type == "ECOSYSTEM") && osvInRange(rg.Events, v) {
				return true
			}
		}
	}
	return false
}

func osvInRange(events []map[string]string, v *semver.Version) bool {
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

// OfflineDBZip is where osv-scanner's local database keeps the npm
// records below its directory.
const OfflineDBZip = "osv-scalibr/npm/all.zip"

// WriteOfflineDB writes osv-scanner's local database layout below dir:
// dir/osv-scalibr/npm/all.zip, a zip of one OSV JSON file per record at its
// root, as the osv-vulnerabilities bucket serves it, modified at mtime (the
// time the client reports as fetched). Nil records means the recorded ones
// (OSVRecords).
func WriteOfflineDB(dir string, records map[string][]byte, mtime time.Time) (err error) {
	if records == nil {
		if records, err = OSVRecords(); err != nil {
			return err
		}
	}
	p := filepath.Join(dir, filepath.FromSlash(OfflineDBZip))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("supplytest: offline db: %w", err)
	}
	f, err := os.Create(p)
	if err != nil {
		return fmt.Errorf("supplytest: offline db: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("supplytest: offline db: %w", cerr)
		}
		if err == nil {
			err = os.Chtimes(p, mtime, mtime)
		}
	}()
	zw := zip.NewWriter(f)
	for _, id := range slices.Sorted(maps.Keys(records)) {
		w, err := zw.Create(id + ".json")
		if err != nil {
			return fmt.Errorf("supplytest: offline db: %w", err)
		}
		if _, err := w.Write(records[id]); err != nil {
			return fmt.Errorf("supplytest: offline db: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("supplytest: offline db: %w", err)
	}
	return nil
}
