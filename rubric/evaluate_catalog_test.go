package rubric

import (
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// TestFindingsMatchCatalog runs every probe case's bundle shape through
// Evaluate and checks each finding against the catalog entry of its code.
func TestFindingsMatchCatalog(t *testing.T) {
	b := loadBundle(t, "everything.bundle.json")
	b.Session.NonJSONLines, b.Session.Truncated = 2, true
	b.Session.ListErrors = map[string]string{"prompts/list": "x"}
	b.Install.Scripts = []evidence.Script{{Package: "a", Event: "install", Ran: true, ExitCode: 2}}
	b.Contract.Tools = append(b.Contract.Tools, contract.Tool{Name: "rm", Annotations: &contract.Annotations{ReadOnlyHint: ptr(true), Title: "Delete"}})
	watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
	withToolCalls(b)
	res := Evaluate(b, Current())
	seen := map[string]bool{}
	for _, f := range res.Findings {
		def, ok := Current().Code(f.Code)
		if !ok {
			t.Errorf("%s not in catalog", f.Code)
			continue
		}
		checkAgainstCatalog(t, f, def)
		if scorers[f.Dimension].emits[f.Code] != f.Kind {
			t.Errorf("%s: not listed in the emits of %s", f.Code, f.Dimension)
		}
		if f.Message == "" || f.Evidence == "" {
			t.Errorf("%s %s: empty message or evidence", f.Code, f.Subject)
		}
		seen[f.Code] = true
	}
	if len(seen) < 22 {
		t.Errorf("only %d distinct codes fired; the fixture should exercise most probes", len(seen))
	}
	for _, c := range Current().Codes {
		if strings.HasPrefix(c.Code, "pkg.behavior.") && !seen[c.Code] {
			t.Errorf("%s did not fire; the rich behaviour should exercise every behaviour code", c.Code)
		}
	}
}

// checkAgainstCatalog checks a finding's kind, severity and dimension
// against its code's catalog entry: a graded code's severity is any up to
// the catalog's, others are the catalog's.
func checkAgainstCatalog(t *testing.T, f Finding, def CodeDef) {
	t.Helper()
	sevOK := f.Severity == def.Severity
	if def.Graded {
		sevOK = f.Severity.Rank() >= 0 && f.Severity.Rank() <= def.Severity.Rank()
	}
	if f.Kind != def.Kind || !sevOK || f.Dimension != def.Dimension {
		t.Errorf("%s: finding %s/%s/%s, catalog %s/%s/%s (graded %v)", f.Code, f.Kind, f.Severity, f.Dimension, def.Kind, def.Severity, def.Dimension, def.Graded)
	}
}

// TestSupplyFindingsMatchCatalog runs bundles that together fire every
// supply-chain and DNSSEC code and checks each finding against the
// catalog.
func TestSupplyFindingsMatchCatalog(t *testing.T) {
	r := Current()
	seen := map[string]bool{}
	supplyCode := func(code string) bool {
		return strings.HasPrefix(code, "pkg.supply.") || strings.HasPrefix(code, "pkg.dnssec.")
	}
	check := func(b *evidence.Bundle) {
		for _, f := range Evaluate(b, r).Findings {
			def, ok := r.Code(f.Code)
			if !ok {
				t.Errorf("%s not in catalog", f.Code)
				continue
			}
			checkAgainstCatalog(t, f, def)
			if !supplyCode(f.Code) {
				continue
			}
			if f.Message == "" || f.Evidence == "" || f.Subject == "" {
				t.Errorf("%s: empty message, evidence or subject: %+v", f.Code, f)
			}
			seen[f.Code] = true
		}
	}
	check(loadBundle(t, "supply.bundle.json"))
	check(loadBundle(t, "unavailable.bundle.json"))
	b := supplyBundle()
	rg := b.Supply.Registry
	rg.RepositoryURL, rg.Repository, rg.MCPName = "", nil, ""
	rg.PublishedAt, rg.FirstPublishedAt = at(-time.Hour), at(-2*day)
	b.Supply.GitHub = &evidence.GitHubResult{Requested: "acme/mcp-notes"}
	b.Supply.Socket.Malware = true
	b.Supply.Socket.Alerts = append(b.Supply.Socket.Alerts, evidence.SocketAlert{Type: "didYouMean", Severity: "critical", Package: "mcp-notes", Version: "1.2.3"})
	b.Supply.OSV.Vulnerabilities = []evidence.Vulnerability{{ID: "MAL-2025-1", Package: "mcp-notes", Version: "1.2.3", Malware: true}}
	check(b)
	b = supplyBundle()
	b.Supply.Registry.RepositoryURL, b.Supply.Registry.Repository = "acme notes", nil
	b.Supply.Registry.MCPName = "com.example/notes"
	b.Supply.GitHub.Disabled = true
	check(b)
	b = supplyBundle()
	b.Supply.GitHub.FullName = "acme2/notes"
	check(b)
	b = supplyBundle()
	b.Supply.MCPRegistry.Packages[0].Identifier = "notes-mcp"
	check(b)
	check(loadBundle(t, "dnssec.bundle.json"))
	check(loadBundle(t, "pypi.bundle.json"))
	b = supplyBundle()
	b.Supply.DNSSEC.Domains = []evidence.DNSDomain{
		bogusDomain("acme.dev", "no_dnskey_matching_ds", "homepage"),
		{Name: "kato.codes", Sources: []string{"author_url"}, Status: evidence.DNSIndeterminate, Exists: "unknown", Error: "timeout"},
	}
	check(b)
	b = supplyBundle()
	b.Signals[evidence.SignalDNSSEC] = evidence.Signal{State: evidence.StateError, Reason: "dnssec result: bad JSON"}
	check(b)
	for _, c := range r.Codes {
		if supplyCode(c.Code) && !seen[c.Code] {
			t.Errorf("%s did not fire", c.Code)
		}
	}
}
