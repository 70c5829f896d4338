package rubric

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

var rootStep = evidence.DNSZoneStep{Zone: ".", Status: evidence.DNSSecure, DSKeyTags: []uint16{20326}, KeyTags: []uint16{20326, 61809}, Algorithms: []int{8}}

// secureDomain is a domain whose chain is signed from the root down.
func secureDomain(name string, sources ...string) evidence.DNSDomain {
	tld := name[strings.LastIndex(name, ".")+1:] + "."
	return evidence.DNSDomain{
		Name: name, Sources: sources, Status: evidence.DNSSecure, Exists: "yes",
		Chain: []evidence.DNSZoneStep{
			rootStep,
			{Zone: tld, Status: evidence.DNSSecure, DSKeyTags: []uint16{60074}, KeyTags: []uint16{60074}, Algorithms: []int{8}},
			{Zone: name + ".", Status: evidence.DNSSecure, DSKeyTags: []uint16{2371}, KeyTags: []uint16{2371}, Algorithms: []int{13}},
		},
	}
}

// insecureDomain is a domain below an unsigned delegation from its TLD.
func insecureDomain(name string, sources ...string) evidence.DNSDomain {
	d := secureDomain(name, sources...)
	d.Status = evidence.DNSInsecure
	d.Chain[2] = evidence.DNSZoneStep{Zone: name + ".", Status: evidence.DNSInsecure, DSDenial: "nsec3"}
	return d
}

// bogusDomain is a domain whose own zone fails validation for reason.
func bogusDomain(name, reason string, sources ...string) evidence.DNSDomain {
	d := secureDomain(name, sources...)
	d.Status, d.BogusReason, d.Exists = evidence.DNSBogus, reason, "unknown"
	d.Chain[2].Status, d.Chain[2].BogusReason = evidence.DNSBogus, reason
	d.Error = "validation of " + name + ". failed"
	return d
}

func withDomains(ds ...evidence.DNSDomain) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) { b.Supply.DNSSEC.Domains = ds }
}

// dnssecRubrics are the embedded rubric versions whose provenance
// dimension reads the dnssec signal.
func dnssecRubrics(t *testing.T) []*Rubric {
	t.Helper()
	var out []*Rubric
	for _, v := range Versions() {
		if r := mustLoad(t, v); r.readsDNSSEC() {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatal("no rubric version reads the dnssec signal")
	}
	return out
}

// TestProvenanceDNSSEC runs the DNSSEC cases of the provenance dimension
// on supplyBundle, whose only domain, acme.dev (homepage and maintainer
// email), is secure, under every rubric that reads dnssec.
func TestProvenanceDNSSEC(t *testing.T) {
	home := secureDomain("acme.dev", "homepage", "maintainer_email")
	besideHome := func(ds ...evidence.DNSDomain) func(*evidence.Bundle) {
		return withDomains(append([]evidence.DNSDomain{home}, ds...)...)
	}
	nxEmail := secureDomain("acme-mail.dev", "maintainer_email")
	nxEmail.Exists, nxEmail.NXDomainProof = "no", "nsec"
	nxHome := insecureDomain("acme-notes.app", "homepage", "mcp_name")
	nxHome.Exists, nxHome.NXDomainProof = "no", "none"
	dangling := secureDomain("docs.acme.dev", "homepage")
	dangling.CNAMEs, dangling.DanglingCNAME, dangling.NXDomainProof = []string{"acme-docs.pages.example"}, true, "nsec"
	indeterminate := evidence.DNSDomain{Name: "kato.codes", Sources: []string{"author_url"}, Status: evidence.DNSIndeterminate, Exists: "unknown",
		Chain: []evidence.DNSZoneStep{rootStep, {Zone: "codes.", Status: evidence.DNSIndeterminate, Error: "SERVFAIL"}}, Error: "codes. DNSKEY: SERVFAIL"}
	reg := func(fn func(r *evidence.RegistryMeta)) func(*evidence.Bundle) {
		return func(b *evidence.Bundle) { fn(b.Supply.Registry) }
	}

	tests := []probeCase{
		{name: "all_secure", modify: besideHome(secureDomain("gmail.com", "maintainer_email")), want: outcome{State: StateScored, Score: 100}},
		{name: "observed_without_domains", modify: withDomains(), want: outcome{State: StateScored, Score: 100}},
		{
			name:   "insecure_homepage",
			modify: withDomains(insecureDomain("acme.dev", "homepage", "maintainer_email")),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.dnssec.unsigned acme.dev"}},
		},
		{
			name:   "insecure_author_url",
			modify: besideHome(insecureDomain("kato.codes", "author_url")),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.dnssec.unsigned kato.codes"}},
		},
		{
			// An email provider being unsigned is reported and deducts
			// nothing: it is not the project's own claim to a domain.
			name:   "insecure_maintainer_email_domain_only",
			modify: besideHome(insecureDomain("quillmail.io", "maintainer_email")),
			want:   outcome{State: StateScored, Score: 100, Findings: []string{"pkg.dnssec.unsigned quillmail.io"}},
		},
		{
			name:   "insecure_penalty_once",
			modify: withDomains(insecureDomain("acme.dev", "homepage"), insecureDomain("kato.codes", "author_url")),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.dnssec.unsigned acme.dev", "pkg.dnssec.unsigned kato.codes"}},
		},
		{
			name:   "nonexistent_email_domain_nsec_proof",
			modify: besideHome(nxEmail),
			want:   outcome{State: StateScored, Score: 50, Findings: []string{"pkg.dnssec.nxdomain acme-mail.dev"}},
		},
		{
			// Unsigned and nonexistent: two kinds, two deductions.
			name:   "nonexistent_homepage_domain_unsigned",
			modify: besideHome(nxHome),
			want:   outcome{State: StateScored, Score: 40, Findings: []string{"pkg.dnssec.nxdomain acme-notes.app", "pkg.dnssec.unsigned acme-notes.app"}},
		},
		{
			name:   "nxdomain_penalty_once",
			modify: besideHome(nxEmail, nxHome),
			want: outcome{State: StateScored, Score: 40, Findings: []string{
				"pkg.dnssec.nxdomain acme-mail.dev", "pkg.dnssec.nxdomain acme-notes.app", "pkg.dnssec.unsigned acme-notes.app",
			}},
		},
		{
			name:   "dangling_cname",
			modify: besideHome(dangling),
			want:   outcome{State: StateScored, Score: 70, Findings: []string{"pkg.dnssec.dangling_cname docs.acme.dev"}},
		},
		{
			name:   "two_bogus_domains_one_deduction",
			modify: withDomains(bogusDomain("acme.dev", "bad_signature", "homepage"), bogusDomain("kato.codes", "signature_expired", "author_url")),
			want:   outcome{State: StateScored, Score: 60, Findings: []string{"pkg.dnssec.bogus acme.dev", "pkg.dnssec.bogus kato.codes"}},
		},
		{
			name:   "indeterminate",
			modify: besideHome(indeterminate),
			want:   outcome{State: StateScored, Score: 90, Findings: []string{"pkg.dnssec.indeterminate kato.codes"}},
		},
		{
			name: "unknown_status_is_not_judged",
			modify: besideHome(evidence.DNSDomain{Name: "kato.codes", Sources: []string{"author_url"}, Status: "partial", Exists: "unknown",
				Chain: []evidence.DNSZoneStep{}}),
			want: outcome{State: StateScored, Score: 90, Findings: []string{"pkg.dnssec.indeterminate kato.codes"}},
		},
		{
			// 100 - 50 - 30 - 40 - 10 - 10, clamped.
			name: "clamped_at_zero",
			modify: withDomains(nxEmail, dangling, bogusDomain("acme.dev", "missing_rrsig", "mcp_name"),
				insecureDomain("kato.codes", "author_url"), indeterminate),
			want: outcome{State: StateScored, Score: 0, Findings: []string{
				"pkg.dnssec.bogus acme.dev", "pkg.dnssec.dangling_cname docs.acme.dev", "pkg.dnssec.indeterminate kato.codes",
				"pkg.dnssec.nxdomain acme-mail.dev", "pkg.dnssec.unsigned kato.codes",
			}},
		},
		{
			name:   "added_to_the_registry_deductions",
			modify: both(reg(func(r *evidence.RegistryMeta) { r.Provenance = false }), besideHome(dangling)),
			want:   outcome{State: StateScored, Score: 40, Findings: []string{"pkg.dnssec.dangling_cname docs.acme.dev", "pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			name:   "dnssec_unavailable",
			modify: setSignal(evidence.SignalDNSSEC, "unavailable", "resolver 10.0.0.53:53 strips DNSSEC data: no RRSIG in the answer for . DNSKEY"),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.unverified mcp-notes@1.2.3"}},
		},
		{
			name:   "dnssec_error",
			modify: setSignal(evidence.SignalDNSSEC, "error", "dnssec result: unexpected end of JSON input"),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.unverified mcp-notes@1.2.3"}},
		},
		{
			name:   "dnssec_missing",
			modify: setSignal(evidence.SignalDNSSEC, "missing", ""),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.unverified mcp-notes@1.2.3"}},
		},
		{
			// The evidence of a signal that was not observed is not read.
			name:   "dnssec_unavailable_evidence_not_read",
			modify: both(setSignal(evidence.SignalDNSSEC, "unavailable", "no resolver answered"), besideHome(nxEmail)),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.unverified mcp-notes@1.2.3"}},
		},
		{
			// The registry findings are still reported.
			name:   "dnssec_unavailable_still_reports_the_metadata",
			modify: both(setSignal(evidence.SignalDNSSEC, "unavailable", "no resolver answered"), reg(func(r *evidence.RegistryMeta) { r.Provenance = false })),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.unverified mcp-notes@1.2.3", "pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			name:   "dnssec_not_assessed_scores_from_the_other_two",
			modify: both(setSignal(evidence.SignalDNSSEC, "not_assessed", "disabled with --skip dnssec"), besideHome(nxEmail)),
			want:   outcome{State: StateScored, Score: 100},
		},
		{
			name: "dnssec_not_assessed_with_deductions",
			modify: both(setSignal(evidence.SignalDNSSEC, "not_assessed", "no domain to check"),
				reg(func(r *evidence.RegistryMeta) { r.Provenance = false }), func(b *evidence.Bundle) { b.Supply.DNSSEC = nil }),
			want: outcome{State: StateScored, Score: 70, Findings: []string{"pkg.supply.registry.no_provenance mcp-notes@1.2.3"}},
		},
		{
			// Neither GitHub nor DNSSEC had anything to check: scored from
			// the metadata, as in rubric v3.
			name: "dnssec_and_github_not_assessed_without_a_github_repository",
			modify: both(setSignal(evidence.SignalDNSSEC, "not_assessed", "no domain to check"),
				setSignal(evidence.SignalGitHub, "not_assessed", "no repository on GitHub declared"),
				reg(func(r *evidence.RegistryMeta) {
					r.RepositoryURL = "git+https://gitlab.com/acme/mcp-notes.git"
					r.Repository = &evidence.Repository{Host: "gitlab.com", Owner: "acme", Name: "mcp-notes"}
					r.MCPName = "dev.acme/notes"
				}), func(b *evidence.Bundle) {
					b.Supply.GitHub, b.Supply.DNSSEC = nil, nil
					if b.Supply.MCPRegistry != nil {
						b.Supply.MCPRegistry.Name = "dev.acme/notes"
					}
				}),
			want: outcome{State: StateScored, Score: 75},
		},
		{
			// Skipping GitHub with a GitHub repository declared is still an
			// opt-out that drops the dimension.
			name: "dnssec_and_github_skipped",
			modify: both(setSignal(evidence.SignalDNSSEC, "not_assessed", "--skip dnssec"),
				setSignal(evidence.SignalGitHub, "not_assessed", "--skip github")),
			want: outcome{State: StateDropped, Score: 0},
		},
		{
			name: "dnssec_not_assessed_registry_metadata_unavailable",
			modify: both(setSignal(evidence.SignalDNSSEC, "not_assessed", "--skip dnssec"),
				setSignal(evidence.SignalRegistryMeta, "unavailable", "registry: 503")),
			want: outcome{State: StateZeroPoint, Score: 0},
		},
		{
			// The DNSSEC findings are reported although the dimension gets
			// its zero point.
			name:   "dnssec_observed_registry_metadata_unavailable",
			modify: both(setSignal(evidence.SignalRegistryMeta, "unavailable", "registry: 503"), besideHome(nxEmail, dangling)),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.dangling_cname docs.acme.dev", "pkg.dnssec.nxdomain acme-mail.dev"}},
		},
		{
			name:   "dnssec_observed_github_error",
			modify: both(setSignal(evidence.SignalGitHub, "error", "decode: EOF"), withDomains(insecureDomain("acme.dev", "homepage"))),
			want:   outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.dnssec.unsigned acme.dev"}},
		},
		{
			name:   "dnssec_observed_without_a_result",
			modify: func(b *evidence.Bundle) { b.Supply.DNSSEC = nil },
			want:   outcome{State: StateZeroPoint, Score: 0},
		},
	}
	for _, reason := range []string{"bad_signature", "signature_expired", "signature_not_yet_valid", "no_dnskey_matching_ds", "missing_rrsig", "missing_dnskey", "missing_denial_proof"} {
		tests = append(tests, probeCase{
			name:   "bogus_" + reason,
			modify: withDomains(bogusDomain("acme.dev", reason, "homepage", "maintainer_email")),
			want:   outcome{State: StateScored, Score: 60, Findings: []string{"pkg.dnssec.bogus acme.dev"}},
		})
	}
	for _, r := range dnssecRubrics(t) {
		for _, tt := range tests {
			t.Run(tt.name+"/v"+r.Version, func(t *testing.T) {
				b := supplyBundle()
				if tt.modify != nil {
					tt.modify(b)
				}
				got := outcomeOf(Evaluate(b, r), DimensionProvenance)
				if tt.want.Findings == nil {
					tt.want.Findings = []string{}
				}
				if d := diff(tt.want.under(r.Version), got); d != "" {
					t.Errorf("provenance (-want +got):\n%s", d)
				}
			})
		}
	}
}

// TestDNSSECIgnoredBeforeV4: rubrics whose provenance does not name the
// dnssec signal neither read DNSSEC evidence nor report it.
func TestDNSSECIgnoredBeforeV4(t *testing.T) {
	b := supplyBundle()
	nx := insecureDomain("acme-mail.dev", "maintainer_email")
	nx.Exists = "no"
	withDomains(bogusDomain("acme.dev", "bad_signature", "homepage"), nx)(b)
	unavailable := supplyBundle()
	delete(unavailable.Signals, evidence.SignalDNSSEC)
	for _, v := range Versions() {
		r := mustLoad(t, v)
		if r.readsDNSSEC() {
			continue
		}
		for name, b := range map[string]*evidence.Bundle{"bogus_and_nxdomain": b, "dnssec_missing": unavailable} {
			res := Evaluate(b, r)
			for _, f := range res.Findings {
				if strings.HasPrefix(f.Code, "pkg.dnssec.") {
					t.Errorf("v%s %s: emitted %s", v, name, f.Code)
				}
			}
			if d, ok := r.Dimension(DimensionProvenance); ok {
				if got := dim(res, d.ID); got.State != StateScored || got.Score != 100 || strings.Contains(got.Reason, "DNSSEC") {
					t.Errorf("v%s %s: provenance %+v, want 100 without a word of DNSSEC", v, name, got)
				}
			}
		}
	}
}

// TestDNSSECFindings pins the severity, message and evidence of each
// DNSSEC finding.
func TestDNSSECFindings(t *testing.T) {
	nxEmail := secureDomain("acme-mail.dev", "maintainer_email", "homepage")
	nxEmail.Exists, nxEmail.NXDomainProof = "no", "nsec"
	nxMCP := insecureDomain("notes.example", "mcp_name")
	nxMCP.Exists, nxMCP.NXDomainProof = "no", "nsec3_optout"
	dangling := secureDomain("docs.acme.dev", "homepage")
	dangling.CNAMEs, dangling.DanglingCNAME, dangling.NXDomainProof = []string{"acme.netlify.example", "acme-docs.pages.example"}, true, "nsec3"
	bogus := bogusDomain("acme.dev", "signature_expired", "author_url")
	bogus.Error = "RRSIG of acme.dev. SOA expired 2026-04-30T00:00:00Z"
	indeterminate := evidence.DNSDomain{Name: "kato.codes", Sources: []string{"author_url"}, Status: evidence.DNSIndeterminate, Exists: "unknown", Error: "codes. DNSKEY: SERVFAIL"}
	b := supplyBundle()
	withDomains(nxEmail, nxMCP, dangling, bogus, indeterminate)(b)
	r := Current()
	prov, _ := r.Dimension(DimensionProvenance)
	res := Evaluate(b, r)
	var got []Finding
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, "pkg.dnssec.") {
			got = append(got, f)
		}
	}
	finding := func(code string, sev Severity, subject, message, ev string) Finding {
		return Finding{Code: code, Kind: KindFinding, Severity: sev, Dimension: DimensionProvenance, Subject: subject, Message: message, Evidence: ev}
	}
	want := []Finding{
		finding(CodeDNSSECBogus, SeverityHigh, "acme.dev",
			"DNSSEC validation of acme.dev (author_url) fails (signature_expired at zone acme.dev.): validating resolvers refuse its answers, and a forged answer looks the same",
			"name acme.dev; sources author_url; bogus_reason signature_expired; broken at zone acme.dev.; RRSIG of acme.dev. SOA expired 2026-04-30T00:00:00Z"),
		finding(CodeDNSSECDanglingCNAME, SeverityMedium, "docs.acme.dev",
			"docs.acme.dev (homepage) is a CNAME whose chain ends at acme-docs.pages.example, which does not exist: whoever registers acme-docs.pages.example serves docs.acme.dev",
			"name docs.acme.dev; sources homepage; cnames acme.netlify.example -> acme-docs.pages.example; target exists: no; nxdomain_proof: nsec3"),
		finding(CodeDNSSECIndeterminate, SeverityInfo, "kato.codes",
			"the DNSSEC chain of kato.codes (author_url) could not be judged: whether it is signed, and whether it exists, is unknown",
			"name kato.codes; sources author_url; status indeterminate; codes. DNSKEY: SERVFAIL"),
		finding(CodeDNSSECNXDomain, SeverityHigh, "acme-mail.dev",
			"the maintainer email domain acme-mail.dev does not exist (proven by a signed NSEC denial): anyone can register it and take the maintainer's registry account over by a password reset",
			"name acme-mail.dev; sources maintainer_email, homepage; exists: no; nxdomain_proof: nsec"),
		finding(CodeDNSSECNXDomain, SeverityMedium, "notes.example",
			"the domain notes.example (mcp_name) does not exist (the denial is not signed, so it is not proven): whoever registers it controls what the package points its users to",
			"name notes.example; sources mcp_name; exists: no; nxdomain_proof: nsec3_optout"),
		finding(CodeDNSSECUnsigned, SeverityInfo, "notes.example",
			"notes.example (mcp_name) is not DNSSEC-signed: answers for it cannot be authenticated",
			"name notes.example; sources mcp_name; status insecure from zone notes.example. (no DS, proven by nsec3)"),
	}
	if d := diff(want, got); d != "" {
		t.Errorf("DNSSEC findings (-want +got):\n%s", d)
	}
	wantDim := DimensionScore{ID: DimensionProvenance, Weight: prov.Weight, State: StateScored, Score: 0,
		Reason: "domains acme-mail.dev, notes.example do not exist (-50); dangling CNAME at docs.acme.dev (-30); DNSSEC bogus for acme.dev (-40); " +
			"own domain notes.example not DNSSEC-signed (-10); DNSSEC state of kato.codes not judged (-10)"}
	if d := diff(wantDim, dim(res, DimensionProvenance)); d != "" {
		t.Errorf("provenance (-want +got):\n%s", d)
	}

	// Unavailable: under rubric v10, one unverified finding quoting the
	// signal; from v11 none (TestUnverifiedIsNotAFinding), and the same
	// zero point.
	b = supplyBundle()
	b.Signals[evidence.SignalDNSSEC] = evidence.Signal{State: evidence.StateUnavailable, ThirdParty: true,
		Reason: "resolver 10.0.0.53:53 strips DNSSEC data: no RRSIG in the answer for . DNSKEY"}
	for _, f := range Evaluate(b, r).Findings {
		if f.Code == CodeDNSSECUnverified {
			t.Errorf("rubric v%s lists %s among the findings", r.Version, f.Code)
		}
	}
	if d := diff(dim(Evaluate(b, mustLoad(t, "10")), DimensionProvenance).Reason, dim(Evaluate(b, r), DimensionProvenance).Reason); d != "" {
		t.Errorf("provenance reason, v10 against v%s (-v10 +got):\n%s", r.Version, d)
	}
	res = Evaluate(b, mustLoad(t, "10"))
	got = nil
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, "pkg.dnssec.") {
			got = append(got, f)
		}
	}
	want = []Finding{finding(CodeDNSSECUnverified, SeverityLow, "mcp-notes@1.2.3",
		"DNSSEC was not validated: whether the package's domains are signed, bogus or even exist is unknown, not absent",
		"signal dnssec is unavailable: resolver 10.0.0.53:53 strips DNSSEC data: no RRSIG in the answer for . DNSKEY")}
	if d := diff(want, got); d != "" {
		t.Errorf("unverified (-want +got):\n%s", d)
	}
	wantDim = DimensionScore{ID: DimensionProvenance, Weight: prov.Weight, State: StateZeroPoint, Score: 0,
		Reason: "signal dnssec is unavailable: resolver 10.0.0.53:53 strips DNSSEC data: no RRSIG in the answer for . DNSKEY"}
	if d := diff(wantDim, dim(res, DimensionProvenance)); d != "" {
		t.Errorf("provenance (-want +got):\n%s", d)
	}
}

// TestProvenanceReasonV4 pins the reasons that say what DNSSEC
// contributed when it deducted nothing.
func TestProvenanceReasonV4(t *testing.T) {
	const base = `repository github.com/acme/mcp-notes declared and found on GitHub; provenance attestation present; mcpName "io.github.acme/mcp-notes" consistent`
	tests := []struct {
		name   string
		modify func(*evidence.Bundle)
		want   string
	}{
		{"all_secure", nil, base + "; DNSSEC: 1 domain checked, no deduction"},
		{"unsigned_email_provider", withDomains(secureDomain("acme.dev", "homepage"), insecureDomain("gmail.com", "maintainer_email")),
			base + "; DNSSEC: 2 domains checked, no deduction"},
		{"no_domain", withDomains(), base + "; DNSSEC: no domain checked"},
		{"skipped", setSignal(evidence.SignalDNSSEC, "not_assessed", "disabled with --skip dnssec"),
			base + "; scored without DNSSEC: signal dnssec is not_assessed: disabled with --skip dnssec"},
		{"skipped_with_deductions", both(setSignal(evidence.SignalDNSSEC, "not_assessed", "no domain to check"),
			func(b *evidence.Bundle) { b.Supply.Registry.MCPName = "" }),
			"no mcpName (-10); scored without DNSSEC: signal dnssec is not_assessed: no domain to check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := supplyBundle()
			if tt.modify != nil {
				tt.modify(b)
			}
			if got := dim(Evaluate(b, mustLoad(t, "4")), DimensionProvenance).Reason; got != tt.want {
				t.Errorf("reason:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDNSSECFixture scores the realistic fixture under rubric v4: a
// package whose second maintainer's email domain lapsed (NXDOMAIN under
// an unsigned .io opt-out span) and whose author page is a CNAME to a
// deleted hosted blog; its own domain is signed.
func TestDNSSECFixture(t *testing.T) {
	b := loadBundle(t, "dnssec.bundle.json")
	res := Evaluate(b, mustLoad(t, "4"))
	var codes []string
	for _, f := range res.Findings {
		if f.Dimension == DimensionProvenance {
			codes = append(codes, string(f.Severity)+" "+f.Code+" "+f.Subject)
		}
	}
	wantCodes := []string{
		"medium pkg.dnssec.dangling_cname blog.kato.codes",
		"high pkg.dnssec.nxdomain quillmail.io",
		"info pkg.dnssec.unsigned blog.kato.codes",
		"info pkg.dnssec.unsigned quillmail.io",
	}
	if d := diff(wantCodes, codes); d != "" {
		t.Errorf("provenance findings (-want +got):\n%s", d)
	}
	want := DimensionScore{ID: DimensionProvenance, Weight: 5, State: StateScored, Score: 10,
		Reason: "domain quillmail.io does not exist (-50); dangling CNAME at blog.kato.codes (-30); own domain blog.kato.codes not DNSSEC-signed (-10)"}
	if d := diff(want, dim(res, DimensionProvenance)); d != "" {
		t.Errorf("provenance (-want +got):\n%s", d)
	}
	// Every other dimension and finding is as under rubric v3.
	v3 := Evaluate(b, mustLoad(t, "3"))
	for i, d := range v3.Dimensions {
		if d.ID == DimensionProvenance {
			continue
		}
		if x := diff(d, res.Dimensions[i]); x != "" {
			t.Errorf("%s differs from v3 (-v3 +v4):\n%s", d.ID, x)
		}
	}
	var rest []Finding
	for _, f := range res.Findings {
		if !strings.HasPrefix(f.Code, "pkg.dnssec.") {
			rest = append(rest, f)
		}
	}
	if d := diff(v3.Findings, rest); d != "" {
		t.Errorf("non-DNSSEC findings differ from v3 (-v3 +v4):\n%s", d)
	}
}

func TestLoadV4(t *testing.T) {
	v3, v4 := mustLoad(t, "3"), mustLoad(t, "4")
	data, err := os.ReadFile(filepath.Join("versions", "v4.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if v4.Hash != mustParse(t, data).Hash || v4.Hash == v3.Hash {
		t.Errorf("Hash = %s is not the file's", v4.Hash)
	}
	if len(v3.Dimensions) != len(v4.Dimensions) {
		t.Fatalf("v4 has %d dimensions, v3 %d", len(v4.Dimensions), len(v3.Dimensions))
	}
	// The dimensions are v3's; provenance also names dnssec.
	for i, d3 := range v3.Dimensions {
		d4 := v4.Dimensions[i]
		if d3.ID == DimensionProvenance {
			if want := []string{"registry.metadata", "github", "dnssec"}; !slices.Equal(d4.Signals, want) {
				t.Errorf("provenance signals %v, want %v", d4.Signals, want)
			}
			if d4.Weight != d3.Weight || d4.ZeroPoint != 0 || d4.ZeroPointReason != "" || !strings.Contains(d4.Description, "DNSSEC") {
				t.Errorf("provenance = %+v, want v3's weight, zero point 0 and a description of the DNSSEC inputs", d4)
			}
			continue
		}
		if d := diff(d3, d4); d != "" {
			t.Errorf("%s differs from v3 (-v3 +v4):\n%s", d3.ID, d)
		}
	}
	// Every v3 code stays, word for word; the only new codes are DNSSEC's.
	for _, c := range v3.Codes {
		c4, ok := v4.Code(c.Code)
		if d := diff(c, c4); !ok || d != "" {
			t.Errorf("%s differs from v3 (-v3 +v4):\n%s", c.Code, d)
		}
	}
	for _, c := range v4.Codes {
		if _, ok := v3.Code(c.Code); !ok && !strings.HasPrefix(c.Code, "pkg.dnssec.") {
			t.Errorf("%s: new in v4 and not a DNSSEC code", c.Code)
		}
	}
	// The parameters are v3's plus parameters.supply.dnssec.
	p3, p4 := v3.Params, v4.Params
	s3, s4 := *p3.Supply, *p4.Supply
	p3.Supply, p4.Supply, s4.DNSSEC = nil, nil, nil
	if d := diff(p3, p4); d != "" {
		t.Errorf("parameters differ from v3 (-v3 +v4):\n%s", d)
	}
	if d := diff(s3, s4); d != "" {
		t.Errorf("parameters.supply differ from v3 (-v3 +v4):\n%s", d)
	}
	if v3.Params.Supply.DNSSEC != nil {
		t.Error("v3 has DNSSEC parameters")
	}
	want := DNSSECParams{NXDomainPenalty: 50, DanglingCNAMEPenalty: 30, BogusPenalty: 40, InsecurePenalty: 10,
		InsecurePenaltySources: []string{"homepage", "mcp_name", "author_url"}, IndeterminatePenalty: 10}
	if d := diff(&want, v4.Params.Supply.DNSSEC); d != "" {
		t.Errorf("parameters.supply.dnssec (-want +got):\n%s", d)
	}
}

// TestDNSSECCatalog checks the severities the DNSSEC codes were specified
// with, and that their prefix names the signal their dimension reads.
func TestDNSSECCatalog(t *testing.T) {
	want := map[string]struct {
		severity Severity
		graded   bool
	}{
		CodeDNSSECNXDomain:      {SeverityHigh, true},
		CodeDNSSECDanglingCNAME: {SeverityMedium, false},
		CodeDNSSECBogus:         {SeverityHigh, false},
		CodeDNSSECUnsigned:      {SeverityInfo, false},
		CodeDNSSECIndeterminate: {SeverityInfo, false},
		CodeDNSSECUnverified:    {SeverityLow, false},
	}
	for _, v := range Versions() {
		r := mustLoad(t, v)
		n := 0
		for _, c := range r.Codes {
			if strings.HasPrefix(c.Code, "pkg.dnssec.") {
				n++
			}
		}
		if !r.readsDNSSEC() {
			if n != 0 {
				t.Errorf("v%s does not read dnssec but catalogues %d pkg.dnssec codes", v, n)
			}
			continue
		}
		wantN := len(want)
		if compareVersions(v, unverifiedUntil) >= 0 {
			wantN-- // pkg.dnssec.unverified is a signal state from v11
		}
		if n != wantN {
			t.Errorf("v%s has %d pkg.dnssec codes, want %d", v, n, wantN)
		}
		for code, w := range want {
			if code == CodeDNSSECUnverified && compareVersions(v, unverifiedUntil) >= 0 {
				continue
			}
			def, ok := r.Code(code)
			if !ok {
				t.Errorf("v%s: %s missing", v, code)
				continue
			}
			if def.Severity != w.severity || def.Graded != w.graded || def.Dimension != DimensionProvenance || def.Kind != KindFinding {
				t.Errorf("v%s %s: %s %s %s graded %v, want finding %s provenance graded %v", v, code, def.Kind, def.Severity, def.Dimension, def.Graded, w.severity, w.graded)
			}
			if strings.TrimSpace(def.Description) == "" || strings.TrimSpace(def.Remediation) == "" {
				t.Errorf("v%s %s: description or remediation missing", v, code)
			}
			d, _ := r.Dimension(def.Dimension)
			if !slices.Contains(d.Signals, evidence.SignalDNSSEC) {
				t.Errorf("v%s %s: its dimension %s does not name signal dnssec", v, code, d.ID)
			}
		}
	}
}

// TestLoadRejectsBadV4 mutates the embedded v4 file and checks that
// validation catches each mutation.
func TestLoadRejectsBadV4(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("versions", "v4.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := string(base)
	v3, err := os.ReadFile(filepath.Join("versions", "v3.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	block := b[strings.Index(b, "    dnssec:\n"):strings.Index(b, "    maintenance:\n")]
	withoutBlock := strings.Replace(b, block, "", 1)
	nxCode := b[strings.Index(b, "  - code: pkg.dnssec.bogus\n"):strings.Index(b, "  - code: pkg.dnssec.unsigned\n")]
	tests := []struct {
		name, data, want string
	}{
		{"dnssec_parameters_missing", withoutBlock, "parameters.supply.dnssec: missing, and the provenance dimension names signal dnssec"},
		{"dnssec_parameters_nothing_reads", strings.Replace(string(v3), "    maintenance:\n", block+"    maintenance:\n", 1),
			"parameters.supply.dnssec: present, but the provenance dimension does not name signal dnssec"},
		{"dnssec_parameters_without_the_signal", strings.Replace(b, "signals: [registry.metadata, github, dnssec]", "signals: [registry.metadata, github]", 1),
			"parameters.supply.dnssec: present, but the provenance dimension does not name signal dnssec"},
		{"negative_penalty", strings.Replace(b, "bogus_penalty: 40", "bogus_penalty: -40", 1), "parameters.supply.dnssec.bogus_penalty: -40 must be 0 or more"},
		{"unknown_source", strings.Replace(b, "insecure_penalty_sources: [homepage,", "insecure_penalty_sources: [home_page,", 1),
			`insecure_penalty_sources: "home_page" is not one of`},
		{"empty_sources", strings.Replace(b, "insecure_penalty_sources: [homepage, mcp_name, author_url]", "insecure_penalty_sources: []", 1),
			"insecure_penalty_sources: empty"},
		{"misspelt_parameter", strings.Replace(b, "nxdomain_penalty:", "nx_domain_penalty:", 1), "field nx_domain_penalty not found"},
		{"dnssec_code_missing", strings.Replace(b, nxCode, "", 1), "probe emits pkg.dnssec.bogus, which is not in the catalog"},
		{"nxdomain_not_graded", strings.Replace(b, "    severity: high\n    graded: true\n    dimension: provenance\n", "    severity: high\n    dimension: provenance\n", 1),
			"code pkg.dnssec.nxdomain: its probe grades each finding's severity, so the catalog must mark it graded"},
		{"dnssec_code_wrong_dimension", strings.Replace(b, "    severity: low\n    dimension: provenance\n    description: >-\n      The dnssec signal", "    severity: low\n    dimension: maintenance_signal\n    description: >-\n      The dnssec signal", 1),
			`code pkg.dnssec.unverified: catalogued under "maintenance_signal", but emitted by dimension "provenance"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == b {
				t.Fatal("the mutation changed nothing")
			}
			_, err := parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse error:\n%v\nwant it to contain %q", err, tt.want)
			}
		})
	}
	// Without the dnssec signal and its parameters, the DNSSEC codes are
	// orphans: no probe of that rubric emits them.
	noSignal := strings.Replace(withoutBlock, "signals: [registry.metadata, github, dnssec]", "signals: [registry.metadata, github]", 1)
	_, err = parse([]byte(noSignal))
	if err == nil || !strings.Contains(err.Error(), "code pkg.dnssec.nxdomain: no probe emits it") {
		t.Errorf("parse without the dnssec signal: %v, want the DNSSEC codes reported as emitted by no probe", err)
	}
}

// v3Hash is the SHA-256 of rubric v3 as released.
const v3Hash = "sha256:d22f420925f6b33911808515898d000e81fded92b6e62dec8d20b488ceec03e8"

func TestV3Unchanged(t *testing.T) {
	if got := mustLoad(t, "3").Hash; got != v3Hash {
		t.Errorf("rubric v3 hash = %s, want %s: v3.yaml was edited; make a new version instead", got, v3Hash)
	}
}

// TestV3Golden evaluates the fixtures under rubric v3 and compares with the
// results the code gave before rubric v4 existed (never rewritten): adding
// the DNSSEC inputs of v4 must not change a finding, reason or score under
// v3, even for a bundle that holds DNSSEC evidence.
func TestV3Golden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v3.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]json.RawMessage
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) != 9 {
		t.Fatalf("golden holds %d results, want 9", len(golden))
	}
	v3 := mustLoad(t, "3")
	for key, want := range golden {
		t.Run(key, func(t *testing.T) {
			name, _ := strings.CutSuffix(key, "/v3")
			var b *evidence.Bundle
			if base, ok := strings.CutSuffix(name, "+rich_behavior"); ok {
				b = loadBundle(t, base+".bundle.json")
				watched(func(bh *evidence.Behavior) { *bh = *richBehavior() })(b)
			} else {
				b = loadBundle(t, name+".bundle.json")
			}
			got, err := json.Marshal(Evaluate(b, v3))
			if err != nil {
				t.Fatal(err)
			}
			var w, g any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if d := diff(w, g); d != "" {
				t.Errorf("result under rubric v3 differs from the released one (-want +got):\n%s", d)
			}
		})
	}
}
