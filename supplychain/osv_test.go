package supplychain

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	osvpb "github.com/ossf/osv-schema/bindings/go/osvschema"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// Lockfiles under testdata/osv/lockfiles (see the README there): the
// number of distinct name@version entries each holds, root excluded.
const (
	osvLockFS2025328 = "server-filesystem-2025.3.28" // 56 packages
	osvLockFS202571  = "server-filesystem-2025.7.1"  // 129 packages
	osvLockLauncher  = "mcp-fs-launcher-1.0.0"       // 132 packages
	osvLockPostmark  = "postmark-mcp-1.0.16"         // 96 packages
	// lockfileVersion 1, written by npm 6.14.18.
	osvLockFS2025328v1 = "server-filesystem-2025.3.28.v1" // 55 packages
	osvLockLauncherV1  = "mcp-fs-launcher-1.0.0.v1"       // 131 packages
	// npm workspaces: every workspace is a link from node_modules to its
	// folder.
	osvLockWorkspace   = "acme-mcp-servers-workspace" // 133 packages
	osvLockNestedWS    = "acme-nested-workspaces"     // 5 packages
	osvServerFS        = "@modelcontextprotocol/server-filesystem"
	osvSDK             = "@modelcontextprotocol/sdk"
	osvTestRetryBudget = 3
)

func osvLock(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "osv", "lockfiles", name+".package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newOSVAPI starts supplytest's OSV API for one test.
func newOSVAPI(t *testing.T) *supplytest.OSV {
	t.Helper()
	api := supplytest.NewOSV()
	t.Cleanup(api.Close)
	return api
}

func osvTestOptions(endpoint string) OSVOptions {
	return OSVOptions{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Timeout: 2 * time.Second},
		Retry:      thirdparty.Retry{Attempts: osvTestRetryBudget, Backoff: 5 * time.Millisecond, MaxWait: 50 * time.Millisecond},
	}
}

// The findings each advisory should produce, as published: GitHub's CVSS
// v4 scores (7.3, 7.6, 8.7) and fixed versions.
func osvWantFS(version string, direct, target bool) []evidence.Vulnerability {
	return []evidence.Vulnerability{
		{
			ID: "GHSA-hc55-p739-j48w", Aliases: []string{"CVE-2025-53110"},
			Summary: "@modelcontextprotocol/server-filesystem vulnerability allows for path validation bypass via colliding path prefix",
			Score:   7.3, Severity: "CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:P/VC:N/VI:N/VA:H/SC:H/SI:H/SA:H",
			Package: osvServerFS, Version: version, Direct: direct, Target: target, Fixed: []string{"2025.7.1"},
		},
		{
			ID: "GHSA-q66q-fx2p-7w4m", Aliases: []string{"CVE-2025-53109"},
			Summary: "@modelcontextprotocol/server-filesystem allows for path validation bypass via prefix matching and symlink handling",
			Score:   7.3, Severity: "CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:P/VC:N/VI:N/VA:H/SC:H/SI:H/SA:H",
			Package: osvServerFS, Version: version, Direct: direct, Target: target, Fixed: []string{"2025.7.1"},
		},
	}
}

func osvWantSDK(version string, direct bool) []evidence.Vulnerability {
	return []evidence.Vulnerability{
		{
			ID: "GHSA-8r9q-7v3j-jr4g", Aliases: []string{"CVE-2026-0621"},
			Summary: "Anthropic's MCP TypeScript SDK has a ReDoS vulnerability",
			Score:   8.7, Severity: "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:H/SC:N/SI:N/SA:N",
			Package: osvSDK, Version: version, Direct: direct, Fixed: []string{"1.25.2"},
		},
		{
			ID: "GHSA-w48q-cv73-mx4w", Aliases: []string{"CVE-2025-66414"},
			Summary: "Model Context Protocol (MCP) TypeScript SDK does not enable DNS rebinding protection by default",
			Score:   7.6, Severity: "CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:P/VC:H/VI:H/VA:N/SC:N/SI:N/SA:N",
			Package: osvSDK, Version: version, Direct: direct, Fixed: []string{"1.24.0"},
		},
	}
}

func osvWantPostmark() []evidence.Vulnerability {
	return []evidence.Vulnerability{{
		ID: "MAL-2025-47604", Aliases: []string{}, Summary: "Malicious code in postmark-mcp (npm)",
		Package: "postmark-mcp", Version: "1.0.16", Direct: true, Target: true, Fixed: []string{}, Malware: true,
	}}
}

// osvFindings are the expected answers per lockfile, shared by the API
// and offline database tests.
var osvFindings = []struct {
	name     string
	lock     string
	target   string
	packages int
	want     func() []evidence.Vulnerability
}{
	{
		// The target itself is vulnerable; it pins SDK 0.5.0, a direct
		// dependency with its own advisories.
		name: "vulnerable_server-filesystem_is_the_target", lock: osvLockFS2025328, target: osvServerFS, packages: 56,
		want: func() []evidence.Vulnerability {
			return append(osvWantSDK("0.5.0", true), osvWantFS("2025.3.28", true, true)...)
		},
	},
	{
		// 2025.7.1 is fixed and takes a current SDK: nothing to report.
		name: "patched_server-filesystem_has_no_findings", lock: osvLockFS202571, target: osvServerFS, packages: 129,
		want: func() []evidence.Vulnerability { return []evidence.Vulnerability{} },
	},
	{
		// mcp-fs-launcher depends on a current SDK (1.32.2, top level) and
		// on server-filesystem 2025.3.28, which nests SDK 0.5.0 in its own
		// node_modules: that SDK is transitive although an SDK of the same
		// name is a direct dependency.
		name: "vulnerable_sdk_below_a_direct_dependency_is_transitive", lock: osvLockLauncher, target: "mcp-fs-launcher", packages: 132,
		want: func() []evidence.Vulnerability {
			return append(osvWantSDK("0.5.0", false), osvWantFS("2025.3.28", true, false)...)
		},
	},
	{
		name: "malicious_target_is_malware", lock: osvLockPostmark, target: "postmark-mcp", packages: 96,
		want: osvWantPostmark,
	},
	{
		// The first case's install written by npm 6 (lockfileVersion 1,
		// a nested "dependencies" tree): the same findings.
		name: "lockfile_v1_is_read", lock: osvLockFS2025328v1, target: osvServerFS, packages: 55,
		want: func() []evidence.Vulnerability {
			return append(osvWantSDK("0.5.0", true), osvWantFS("2025.3.28", true, true)...)
		},
	},
	{
		// npm 6's tree of mcp-fs-launcher: server-filesystem's own
		// "dependencies" nest SDK 0.5.0 below it while SDK 1.32.2 is at the
		// top. With server-filesystem as the target, the nested copy is the
		// one it requires, so it is direct.
		name: "lockfile_v1_copy_nested_below_the_target_is_direct", lock: osvLockLauncherV1, target: osvServerFS, packages: 131,
		want: func() []evidence.Vulnerability {
			return append(osvWantSDK("0.5.0", true), osvWantFS("2025.3.28", true, true)...)
		},
	},
	{
		// The target is a workspace: node_modules/@acme/legacy-tools links
		// to packages/legacy-tools, whose own node_modules holds the SDK
		// 0.5.0 it pins; the root's SDK (1.32.2) belongs to the sibling
		// workspace. server-filesystem is the sibling's, so transitive.
		name: "workspace_link_target_resolves_from_its_folder", lock: osvLockWorkspace, target: "@acme/legacy-tools", packages: 133,
		want: func() []evidence.Vulnerability {
			return append(osvWantSDK("0.5.0", true), osvWantFS("2025.3.28", false, false)...)
		},
	},
}

func TestOSV(t *testing.T) {
	for _, tc := range osvFindings {
		t.Run(tc.name, func(t *testing.T) {
			api := newOSVAPI(t)
			before := time.Now().UTC()
			got, fetch, err := NewOSV(osvTestOptions(api.URL())).Scan(t.Context(), osvLock(t, tc.lock), tc.target)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			want := &evidence.OSVResult{Source: "api", Packages: tc.packages, Vulnerabilities: tc.want()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if fetch.Endpoint != api.URL() || fetch.Cached || fetch.Authenticated {
				t.Errorf("fetch = %+v, want endpoint %s, not cached, not authenticated", fetch, api.URL())
			}
			if fetch.FetchedAt.Before(before) || fetch.FetchedAt.After(time.Now()) {
				t.Errorf("fetched at %v, want during the scan", fetch.FetchedAt)
			}
			// One querybatch for the whole tree (fewer than 1000 packages).
			if n := api.Batches(); n != 1 {
				t.Errorf("querybatch requests = %d, want 1", n)
			}
		})
	}
}

func TestOSV_paged_answers_are_followed(t *testing.T) {
	api := newOSVAPI(t)
	api.SetPageSize(1)
	got, _, err := NewOSV(osvTestOptions(api.URL())).Scan(t.Context(), osvLock(t, osvLockFS2025328), osvServerFS)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	want := append(osvWantSDK("0.5.0", true), osvWantFS("2025.3.28", true, true)...)
	if diff := cmp.Diff(want, got.Vulnerabilities); diff != "" {
		t.Errorf("vulnerabilities (-want +got):\n%s", diff)
	}
	if n := api.Batches(); n < 2 {
		t.Errorf("querybatch requests = %d, want the first page and a next page", n)
	}
}

func TestOSV_upstream_failures(t *testing.T) {
	tests := []struct {
		name    string
		fault   supplytest.Fault
		timeout time.Duration // the HTTP client's per-request timeout
		wantErr error         // nil: the scan succeeds
		// wantRequests, when positive, is the exact number of requests.
		wantRequests int
	}{
		{name: "upstream_503_is_unavailable", fault: supplytest.Unavailable(), wantErr: thirdparty.ErrUnavailable, wantRequests: osvTestRetryBudget},
		// Two 429s, then the querybatch and the four record fetches answer.
		{name: "rate_limit_then_answer_is_observed", fault: supplytest.RateLimited(2), wantRequests: 2 + 1 + 4},
		{name: "rate_limit_beyond_retries_is_unavailable", fault: supplytest.RateLimited(100), wantErr: thirdparty.ErrUnavailable, wantRequests: osvTestRetryBudget},
		{name: "slow_upstream_is_unavailable", fault: supplytest.Slow(5 * time.Second), timeout: 100 * time.Millisecond, wantErr: thirdparty.ErrUnavailable, wantRequests: osvTestRetryBudget},
		// The querybatch answer is not JSON; the records are fine.
		{name: "malformed_querybatch_is_unavailable", fault: supplytest.Fault{Malformed: true, Path: "/v1/querybatch"}, wantErr: thirdparty.ErrUnavailable},
		// The querybatch answers; the records are an HTML page.
		{name: "malformed_record_is_unavailable", fault: supplytest.Fault{Path: "/v1/vulns/", Body: []byte(`<!doctype html><title>Error</title>`)}, wantErr: thirdparty.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newOSVAPI(t)
			api.SetFault(tc.fault)
			opts := osvTestOptions(api.URL())
			if tc.timeout > 0 {
				opts.HTTPClient = &http.Client{Timeout: tc.timeout}
			}
			got, fetch, err := NewOSV(opts).Scan(t.Context(), osvLock(t, osvLockFS2025328), osvServerFS)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("result = %+v on failure, want nil (a failed query is never \"no vulnerabilities\")", got)
				}
				if fetch.Endpoint != api.URL() {
					t.Errorf("fetch endpoint = %q, want %q", fetch.Endpoint, api.URL())
				}
			} else {
				if err != nil {
					t.Fatalf("Scan: %v", err)
				}
				want := append(osvWantSDK("0.5.0", true), osvWantFS("2025.3.28", true, true)...)
				if diff := cmp.Diff(want, got.Vulnerabilities); diff != "" {
					t.Errorf("vulnerabilities (-want +got):\n%s", diff)
				}
			}
			if n := api.Requests(); tc.wantRequests > 0 && n != tc.wantRequests {
				t.Errorf("requests = %d, want %d", n, tc.wantRequests)
			}
		})
	}
}

func TestOSV_deadline_is_unavailable(t *testing.T) {
	api := newOSVAPI(t)
	api.SetFault(supplytest.Slow(5 * time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := NewOSV(osvTestOptions(api.URL())).Scan(ctx, osvLock(t, osvLockFS2025328), osvServerFS)
	if !errors.Is(err, thirdparty.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	// The context bounds the whole scan, retries included.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("scan took %v after a 150ms deadline", d)
	}
}

func TestOSV_not_applicable(t *testing.T) {
	rootOnly := []byte(`{
  "name": "verifymcp-sandbox-root",
  "version": "0.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "verifymcp-sandbox-root",
      "version": "0.0.0"
    }
  }
}`)
	for name, tc := range map[string]struct {
		lock   []byte
		target string
	}{
		"empty_lockfile":        {lock: nil, target: osvServerFS},
		"blank_lockfile":        {lock: []byte(" \n"), target: osvServerFS},
		"no_packages":           {lock: []byte(`{}`), target: osvServerFS},
		"root_only_stays":       {lock: rootOnly, target: osvServerFS},
		"lockfile_v1_root_only": {lock: []byte(`{"name":"verifymcp-sandbox-root","version":"0.0.0","lockfileVersion":1}`), target: osvServerFS},
		// npm 6 records a local tarball by its file: spec, not by the
		// version inside it, so the target cannot be matched.
		"lockfile_v1_tarball_target": {lock: osvLock(t, osvLockLauncherV1), target: "mcp-fs-launcher"},
	} {
		t.Run(name, func(t *testing.T) {
			api := newOSVAPI(t)
			got, _, err := NewOSV(osvTestOptions(api.URL())).Scan(t.Context(), tc.lock, tc.target)
			if !errors.Is(err, ErrNotApplicable) {
				t.Fatalf("err = %v, want ErrNotApplicable", err)
			}
			if got != nil {
				t.Errorf("result = %+v, want nil", got)
			}
			if n := api.Requests(); n != 0 {
				t.Errorf("requests = %d, want none", n)
			}
		})
	}
}

func TestOSV_bad_input_is_our_error(t *testing.T) {
	for name, tc := range map[string]struct {
		lock   []byte
		target string
	}{
		"target_not_in_lockfile":     {lock: osvLock(t, osvLockFS2025328), target: "@modelcontextprotocol/server-github"},
		"not_json":                   {lock: []byte("<html>"), target: osvServerFS},
		"lockfile_v1_without_target": {lock: osvLock(t, osvLockFS2025328v1), target: "mcp-fs-launcher"},
	} {
		t.Run(name, func(t *testing.T) {
			api := newOSVAPI(t)
			_, _, err := NewOSV(osvTestOptions(api.URL())).Scan(t.Context(), tc.lock, tc.target)
			if err == nil || errors.Is(err, thirdparty.ErrUnavailable) || errors.Is(err, ErrNotApplicable) || errors.Is(err, thirdparty.ErrNoCredential) {
				t.Fatalf("err = %v, want our own error (state error)", err)
			}
			if n := api.Requests(); n != 0 {
				t.Errorf("requests = %d, want none", n)
			}
		})
	}
}

func TestOSV_cache(t *testing.T) {
	api := newOSVAPI(t)
	c := newOSVMemCache()
	opts := osvTestOptions(api.URL())
	opts.Cache, opts.TTL = c, time.Hour
	lock := osvLock(t, osvLockFS2025328)

	first, f1, err := NewOSV(opts).Scan(t.Context(), lock, osvServerFS)
	if err != nil {
		t.Fatalf("first scan: %v", err)
	}
	asked := api.Requests()
	if asked == 0 || f1.Cached || c.puts != 1 {
		t.Fatalf("first scan: %d requests, cached %v, %d puts; want requests, not cached, 1 put", asked, f1.Cached, c.puts)
	}

	t.Run("hit_makes_no_request", func(t *testing.T) {
		got, f2, err := NewOSV(opts).Scan(t.Context(), lock, osvServerFS)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if n := api.Requests() - asked; n != 0 {
			t.Errorf("requests on a cache hit = %d, want 0", n)
		}
		if !f2.Cached || !f2.FetchedAt.Equal(f1.FetchedAt) || f2.Endpoint != api.URL() {
			t.Errorf("fetch = %+v, want cached with the first fetch time %v", f2, f1.FetchedAt)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("cached result differs (-first +cached):\n%s", diff)
		}
	})

	t.Run("roles_are_recomputed_per_tree", func(t *testing.T) {
		// Same packages, but the cached answer must not carry the roles of
		// the tree that filled it: here nothing is the target.
		got, _, err := NewOSV(opts).Scan(t.Context(), lock, "glob")
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(got.Vulnerabilities) == 0 {
			t.Fatal("no vulnerabilities from the cached answer")
		}
		for _, v := range got.Vulnerabilities {
			if v.Target || v.Direct {
				t.Errorf("%s on %s@%s: target %v direct %v, want neither with glob as the target", v.ID, v.Package, v.Version, v.Target, v.Direct)
			}
		}
		if n := api.Requests() - asked; n != 0 {
			t.Errorf("requests = %d, want 0 (same packages, cache hit)", n)
		}
	})

	t.Run("refresh_bypasses_reads", func(t *testing.T) {
		ro := opts
		ro.Refresh = true
		before := api.Requests()
		_, f3, err := NewOSV(ro).Scan(t.Context(), lock, osvServerFS)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if n := api.Requests() - before; n == 0 {
			t.Error("refresh made no request")
		}
		if f3.Cached || !f3.FetchedAt.After(f1.FetchedAt) {
			t.Errorf("fetch = %+v, want a fresh answer", f3)
		}
	})

	t.Run("another_endpoint_is_another_key", func(t *testing.T) {
		other := newOSVAPI(t)
		o2 := osvTestOptions(other.URL())
		o2.Cache, o2.TTL = c, time.Hour
		_, f, err := NewOSV(o2).Scan(t.Context(), lock, osvServerFS)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if f.Cached || other.Requests() == 0 {
			t.Errorf("answer for %s came from the cache of %s", other.URL(), api.URL())
		}
	})

	t.Run("failure_is_not_cached", func(t *testing.T) {
		failing := newOSVAPI(t)
		failing.SetFault(supplytest.Unavailable())
		fc := newOSVMemCache()
		o := osvTestOptions(failing.URL())
		o.Cache, o.TTL = fc, time.Hour
		if _, _, err := NewOSV(o).Scan(t.Context(), lock, osvServerFS); !errors.Is(err, thirdparty.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if fc.puts != 0 {
			t.Errorf("puts = %d after a failed query, want 0", fc.puts)
		}
	})
}

func TestOSV_offline_db(t *testing.T) {
	mtime := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	dir := t.TempDir()
	if err := supplytest.WriteOfflineDB(dir, nil, mtime); err != nil {
		t.Fatal(err)
	}
	// No server exists in these tests: any request would fail.
	for _, tc := range osvFindings {
		t.Run(tc.name, func(t *testing.T) {
			got, fetch, err := NewOSV(OSVOptions{OfflineDB: dir}).Scan(t.Context(), osvLock(t, tc.lock), tc.target)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			want := &evidence.OSVResult{Source: "offline-db", Packages: tc.packages, Vulnerabilities: tc.want()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			wantFetch := Fetch{Endpoint: "offline-db:" + dir, FetchedAt: mtime}
			if diff := cmp.Diff(wantFetch, fetch); diff != "" {
				t.Errorf("fetch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("missing_db_is_our_error", func(t *testing.T) {
		_, _, err := NewOSV(OSVOptions{OfflineDB: t.TempDir()}).Scan(t.Context(), osvLock(t, osvLockFS2025328), osvServerFS)
		if err == nil || errors.Is(err, thirdparty.ErrUnavailable) || errors.Is(err, ErrNotApplicable) {
			t.Fatalf("err = %v, want our own error", err)
		}
	})
}

func TestOSVHighestScore(t *testing.T) {
	v31 := &osvpb.Severity{Type: osvpb.Severity_CVSS_V3, Score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}
	v40 := &osvpb.Severity{Type: osvpb.Severity_CVSS_V4, Score: "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:H/SC:N/SI:N/SA:N"}
	v30low := &osvpb.Severity{Type: osvpb.Severity_CVSS_V3, Score: "CVSS:3.0/AV:L/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N"}
	bad := &osvpb.Severity{Type: osvpb.Severity_CVSS_V3, Score: "CVSS:3.1/AV:X"}
	tests := []struct {
		name       string
		in         []*osvpb.Severity
		wantScore  float64
		wantVector string
	}{
		{name: "none", in: nil},
		{name: "cvss_3.1", in: []*osvpb.Severity{v31}, wantScore: 9.8, wantVector: v31.Score},
		{name: "highest_wins", in: []*osvpb.Severity{v30low, v40}, wantScore: 8.7, wantVector: v40.Score},
		{name: "unparseable_is_skipped", in: []*osvpb.Severity{bad, v30low}, wantScore: 1.8, wantVector: v30low.Score},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			score, vector := osvHighestScore(tc.in)
			if score != tc.wantScore || vector != tc.wantVector {
				t.Errorf("got %v %q, want %v %q", score, vector, tc.wantScore, tc.wantVector)
			}
		})
	}
}

func TestOSVLockfileRoles(t *testing.T) {
	// Shapes npm writes in lockfileVersion 3, reduced to what matters.
	lock := []byte(`{
  "name": "verifymcp-sandbox-root",
  "lockfileVersion": 3,
  "packages": {
    "": {"name": "verifymcp-sandbox-root", "version": "0.0.0", "dependencies": {"srv": "1.0.0"}},
    "node_modules/srv": {
      "version": "1.0.0",
      "dependencies": {"a": "^2.0.0", "b-cjs": "npm:b@^4.0.0", "local": "file:../local"},
      "optionalDependencies": {"opt": "^1.0.0"},
      "peerDependencies": {"peer": "^3.0.0", "absent-peer": "^1.0.0"}
    },
    "node_modules/srv/node_modules/a": {"version": "2.0.0"},
    "node_modules/a": {"version": "1.0.0"},
    "node_modules/b-cjs": {"name": "b", "version": "4.1.0"},
    "node_modules/b": {"version": "5.0.0"},
    "node_modules/opt": {"version": "1.2.0", "optional": true},
    "node_modules/peer": {"version": "3.3.0", "peer": true},
    "node_modules/local": {"resolved": "local", "link": true},
    "local": {"name": "local", "version": "0.1.0"}
  }
}`)
	l, err := parseOSVLockfile(lock)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.roles("srv")
	if err != nil {
		t.Fatal(err)
	}
	want := osvRoles{
		target: "srv@1.0.0",
		direct: map[string]bool{
			"a@2.0.0":     true, // the copy nested under srv, not the hoisted a@1.0.0
			"b@4.1.0":     true, // the alias, under its real name
			"opt@1.2.0":   true,
			"peer@3.3.0":  true,
			"local@0.1.0": true, // through the link
		},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(osvRoles{})); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
}

func TestOSV_v1_tarball_target_reason(t *testing.T) {
	_, _, err := NewOSV(osvTestOptions("http://127.0.0.1:1")).Scan(t.Context(), osvLock(t, osvLockLauncherV1), "mcp-fs-launcher")
	if !errors.Is(err, ErrNotApplicable) {
		t.Fatalf("err = %v, want ErrNotApplicable", err)
	}
	// The reason is what the report shows for the not_assessed signal: it
	// must say what was found and why it cannot be matched.
	for _, want := range []string{"mcp-fs-launcher", "file:mcp-fs-launcher-1.0.0.tgz", "lockfileVersion 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("reason %q does not name %q", err.Error(), want)
		}
	}
}

// TestOSVLockfileRoles_trees reads real npm output: npm 6's
// lockfileVersion 1 trees and npm 11's workspaces, where each workspace
// is a link from node_modules to its folder and resolves its dependencies
// from that folder up, as Node does.
func TestOSVLockfileRoles_trees(t *testing.T) {
	tests := []struct {
		name   string
		lock   string
		target string
		want   osvRoles
	}{
		{
			name: "v1_nested_copy_below_the_target", lock: osvLockLauncherV1, target: osvServerFS,
			want: osvRoles{target: osvServerFS + "@2025.3.28", direct: map[string]bool{
				osvSDK + "@0.5.0":           true, // nested below the target, not the top-level 1.32.2
				"diff@5.2.2":                true,
				"glob@10.5.0":               true,
				"minimatch@10.2.6":          true, // the top-level copy, not glob's nested 9.0.9
				"zod-to-json-schema@3.25.2": true,
			}},
		},
		{
			// v1 writes an alias as "version": "npm:<name>@<version>".
			name: "v1_aliases_under_their_real_names", lock: osvLockLauncherV1, target: "@isaacs/cliui",
			want: osvRoles{target: "@isaacs/cliui@8.0.2", direct: map[string]bool{
				"string-width@5.1.2": true, "string-width@4.2.3": true,
				"strip-ansi@7.2.0": true, "strip-ansi@6.0.1": true,
				"wrap-ansi@8.1.0": true, "wrap-ansi@7.0.0": true,
			}},
		},
		{
			name: "workspace_with_a_nested_dependency", lock: osvLockWorkspace, target: "@acme/legacy-tools",
			want: osvRoles{target: "@acme/legacy-tools@0.4.0", direct: map[string]bool{osvSDK + "@0.5.0": true}},
		},
		{
			name: "workspace_using_the_root_node_modules", lock: osvLockWorkspace, target: "@acme/fs-launcher",
			want: osvRoles{target: "@acme/fs-launcher@1.0.0", direct: map[string]bool{osvSDK + "@1.32.2": true, osvServerFS + "@2025.3.28": true}},
		},
		{
			name: "workspace_folder_node_modules_first", lock: osvLockNestedWS, target: "@acme/web",
			want: osvRoles{target: "@acme/web@1.0.0", direct: map[string]bool{"zod@3.25.76": true}},
		},
		{
			// apps/web/plugins/notes has no node_modules of its own: Node
			// finds zod in the ancestor apps/web/node_modules before the
			// root's zod 4.
			name: "workspace_inside_another_resolves_up_its_ancestors", lock: osvLockNestedWS, target: "@acme/notes-mcp",
			want: osvRoles{target: "@acme/notes-mcp@1.0.0", direct: map[string]bool{"zod@3.25.76": true}},
		},
		{
			name: "workspace_falls_back_to_the_root", lock: osvLockNestedWS, target: "@acme/api",
			want: osvRoles{target: "@acme/api@1.0.0", direct: map[string]bool{"zod@4.6.7": true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := parseOSVLockfile(osvLock(t, tc.lock))
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.roles(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(osvRoles{})); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOSVLockfileRoles_link_outside_the_root(t *testing.T) {
	// npm 11.19.1's lockfile after `npm install ../local` in a root that
	// depends on zod 4: the folder outside the root is linked, and npm
	// installs none of its dependencies. Node resolves local-mcp's zod from
	// ../local, whose ancestors do not include the root, so it finds none:
	// the root's zod 4 is not local-mcp's.
	lock := []byte(`{
  "name": "verifymcp-sandbox-root",
  "version": "0.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "verifymcp-sandbox-root",
      "version": "0.0.0",
      "dependencies": {
        "local-mcp": "file:../local",
        "zod": "^4.0.0"
      }
    },
    "../local": {
      "name": "local-mcp",
      "version": "0.2.0",
      "dependencies": {
        "zod": "^3.23.8"
      }
    },
    "node_modules/local-mcp": {
      "resolved": "../local",
      "link": true
    },
    "node_modules/zod": {
      "version": "4.6.7",
      "integrity": "sha512-g8W2D2kU6a8untc053fX1uVBKzM7yqAxW/3zwk83+6RyF2+SKOuV+c0wBDhUwzV1PaGapmZH+rmcUzPf+3CGwg==",
      "license": "MIT",
      "funding": {
        "url": "https://github.com/sponsors/colinhacks"
      }
    }
  }
}`)
	l, err := parseOSVLockfile(lock)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.roles("local-mcp")
	if err != nil {
		t.Fatal(err)
	}
	want := osvRoles{target: "local-mcp@0.2.0", direct: map[string]bool{}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(osvRoles{})); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
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
