package supplytest

import (
	"archive/zip"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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
			if rec := o.parsed[id]; osvAffects(rec, q.Package.Ecosystem, q.Package.Name, q.Version) {
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

// osvAffects evaluates a record for one package version of an ecosystem
// (npm or PyPI) as the OSV schema describes: the listed versions, or a
// range's events in version order, where introduced opens, fixed closes
// at its version and last_affected closes after it. PyPI names are
// compared in PEP 503 form, as osv.dev does.
func osvAffects(rec osvRecord, eco, name, version string) bool {
	if rec.Withdrawn != "" {
		return false
	}
	var parse func(string) (osvVersion, bool)
	switch eco {
	case "npm":
		parse = parseSemver
	case "PyPI":
		parse = parsePEP440
		name = pep503(name)
	default:
		return false
	}
	v, ok := parse(version)
	if !ok {
		return false
	}
	for _, af := range rec.Affected {
		recName := af.Package.Name
		if eco == "PyPI" {
			recName = pep503(recName)
		}
		if af.Package.Ecosystem != eco || recName != name {
			continue
		}
		if slices.Contains(af.Versions, version) {
			return true
		}
		for _, rg := range af.Ranges {
			if (rg.Type == "SEMVER" || rg.Type == "ECOSYSTEM") && osvInRange(rg.Events, v, parse) {
				return true
			}
		}
	}
	return false
}

// osvVersion is a parsed version of one ecosystem.
type osvVersion interface {
	compare(osvVersion) int
}

type semverVersion struct{ v *semver.Version }

func (a semverVersion) compare(b osvVersion) int { return a.v.Compare(b.(semverVersion).v) }

func parseSemver(s string) (osvVersion, bool) {
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, false
	}
	return semverVersion{v}, true
}

// pep440Version is the part of PEP 440 the records need: the release
// segments, one pre-release (a, b, rc), a post-release and a development
// release. It is written here, not taken from the supplychain package, so
// the fake and the client do not share a version comparison.
type pep440Version struct {
	release        []int
	preRank, preN  int // preRank: 0 a, 1 b, 2 rc, 3 none
	post, dev      int // -1 when absent
	devOnlyRelease bool
}

var pep440Re = regexp.MustCompile(`^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc)(\d*))?(?:[-_.]?post(\d*))?(?:[-_.]?dev(\d*))?$`)

func parsePEP440(s string) (osvVersion, bool) {
	m := pep440Re.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return nil, false
	}
	v := pep440Version{preRank: 3, post: -1, dev: -1}
	for _, p := range strings.Split(m[1], ".") {
		n, _ := strconv.Atoi(p)
		v.release = append(v.release, n)
	}
	if m[2] != "" {
		v.preRank = map[string]int{"a": 0, "b": 1, "rc": 2}[m[2]]
		v.preN, _ = strconv.Atoi(m[3])
	}
	if strings.Contains(s, "post") {
		v.post, _ = strconv.Atoi(m[4])
	}
	if strings.Contains(s, "dev") {
		v.dev, _ = strconv.Atoi(m[5])
		// 1.0.dev1 sorts before 1.0a1.
		v.devOnlyRelease = m[2] == "" && m[4] == ""
	}
	return v, true
}

func (a pep440Version) compare(o osvVersion) int {
	b := o.(pep440Version)
	for i := range max(len(a.release), len(b.release)) {
		x, y := 0, 0
		if i < len(a.release) {
			x = a.release[i]
		}
		if i < len(b.release) {
			y = b.release[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	rank := func(v pep440Version) int {
		if v.devOnlyRelease {
			return -1
		}
		return v.preRank
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.preN, b.preN); c != 0 {
		return c
	}
	if c := cmp.Compare(a.post, b.post); c != 0 {
		return c
	}
	// No dev segment sorts after any dev segment.
	da, db := a.dev, b.dev
	if da < 0 {
		da = math.MaxInt
	}
	if db < 0 {
		db = math.MaxInt
	}
	return cmp.Compare(da, db)
}

var pep503Runs = regexp.MustCompile(`[-_.]+`)

// pep503 is a project name's normal form.
func pep503(name string) string {
	return strings.ToLower(pep503Runs.ReplaceAllString(name, "-"))
}

func osvInRange(events []map[string]string, v osvVersion, parse func(string) (osvVersion, bool)) bool {
	type event struct {
		kind string
		at   osvVersion // nil for introduced "0"
	}
	var evs []event
	for _, e := range events {
		for kind, at := range e {
			if kind == "introduced" && at == "0" {
				evs = append(evs, event{kind: kind})
				continue
			}
			pv, ok := parse(at)
			if !ok {
				continue
			}
			evs = append(evs, event{kind: kind, at: pv})
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
		return a.at.compare(b.at)
	})
	affected := false
	for _, e := range evs {
		switch e.kind {
		case "introduced":
			if e.at == nil || v.compare(e.at) >= 0 {
				affected = true
			}
		case "fixed":
			if v.compare(e.at) >= 0 {
				affected = false
			}
		case "last_affected":
			if v.compare(e.at) > 0 {
				affected = false
			}
		}
	}
	return affected
}

// OfflineDBZip is where osv-scanner's local database keeps the npm
// records below its directory; OfflineDBZipFor names any ecosystem's.
const OfflineDBZip = "osv-scalibr/npm/all.zip"

// OfflineDBZipFor is where osv-scanner's local database keeps the records
// of an OSV ecosystem ("npm", "PyPI") below its directory.
func OfflineDBZipFor(ecosystem string) string {
	return "osv-scalibr/" + ecosystem + "/all.zip"
}

// WriteOfflineDB writes osv-scanner's local database layout below dir:
// one dir/osv-scalibr/<ecosystem>/all.zip per ecosystem the records'
// affected entries name (npm and PyPI for the recorded ones), each a zip
// of one OSV JSON file per record at its root, as osv.dev's
// osv-vulnerabilities bucket serves them (a record affecting two
// ecosystems is in both), modified at mtime (the time the client reports
// as fetched). The npm zip is always written, empty if no record names
// npm. Nil records means the recorded ones (OSVRecords).
func WriteOfflineDB(dir string, records map[string][]byte, mtime time.Time) error {
	if records == nil {
		var err error
		if records, err = OSVRecords(); err != nil {
			return err
		}
	}
	byEco := map[string]map[string][]byte{"npm": {}}
	for id, b := range records {
		var r osvRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("supplytest: offline db: record %s: %w", id, err)
		}
		ecos := map[string]bool{}
		for _, af := range r.Affected {
			ecos[af.Package.Ecosystem] = true
		}
		if len(ecos) == 0 {
			ecos["npm"] = true
		}
		for eco := range ecos {
			if byEco[eco] == nil {
				byEco[eco] = map[string][]byte{}
			}
			byEco[eco][id] = b
		}
	}
	for _, eco := range slices.Sorted(maps.Keys(byEco)) {
		if err := writeOfflineZip(filepath.Join(dir, filepath.FromSlash(OfflineDBZipFor(eco))), byEco[eco], mtime); err != nil {
			return err
		}
	}
	return nil
}

func writeOfflineZip(p string, records map[string][]byte, mtime time.Time) (err error) {
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
