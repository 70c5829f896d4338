package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

func reportJSON(t *testing.T, rep Report) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSupplySection checks what the SUPPLY CHAIN section shows for the
// realistic fixture: registry metadata, OSV advisories with their reach
// and fixed versions, Socket's verdict and alerts, GitHub's answer.
func TestSupplySection(t *testing.T) {
	out := tableText(t, build(t, loadBundle(t, "supply")))
	for _, want := range []string{
		"registry  observed      npm @pgtools/mcp-server@0.9.3  DEPRECATED",
		`deprecated   "0.9.x is no longer maintained; use @pgtools/mcp@1 (see https://github.com/pgtools/mcp)"`,
		"repository   git+https://github.com/pgtools/mcp-server.git -> github.com/pgtools/mcp-server",
		"provenance   none",
		"mcpName      io.github.pgtools/mcp-server",
		"osv       observed      3 advisories over 87 packages queried (api)",
		"GHSA-w48q-cv73-mx4w  @modelcontextprotocol/sdk@1.0.1  direct      7.5   1.24.0",
		"GHSA-3xgq-45jj-v275  cross-spawn@7.0.3                transitive  7.5   7.0.5",
		"socket    observed      malware: not flagged by Socket; 4 alerts",
		"cve            high      vulnerability    @modelcontextprotocol/sdk@1.0.1",
		"github    observed      github.com/pgtools/mcp-server  ARCHIVED  pushed 2025-06-10T14:01:55Z",
		"socket             observed      third party  https://api.socket.dev       yes   2026-11-28T07:02:11Z (cache)",
		"dnssec    not assessed  signal dnssec is not_assessed (disabled with --skip dnssec): whether the package's domains are signed",
		"Unverified: dnssec. What these checks would have found is unknown, not clean.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if sc := section(t, out, "SUPPLY CHAIN"); strings.Contains(sc, "UNVERIFIED") {
		t.Errorf("every supply-chain signal was observed or not assessed, but the table says unverified:\n%s", sc)
	}
}

// TestSupplyJSON checks the supply member of the realistic fixture.
func TestSupplyJSON(t *testing.T) {
	b := loadBundle(t, "supply")
	rep := build(t, b)
	sp := rep.Supply
	if sp == nil {
		t.Fatal("supply is null for a bundle with supply-chain evidence")
	}
	for _, c := range []Check{sp.Registry.Check, sp.OSV.Check, sp.Socket.Check, sp.GitHub.Check} {
		if c.Status != StatusObserved || c.State != "observed" {
			t.Errorf("%s: status %s state %s, want observed", c.Signal, c.Status, c.State)
		}
	}
	if sp.Registry.Metadata == nil || sp.OSV.Result == nil || sp.Socket.Result == nil || sp.GitHub.Result == nil {
		t.Fatalf("observed checks without their data: %+v", sp)
	}
	var reach []string
	for _, v := range sp.OSV.Result.Vulnerabilities {
		reach = append(reach, v.ID+" "+v.Reach+" "+strings.Join(v.Fixed, ","))
	}
	want := []string{"GHSA-w48q-cv73-mx4w direct 1.24.0", "GHSA-3xgq-45jj-v275 transitive 7.0.5", "GHSA-v6h2-p8h4-qcjw transitive 1.1.12"}
	if d := diff(want, reach); d != "" {
		t.Errorf("advisories (-want +got):\n%s", d)
	}
	m := sp.Registry.Metadata
	if m.Deprecated == "" || m.Provenance || m.Repository == nil || m.Repository.Owner != "pgtools" || len(m.Maintainers) != 2 ||
		deref(m.PublishedAt) != "2025-06-10T14:22:31Z" {
		t.Errorf("registry metadata = %+v", m)
	}
	if g := sp.GitHub.Result; !g.Archived || !g.Exists || deref(g.PushedAt) != "2025-06-10T14:01:55Z" {
		t.Errorf("github = %+v", g)
	}
	if s := sp.Socket.Result; s.Malware || len(s.Alerts) != 4 || s.Scores["overall"] != 0.25 {
		t.Errorf("socket = %+v", s)
	}
	sig := rep.Signals[evidence.SignalSocket]
	if sig.Endpoint != "https://api.socket.dev" || !sig.Authenticated || !sig.Cached || deref(sig.FetchedAt) != "2026-11-28T07:02:11Z" {
		t.Errorf("signals[socket] = %+v", sig)
	}
}

// TestEverySupplySignalUnavailable checks the report of the fixture in
// which every third-party signal is unavailable (DNSSEC because the
// resolver strips DNSSEC data): every supply-chain check is unverified,
// with no data, in the JSON and in the table; the four supply-chain
// dimensions of rubric v3 are at their zero points.
func TestEverySupplySignalUnavailable(t *testing.T) {
	rep := build(t, loadBundle(t, "unavailable"))
	m := reportJSON(t, rep)
	supply := m["supply"].(map[string]any)
	for part, data := range map[string]string{"registry": "metadata", "osv": "result", "socket": "result", "github": "result", "dnssec": "result"} {
		c := supply[part].(map[string]any)
		if c["status"] != StatusUnverified || c["state"] != "unavailable" || c[data] != nil || c["reason"] == "" {
			t.Errorf("supply.%s = %v, want unverified, unavailable, with its reason and null %s", part, c, data)
		}
	}
	for name, s := range m["signals"].(map[string]any) {
		s := s.(map[string]any)
		if s["third_party"] == true && name != evidence.SignalRegistry && s["state"] != "unavailable" {
			t.Errorf("signals[%s] = %v, want unavailable", name, s)
		}
		if s["state"] == "unavailable" && s["fetched_at"] != nil {
			t.Errorf("signals[%s] was fetched at %v, though unavailable", name, s["fetched_at"])
		}
	}
	for _, d := range rep.Dimensions {
		switch d.ID {
		case rubric.DimensionVulnerability, rubric.DimensionMalware, rubric.DimensionProvenance, rubric.DimensionMaintenance:
			if d.State != string(rubric.StateZeroPoint) || d.Score == nil || *d.Score != 0 {
				t.Errorf("%s = %s %v, want the zero point 0", d.ID, d.State, d.Score)
			}
		}
	}
	out := tableText(t, rep)
	for _, want := range []string{
		"registry  UNVERIFIED    signal registry.metadata is unavailable",
		"osv       UNVERIFIED    signal osv is unavailable",
		"socket    UNVERIFIED    signal socket is unavailable (no Socket API key configured): Socket's malware verdict is unverified, which is not a clean verdict",
		"github    UNVERIFIED    signal github is unavailable",
		"dnssec    UNVERIFIED    signal dnssec is unavailable (the resolver's answers for the trust anchor's keys carry no signatures: " +
			"it filters or strips DNSSEC data; nothing below could be judged): whether the package's domains are signed, bogus, nonexistent or dangling is unknown",
		"dnssec             unavailable   third party  10.0.2.3:53",
		"Unverified: registry, osv, socket, github, dnssec. What these checks would have found is unknown, not clean.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The weight is the rubric's; the state, score and reason are this
	// fixture's.
	if !regexp.MustCompile(`\n  malware_signal +[0-9.]+ +zero_point +0 +signal socket is unavailable: no Socket API key configured\n`).MatchString(out) {
		t.Errorf("table lacks malware_signal at its zero point:\n%s", out)
	}
	checkNeverClean(t, out)
}

// cleanWord finds "clean" not preceded by "not" or "never".
var cleanWord = regexp.MustCompile(`(?i)(\w+)\s+(a\s+)?clean\b`)

// checkNeverClean fails if text calls anything clean other than to say it
// is not.
func checkNeverClean(t *testing.T, text string) {
	t.Helper()
	for _, m := range cleanWord.FindAllStringSubmatch(text, -1) {
		if w := strings.ToLower(m[1]); w != "not" && w != "never" {
			t.Errorf("text says %q", m[0])
		}
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), "clean") {
		t.Error("text starts with clean")
	}
}

// TestUnverifiedNeverClean puts each supply-chain signal of the realistic
// fixture with every check observed in each state other than observed, and
// checks that its check is unverified (labelled not assessed in the table
// when it was deliberately not run), shows none of the evidence still in
// the bundle, and is never called clean.
func TestUnverifiedNeverClean(t *testing.T) {
	parts := map[string]string{
		evidence.SignalRegistryMeta: "registry", evidence.SignalOSV: "osv", evidence.SignalSocket: "socket", evidence.SignalGitHub: "github",
		evidence.SignalDNSSEC: "dnssec",
	}
	for signal, part := range parts {
		for _, state := range []string{"unavailable", "error", "not_assessed", "missing", "observed_without_evidence"} {
			t.Run(part+"/"+state, func(t *testing.T) {
				b := loadBundle(t, "dnssec")
				switch state {
				case "missing":
					delete(b.Signals, signal)
				case "observed_without_evidence":
					switch part {
					case "registry":
						b.Supply.Registry = nil
					case "osv":
						b.Supply.OSV = nil
					case "socket":
						b.Supply.Socket = nil
					case "github":
						b.Supply.GitHub = nil
					case "dnssec":
						b.Supply.DNSSEC = nil
					}
				default:
					b.Signals[signal] = evidence.Signal{State: evidence.State(state), Reason: "why", ThirdParty: true}
				}
				rep := build(t, b)
				m := reportJSON(t, rep)
				c := m["supply"].(map[string]any)[part].(map[string]any)
				data := "result"
				if part == "registry" {
					data = "metadata"
				}
				if c["status"] != StatusUnverified || c[data] != nil {
					t.Errorf("supply.%s = %v, want unverified with null %s", part, c, data)
				}
				if err := validate(t, compileSchema(t), mustJSON(t, rep)); err != nil {
					t.Errorf("report does not validate: %v", err)
				}
				out := tableText(t, rep)
				label := labelUnverified
				if state == "not_assessed" {
					label = labelNotAssessed
				}
				if !strings.Contains(out, padName(part)+"  "+label+"  signal "+signal+" is ") {
					t.Errorf("table does not say %s is %s:\n%s", part, strings.TrimSpace(label), out)
				}
				if !regexp.MustCompile(`Unverified: [a-z, ]*\b` + part + `\b`).MatchString(out) {
					t.Errorf("the Unverified line does not list %s:\n%s", part, out)
				}
				for _, ev := range evidenceText[part] {
					if strings.Contains(out, ev) {
						t.Errorf("table shows %q of the unverified %s check:\n%s", ev, part, out)
					}
				}
				checkNeverClean(t, out)
			})
		}
	}
}

// evidenceText is text of the dnssec fixture that the table shows only
// from each check's evidence.
var evidenceText = map[string][]string{
	"registry": {"14 versions since"},
	"osv":      {"GHSA-3xgq-45jj-v275"},
	"socket":   {"networkAccess"},
	"github":   {"214 stars"},
	"dnssec":   {"reyes-labs.com   ", "pgtools-site.pages.dev", "127.0.0.1:5353  checked"},
}

func mustJSON(t *testing.T, rep Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSupplyNullForOldEvidence checks that supply is null only for
// evidence with neither supply-chain evidence nor signals, scored under a
// rubric that needs none.
func TestSupplyNullForOldEvidence(t *testing.T) {
	b := loadBundle(t, "everything")
	for _, s := range supplySignals {
		delete(b.Signals, s)
	}
	v2, err := rubric.Load("2")
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(b, v2, rubric.Evaluate(b, v2))
	m := reportJSON(t, rep)
	if v, ok := m["supply"]; !ok || v != nil {
		t.Errorf("supply = %v (present %v), want null", v, ok)
	}
	if err := validate(t, compileSchema(t), mustJSON(t, rep)); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
	out := tableText(t, rep)
	if !strings.Contains(out, "SUPPLY CHAIN  not collected: this evidence predates supply-chain checks; all of them are unverified") {
		t.Errorf("table does not say supply-chain checks were not collected:\n%s", out)
	}
	// Under rubric v3, which needs the signals, they are listed as errors
	// and the checks as unverified.
	rep = build(t, b)
	if rep.Supply == nil || rep.Supply.OSV.Status != StatusUnverified || rep.Supply.OSV.State != "error" {
		t.Errorf("supply under v3 = %+v, want every check unverified", rep.Supply)
	}
}

// TestEndpointNeverCarriesCredentials gives the report endpoints that
// carry credentials, which the evidence should never hold, and checks
// that none reaches the JSON or the table.
func TestEndpointNeverCarriesCredentials(t *testing.T) {
	b := loadBundle(t, "supply")
	for name, ep := range map[string]string{
		evidence.SignalSocket: "https://user:sktsec_t0ken@api.socket.dev/v0?api_key=sktsec_t0ken#sktsec_t0ken",
		evidence.SignalGitHub: "https://ghp_t0ken@api.github.com/",
		evidence.SignalOSV:    "://not a url sktsec_t0ken",
	} {
		s := b.Signals[name]
		s.Endpoint = ep
		b.Signals[name] = s
	}
	rep := build(t, b)
	data := mustJSON(t, rep)
	out := tableText(t, rep)
	for _, secret := range []string{"sktsec_t0ken", "ghp_t0ken", "user:"} {
		if bytes.Contains(data, []byte(secret)) || strings.Contains(out, secret) {
			t.Errorf("report carries %q", secret)
		}
	}
	if got := rep.Signals[evidence.SignalSocket].Endpoint; got != "https://api.socket.dev/v0" {
		t.Errorf("socket endpoint = %q", got)
	}
	if got := rep.Signals[evidence.SignalOSV].Endpoint; got != "(withheld: not a URL)" {
		t.Errorf("osv endpoint = %q", got)
	}
	if err := validate(t, compileSchema(t), data); err != nil {
		t.Errorf("report does not validate: %v", err)
	}
}

// TestSchemaRejectsSupply checks the schema's hold on the supply member
// and the new signal members.
func TestSchemaRejectsSupply(t *testing.T) {
	sch := compileSchema(t)
	data := mustJSON(t, build(t, loadBundle(t, "supply")))
	if err := validate(t, sch, data); err != nil {
		t.Fatalf("the supply report does not validate: %v", err)
	}
	sp := func(m map[string]any, part string) map[string]any {
		return m["supply"].(map[string]any)[part].(map[string]any)
	}
	sig := func(m map[string]any, name string) map[string]any {
		return m["signals"].(map[string]any)[name].(map[string]any)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"supply_omitted", func(m map[string]any) { delete(m, "supply") }},
		{"part_omitted", func(m map[string]any) { delete(m["supply"].(map[string]any), "socket") }},
		{"status_clean", func(m map[string]any) { sp(m, "socket")["status"] = "clean" }},
		{"observed_status_on_unavailable_signal", func(m map[string]any) { sp(m, "socket")["state"] = "unavailable" }},
		{"unverified_with_data", func(m map[string]any) { sp(m, "osv")["status"] = "unverified" }},
		{"observed_without_data", func(m map[string]any) { sp(m, "github")["result"] = nil }},
		{"data_omitted", func(m map[string]any) { delete(sp(m, "registry"), "metadata") }},
		{"extra_check_member", func(m map[string]any) { sp(m, "socket")["verdict"] = "clean" }},
		{"wrong_signal_name", func(m map[string]any) { sp(m, "registry")["signal"] = "registry" }},
		{"vulnerabilities_null", func(m map[string]any) { sp(m, "osv")["result"].(map[string]any)["vulnerabilities"] = nil }},
		{"bad_reach", func(m map[string]any) {
			sp(m, "osv")["result"].(map[string]any)["vulnerabilities"].([]any)[0].(map[string]any)["reach"] = "indirect"
		}},
		{"maintainer_email", func(m map[string]any) {
			sp(m, "registry")["metadata"].(map[string]any)["maintainers"].([]any)[0].(map[string]any)["email_domain"] = "dk@pgtools.dev"
		}},
		{"published_not_utc", func(m map[string]any) {
			sp(m, "registry")["metadata"].(map[string]any)["published_at"] = "2025-06-10T16:22:31+02:00"
		}},
		{"endpoint_with_userinfo", func(m map[string]any) { sig(m, "socket")["endpoint"] = "https://key@api.socket.dev" }},
		{"endpoint_with_query", func(m map[string]any) { sig(m, "socket")["endpoint"] = "https://api.socket.dev/v0?api_key=x" }},
		{"fetched_at_not_utc", func(m map[string]any) { sig(m, "osv")["fetched_at"] = "2026-11-28T11:15:41+01:00" }},
		{"authenticated_omitted", func(m map[string]any) { delete(sig(m, "github"), "authenticated") }},
		{"cached_as_string", func(m map[string]any) { sig(m, "socket")["cached"] = "yes" }},
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

// TestSchemaV2Kept checks that version 2's schema is still shipped as it
// was and still describes the reports released under it.
func TestSchemaV2Kept(t *testing.T) {
	v2 := compileSchemaBytes(t, "report.v2.schema.json", mustRead(t, "schema/report.v2.schema.json"))
	if err := validate(t, v2, mustJSON(t, build(t, loadBundle(t, "everything")))); err == nil {
		t.Error("a v3 report validates against the v2 schema, which forbids its new members")
	}
}
