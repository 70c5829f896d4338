//go:build docker

package sandbox_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
)

// The small real package both tests fetch: one file, no dependency.
const (
	isNumber          = "is-number"
	isNumberVersion   = "7.0.0"
	isNumberIntegrity = "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng=="
)

// TestScanWithoutCABundleIsAnEnvironmentFault: on this machine containers
// reach the npm registry only through a TLS-intercepting proxy, so a
// sandbox given no CA bundle cannot verify the registry. That is the
// environment's failure: Scan returns an *EnvironmentError naming TLS and
// the fix, no result (nothing that could be stored as the package's), and
// leaves nothing on the engine. The same sandbox with the CA bundle
// fetches the package. The tree cache is on, in the test's own namespace
// (newSandbox): a tree of is-number in the engine's cache, as on any
// machine that has scanned it, would be mounted with no fetch and no fault
// to see (TestTreeCacheNamespaceApart).
func TestScanWithoutCABundleIsAnEnvironmentFault(t *testing.T) {
	target := sandbox.Target{Name: isNumber, Version: isNumberVersion, Integrity: isNumberIntegrity}
	sb := newSandbox(t, func(o *sandbox.Options) { o.CABundle = nil; o.TreeCacheDir = t.TempDir() })
	id := runID(t)
	res, err := sb.Scan(context.Background(), id, target)
	var env *sandbox.EnvironmentError
	if !errors.As(err, &env) {
		t.Fatalf("Scan = %+v, %v; want an *EnvironmentError", res, err)
	}
	if res != nil {
		t.Errorf("Scan returned a result (outcome %s) with the fault", res.Outcome)
	}
	if env.Kind != sandbox.FaultTLS || env.Host != "registry.npmjs.org:443" || env.Engine() {
		t.Errorf("fault = {%s %s engine=%v}, want {%s registry.npmjs.org:443 engine=false}", env.Kind, env.Host, env.Engine(), sandbox.FaultTLS)
	}
	if !strings.Contains(env.Error(), "pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA") {
		t.Errorf("the fault does not say the fix: %q", env.Error())
	}
	assertClean(t, id)

	fc, err := newSandbox(t, nil).CheckFetch(context.Background(), runID(t), target)
	if err != nil {
		t.Fatalf("CheckFetch with the CA bundle: %v", err)
	}
	if fc.Integrity != isNumberIntegrity || fc.Packages != 1 || fc.PreflightStatus != 200 {
		t.Errorf("CheckFetch = %+v, want 1 package, HTTP 200, integrity %s", fc, isNumberIntegrity)
	}
}

// TestCheckFetchWithoutCABundle: the doctor's check goes through the same
// fetch path and names the same fault, and cleans up after itself.
func TestCheckFetchWithoutCABundle(t *testing.T) {
	sb := newSandbox(t, func(o *sandbox.Options) { o.CABundle = nil })
	id := runID(t)
	fc, err := sb.CheckFetch(context.Background(), id, sandbox.Target{Name: isNumber, Version: isNumberVersion, Integrity: isNumberIntegrity})
	var env *sandbox.EnvironmentError
	if !errors.As(err, &env) || env.Kind != sandbox.FaultTLS {
		t.Fatalf("CheckFetch = %+v, %v; want a %s fault", fc, err, sandbox.FaultTLS)
	}
	assertClean(t, id)
}

// TestPackageFetchFailuresStayEvidence: what a package asks for that the
// registry does not have, or that the sandbox refuses to fetch, is the
// package's property: install_failed with npm's reason, the host it
// wanted named, never an environment fault, with the CA bundle in place.
func TestPackageFetchFailuresStayEvidence(t *testing.T) {
	tests := []struct {
		name string
		deps string
		want []string
	}{
		{"a dependency that does not exist", `{"verifymcp-surely-not-a-package-4242":"^1.0.0"}`, []string{"(E404)", "verifymcp-surely-not-a-package-4242@^1.0.0' is not in this registry"}},
		{"a dependency range no version satisfies", `{"is-number":"^99.0.0"}`, []string{"(ETARGET)", "is-number@^99.0.0"}},
		{"a dependency from another host", `{"foo":"https://example.com/foo-1.0.0.tgz"}`, []string{"fetched from example.com:443", "fetches only from the registry (registry.npmjs.org:443)"}},
		{"a dependency from git", `{"foo":"github:jonschlinkert/is-number"}`, []string{"git repository", "github.com/jonschlinkert/is-number.git", "not with git"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("verifymcp-fixture-deps%d-%d", i, time.Now().UnixNano()%1e9)
			tgz := tarball(t, map[string]string{"package/package.json": fmt.Sprintf(`{"name":%q,"version":"1.0.0","bin":{"x":"x.js"},"dependencies":%s}`, name, tt.deps), "package/x.js": "#!/usr/bin/env node\n"})
			id := runID(t)
			res, err := newSandbox(t, nil).Scan(context.Background(), id, sandbox.Target{Name: name, Version: "1.0.0", Tarball: tgz})
			if err != nil {
				t.Fatalf("Scan: %v; want the package's failure as evidence", err)
			}
			if res.Outcome != evidence.OutcomeInstallFailed || res.Install.FailedStep != evidence.StepFetch {
				t.Fatalf("outcome %s at %s, want install_failed at the fetch step (%s)", res.Outcome, res.Install.FailedStep, res.Install.Error)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Install.Error, w) {
					t.Errorf("install error %q lacks %q", res.Install.Error, w)
				}
			}
			assertClean(t, id)
		})
	}
}

// tarball packs files (path under the archive: content) as an npm tarball.
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), ModTime: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}
