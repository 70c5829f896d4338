//go:build docker

package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
// fetches the package.
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
