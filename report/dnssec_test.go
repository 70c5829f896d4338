package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// TestDNSSECSection checks what the SUPPLY CHAIN section shows for the
// fixture with DNSSEC evidence: the resolver and anchor, and per domain its
// sources, status with the bogus reason, existence with the NXDOMAIN proof,
// CNAMEs with a dangling one marked, and where the chain broke.
func TestDNSSECSection(t *testing.T) {
	out := tableText(t, build(t, loadBundle(t, "dnssec")))
	for _, want := range []string{
		"dnssec    observed      5 domains: 3 secure, 1 insecure, 1 BOGUS; 1 NONEXISTENT; 1 DANGLING CNAME",
		"resolver  127.0.0.1:5353  checked 2026-11-28T10:15:02Z",
		"anchor    zone .  key tags 20326, 38696  (embedded:iana-root-anchors)",
		"DOMAIN           SOURCES           STATUS                         EXISTS             CNAME",
		"docs.pgtools.io  homepage          insecure                       yes                -                                                 insecure from pgtools.io. (no DS, proof: nsec3)",
		"pgtools.dev      maintainer_email  secure                         yes                -                                                 unbroken",
		"reyes-labs.com   maintainer_email  secure                         NO (proof: nsec3)",
		"www.pgtools.dev  author_url        secure                         yes                -> pgtools-site.pages.dev DANGLING (proof: nsec)  unbroken",
		"mcp.pgtools.dev  mcp_name          BOGUS (no_dnskey_matching_ds)  unknown            -                                                 bogus at mcp.pgtools.dev.",
		"error on mcp.pgtools.dev: DS key tags [48213] match none of the DNSKEYs of mcp.pgtools.dev. (key tags [6104 39822])",
		"dnssec             observed      third party  127.0.0.1:5353",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if sc := section(t, out, "SUPPLY CHAIN"); strings.Contains(sc, "UNVERIFIED") || strings.Contains(sc, "Unverified:") {
		t.Errorf("every supply-chain signal was observed, but the table says unverified:\n%s", sc)
	}
	checkNeverClean(t, out)
}

// TestDNSSECRows checks the table's rendering of domains the fixture does
// not hold: several sources, an indeterminate chain, a CNAME chain, an
// unproven nonexistence, no domains at all, and text that tries to drive
// the terminal.
func TestDNSSECRows(t *testing.T) {
	b := loadBundle(t, "dnssec")
	ds := b.Supply.DNSSEC
	ds.Domains = []evidence.DNSDomain{
		{
			Name: "pgtools.dev", Sources: []string{"maintainer_email", "mcp_name"}, Status: evidence.DNSIndeterminate, Exists: "unknown",
			Chain: []evidence.DNSZoneStep{{Zone: ".", Status: evidence.DNSSecure}, {Zone: "dev.", Status: evidence.DNSIndeterminate, Error: "timeout"}},
			Error: "dns: DS pgtools.dev.: read udp: i/o timeout",
		},
		{
			Name: "a.pgtools.io", Sources: []string{"homepage"}, Status: evidence.DNSInsecure, Exists: "yes",
			CNAMEs: []string{"b.pgtools.io", "c.hosting.example"}, Chain: []evidence.DNSZoneStep{{Zone: ".", Status: evidence.DNSSecure}, {Zone: "pgtools.io.", Status: evidence.DNSInsecure}},
		},
		{Name: "gone.example", Sources: []string{"author_url"}, Status: evidence.DNSInsecure, Exists: "no", NXDomainProof: "none"},
		{Name: "x\x1b]0;pwned\x07.example", Sources: []string{"home\u202epage"}, Status: evidence.DNSBogus, Exists: "unknown", Error: "bad\r\nline"},
	}
	out := tableText(t, build(t, b))
	for _, want := range []string{
		"4 domains: 2 insecure, 1 BOGUS, 1 indeterminate; 1 NONEXISTENT",
		"pgtools.dev                maintainer_email, mcp_name  indeterminate  unknown           -                                     indeterminate at dev.",
		"error on pgtools.dev: dns: DS pgtools.dev.: read udp: i/o timeout",
		"a.pgtools.io               homepage                    insecure       yes               -> b.pgtools.io -> c.hosting.example  insecure from pgtools.io.",
		"gone.example               author_url                  insecure       NO (proof: none)  -                                     -",
		`x\x1b]0;pwned\x07.example  home\u202epage`,
		`error on x\x1b]0;pwned\x07.example: bad\r\nline`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("table contains raw %q", bad)
		}
	}

	ds.Domains = nil
	out = tableText(t, build(t, b))
	if !strings.Contains(out, "dnssec    observed      0 domains to check") || strings.Contains(out, "DOMAIN ") {
		t.Errorf("table of a run with no domains:\n%s", out)
	}
	if err := validate(t, compileSchema(t), mustJSON(t, build(t, b))); err != nil {
		t.Errorf("report with no domains does not validate: %v", err)
	}
}

// TestDNSSECJSON checks the supply.dnssec member: every field of the
// evidence is carried, and lists are [] rather than omitted.
func TestDNSSECJSON(t *testing.T) {
	b := loadBundle(t, "dnssec")
	rep := build(t, b)
	c := rep.Supply.DNSSEC
	if c.Signal != evidence.SignalDNSSEC || c.Status != StatusObserved || c.State != "observed" || c.Result == nil {
		t.Fatalf("supply.dnssec = %+v, want observed with its result", c)
	}
	r := c.Result
	if r.Resolver != "127.0.0.1:5353" || deref(r.CheckedAt) != "2026-11-28T10:15:02Z" || r.Anchor.Zone != "." ||
		r.Anchor.Source != "embedded:iana-root-anchors" || len(r.Anchor.KeyTags) != 2 || r.Anchor.KeyTags[1] != 38696 {
		t.Errorf("result = %+v", r)
	}
	var got []string
	for _, d := range r.Domains {
		got = append(got, strings.Join([]string{d.Name, strings.Join(d.Sources, "+"), d.Status, d.BogusReason, d.Exists,
			d.NXDomainProof, strings.Join(d.CNAMEs, "+"), map[bool]string{true: "dangling"}[d.DanglingCNAME]}, " "))
	}
	want := []string{
		"docs.pgtools.io homepage insecure  yes   ",
		"pgtools.dev maintainer_email secure  yes   ",
		"reyes-labs.com maintainer_email secure  no nsec3  ",
		"www.pgtools.dev author_url secure  yes nsec pgtools-site.pages.dev dangling",
		"mcp.pgtools.dev mcp_name bogus no_dnskey_matching_ds unknown   ",
	}
	if d := diff(want, got); d != "" {
		t.Errorf("domains (-want +got):\n%s", d)
	}
	last := r.Domains[4]
	if s := last.Chain[3]; s.Zone != "mcp.pgtools.dev." || s.Status != "bogus" || s.BogusReason != "no_dnskey_matching_ds" ||
		len(s.DSKeyTags) != 1 || s.DSKeyTags[0] != 48213 || len(s.KeyTags) != 2 || len(s.Algorithms) != 1 || s.Algorithms[0] != 13 ||
		s.Error == "" || last.Error != s.Error {
		t.Errorf("bogus chain step = %+v (domain error %q)", s, last.Error)
	}
	if s := r.Domains[0].Chain[2]; s.Zone != "pgtools.io." || s.Status != "insecure" || s.DSDenial != "nsec3" {
		t.Errorf("insecure chain step = %+v", s)
	}

	m := reportJSON(t, rep)
	res := m["supply"].(map[string]any)["dnssec"].(map[string]any)["result"].(map[string]any)
	dom := res["domains"].([]any)[0].(map[string]any)
	for _, key := range []string{"sources", "cnames", "chain"} {
		if v, ok := dom[key].([]any); !ok || v == nil {
			t.Errorf("domains[0].%s = %#v, want a list", key, dom[key])
		}
	}
	step := dom["chain"].([]any)[2].(map[string]any)
	for _, key := range []string{"ds_key_tags", "key_tags", "algorithms"} {
		if v, ok := step[key].([]any); !ok || len(v) != 0 {
			t.Errorf("chain[2].%s = %#v, want []", key, step[key])
		}
	}
	for _, key := range []string{"bogus_reason", "nxdomain_proof", "error"} {
		if v, ok := dom[key]; !ok || v != "" {
			t.Errorf("domains[0].%s = %#v, want \"\"", key, v)
		}
	}
	if v, ok := dom["dangling_cname"]; !ok || v != false {
		t.Errorf("domains[0].dangling_cname = %#v, want false", v)
	}

	// A run whose evidence carries no lists at all still reports them as [].
	b.Supply.DNSSEC = &evidence.DNSSECResult{Resolver: "[::1]:53", Anchor: evidence.DNSSECAnchor{Zone: "."}, Domains: []evidence.DNSDomain{{Name: "x.example", Status: "secure", Exists: "yes",
		Chain: []evidence.DNSZoneStep{{Zone: ".", Status: "secure"}}}}}
	data := mustJSON(t, build(t, b))
	if err := validate(t, compileSchema(t), data); err != nil {
		t.Errorf("report from evidence without lists does not validate: %v", err)
	}
	var sparse map[string]any
	if err := json.Unmarshal(data, &sparse); err != nil {
		t.Fatal(err)
	}
	res = sparse["supply"].(map[string]any)["dnssec"].(map[string]any)["result"].(map[string]any)
	if res["checked_at"] != nil || res["resolver"] != "[::1]:53" {
		t.Errorf("checked_at = %v, resolver = %v; want null and [::1]:53", res["checked_at"], res["resolver"])
	}
	if tags, ok := res["anchor"].(map[string]any)["key_tags"].([]any); !ok || tags == nil {
		t.Errorf("anchor.key_tags = %#v, want []", res["anchor"])
	}
}

// TestSchemaRejectsDNSSEC checks the schema's hold on supply.dnssec.
func TestSchemaRejectsDNSSEC(t *testing.T) {
	sch := compileSchema(t)
	data := mustJSON(t, build(t, loadBundle(t, "dnssec")))
	if err := validate(t, sch, data); err != nil {
		t.Fatalf("the dnssec report does not validate: %v", err)
	}
	check := func(m map[string]any) map[string]any {
		return m["supply"].(map[string]any)["dnssec"].(map[string]any)
	}
	result := func(m map[string]any) map[string]any { return check(m)["result"].(map[string]any) }
	domain := func(m map[string]any, i int) map[string]any {
		return result(m)["domains"].([]any)[i].(map[string]any)
	}
	step := func(m map[string]any, i, j int) map[string]any {
		return domain(m, i)["chain"].([]any)[j].(map[string]any)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"dnssec_omitted", func(m map[string]any) { delete(m["supply"].(map[string]any), "dnssec") }},
		{"wrong_signal_name", func(m map[string]any) { check(m)["signal"] = "dns" }},
		{"observed_without_result", func(m map[string]any) { check(m)["result"] = nil }},
		{"unverified_with_result", func(m map[string]any) { check(m)["status"], check(m)["state"] = "unverified", "unavailable" }},
		{"result_omitted", func(m map[string]any) { delete(check(m), "result") }},
		{"extra_check_member", func(m map[string]any) { check(m)["verdict"] = "secure" }},
		{"extra_result_member", func(m map[string]any) { result(m)["ad_bit"] = true }},
		{"resolver_with_userinfo", func(m map[string]any) { result(m)["resolver"] = "user:secret@127.0.0.1:53" }},
		{"checked_at_not_utc", func(m map[string]any) { result(m)["checked_at"] = "2026-11-28T11:15:02+01:00" }},
		{"anchor_key_tags_null", func(m map[string]any) { result(m)["anchor"].(map[string]any)["key_tags"] = nil }},
		{"anchor_key_tag_too_big", func(m map[string]any) { result(m)["anchor"].(map[string]any)["key_tags"] = []any{70000} }},
		{"domains_null", func(m map[string]any) { result(m)["domains"] = nil }},
		{"domain_status_unknown", func(m map[string]any) { domain(m, 1)["status"] = "valid" }},
		{"domain_exists_bool", func(m map[string]any) { domain(m, 1)["exists"] = true }},
		{"domain_bogus_reason_on_secure", func(m map[string]any) { domain(m, 1)["bogus_reason"] = "bad_signature" }},
		{"domain_proof_unknown", func(m map[string]any) { domain(m, 2)["nxdomain_proof"] = "nsec5" }},
		{"domain_cnames_omitted", func(m map[string]any) { delete(domain(m, 0), "cnames") }},
		{"domain_sources_null", func(m map[string]any) { domain(m, 0)["sources"] = nil }},
		{"domain_chain_omitted", func(m map[string]any) { delete(domain(m, 0), "chain") }},
		{"domain_dangling_omitted", func(m map[string]any) { delete(domain(m, 3), "dangling_cname") }},
		{"domain_error_omitted", func(m map[string]any) { delete(domain(m, 4), "error") }},
		{"domain_extra_member", func(m map[string]any) { domain(m, 0)["safe"] = true }},
		{"step_status_unknown", func(m map[string]any) { step(m, 0, 0)["status"] = "ok" }},
		{"step_key_tags_omitted", func(m map[string]any) { delete(step(m, 0, 2), "key_tags") }},
		{"step_algorithms_null", func(m map[string]any) { step(m, 0, 0)["algorithms"] = nil }},
		{"step_ds_denial_unknown", func(m map[string]any) { step(m, 0, 2)["ds_denial"] = "nsec4" }},
		{"step_bogus_reason_on_insecure", func(m map[string]any) { step(m, 0, 2)["bogus_reason"] = "missing_rrsig" }},
		{"step_extra_member", func(m map[string]any) { step(m, 0, 0)["ttl"] = 3600 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			tt.mutate(m)
			mutated, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, mutated); err == nil {
				t.Error("schema accepted the mutated report")
			}
		})
	}
}

// TestSchemaV3Kept checks that version 3's schema is still shipped and
// still rejects reports carrying supply.dnssec, which it does not know.
func TestSchemaV3Kept(t *testing.T) {
	v3 := compileSchemaBytes(t, "report.v3.schema.json", mustRead(t, "schema/report.v3.schema.json"))
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, build(t, loadBundle(t, "dnssec"))), &m); err != nil {
		t.Fatal(err)
	}
	m["schema_version"] = "verifymcp.report/v3"
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, v3, data); err == nil {
		t.Error("a v4 report validates against the v3 schema, which forbids supply.dnssec")
	}
	asV4(t, m)
	m["schema_version"] = "verifymcp.report/v3"
	delete(m["supply"].(map[string]any), "dnssec")
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, v3, data); err != nil {
		t.Errorf("without supply.dnssec, the report should be a v3 report: %v", err)
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"https://api.osv.dev", "https://api.osv.dev"},
		{"https://user:pw@api.socket.dev/v0?k=x#f", "https://api.socket.dev/v0"},
		{"127.0.0.1:5353", "127.0.0.1:5353"},
		{"[::1]:53", "[::1]:53"},
		{"[fe80::1%eth0]:53", "[fe80::1%eth0]:53"},
		{"resolver.internal:853", "resolver.internal:853"},
		{"user:pw@10.0.0.1:53", "(withheld: not a URL)"},
		{"10.0.0.1:53/path", "(withheld: not a URL)"},
		{"10.0.0.1:dns", "(withheld: not a URL)"},
		{"://not a url", "(withheld: not a URL)"},
	}
	for _, tt := range tests {
		if got := endpoint(tt.in); got != tt.want {
			t.Errorf("endpoint(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
