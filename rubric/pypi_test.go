package rubric

import (
	"slices"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// pypiBundle is the PyPI fixture: pgtools-mcp==0.9.3 from a wheel, whose
// tree built one sdist (sqlparse-lite), yanked, no PEP 740 attestation,
// no mcp-name marker, the release document's metadata (no release
// history), and a critical advisory on a package of the pylock whose role
// is unknown.
func pypiBundle(t *testing.T) *evidence.Bundle {
	t.Helper()
	return loadBundle(t, "pypi.bundle.json")
}

func findingOf(res Result, code string) (Finding, bool) {
	for _, f := range res.Findings {
		if f.Code == code {
			return f, true
		}
	}
	return Finding{}, false
}

// TestPyPIFixture: under v10 the PyPI fixture's yank is
// pkg.supply.registry.yanked, not deprecated; under v9 it stays what it
// was, so rescoring under v9 is unchanged.
func TestPyPIFixture(t *testing.T) {
	b := pypiBundle(t)
	res := Evaluate(b, mustLoad(t, "10"))
	want := map[string]outcome{
		"installability":         {State: StateScored, Score: 100, Findings: []string{}},
		"install_scripts":        {State: StateScored, Score: 50, Findings: []string{"pkg.install.scripts.present sqlparse-lite"}},
		"vulnerability_exposure": {State: StateScored, Score: 75, Findings: []string{"pkg.supply.osv.vulnerable h11@0.14.0"}},
		"provenance": {State: StateScored, Score: 60, Findings: []string{
			"pkg.supply.registry.mcpname_absent pgtools-mcp@0.9.3", "pkg.supply.registry.no_provenance pgtools-mcp@0.9.3"}},
		// yanked (-60), first publish unknown (-20), previous release
		// unknown (-10): the release document has no history.
		"maintenance_signal": {State: StateScored, Score: 10, Findings: []string{"pkg.supply.registry.yanked pgtools-mcp@0.9.3"}},
	}
	for id, w := range want {
		if d := diff(w, outcomeOf(res, id)); d != "" {
			t.Errorf("v10 %s (-want +got):\n%s", id, d)
		}
	}
	y, ok := findingOf(res, CodeRegistryYanked)
	if !ok {
		t.Fatal("no yanked finding")
	}
	for _, s := range []string{"yanked (PEP 592)", `"broken wheel metadata, use 0.9.4"`} {
		if !strings.Contains(y.Message, s) {
			t.Errorf("yanked message %q lacks %q", y.Message, s)
		}
	}
	if y.Severity != SeverityMedium || y.Dimension != DimensionMaintenance {
		t.Errorf("yanked: severity %s, dimension %s; want medium, maintenance_signal", y.Severity, y.Dimension)
	}
	if _, ok := findingOf(res, CodeRegistryDeprecated); ok {
		t.Error("a yank fired pkg.supply.registry.deprecated under v10")
	}
	v, _ := findingOf(res, CodeOSVVulnerable)
	if strings.Contains(v.Message, "a transitive dependency") || !strings.Contains(v.Message, "role") {
		t.Errorf("vulnerable message %q claims a reach the pylock does not record", v.Message)
	}
	if r := dim(res, "vulnerability_exposure").Reason; !strings.Contains(r, "role unknown (scored as transitive)") {
		t.Errorf("vulnerability reason %q", r)
	}
	for _, code := range []string{CodeRegistryNoProvenance, CodeRegistryMCPNameAbsent, CodeScriptsPresent} {
		f, _ := findingOf(res, code)
		if strings.Contains(f.Message, "tarball") || strings.Contains(f.Message, "lifecycle script") || strings.Contains(f.Message, "mcpName") {
			t.Errorf("%s: npm's words for a PyPI bundle: %q", code, f.Message)
		}
	}

	v9 := Evaluate(b, mustLoad(t, "9"))
	if d := diff(outcome{State: StateScored, Score: 20, Findings: []string{"pkg.supply.registry.deprecated pgtools-mcp@0.9.3"}},
		outcomeOf(v9, "maintenance_signal")); d != "" {
		t.Errorf("v9 maintenance_signal (-want +got):\n%s", d)
	}
	if _, ok := findingOf(v9, CodeRegistryYanked); ok {
		t.Error("pkg.supply.registry.yanked under v9")
	}
}

func TestPyPIYank(t *testing.T) {
	r := mustLoad(t, "10")
	tests := []struct {
		name, ecosystem, deprecated string
		want                        []string
		message                     string
	}{
		{"reason", "pypi", "yanked: CVE-2025-1234, use 2.0.1", []string{"pkg.supply.registry.yanked x@1"}, `the reason given: "CVE-2025-1234, use 2.0.1"`},
		{"no_reason", "pypi", "yanked (no reason given)", []string{"pkg.supply.registry.yanked x@1"}, "no reason was given"},
		{"not_yanked", "pypi", "", []string{}, ""},
		// Not PyPIMetadata's form: read as any other message.
		{"other_message", "pypi", "moved to y", []string{"pkg.supply.registry.deprecated x@1"}, "deprecated"},
		// npm has no yanks: a deprecation message that says "yanked" is
		// a deprecation.
		{"npm", "npm", "yanked: use 2", []string{"pkg.supply.registry.deprecated x@1"}, "deprecated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := supplyBundle()
			b.Target.Ecosystem, b.Target.Name, b.Target.Version = tc.ecosystem, "x", "1"
			b.Supply.Registry.Ecosystem, b.Supply.Registry.Deprecated = tc.ecosystem, tc.deprecated
			res := Evaluate(b, r)
			o := outcomeOf(res, DimensionMaintenance)
			var got []string
			for _, f := range o.Findings {
				if strings.HasPrefix(f, "pkg.supply.registry.") {
					got = append(got, f)
				}
			}
			if got == nil {
				got = []string{}
			}
			if d := diff(tc.want, got); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			if len(tc.want) > 0 {
				f, _ := findingOf(res, strings.Fields(tc.want[0])[0])
				if !strings.Contains(f.Message, tc.message) {
					t.Errorf("message %q lacks %q", f.Message, tc.message)
				}
				if !strings.Contains(dim(res, DimensionMaintenance).Reason, "(-60)") {
					t.Errorf("reason %q: want the deprecation's deduction", dim(res, DimensionMaintenance).Reason)
				}
			}
		})
	}
}

// TestPyPIBuildStep: install_scripts over a PyPI build step.
func TestPyPIBuildStep(t *testing.T) {
	build := func(exit int, ran bool) evidence.Script {
		return evidence.Script{Package: "sqlparse-lite", Version: "0.3.1", Path: "sqlparse_lite-0.3.1.tar.gz", Event: "build",
			Command: "PEP 517 build_wheel with setuptools.build_meta", Ran: ran, ExitCode: exit, Network: &evidence.ScriptNetwork{Wanted: []string{}}}
	}
	failedStep := func(in *evidence.Install) {
		in.Outcome, in.FailedStep = evidence.InstallFailed, evidence.StepScripts
	}
	tests := []struct {
		name   string
		modify func(in *evidence.Install)
		want   outcome
		reason string
	}{
		{"wheels_only", func(in *evidence.Install) { in.Scripts = []evidence.Script{} },
			outcome{State: StateScored, Score: 100, Findings: []string{}}, "installed from a wheel"},
		{"wheels_only_install_failed", func(in *evidence.Install) { in.Scripts = []evidence.Script{}; failedStep(in) },
			outcome{State: StateZeroPoint, Score: 0, Findings: []string{}}, "no sdist to build"},
		{"built_then_install_failed", func(in *evidence.Install) { in.Scripts = []evidence.Script{build(0, true)}; failedStep(in) },
			outcome{State: StateScored, Score: 50, Findings: []string{"pkg.install.scripts.present sqlparse-lite"}}, "1 sdist build ran and exited 0"},
		{"not_built", func(in *evidence.Install) { in.Scripts = []evidence.Script{build(0, false)}; failedStep(in) },
			outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.install.scripts.present sqlparse-lite"}}, "before 1 of 1 sdist build ran"},
		{"build_failed", func(in *evidence.Install) { in.Scripts = []evidence.Script{build(1, true)}; failedStep(in) },
			outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.failed sqlparse-lite", "pkg.install.scripts.present sqlparse-lite"}}, "1 of 1 sdist build failed"},
		{"build_denied", func(in *evidence.Install) {
			s := build(1, true)
			s.Network = &evidence.ScriptNetwork{Attempts: 2, Wanted: []string{"files.pythonhosted.org"}}
			in.Scripts = []evidence.Script{s}
			failedStep(in)
		}, outcome{State: StateZeroPoint, Score: 0, Findings: []string{"pkg.install.scripts.network_denied sqlparse-lite", "pkg.install.scripts.present sqlparse-lite"}}, "files.pythonhosted.org"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := pypiBundle(t)
			tc.modify(b.Install)
			res := Evaluate(b, mustLoad(t, "10"))
			if d := diff(tc.want, outcomeOf(res, "install_scripts")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if r := dim(res, "install_scripts").Reason; !strings.Contains(r, tc.reason) {
				t.Errorf("reason %q lacks %q", r, tc.reason)
			}
		})
	}
	// Under v9 the build step that failed after its builds ran is 0.
	b := pypiBundle(t)
	failedStep(b.Install)
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.scripts.present sqlparse-lite"}},
		outcomeOf(Evaluate(b, mustLoad(t, "9")), "install_scripts")); d != "" {
		t.Errorf("v9 (-want +got):\n%s", d)
	}
}

// TestPyPIIntegrity: the distribution file's sha256, not npm's tarball.
func TestPyPIIntegrity(t *testing.T) {
	b := pypiBundle(t)
	b.Install.Integrity.Computed = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	b.Install.Integrity.Match = false
	res := Evaluate(b, mustLoad(t, "10"))
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.integrity.mismatch pgtools-mcp"}}, outcomeOf(res, "installability")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	f, _ := findingOf(res, CodeIntegrityMismatch)
	if !strings.Contains(f.Message, "distribution file") || !strings.Contains(f.Message, "sha256 the index lists") {
		t.Errorf("mismatch message %q", f.Message)
	}
	// No expected digest (the installed file is not in the listing):
	// unverified, never a mismatch.
	b = pypiBundle(t)
	b.Install.Integrity.Expected, b.Install.Integrity.Match = "", false
	res = Evaluate(b, mustLoad(t, "10"))
	if d := diff(outcome{State: StateScored, Score: 0, Findings: []string{"pkg.install.integrity.unverified pgtools-mcp"}}, outcomeOf(res, "installability")); d != "" {
		t.Errorf("no expected (-want +got):\n%s", d)
	}
}

// TestVersionCountUnknown: from v10 a version count of 0 is an unknown
// release history, which earns the rapid-release check no credit.
func TestVersionCountUnknown(t *testing.T) {
	b := supplyBundle()
	rg := b.Supply.Registry
	rg.VersionCount, rg.PreviousVersion, rg.PreviousPublishedAt, rg.FirstPublishedAt = 0, "", nil, nil
	v9 := dim(Evaluate(b, mustLoad(t, "9")), DimensionMaintenance)
	v10 := dim(Evaluate(b, mustLoad(t, "10")), DimensionMaintenance)
	if v9.Score-v10.Score != 10 || !strings.Contains(v10.Reason, "carries no release history") {
		t.Errorf("v9 %v (%s), v10 %v (%s): want v10 10 lower, the history unknown", v9.Score, v9.Reason, v10.Score, v10.Reason)
	}
	rg.VersionCount = 1
	if a, c := dim(Evaluate(b, mustLoad(t, "9")), DimensionMaintenance), dim(Evaluate(b, mustLoad(t, "10")), DimensionMaintenance); a.Score != c.Score {
		t.Errorf("a first version: v9 %v, v10 %v; want the same", a.Score, c.Score)
	}
}

// TestV10NPMUnchanged: every npm fixture scores under v10 exactly as under
// v9, findings, messages and dimensions alike.
func TestV10NPMUnchanged(t *testing.T) {
	v9, v10 := mustLoad(t, "9"), mustLoad(t, "10")
	for _, name := range []string{"behavior", "crashed", "dnssec", "everything", "hostile", "install_failed", "poisoned", "supply", "unavailable"} {
		b := loadBundle(t, name+".bundle.json")
		if b.Target.Ecosystem == ecosystemPyPI {
			t.Fatalf("%s is not an npm fixture", name)
		}
		a, c := Evaluate(b, v9), Evaluate(b, v10)
		a.RubricVersion, a.RubricHash = c.RubricVersion, c.RubricHash
		if d := diff(a, c); d != "" {
			t.Errorf("%s: v9 -> v10 (-v9 +v10):\n%s", name, d)
		}
	}
}

// TestV10Ecosystems: each dimension whose evidence differs for PyPI says
// how it is read there; an unknown ecosystem or an empty reading is
// refused.
func TestV10Ecosystems(t *testing.T) {
	r := mustLoad(t, "10")
	for _, id := range []string{"installability", "install_scripts", "session", "execution_safety",
		DimensionVulnerability, DimensionMalware, DimensionProvenance, DimensionMaintenance} {
		d, ok := r.Dimension(id)
		if !ok || strings.TrimSpace(d.Ecosystems["pypi"]) == "" {
			t.Errorf("dimension %s: no ecosystems.pypi reading", id)
		}
	}
	for _, v := range Versions() {
		if compareVersions(v, pypiSince) >= 0 {
			continue
		}
		for _, d := range mustLoad(t, v).Dimensions {
			if len(d.Ecosystems) > 0 {
				t.Errorf("rubric v%s dimension %s has ecosystems", v, d.ID)
			}
		}
	}
	if !slices.Contains(r.Params.Supply.Provenance.SharedHosts, "pypi.org") {
		t.Error("pypi.org is not a shared host")
	}
	data, err := files.ReadFile("versions/v10.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ eco, text, want string }{
		{"cargo", "read as crates", `unknown ecosystem "cargo"`},
		{"pypi", `""`, "ecosystems.pypi: empty"},
	} {
		bad := strings.Replace(string(data), "    ecosystems:\n      pypi: >-\n", "    ecosystems:\n      "+tc.eco+": "+tc.text+"\n      pypi_x: >-\n", 1)
		bad = strings.Replace(bad, "pypi_x: >-", "npm: >-", 1)
		if _, err := parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parse error %v, want %q", tc.eco, err, tc.want)
		}
	}
}

// TestPyPIBuildWording: behaviour and script findings of a PyPI build
// step name the sdist build and name==version; npm's wording is unchanged.
func TestPyPIBuildWording(t *testing.T) {
	modify := func(b *evidence.Bundle) {
		watched(func(bh *evidence.Behavior) {
			p := proc("scripts", "curl", "https://example.net/x")
			p.Package, p.Provenance = "sqlparse-lite", evidence.ProvenancePackage
			bh.Processes = append(bh.Processes, p)
			bh.Network = append(bh.Network, dns("scripts", "sqlparse-lite", "example.net", "A"))
		})(b)
		b.Install.Outcome, b.Install.FailedStep = evidence.InstallFailed, evidence.StepScripts
		b.Install.Scripts = []evidence.Script{{Package: "sqlparse-lite", Version: "0.3.1", Path: "sqlparse_lite-0.3.1.tar.gz", Event: "build",
			Command: "PEP 517 build_wheel with setuptools.build_meta", Ran: true, ExitCode: 1}}
	}
	b := pypiBundle(t)
	modify(b)
	var msgs []string
	for _, f := range Evaluate(b, mustLoad(t, "10")).Findings {
		msgs = append(msgs, f.Code+": "+f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"the sdist build of sqlparse-lite ran the network tool curl during the build step",
		"the sdist build of sqlparse-lite looked up \"example.net\" during the build step",
		"the sdist build of sqlparse-lite==0.3.1 exited with code 1",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("PyPI findings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "lifecycle script") || strings.Contains(all, "script step") || strings.Contains(all, "sqlparse-lite@") {
		t.Errorf("PyPI findings use npm's words:\n%s", all)
	}
	// The same evidence read as npm keeps npm's words.
	b = pypiBundle(t)
	modify(b)
	b.Target.Ecosystem = "npm"
	msgs = nil
	for _, f := range Evaluate(b, mustLoad(t, "10")).Findings {
		msgs = append(msgs, f.Message)
	}
	all = strings.Join(msgs, "\n")
	for _, want := range []string{"the lifecycle script of sqlparse-lite ran the network tool curl during the script step", "the build script of sqlparse-lite@0.3.1 exited with code 1"} {
		if !strings.Contains(all, want) {
			t.Errorf("npm findings lack %q:\n%s", want, all)
		}
	}
}
