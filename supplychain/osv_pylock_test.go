package supplychain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// pylock.toml files under testdata/osv/pylock, written by uv 0.13.9's
// `uv pip compile req.in --python-version 3.11 -o pylock.toml` (see the
// README there).
const (
	pylockRequests = "requests-2.19.0"            // 5 packages
	pylockTime     = "mcp-server-time-2026.10.19" // 31 packages
)

func pylock(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "osv", "pylock", name+".pylock.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// osvWantRequests is what the recorded PyPI advisories say of requests
// 2.19.0's tree: three advisories on requests itself (GHSA-j8r2 and its
// PYSEC twin PYSEC-2023-74 are one flaw, reported by both databases, as
// osv.dev answers), and one on urllib3 1.23, which requests 2.19.0 pins
// below 1.24.
func osvWantRequests(name string) []evidence.Vulnerability {
	return []evidence.Vulnerability{
		{
			ID: "GHSA-j8r2-6x86-q33q", Aliases: []string{"CVE-2023-32681", "PYSEC-2023-74"},
			Summary: "Unintended leak of Proxy-Authorization header in requests",
			Score:   6.1, Severity: "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:C/C:H/I:N/A:N",
			Package: name, Version: "2.19.0", Direct: true, Target: true, Fixed: []string{"2.31.0"},
		},
		{
			ID: "GHSA-x84v-xcm2-53pg", Aliases: []string{"CVE-2018-18074", "PYSEC-2018-28"},
			Summary: "Insufficiently Protected Credentials in Requests",
			Score:   7.5, Severity: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
			Package: name, Version: "2.19.0", Direct: true, Target: true, Fixed: []string{"2.20.0"},
		},
		{
			// No severity in the PYSEC record and no database rating; the
			// GIT range's fixed commit is not a version to upgrade to.
			ID: "PYSEC-2023-74", Aliases: []string{"CVE-2023-32681", "GHSA-j8r2-6x86-q33q"},
			Package: "requests", Version: "2.19.0", Direct: true, Target: true, Fixed: []string{"2.31.0"},
		},
		{
			// In the tree: the lock has no graph, so Direct is false.
			ID: "GHSA-mh33-7rrq-662w", Aliases: []string{"CVE-2019-11324"},
			Summary: "Improper Certificate Validation in urllib3",
			Score:   7.5, Severity: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
			Package: "urllib3", Version: "1.23", Fixed: []string{"1.24.2"},
		},
	}
}

var pylockFindings = []struct {
	name     string
	lock     func(t *testing.T) []byte
	target   string
	packages int
	want     []evidence.Vulnerability
}{
	{
		name: "vulnerable_target_and_tree", lock: func(t *testing.T) []byte { return pylock(t, pylockRequests) },
		target: "requests", packages: 5, want: osvWantRequests("requests"),
	},
	{
		// The lock and the target spell the name otherwise: OSV and the
		// roles compare PEP 503 names, and the evidence names the package
		// in that form.
		name: "names_compared_in_pep503_form", target: "Requests", packages: 5, want: osvWantRequests("requests"),
		lock: func(t *testing.T) []byte {
			return bytes.Replace(pylock(t, pylockRequests), []byte(`name = "requests"`), []byte(`name = "Requests"`), 1)
		},
	},
	{
		// A current MCP server's tree, none of whose releases the recorded
		// advisories name: nothing found among them.
		name: "mcp_server_tree_without_recorded_advisories", lock: func(t *testing.T) []byte { return pylock(t, pylockTime) },
		target: "mcp_server.time", packages: 31, want: []evidence.Vulnerability{},
	},
}

func TestOSV_pylock(t *testing.T) {
	for _, tc := range pylockFindings {
		t.Run(tc.name, func(t *testing.T) {
			api := newOSVAPI(t)
			got, fetch, err := NewOSV(osvTestOptions(api.URL())).Scan(t.Context(), tc.lock(t), tc.target)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			want := &evidence.OSVResult{Source: "api", Packages: tc.packages, Vulnerabilities: tc.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if fetch.Endpoint != api.URL() || fetch.Cached {
				t.Errorf("fetch = %+v", fetch)
			}
			if n := api.Batches(); n != 1 {
				t.Errorf("querybatch requests = %d, want 1", n)
			}
		})
	}
}

func TestOSV_pylock_offline_db(t *testing.T) {
	mtime := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	dir := t.TempDir()
	if err := supplytest.WriteOfflineDB(dir, nil, mtime); err != nil {
		t.Fatal(err)
	}
	for _, tc := range pylockFindings {
		t.Run(tc.name, func(t *testing.T) {
			got, fetch, err := NewOSV(OSVOptions{OfflineDB: dir}).Scan(t.Context(), tc.lock(t), tc.target)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			want := &evidence.OSVResult{Source: "offline-db", Packages: tc.packages, Vulnerabilities: tc.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if !fetch.FetchedAt.Equal(mtime) {
				t.Errorf("fetched at %v, want the PyPI database's mtime %v", fetch.FetchedAt, mtime)
			}
		})
	}
	t.Run("only_an_npm_database_is_our_error", func(t *testing.T) {
		// A database directory holding npm's zip only: the PyPI tree
		// cannot be matched, which must not read as "no advisories".
		npmOnly := t.TempDir()
		recs, err := supplytest.OSVRecords()
		if err != nil {
			t.Fatal(err)
		}
		if err := supplytest.WriteOfflineDB(npmOnly, map[string][]byte{"MAL-2025-47604": recs["MAL-2025-47604"]}, mtime); err != nil {
			t.Fatal(err)
		}
		got, _, err := NewOSV(OSVOptions{OfflineDB: npmOnly}).Scan(t.Context(), pylock(t, pylockRequests), "requests")
		if err == nil || got != nil || errors.Is(err, thirdparty.ErrUnavailable) || errors.Is(err, ErrNotApplicable) {
			t.Fatalf("Scan = %+v, %v; want our own error", got, err)
		}
		if want := filepath.Join("osv-scalibr", "PyPI", "all.zip"); !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("error %q does not name %s", err, want)
		}
	})
}

func TestOSV_pylock_inputs(t *testing.T) {
	dirTarget := []byte(`lock-version = "1.0"
created-by = "uv"

[[packages]]
name = "local-mcp"
directory = { path = "../local-mcp", editable = false }

[[packages]]
name = "anyio"
version = "4.16.0"
`)
	tests := []struct {
		name   string
		lock   []byte
		target string
		want   error // ErrNotApplicable, or nil for our own error
	}{
		{name: "target_from_a_directory_has_no_version", lock: dirTarget, target: "local-mcp", want: ErrNotApplicable},
		{name: "no_packages", lock: []byte("lock-version = \"1.0\"\ncreated-by = \"uv\"\n"), target: "requests", want: ErrNotApplicable},
		{name: "target_not_in_the_lock", lock: pylock(t, pylockRequests), target: "httpx"},
		{name: "unknown_lock_version", lock: bytes.Replace(pylock(t, pylockRequests), []byte(`lock-version = "1.0"`), []byte(`lock-version = "2.0"`), 1), target: "requests"},
		{name: "neither_json_nor_pylock", lock: []byte("requests==2.19.0\n"), target: "requests"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newOSVAPI(t)
			got, _, err := NewOSV(osvTestOptions(api.URL())).Scan(t.Context(), tc.lock, tc.target)
			if got != nil || err == nil {
				t.Fatalf("Scan = %+v, %v; want an error", got, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if tc.want == nil && (errors.Is(err, ErrNotApplicable) || errors.Is(err, thirdparty.ErrUnavailable)) {
				t.Errorf("err = %v, want our own error", err)
			}
			if n := api.Requests(); n != 0 {
				t.Errorf("requests = %d, want none", n)
			}
		})
	}
	t.Run("reason_names_the_source", func(t *testing.T) {
		_, _, err := NewOSV(osvTestOptions("http://127.0.0.1:1")).Scan(t.Context(), dirTarget, "local_mcp")
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("../local-mcp")) {
			t.Errorf("reason %v does not name the directory", err)
		}
	})
}

func TestDetectLockfile(t *testing.T) {
	for name, tc := range map[string]struct {
		in   []byte
		want lockKind
	}{
		"npm":          {in: osvLock(t, osvLockFS2025328), want: lockNPM},
		"pylock":       {in: pylock(t, pylockRequests), want: lockPylock},
		"pylock_bom":   {in: append([]byte("\xef\xbb\xbf"), pylock(t, pylockTime)...), want: lockPylock},
		"toml_no_lock": {in: []byte("[project]\nname = \"x\"\n"), want: lockUnknown},
		"requirements": {in: []byte("requests==2.19.0\n"), want: lockUnknown},
		"blank":        {in: []byte("  \n"), want: lockUnknown},
	} {
		t.Run(name, func(t *testing.T) {
			if got := detectLockfile(tc.in); got != tc.want {
				t.Errorf("detectLockfile = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOSV_cache_keys_by_ecosystem(t *testing.T) {
	// The same name@version list in npm and PyPI must not share an entry.
	api := newOSVAPI(t)
	c := newOSVMemCache()
	opts := osvTestOptions(api.URL())
	opts.Cache, opts.TTL = c, time.Hour
	if _, _, err := NewOSV(opts).Scan(t.Context(), pylock(t, pylockRequests), "requests"); err != nil {
		t.Fatal(err)
	}
	if _, f, err := NewOSV(opts).Scan(t.Context(), pylock(t, pylockRequests), "requests"); err != nil || !f.Cached {
		t.Fatalf("second pylock scan: cached %v, %v; want a hit", f.Cached, err)
	}
	keys := []string{"certifi@2026.10.19.post1", "chardet@3.0.4", "idna@2.7", "requests@2.19.0", "urllib3@1.23"}
	npmKey := thirdparty.CacheKey(append([]string{osvCacheVersion, api.URL()}, keys...)...)
	if _, _, ok, _ := c.Get(t.Context(), "osv", npmKey); ok {
		t.Error("the PyPI answer is stored under the key an npm tree of the same names would use")
	}
}
