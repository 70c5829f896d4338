package rubric

import (
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// Issue 33's provenance classes, from real registry documents:
//
//   - a vendor's package whose mcpName is a reverse-DNS namespace
//     (@azure/mcp 2.0.5, "com.microsoft/azure") and whose repository and
//     homepage are on github.com, which rubrics 3 to 10 call an mcpName
//     mismatch (high) because neither host is under microsoft.com;
//   - an npm package whose homepage is its GitHub repository and which
//     declares no repository (@neondatabase/mcp-server-neon 0.6.5), one
//     whose bugs URL is the only place naming it
//     (@modelcontextprotocol/server-everything 2025.8.18), and a PyPI
//     project whose only project URL is labelled Home (mcp-clickhouse
//     0.7.0), which rubrics 3 to 10 call no_repository.
//
// The metadata below is what supplychain.NPMMetadata and PyPIMetadata read
// from the recorded documents (supplychain/testdata, asserted in
// supplychain/links_test.go); the MCP registry answers follow the recorded
// server.json files (supplychain/testdata/mcpregistry), as
// supplychain.MCPNameChecker summarises them (mcpname_test.go there).

// azureMeta is @azure/mcp 2.0.5's metadata.
func azureMeta() *evidence.RegistryMeta {
	return &evidence.RegistryMeta{
		Ecosystem: "npm", Name: "@azure/mcp", Version: "2.0.5",
		PublishedAt: at(-30 * day), PreviousVersion: "2.0.4", PreviousPublishedAt: at(-44 * day),
		VersionCount: 15, FirstPublishedAt: at(-400 * day),
		Maintainers:   []evidence.Maintainer{{Name: "azure-sdk", EmailDomain: "microsoft.com"}},
		RepositoryURL: "https://github.com/microsoft/mcp.git",
		Repository:    &evidence.Repository{Host: "github.com", Owner: "microsoft", Name: "mcp"},
		Homepage:      "https://github.com/Microsoft/mcp/blob/main/servers/Azure.Mcp.Server#readme",
		Links: []evidence.RegistryLink{
			{Field: "homepage", URL: "https://github.com/Microsoft/mcp/blob/main/servers/Azure.Mcp.Server#readme"},
			{Field: "bugs.url", URL: "https://github.com/microsoft/mcp/issues"},
		},
		LinksRead: true,
		License:   "MIT", MCPName: "com.microsoft/azure", Provenance: true,
	}
}

// azureEntry is the MCP registry's answer for com.microsoft/azure: two
// versions, each listing the nuget package Azure.Mcp and the npm package
// @azure/mcp; microsoft.com publishes the registry's key in DNS (signed).
func azureEntry() *evidence.MCPNameCheck {
	return &evidence.MCPNameCheck{
		Name: "com.microsoft/azure", Registry: "https://registry.modelcontextprotocol.io", CheckedAt: runDate.Add(-time.Minute),
		Found: true, AllVersions: true, VersionCount: 2, Latest: "2.0.5",
		Packages: []evidence.MCPListedPackage{
			{RegistryType: "nuget", Identifier: "Azure.Mcp", ServerVersions: []string{"2.0.5", "2.0.4"}, ServerVersionCount: 2, PackageVersions: []string{"2.0.5", "2.0.4"}, Active: true},
			{RegistryType: "npm", Identifier: "@azure/mcp", ServerVersions: []string{"2.0.5", "2.0.4"}, ServerVersionCount: 2, PackageVersions: []string{"2.0.5", "2.0.4"}, Active: true},
		},
		Domain: "microsoft.com",
		KeyRecords: []evidence.MCPKeyRecord{
			{Method: "dns", Domain: "microsoft.com", Covers: "domain and subdomains", State: "observed", DNSSEC: "secure", Exists: "yes",
				Keys: []string{"v=MCPv1; k=ed25519; p=oYoH6OqAQ4bkmuUTJc8AB39ZVw2cRBEfUx+/h8M3Fvk="}},
			{Method: "http", Domain: "microsoft.com", Covers: "domain", State: "observed", URL: "https://microsoft.com/.well-known/mcp-registry-auth", HTTPStatus: 404},
		},
	}
}

// azureBundle is a scan of @azure/mcp 2.0.5 with every supply signal
// observed; the registry lists the package.
func azureBundle() *evidence.Bundle {
	b := supplyBundle()
	b.Target.Name, b.Target.Version = "@azure/mcp", "2.0.5"
	b.Supply.Registry = azureMeta()
	b.Supply.GitHub = &evidence.GitHubResult{Requested: "microsoft/mcp", Exists: true, FullName: "microsoft/mcp", DefaultBranch: "main",
		PushedAt: at(-2 * day), CreatedAt: at(-500 * day), Stars: 2900}
	b.Supply.MCPRegistry = azureEntry()
	b.Supply.DNSSEC.Domains = []evidence.DNSDomain{secureDomain("microsoft.com", "maintainer_email", "mcp_name")}
	return b
}

// neonMeta is @neondatabase/mcp-server-neon 0.6.5's metadata: no
// repository, its homepage the GitHub repository (linksRead says whether
// the collector kept the links: a run recorded before has the homepage
// only).
func neonMeta(linksRead bool) *evidence.RegistryMeta {
	m := &evidence.RegistryMeta{
		Ecosystem: "npm", Name: "@neondatabase/mcp-server-neon", Version: "0.6.5",
		PublishedAt: at(-30 * day), PreviousVersion: "0.6.4", PreviousPublishedAt: at(-40 * day),
		VersionCount: 5, FirstPublishedAt: at(-400 * day),
		Maintainers: []evidence.Maintainer{{Name: "neon", EmailDomain: "neon.tech"}},
		Homepage:    "https://github.com/neondatabase/mcp-server-neon/",
		License:     "MIT", Provenance: true,
	}
	if linksRead {
		m.LinksRead = true
		m.Links = []evidence.RegistryLink{
			{Field: "homepage", URL: "https://github.com/neondatabase/mcp-server-neon/"},
			{Field: "bugs.url", URL: "https://github.com/neondatabase/mcp-server-neon/issues"},
		}
	}
	return m
}

// neonBundle scans neon; run before links were read, GitHub was not asked
// (no repository declared); after, it was asked about the homepage's.
func neonBundle(linksRead bool) *evidence.Bundle {
	b := supplyBundle()
	b.Target.Name, b.Target.Version = "@neondatabase/mcp-server-neon", "0.6.5"
	b.Supply.Registry = neonMeta(linksRead)
	b.Supply.MCPRegistry = nil
	b.Signals[evidence.SignalMCPRegistry] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "the package declares no mcpName: no MCP registry entry to ask about", ThirdParty: true}
	b.Supply.DNSSEC.Domains = []evidence.DNSDomain{secureDomain("neon.tech", "maintainer_email")}
	if !linksRead {
		delete(b.Signals, evidence.SignalMCPRegistry)
		b.Signals[evidence.SignalGitHub] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "the package declares no parseable repository", ThirdParty: true}
		b.Supply.GitHub = nil
		return b
	}
	b.Supply.GitHub = &evidence.GitHubResult{Requested: "neondatabase/mcp-server-neon", Exists: true, FullName: "neondatabase/mcp-server-neon",
		DefaultBranch: "main", PushedAt: at(-3 * day), CreatedAt: at(-600 * day), Stars: 480}
	return b
}

// clickhouseBundle scans mcp-clickhouse 0.7.0 from PyPI: its only project
// URL is labelled Home; the registry's entry of its mcp-name lists it.
func clickhouseBundle() *evidence.Bundle {
	b := supplyBundle()
	b.Target.Ecosystem, b.Target.Name, b.Target.Version = "pypi", "mcp-clickhouse", "0.7.0"
	b.Supply.Registry = &evidence.RegistryMeta{
		Ecosystem: "pypi", Name: "mcp-clickhouse", Version: "0.7.0",
		PublishedAt: at(-30 * day), PreviousVersion: "0.6.2", PreviousPublishedAt: at(-50 * day),
		VersionCount: 21, FirstPublishedAt: at(-500 * day),
		Maintainers: []evidence.Maintainer{},
		Links:       []evidence.RegistryLink{{Field: "project_urls.Home", URL: "https://github.com/ClickHouse/mcp-clickhouse"}},
		LinksRead:   true,
		License:     "Apache-2.0", MCPName: "io.github.ClickHouse/mcp-clickhouse", Provenance: true,
	}
	b.Supply.GitHub = &evidence.GitHubResult{Requested: "ClickHouse/mcp-clickhouse", Exists: true, FullName: "ClickHouse/mcp-clickhouse",
		DefaultBranch: "main", PushedAt: at(-5 * day), CreatedAt: at(-600 * day), Stars: 600}
	b.Supply.MCPRegistry = &evidence.MCPNameCheck{
		Name: "io.github.ClickHouse/mcp-clickhouse", Registry: "https://registry.modelcontextprotocol.io", CheckedAt: runDate.Add(-time.Minute),
		Found: true, AllVersions: true, VersionCount: 1, Latest: "0.4.0",
		Packages: []evidence.MCPListedPackage{
			{RegistryType: "pypi", Identifier: "mcp-clickhouse", ServerVersions: []string{"0.4.0"}, ServerVersionCount: 1, PackageVersions: []string{"0.4.0"}, Active: true},
			{RegistryType: "oci", Identifier: "ghcr.io/clickhouse/mcp-clickhouse:0.4.0", ServerVersions: []string{"0.4.0"}, ServerVersionCount: 1, Active: true},
		},
	}
	b.Signals[evidence.SignalDNSSEC] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "no domain to check", ThirdParty: true}
	b.Supply.DNSSEC = nil
	return b
}

// provenanceOf scores the provenance dimension of b under rubric v.
func provenanceOf(t *testing.T, b *evidence.Bundle, v string) (outcome, DimensionScore, []Finding) {
	t.Helper()
	res := Evaluate(b, mustLoad(t, v))
	return outcomeOf(res, DimensionProvenance), dim(res, DimensionProvenance), res.Findings
}

func TestProvenanceV11(t *testing.T) {
	mcp := func(fn func(c *evidence.MCPNameCheck)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.MCPRegistry) }
	}
	tests := []struct {
		name   string
		bundle func() *evidence.Bundle
		modify func(*evidence.Bundle)
		want   outcome
		// reason holds text the dimension's reason must contain.
		reason string
	}{
		// The class: a vendor's reverse-DNS namespace with its code on
		// GitHub. The registry lists the package: corroborated.
		{name: "vendor_namespace_listed", bundle: azureBundle, want: outcome{State: StateScored, Score: 100},
			reason: `mcpName "com.microsoft/azure" listed by the MCP registry's entry (2 versions: 2.0.5, 2.0.4); the namespace's registry key is published: DNS TXT at microsoft.com (DNSSEC secure)`},
		// The registry did not answer: the zero point, no accusation.
		{name: "registry_unavailable", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "unavailable", "registry.modelcontextprotocol.io unreachable: no such host"),
				func(b *evidence.Bundle) { b.Supply.MCPRegistry = nil }),
			want: outcome{State: StateZeroPoint, Score: 0}, reason: "signal mcp_registry is unavailable"},
		// A run recorded before the signal existed: missing evidence.
		{name: "recorded_before_the_registry_was_asked", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "missing", ""), func(b *evidence.Bundle) { b.Supply.MCPRegistry = nil }),
			want:   outcome{State: StateZeroPoint, Score: 0}, reason: "mcp_registry is not recorded"},
		// ... unless it was resolved through the entry, which is stored
		// evidence that the entry lists the package.
		{name: "recorded_before_but_resolved_through_the_entry", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "missing", ""), func(b *evidence.Bundle) {
				b.Supply.MCPRegistry = nil
				b.Target.MCPRegistry = &evidence.MCPRegistryEntry{Name: "com.microsoft/azure", Version: "2.0.5", Registry: "https://registry.modelcontextprotocol.io",
					Package: "npm:@azure/mcp@2.0.5", MCPName: "com.microsoft/azure", MCPNameMatches: true}
			}),
			want: outcome{State: StateScored, Score: 100}, reason: "is the MCP registry entry the scan resolved through (npm:@azure/mcp@2.0.5)"},
		// No entry of that name: nobody corroborated the claim, nothing
		// contradicts it. No credit, no finding; the key record decides
		// nothing.
		{name: "no_entry", bundle: azureBundle,
			modify: mcp(func(c *evidence.MCPNameCheck) {
				c.Found, c.AllVersions, c.VersionCount, c.Latest, c.Packages = false, false, 0, "", nil
			}),
			want: outcome{State: StateScored, Score: 90}, reason: "unverified: the MCP registry has no entry of that name; the namespace's registry key is published"},
		// No key record anywhere is no contradiction either.
		{name: "listed_without_a_key_record", bundle: azureBundle,
			modify: mcp(func(c *evidence.MCPNameCheck) { c.KeyRecords[0].Keys = nil }),
			want:   outcome{State: StateScored, Score: 100}},
		// The entry lists other packages in every version: the claim is
		// false.
		{name: "entry_lists_other_packages", bundle: azureBundle,
			modify: func(b *evidence.Bundle) {
				b.Target.Name = "azure-mcp-tools"
				b.Supply.Registry.Name = "azure-mcp-tools"
			},
			want: outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.mcpname_mismatch azure-mcp-tools@2.0.5"}}},
		// Only the latest version could be read: other versions might list
		// it.
		{name: "only_the_latest_read", bundle: azureBundle,
			modify: func(b *evidence.Bundle) {
				b.Target.Name, b.Supply.Registry.Name = "azure-mcp-tools", "azure-mcp-tools"
				b.Supply.MCPRegistry.AllVersions = false
			},
			want: outcome{State: StateScored, Score: 90}, reason: "served only the latest version"},
		// Listed only in versions the registry deleted.
		{name: "listed_only_in_deleted_versions", bundle: azureBundle,
			modify: mcp(func(c *evidence.MCPNameCheck) { c.Packages[1].Active = false }),
			want:   outcome{State: StateScored, Score: 90}, reason: "only in versions it deleted"},
		// An mcpName that is not a registry name is no claim at all.
		{name: "not_a_registry_name", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "not_assessed", "invalid MCP registry server name"), func(b *evidence.Bundle) {
				b.Supply.Registry.MCPName, b.Supply.MCPRegistry = "azure", nil
			}),
			want: outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent @azure/mcp@2.0.5"}}},
		// The operator skipped the check: no credit, no finding.
		{name: "skipped", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "not_assessed", "disabled with --skip mcp_registry"), func(b *evidence.Bundle) { b.Supply.MCPRegistry = nil }),
			want:   outcome{State: StateScored, Score: 90}, reason: "not checked in the MCP registry"},
		// No mcpName: nothing to ask; scored from the other signals.
		{name: "no_mcpname", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "not_assessed", "the package declares no mcpName"), func(b *evidence.Bundle) {
				b.Supply.Registry.MCPName, b.Supply.MCPRegistry = "", nil
			}),
			want: outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent @azure/mcp@2.0.5"}}},
		// A run recorded before the signal, without an mcpName: nothing
		// would have been asked.
		{name: "recorded_before_without_mcpname", bundle: azureBundle,
			modify: both(setSignal(evidence.SignalMCPRegistry, "missing", ""), func(b *evidence.Bundle) { b.Supply.Registry.MCPName, b.Supply.MCPRegistry = "", nil }),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent @azure/mcp@2.0.5"}}},

		// The second class: the repository where publishers put it (neon
		// declares no mcpName either: mcpname_absent, low, -10).
		// neon, recorded after links were kept: the homepage's repository,
		// which GitHub was asked about.
		{name: "npm_homepage_is_the_repository", bundle: func() *evidence.Bundle { return neonBundle(true) },
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent @neondatabase/mcp-server-neon@0.6.5"}},
			reason: "no mcpName (-10); repository github.com/neondatabase/mcp-server-neon (read from the homepage)"},
		// neon recorded before links were kept: the stored homepage is
		// read; GitHub was not asked about it then, so no credit for it.
		{name: "npm_homepage_in_an_old_run", bundle: func() *evidence.Bundle { return neonBundle(false) },
			want:   outcome{State: StateScored, Score: 65, Findings: []string{"pkg.supply.registry.mcpname_absent @neondatabase/mcp-server-neon@0.6.5"}},
			reason: "repository github.com/neondatabase/mcp-server-neon (read from the homepage) not checked: GitHub was not asked about it"},
		// server-everything 2025.8.18: only the bugs URL names it.
		{name: "npm_bugs_url", bundle: func() *evidence.Bundle { return neonBundle(true) },
			modify: func(b *evidence.Bundle) {
				b.Supply.Registry.Homepage = "https://modelcontextprotocol.io"
				b.Supply.Registry.Links = []evidence.RegistryLink{
					{Field: "homepage", URL: "https://modelcontextprotocol.io"},
					{Field: "bugs.url", URL: "https://github.com/modelcontextprotocol/servers/issues"},
				}
				b.Supply.GitHub.Requested, b.Supply.GitHub.FullName = "modelcontextprotocol/servers", "modelcontextprotocol/servers"
			},
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.supply.registry.mcpname_absent @neondatabase/mcp-server-neon@0.6.5"}},
			reason: "github.com/modelcontextprotocol/servers (read from the bugs URL)"},
		// Nothing anywhere: the finding stands, naming the places read.
		{name: "npm_no_repository_anywhere", bundle: func() *evidence.Bundle { return neonBundle(true) },
			modify: both(setSignal(evidence.SignalGitHub, "not_assessed", "the package declares no parseable repository"), func(b *evidence.Bundle) {
				b.Supply.Registry.Homepage = "https://neon.tech"
				b.Supply.Registry.Links = []evidence.RegistryLink{{Field: "homepage", URL: "https://neon.tech"}}
				b.Supply.GitHub = nil
			}),
			want: outcome{State: StateScored, Score: 40, Findings: []string{
				"pkg.supply.registry.mcpname_absent @neondatabase/mcp-server-neon@0.6.5", "pkg.supply.registry.no_repository @neondatabase/mcp-server-neon@0.6.5",
			}}},
		// PyPI: the only project URL is labelled Home.
		{name: "pypi_project_url_labelled_home", bundle: clickhouseBundle,
			want:   outcome{State: StateScored, Score: 100},
			reason: `repository github.com/ClickHouse/mcp-clickhouse (read from the project URL labelled Home) declared and found on GitHub; provenance attestation present; mcpName "io.github.ClickHouse/mcp-clickhouse" listed`},
		// PyPI metadata recorded before every project URL was kept: what
		// it kept names none, which proves nothing. No finding, no credit.
		{name: "pypi_old_run_without_links", bundle: clickhouseBundle,
			modify: both(setSignal(evidence.SignalGitHub, "not_assessed", "the package declares no parseable repository"), func(b *evidence.Bundle) {
				b.Supply.Registry.Links, b.Supply.Registry.LinksRead, b.Supply.GitHub = nil, false, nil
			}),
			want: outcome{State: StateScored, Score: 50}, reason: "repository unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.bundle()
			if tt.modify != nil {
				tt.modify(b)
			}
			got, d, findings := provenanceOf(t, b, "11")
			if tt.want.Findings == nil {
				tt.want.Findings = []string{}
			}
			if diffs := diff(tt.want, got); diffs != "" {
				t.Errorf("provenance (-want +got):\n%s\nreason: %s", diffs, d.Reason)
			}
			if !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", d.Reason, tt.reason)
			}
			for _, f := range findings {
				if f.Code == CodeRegistryMCPNameMismatch && (f.Severity != SeverityHigh || !strings.Contains(f.Evidence, "lists nuget:Azure.Mcp (2.0.5, 2.0.4); npm:@azure/mcp (2.0.5, 2.0.4); not npm:azure-mcp-tools")) {
					t.Errorf("mismatch finding %+v", f)
				}
			}
		})
	}
}

// TestProvenanceClassesUnderV10: the same bundles under rubric 10 score as
// rubric 10 always scored them: the vendor's reverse-DNS namespace is a
// mismatch, and a repository only in the homepage, the bugs URL or a
// project URL labelled Home is no repository. A run recorded after the
// collector read links (and asked GitHub about the homepage's repository)
// scores under rubric 10 exactly as the same run without those links and
// that answer.
func TestProvenanceClassesUnderV10(t *testing.T) {
	got, _, _ := provenanceOf(t, azureBundle(), "10")
	if want := (outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.mcpname_mismatch @azure/mcp@2.0.5"}}); diff(want, got) != "" {
		t.Errorf("azure under v10 (-want +got):\n%s", diff(want, got))
	}
	got, _, _ = provenanceOf(t, clickhouseBundle(), "10")
	if want := (outcome{State: StateScored, Score: 20, Findings: []string{"pkg.supply.registry.mcpname_mismatch mcp-clickhouse@0.7.0", "pkg.supply.registry.no_repository mcp-clickhouse@0.7.0"}}); diff(want, got) != "" {
		t.Errorf("clickhouse under v10 (-want +got):\n%s", diff(want, got))
	}
	// GitHub asked about the homepage's repository: answered, or not.
	githubDown := func() *evidence.Bundle {
		b := neonBundle(true)
		b.Signals[evidence.SignalGitHub] = evidence.Signal{State: evidence.StateUnavailable, Reason: "api.github.com unreachable", ThirdParty: true}
		b.Supply.GitHub = nil
		return b
	}
	for _, dimension := range []string{DimensionProvenance, DimensionMaintenance} {
		for _, c := range []struct {
			v    string
			with func() *evidence.Bundle
		}{{"3", nil}, {"4", nil}, {"9", nil}, {"10", nil}, {"10", githubDown}, {"4", githubDown}} {
			v := c.v
			r := mustLoad(t, v)
			with := c.with
			if with == nil {
				with = func() *evidence.Bundle { return neonBundle(true) }
			}
			withLinks := Evaluate(with(), r)
			without := Evaluate(neonBundle(false), r)
			a, b := outcomeOf(withLinks, dimension), outcomeOf(without, dimension)
			if d := diff(b, a); d != "" || dim(withLinks, dimension).Reason != dim(without, dimension).Reason {
				t.Errorf("%s v%s: the links and GitHub's answer about the homepage's repository changed the result (-without +with):\n%s\n%q\n%q",
					dimension, v, d, dim(without, dimension).Reason, dim(withLinks, dimension).Reason)
			}
			if len(b.Findings) == 0 && dimension == DimensionProvenance {
				t.Errorf("v%s: no finding for neon (want no_repository)", v)
			}
		}
	}
}
