package supplychain_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// A registry key as publishers write it (a made-up Ed25519 key).
const registryKey = "v=MCPv1; k=ed25519; p=oYoH6OqAQ4bkmuUTJc8AB39ZVw2cRBEfUx+/h8M3Fvk="

// txtZone answers TXT questions from a table, as the DNSSEC validator
// would have judged them; a name not in it is a secure NXDOMAIN.
type txtZone map[string]supplychain.TXTAnswer

func (z txtZone) LookupTXT(_ context.Context, name string) (supplychain.TXTAnswer, error) {
	if a, ok := z[name]; ok {
		return a, nil
	}
	return supplychain.TXTAnswer{Status: "secure", Exists: "no"}, nil
}

// noAnchor is a resolver that filters DNSSEC data: nothing can be judged.
type noAnchor struct{}

func (noAnchor) LookupTXT(context.Context, string) (supplychain.TXTAnswer, error) {
	return supplychain.TXTAnswer{Status: "indeterminate"}, errors.New("trust anchor unavailable: DNSKEY . answered NXDOMAIN")
}

func TestMCPNameCheck(t *testing.T) {
	reg := supplytest.NewMCPRegistry(append(append([]supplytest.MCPEntry{}, supplytest.MCPAzure...), supplytest.MCPClickHouse...)...)
	defer reg.Close()
	web := supplytest.NewWellKnown(map[string]supplytest.WellKnownDoc{
		"mcp.example.com": {Body: registryKey + "\n"},
	})
	defer web.Close()
	dns := txtZone{
		"microsoft.com": {Status: "secure", Exists: "yes", Records: []string{"v=spf1 include:_spf-a.microsoft.com ~all", registryKey}},
		"example.com":   {Status: "insecure", Exists: "yes", Records: []string{"v=spf1 -all"}},
	}
	at := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	checker := func(r *supplytest.MCPRegistry, d supplychain.TXTLookup) *supplychain.MCPNameChecker {
		return &supplychain.MCPNameChecker{
			Registry: supplychain.NewMCPRegistry(nil, r.URL()).WithRetry(thirdparty.Retry{Attempts: 1}),
			DNS:      d,
			HTTP:     supplychain.NewWellKnown(supplychain.WellKnownOptions{HTTPClient: web.Client(5 * time.Second), AllowPrivate: true}),
			Now:      func() time.Time { return at },
		}
	}
	azurePackages := []evidence.MCPListedPackage{
		{RegistryType: "nuget", Identifier: "Azure.Mcp", ServerVersions: []string{"2.0.5", "2.0.4"}, ServerVersionCount: 2, PackageVersions: []string{"2.0.5", "2.0.4"}, Active: true},
		{RegistryType: "npm", Identifier: "@azure/mcp", ServerVersions: []string{"2.0.5", "2.0.4"}, ServerVersionCount: 2, PackageVersions: []string{"2.0.5", "2.0.4"}, Active: true},
	}
	microsoftKeys := []evidence.MCPKeyRecord{
		{Method: "dns", Domain: "microsoft.com", Covers: "domain and subdomains", State: "observed", DNSSEC: "secure", Exists: "yes", Keys: []string{registryKey}},
		{Method: "http", Domain: "microsoft.com", Covers: "domain", State: "observed", URL: "https://microsoft.com/.well-known/mcp-registry-auth", HTTPStatus: 404},
	}
	tests := []struct {
		name  string
		check *supplychain.MCPNameChecker
		asked string
		want  *evidence.MCPNameCheck
		err   error
	}{
		{
			name: "vendor namespace listing the package", check: checker(reg, dns), asked: "com.microsoft/azure",
			want: &evidence.MCPNameCheck{Name: "com.microsoft/azure", Registry: reg.URL(), CheckedAt: at, Found: true, AllVersions: true,
				VersionCount: 2, Latest: "2.0.5", Packages: azurePackages, Domain: "microsoft.com", KeyRecords: microsoftKeys},
		},
		{
			// No such entry: an answer, not a failure.
			name: "no entry of that name", check: checker(reg, dns), asked: "com.microsoft/azure-tools",
			want: &evidence.MCPNameCheck{Name: "com.microsoft/azure-tools", Registry: reg.URL(), CheckedAt: at, Domain: "microsoft.com", KeyRecords: microsoftKeys},
		},
		{
			// GitHub proves io.github namespaces: no key record to read.
			name: "github namespace", check: checker(reg, dns), asked: "io.github.ClickHouse/mcp-clickhouse",
			want: &evidence.MCPNameCheck{Name: "io.github.ClickHouse/mcp-clickhouse", Registry: reg.URL(), CheckedAt: at, Found: true, AllVersions: true,
				VersionCount: 1, Latest: "0.4.0", Packages: []evidence.MCPListedPackage{
					{RegistryType: "pypi", Identifier: "mcp-clickhouse", ServerVersions: []string{"0.4.0"}, ServerVersionCount: 1, PackageVersions: []string{"0.4.0"}, Active: true},
					{RegistryType: "oci", Identifier: "ghcr.io/clickhouse/mcp-clickhouse:0.4.0", ServerVersions: []string{"0.4.0"}, ServerVersionCount: 1, Active: true},
				}},
		},
		{
			// A subdomain namespace: DNS at the domain and its parent
			// (whose record grants subdomains), HTTP at the domain only.
			name: "subdomain namespace", check: checker(reg, dns), asked: "com.example.mcp/notes",
			want: &evidence.MCPNameCheck{Name: "com.example.mcp/notes", Registry: reg.URL(), CheckedAt: at, Domain: "mcp.example.com", KeyRecords: []evidence.MCPKeyRecord{
				{Method: "dns", Domain: "mcp.example.com", Covers: "domain and subdomains", State: "observed", DNSSEC: "secure", Exists: "no"},
				{Method: "dns", Domain: "example.com", Covers: "domain and subdomains", State: "observed", DNSSEC: "insecure", Exists: "yes"},
				{Method: "http", Domain: "mcp.example.com", Covers: "domain", State: "observed", URL: "https://mcp.example.com/.well-known/mcp-registry-auth", HTTPStatus: 200, Keys: []string{registryKey}},
			}},
		},
		{
			// A resolver that filters DNSSEC data: the DNS key record is
			// unavailable, and the registry's answer stands.
			name: "dns unavailable", check: checker(reg, noAnchor{}), asked: "com.microsoft/azure",
			want: &evidence.MCPNameCheck{Name: "com.microsoft/azure", Registry: reg.URL(), CheckedAt: at, Found: true, AllVersions: true,
				VersionCount: 2, Latest: "2.0.5", Packages: azurePackages, Domain: "microsoft.com", KeyRecords: []evidence.MCPKeyRecord{
					{Method: "dns", Domain: "microsoft.com", Covers: "domain and subdomains", State: "unavailable", Reason: "dns: trust anchor unavailable: DNSKEY . answered NXDOMAIN"},
					microsoftKeys[1],
				}},
		},
		{name: "not a registry name", check: checker(reg, dns), asked: "@azure/mcp", err: supplychain.ErrNotApplicable},
		{name: "no registry configured", check: &supplychain.MCPNameChecker{}, asked: "com.microsoft/azure", err: thirdparty.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fetch, err := tt.check.Check(context.Background(), tt.asked)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || got != nil {
					t.Fatalf("Check = %+v, %v; want %v", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Check (-want +got):\n%s", d)
			}
			if fetch.Endpoint != reg.URL() || !fetch.FetchedAt.Equal(at) {
				t.Errorf("fetch = %+v", fetch)
			}
		})
	}

	// A registry that serves no versions list: the latest version is read,
	// and the check says it did not see them all.
	old := supplytest.NewMCPRegistry(supplytest.MCPAzure...).WithoutList()
	defer old.Close()
	got, _, err := checker(old, dns).Check(context.Background(), "com.microsoft/azure")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.AllVersions || got.VersionCount != 1 || got.Latest != "2.0.5" || len(got.Packages) != 2 || got.Packages[1].Identifier != "@azure/mcp" {
		t.Errorf("without the list: %+v", got)
	}

	// A registry that fails is unavailable.
	reg.SetFault(supplytest.Unavailable())
	defer reg.SetFault(supplytest.Fault{})
	if got, _, err := checker(reg, dns).Check(context.Background(), "com.microsoft/azure"); !errors.Is(err, thirdparty.ErrUnavailable) || got != nil {
		t.Errorf("registry down: %+v, %v; want ErrUnavailable", got, err)
	}
}

// TestMCPRegistryVersionsDeleted: a deleted version is listed (with
// include_deleted), and a package it alone lists is not active.
func TestMCPRegistryVersionsDeleted(t *testing.T) {
	reg := supplytest.NewMCPRegistry(
		supplytest.MCPEntry{File: "airtable-mcp-server-1.7.3.server.json", Status: "deleted", Latest: true},
		supplytest.MCPEntry{File: "airtable-mcp-server-1.7.2.server.json"},
	)
	defer reg.Close()
	c := &supplychain.MCPNameChecker{Registry: supplychain.NewMCPRegistry(nil, reg.URL())}
	got, _, err := c.Check(context.Background(), "io.github.domdomegg/airtable-mcp-server")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.VersionCount != 2 || !strings.Contains(strings.Join(reg.Seen(), " "), "include_deleted=true") {
		t.Fatalf("check %+v, requests %q", got, reg.Seen())
	}
	// The npm package is listed by both versions; the oci image and the
	// bundle name their version in their identifier, so each is listed by
	// one, and 1.7.3's only by the deleted version.
	for _, p := range got.Packages {
		switch {
		case p.RegistryType == "npm" && (!p.Active || p.ServerVersionCount != 2):
			t.Errorf("npm %s: %+v, want listed by a deleted version and an active one", p.Identifier, p)
		case p.RegistryType != "npm" && p.Active != strings.Contains(p.Identifier, "1.7.2"):
			t.Errorf("%s %s: active %v", p.RegistryType, p.Identifier, p.Active)
		}
	}
}

// TestWellKnownRefusesPrivateAddresses: the domain comes from a package's
// mcpName, so a direct connection to a non-public address is refused.
func TestWellKnownRefusesPrivateAddresses(t *testing.T) {
	w := supplychain.NewWellKnown(supplychain.WellKnownOptions{HTTPClient: nil})
	_, err := w.MCPRegistryAuth(context.Background(), "localhost")
	if !errors.Is(err, thirdparty.ErrUnavailable) || !strings.Contains(err.Error(), "non-public") {
		t.Errorf("err = %v, want a refused non-public address", err)
	}
}
