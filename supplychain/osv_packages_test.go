package supplychain

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// osvDebianRecord is a Debian security advisory in the shape osv.dev
// serves Debian's records: the source package (openssl) in "Debian:12",
// an ECOSYSTEM range and the enumerated affected versions, no CVSS.
const osvDebianRecord = `{
  "id": "DSA-5764-1",
  "summary": "openssl - security update",
  "modified": "2024-09-04T05:11:27.813411Z",
  "published": "2024-09-03T00:00:00Z",
  "upstream": ["CVE-2024-5535", "CVE-2024-6119"],
  "affected": [{
    "package": {"ecosystem": "Debian:12", "name": "openssl", "purl": "pkg:deb/debian/openssl?arch=source"},
    "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "3.0.14-1~deb12u2"}]}],
    "versions": ["3.0.9-1", "3.0.11-1~deb12u1", "3.0.11-1~deb12u2", "3.0.13-1~deb12u1", "3.0.14-1~deb12u1"]
  }],
  "references": [{"type": "ADVISORY", "url": "https://www.debian.org/security/2024/dsa-5764"}]
}`

// osvImagePackages are packages of a Debian 12 image with an npm server
// in it, as ecosystem/oci's Inventory lists them.
var osvImagePackages = []PackageRef{
	{Ecosystem: "Debian:12", Name: "libssl3", Version: "3.0.11-1~deb12u2", Purl: "pkg:deb/debian/libssl3@3.0.11-1~deb12u2?arch=amd64&distro=bookworm&source=openssl"},
	{Ecosystem: "Debian:12", Name: "base-files", Version: "12.4+deb12u6", Purl: "pkg:deb/debian/base-files@12.4%2Bdeb12u6?arch=amd64&distro=bookworm"},
	{Ecosystem: "npm", Name: "postmark-mcp", Version: "1.0.16", Purl: "pkg:npm/postmark-mcp@1.0.16"},
	// The same package found twice (package.json and package-lock.json)
	// is one question.
	{Ecosystem: "npm", Name: "postmark-mcp", Version: "1.0.16", Purl: "pkg:npm/postmark-mcp@1.0.16"},
}

func osvWantImage(target bool) []evidence.Vulnerability {
	return []evidence.Vulnerability{
		{
			ID: "DSA-5764-1", Aliases: []string{}, Summary: "openssl - security update",
			Package: "libssl3", Version: "3.0.11-1~deb12u2", Fixed: []string{"3.0.14-1~deb12u2"},
		},
		{
			ID: "MAL-2025-47604", Aliases: []string{}, Summary: "Malicious code in postmark-mcp (npm)",
			Package: "postmark-mcp", Version: "1.0.16", Direct: target, Target: target, Fixed: []string{}, Malware: true,
		},
	}
}

// debianIntercept makes supplytest's fake OSV, which matches npm and PyPI
// only, answer for Debian too: a batch's Debian queries are matched
// against osvDebianRecord by its enumerated versions, the rest are asked
// of the fake itself, and the answers are put back in the batch's order.
// The Debian queries seen are recorded.
type debianIntercept struct {
	url   string
	mu    sync.Mutex
	asked []string
}

func (d *debianIntercept) intercept(w http.ResponseWriter, r *http.Request, _ int) bool {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/vulns/DSA-5764-1" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, osvDebianRecord)
		return true
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/querybatch" {
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var batch struct {
		Queries []json.RawMessage `json:"queries"`
	}
	if json.Unmarshal(body, &batch) != nil {
		return false
	}
	type query struct {
		Package struct{ Name, Ecosystem string } `json:"package"`
		Version string                           `json:"version"`
	}
	results := make([]json.RawMessage, len(batch.Queries))
	var rest []json.RawMessage
	var restAt []int
	for i, raw := range batch.Queries {
		var q query
		if json.Unmarshal(raw, &q) != nil || q.Package.Ecosystem != "Debian:12" {
			rest, restAt = append(rest, raw), append(restAt, i)
			continue
		}
		d.mu.Lock()
		d.asked = append(d.asked, q.Package.Name+"@"+q.Version)
		d.mu.Unlock()
		results[i] = json.RawMessage(`{}`)
		if q.Package.Name == "openssl" && slices.Contains([]string{"3.0.9-1", "3.0.11-1~deb12u1", "3.0.11-1~deb12u2", "3.0.13-1~deb12u1", "3.0.14-1~deb12u1"}, q.Version) {
			results[i] = json.RawMessage(`{"vulns":[{"id":"DSA-5764-1","modified":"2024-09-04T05:11:27.813411Z"}]}`)
		}
	}
	if len(restAt) == len(batch.Queries) {
		return false
	}
	if len(rest) > 0 {
		b, _ := json.Marshal(map[string]any{"queries": rest})
		resp, err := http.Post(d.url+"/v1/querybatch", "application/json", bytes.NewReader(b))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return true
		}
		defer resp.Body.Close()
		var ans struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || len(ans.Results) != len(rest) {
			http.Error(w, "bad answer from the fake", http.StatusBadGateway)
			return true
		}
		for j, i := range restAt {
			results[i] = ans.Results[j]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
	return true
}

func TestOSVScanPackages(t *testing.T) {
	api := newOSVAPI(t)
	d := &debianIntercept{url: api.URL()}
	api.Intercept(d.intercept)
	o := NewOSV(osvTestOptions(api.URL()))

	t.Run("debian_and_npm", func(t *testing.T) {
		res, fetch, err := o.ScanPackages(context.Background(), osvImagePackages, "")
		if err != nil {
			t.Fatal(err)
		}
		want := &evidence.OSVResult{Source: "api", Packages: 3, Vulnerabilities: osvWantImage(false)}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("ScanPackages (-want +got):\n%s", diff)
		}
		if fetch.Endpoint != api.URL() || fetch.FetchedAt.IsZero() || fetch.Cached {
			t.Errorf("fetch = %+v", fetch)
		}
		d.mu.Lock()
		asked := slices.Sorted(slices.Values(d.asked))
		d.mu.Unlock()
		// A Debian package is asked about by its source package, as
		// osv-scanner asks.
		if want := []string{"base-files@12.4+deb12u6", "openssl@3.0.11-1~deb12u2"}; !cmp.Equal(want, asked) {
			t.Errorf("Debian queries = %v, want %v", asked, want)
		}
	})
	t.Run("target_by_purl", func(t *testing.T) {
		res, _, err := o.ScanPackages(context.Background(), osvImagePackages, "pkg:npm/postmark-mcp@1.0.16")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(osvWantImage(true), res.Vulnerabilities); diff != "" {
			t.Errorf("ScanPackages (-want +got):\n%s", diff)
		}
	})
	t.Run("pypi_target_any_spelling", func(t *testing.T) {
		pkgs := []PackageRef{{Ecosystem: "PyPI", Name: "Requests", Version: "2.30.0", Purl: "pkg:pypi/requests@2.30.0"}}
		res, _, err := o.ScanPackages(context.Background(), pkgs, "Requests@2.30.0")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range res.Vulnerabilities {
			got = append(got, fmt.Sprintf("%s %s@%s target=%v direct=%v", v.ID, v.Package, v.Version, v.Target, v.Direct))
		}
		want := []string{
			"GHSA-j8r2-6x86-q33q requests@2.30.0 target=true direct=true",
			"PYSEC-2023-74 requests@2.30.0 target=true direct=true",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ScanPackages (-want +got):\n%s", diff)
		}
	})
	t.Run("upstream_503_is_unavailable", func(t *testing.T) {
		api.SetFault(supplytest.Fault{Status: http.StatusServiceUnavailable, Times: osvTestRetryBudget})
		defer api.SetFault(supplytest.Fault{})
		api.Intercept(nil)
		defer api.Intercept(d.intercept)
		_, _, err := o.ScanPackages(context.Background(), osvImagePackages[2:], "")
		if !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Errorf("error = %v, want thirdparty.ErrUnavailable", err)
		}
	})
}

func TestOSVScanPackagesOffline(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	if err := supplytest.WriteOfflineDB(dir, nil, mtime); err != nil {
		t.Fatal(err)
	}
	// osv-scanner's local database keeps Debian's records of every
	// release in one Debian/all.zip.
	writeOSVZip(t, filepath.Join(dir, "osv-scalibr", "Debian", "all.zip"), map[string]string{"DSA-5764-1.json": osvDebianRecord}, mtime.Add(-time.Hour))
	o := NewOSV(OSVOptions{OfflineDB: dir})
	res, fetch, err := o.ScanPackages(context.Background(), osvImagePackages, "")
	if err != nil {
		t.Fatal(err)
	}
	want := &evidence.OSVResult{Source: "offline-db", Packages: 3, Vulnerabilities: osvWantImage(false)}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("ScanPackages offline (-want +got):\n%s", diff)
	}
	if !fetch.FetchedAt.Equal(mtime.Add(-time.Hour)) {
		t.Errorf("FetchedAt = %v, want the oldest database's time %v", fetch.FetchedAt, mtime.Add(-time.Hour))
	}

	// Without Debian's database, the answer is refused, not "no advisories".
	if err := os.Remove(filepath.Join(dir, "osv-scalibr", "Debian", "all.zip")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.ScanPackages(context.Background(), osvImagePackages, ""); err == nil {
		t.Error("ScanPackages without the Debian database gave an answer")
	}
}

func TestOSVScanPackagesRefuses(t *testing.T) {
	o := NewOSV(OSVOptions{OfflineDB: t.TempDir()})
	if _, _, err := o.ScanPackages(context.Background(), nil, ""); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("no packages: error %v, want ErrNotApplicable", err)
	}
	for _, p := range []PackageRef{
		{Ecosystem: "Red Hat:9", Name: "openssl-libs", Version: "3.0.7-27.el9", Purl: "pkg:rpm/redhat/openssl-libs@3.0.7-27.el9"},
		{Ecosystem: "Debian:12", Name: "libssl3", Purl: "pkg:deb/debian/libssl3"},
		{Ecosystem: "Debian:12", Name: "libssl3", Version: "3.0.11-1~deb12u2", Purl: "not a purl"},
	} {
		if _, _, err := o.ScanPackages(context.Background(), []PackageRef{p}, ""); err == nil || errors.Is(err, ErrNotApplicable) {
			t.Errorf("ScanPackages(%+v): error %v, want a refusal", p, err)
		}
	}
}

func writeOSVZip(t *testing.T, p string, files map[string]string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestOSVScanPackagesCache: a second question about the same packages is
// answered from the cache, with no request, and the
// same answer.
func TestOSVScanPackagesCache(t *testing.T) {
	api := newOSVAPI(t)
	d := &debianIntercept{url: api.URL()}
	api.Intercept(d.intercept)
	opts := osvTestOptions(api.URL())
	opts.Cache, opts.TTL = newOSVMemCache(), time.Hour
	first, f1, err := NewOSV(opts).ScanPackages(t.Context(), osvImagePackages, "")
	if err != nil || f1.Cached {
		t.Fatalf("first scan: cached %v, %v; want a miss", f1.Cached, err)
	}
	n := api.Requests()
	second, f2, err := NewOSV(opts).ScanPackages(t.Context(), osvImagePackages, "")
	if err != nil || !f2.Cached {
		t.Fatalf("second scan: cached %v, %v; want a hit", f2.Cached, err)
	}
	if api.Requests() != n {
		t.Errorf("the cached answer made %d requests", api.Requests()-n)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("cached answer (-first +second):\n%s", diff)
	}
}
