package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/verifymcp/verifymcp/pkgspec"
	"github.com/verifymcp/verifymcp/rubric"
)

const ignoreYAML = `# reviewed by the platform team
ignore:
  - code: pkg.contract.annotation.contradiction
    subject: deleteFile
    reason: the tool is only ever called on the scratch volume
    by: alice
    expires: 2026-12-31
  - code: pkg.contract.unicode.bidi
    target: npm:mcp-fs-helper@1.0.7
    reason: reviewed the name by hand
    by: bob
    expires: 2026-01-31
  - code: pkg.install.scripts.failed
    target: npm:another-package
    reason: not this package
    by: carol
    expires: 2027-01-01
`

func TestIgnoreFileParse(t *testing.T) {
	f, err := ParseIgnoreFile(".verifymcp-ignore.yaml", []byte(ignoreYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 3 || f.Entries[0].Line != 3 || f.Entries[1].Line != 8 || f.Entries[2].Line != 13 {
		t.Errorf("entries %+v", f.Entries)
	}
	// Every bad entry is one line that names FILE:LINE.
	const code = "pkg.contract.schema.missing"
	for _, tc := range []struct{ name, in, want string }{
		{"no reason", "ignore:\n  - code: " + code + "\n    by: a\n    expires: 2027-01-01\n", "f.yaml:2: ignoring " + code + " needs a reason"},
		{"no expiry", "ignore:\n  - code: " + code + "\n    by: a\n    reason: r\n", "f.yaml:2: ignoring " + code + " needs an expiry date"},
		{"bad date", "ignore:\n  - code: " + code + "\n    by: a\n    reason: r\n    expires: next week\n", `f.yaml:5: expires "next week" is not a date YYYY-MM-DD`},
		{"no one", "ignore:\n  - code: " + code + "\n    reason: r\n    expires: 2027-01-01\n", "f.yaml:2: ignoring " + code + " needs who decided it (by)"},
		{"no code", "ignore:\n  - reason: r\n    by: a\n    expires: 2027-01-01\n", "f.yaml:2: an ignore entry needs the code it accepts"},
		{"unknown code", "ignore:\n  - code: " + code + "\n    reason: r\n    by: a\n    expires: 2027-01-01\n  - code: pkg.x.y\n    reason: r\n    by: a\n    expires: 2027-01-01\n",
			`f.yaml:6: "pkg.x.y" is not a reason code of any rubric (v1 to v` + rubric.Versions()[len(rubric.Versions())-1] + ") or of the config catalog; `verifymcp rubric show` lists them"},
		{"a prefix of codes", "ignore:\n  - code: pkg.contract.schema.miss\n    reason: r\n    by: a\n    expires: 2027-01-01\n", "did you mean " + code + "?"},
		{"a config code that is not", "ignore:\n  - code: cfg.credential.literl\n    reason: r\n    by: a\n    expires: 2027-01-01\n", `f.yaml:2: "cfg.credential.literl" is not a reason code`},
		{"unknown field", "ignore:\n  - code: " + code + "\n    reason: r\n    by: a\n    expires: 2027-01-01\n    until: x\n",
			`f.yaml:6: unknown field "until" in an ignore entry (it takes code, subject, target, reason, by, expires)`},
		{"a field twice", "ignore:\n  - code: " + code + "\n    reason: r\n    reason: s\n", "f.yaml:4: reason is given twice in one ignore entry"},
		{"a list for text", "ignore:\n  - code: [a, b]\n", "f.yaml:2: code must be text, not a list or a mapping"},
		{"an entry not a mapping", "ignore:\n  - " + code + "\n", "f.yaml:2: an ignore entry is a mapping of code, subject, target, reason, by, expires"},
		{"not a list", "ignore: " + code + "\n", "f.yaml:1: ignore must be a list of entries"},
		{"another key", "ignores:\n  - code: " + code + "\n", `f.yaml:1: unknown key "ignores": an ignore file has one key, ignore`},
		{"not yaml", "ignore: [", "f.yaml:1: not YAML: did not find expected node content"},
		{"a list", "- code: " + code + "\n", "f.yaml:1: an ignore file is a mapping with one key, ignore"},
	} {
		_, err := ParseIgnoreFile("f.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of more than one line: %q", tc.name, err)
		}
	}
	// A config catalog code is one (config scan gates on the same file).
	if f, err := ParseIgnoreFile("f.yaml", []byte("ignore:\n  - code: cfg.credential.literal\n    reason: r\n    by: a\n    expires: 2027-01-01\n")); err != nil || len(f.Entries) != 1 {
		t.Errorf("a config code: %v, %+v", err, f)
	}
	for _, in := range []string{"", "# nothing yet\n", "ignore:\n", "ignore: []\n"} {
		if f, err := ParseIgnoreFile("f.yaml", []byte(in)); err != nil || len(f.Entries) != 0 {
			t.Errorf("%q: %v, %d entries, want none", in, err, len(f.Entries))
		}
	}
}

// TestIgnoreTarget: an entry's target names an ecosystem's package, any
// version or one.
func TestIgnoreTarget(t *testing.T) {
	f := &Finding{Code: "pkg.contract.schema.missing", Subject: "stats"}
	npm := Target{Ecosystem: "npm", Name: "@acme/files-mcp", Version: "1.2.0"}
	pypi := Target{Ecosystem: "pypi", Name: "files-mcp", Version: "1.2.0"}
	for _, tc := range []struct {
		target string
		t      Target
		want   bool
	}{
		{"", npm, true},
		{"npm:@acme/files-mcp", npm, true},
		{"@acme/files-mcp", npm, true},
		{"npm:@acme/files-mcp@1.2.0", npm, true},
		{"npm:@acme/files-mcp@1.1.0", npm, false},
		{"npm:@acme/other", npm, false},
		{"pypi:files-mcp", pypi, true},
		{"pypi:files-mcp@1.2.0", pypi, true},
		{"pypi:files-mcp==1.2.0", pypi, true},
		{"pypi:Files_MCP==1.2.0", pypi, true},
		{"pypi:files-mcp==1.3.0", pypi, false},
		{"npm:files-mcp", pypi, false},
		{"files-mcp", pypi, false},
	} {
		e := IgnoreEntry{Code: f.Code, Target: tc.target}
		if got := e.matches(f, tc.t); got != tc.want {
			t.Errorf("target %q on %s:%s: matches %v, want %v", tc.target, tc.t.Ecosystem, tc.t.Name, got, tc.want)
		}
	}
}

// TestPyPIName: the ignore file's PEP 503 normal form is pkgspec's, which
// the report's layer does not import.
func TestPyPIName(t *testing.T) {
	for _, name := range []string{"files-mcp", "Files_MCP", "files.mcp", "FILES--mcp", "a_.-b", "mcp-server-fetch", "Zope.Interface", "x", ""} {
		if got, want := pypiName(name), pkgspec.NormalizePyPIName(name); got != want {
			t.Errorf("pypiName(%q) = %q, pkgspec says %q", name, got, want)
		}
	}
}

func TestGate(t *testing.T) {
	ig, err := ParseIgnoreFile(".verifymcp-ignore.yaml", []byte(ignoreYAML))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		p       Policy
		result  string
		tripped []string
		ignored int
		expired int
	}{
		{"not set", Policy{}, GateNotSet, nil, 0, 0},
		{"critical", Policy{FailOn: "critical"}, GatePassed, nil, 0, 0},
		{"high", Policy{FailOn: "high"}, GateFailed, []string{"pkg.contract.annotation.contradiction deleteFile", "pkg.contract.unicode.bidi sync\u202egnp.exe"}, 0, 0},
		// Unverified markers (socket, judge) trip nothing unless asked.
		{"medium", Policy{FailOn: "medium"}, GateFailed, nil, 0, 0},
		{"high, ignored and expired", Policy{FailOn: "high", Ignore: ig, Now: now}, GateFailed, []string{"pkg.contract.unicode.bidi sync\u202egnp.exe"}, 1, 1},
		{"high, before the second entry expired", Policy{FailOn: "high", Ignore: ig, Now: time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)}, GatePassed, nil, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := build(t, loadBundle(t, "hostile"))
			tc.p.Apply(&rep)
			s := rep.Summary
			if s.Gate.Result != tc.result || s.Ignored != tc.ignored || len(s.Expired) != tc.expired {
				t.Errorf("gate %+v, ignored %d, expired %q", s.Gate, s.Ignored, s.Expired)
			}
			if tc.tripped != nil && strings.Join(s.Gate.Tripped, "|") != strings.Join(tc.tripped, "|") {
				t.Errorf("tripped %q, want %q", s.Gate.Tripped, tc.tripped)
			}
			for _, f := range s.Gate.Tripped {
				if IsUnverified(strings.Fields(f)[0]) {
					t.Errorf("an unverified marker tripped the gate: %s", f)
				}
			}
		})
	}
	// Under rubric v10, the last that listed unverified markers among the
	// findings, the marker trips it too.
	b10 := loadBundle(t, "hostile")
	r10, err := rubric.Load("10")
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(b10, r10, rubric.Evaluate(b10, r10))
	Policy{FailOn: "medium", Unverified: true}.Apply(&rep)
	if !strings.Contains(strings.Join(rep.Summary.Gate.Tripped, "|"), "pkg.supply.socket.unverified") {
		t.Errorf("--fail-on-unverified: tripped %q lacks the socket marker", rep.Summary.Gate.Tripped)
	}
	if !slices.Contains(rep.Summary.Gate.Tripped, "signal socket error") {
		t.Errorf("--fail-on-unverified: tripped %q lacks the socket signal (error)", rep.Summary.Gate.Tripped)
	}
	// From rubric v11 no unverified marker is a finding: the signal
	// states alone trip --fail-on-unverified, and nothing else does.
	b11 := loadBundle(t, "hostile")
	r11, err := rubric.Load("11")
	if err != nil {
		t.Fatal(err)
	}
	rep = Build(b11, r11, rubric.Evaluate(b11, r11))
	for _, f := range rep.Findings {
		if IsUnverified(f.Code) {
			t.Errorf("rubric v11 report lists the unverified marker %s among its findings", f.Code)
		}
	}
	Policy{FailOn: "critical"}.Apply(&rep)
	if rep.Summary.Gate.Result != GatePassed {
		t.Errorf("rubric v11 --fail-on critical: gate %+v, want passed", rep.Summary.Gate)
	}
	Policy{FailOn: "critical", Unverified: true}.Apply(&rep)
	if rep.Summary.Gate.Result != GateFailed || !slices.Contains(rep.Summary.Gate.Tripped, "signal socket error") {
		t.Errorf("rubric v11 --fail-on-unverified: gate %+v, want failed on the socket signal", rep.Summary.Gate)
	}
	rep = build(t, loadBundle(t, "hostile"))
	Policy{FailOn: "high", Ignore: ig, Now: now}.Apply(&rep)
	out := tableText(t, rep)
	for _, want := range []string{
		"GATE  failed: 1 finding(s) at or above high",
		"1 finding(s) ignored by the ignore file",
		".verifymcp-ignore.yaml:8: pkg.contract.unicode.bidi expired on 2026-01-31: no longer applied",
		"pkg.contract.annotation.contradiction  deleteFile  (ignored until 2026-12-31 by alice: the tool is only ever called on the scratch volume; .verifymcp-ignore.yaml:3)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if s, err := ParseSeverity("info"); err == nil {
		t.Errorf("--fail-on info accepted as %q", s)
	}
	if s, err := ParseSeverity("high"); err != nil || s != rubric.Severity("high") {
		t.Errorf("ParseSeverity(high) = %q, %v", s, err)
	}
}

// TestGateAdvice: after a failed gate, each code that failed it is
// listed with the command that explains it, and each finding with an
// ignore entry that, pasted into an ignore file, parses and accepts that
// finding and no other, even when its subject carries a bidirectional
// control; nothing in the advice acts on a terminal.
func TestGateAdvice(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"hostile", "everything", "behavior", "dnssec"} {
		t.Run(name, func(t *testing.T) {
			rep := build(t, loadBundle(t, name))
			Policy{FailOn: "low"}.Apply(&rep)
			if rep.Summary.Gate.Result != GateFailed {
				t.Fatalf("gate %+v, want failed", rep.Summary.Gate)
			}
			var buf bytes.Buffer
			if err := WriteGateAdvice(&buf, rep, TableOptions{Now: now}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, f := range rep.Findings {
				if rep.Summary.Gate.trips(f) && !strings.Contains(out, "read more: verifymcp rubric explain "+f.Code+"\n") {
					t.Errorf("no explain command for %s", f.Code)
				}
			}
			if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || unicode.Is(unicode.Cf, r) }); i >= 0 {
				t.Errorf("the advice writes a control or format character at %d: %q", i, out[max(0, i-20):i+1])
			}
			_, yml, ok := strings.Cut(out, "\nignore:\n")
			if !ok {
				t.Fatalf("no ignore entries in:\n%s", out)
			}
			ig, err := ParseIgnoreFile("pasted.yaml", []byte("ignore:\n"+yml))
			if err != nil {
				t.Fatalf("the suggested entries do not parse: %v\n%s", err, yml)
			}
			if want := len(rep.Summary.Gate.Tripped); len(ig.Entries) != want {
				t.Errorf("%d entries, want one per tripped finding (%d)", len(ig.Entries), want)
			}
			for _, e := range ig.Entries {
				if e.Expires != "2026-08-30" || !strings.HasPrefix(e.Reason, "FILL IN") || !strings.HasPrefix(e.By, "FILL IN") {
					t.Errorf("entry %+v: want expires 90 days on and the reason and by to fill in", e)
				}
			}
			before := len(rep.Findings)
			Policy{FailOn: "low", Ignore: ig, Now: now}.Apply(&rep)
			if rep.Summary.Gate.Result != GatePassed || len(rep.Summary.Expired) != 0 {
				t.Errorf("with the suggested entries: gate %+v, expired %q; want passed", rep.Summary.Gate, rep.Summary.Expired)
			}
			if got := rep.Summary.Ignored; got != len(ig.Entries) || len(rep.Findings) != before {
				t.Errorf("%d findings ignored by %d entries: an entry accepts more than its finding", got, len(ig.Entries))
			}
		})
	}
	// A gate that passed, or none, advises nothing.
	rep := build(t, loadBundle(t, "hostile"))
	Policy{FailOn: "critical"}.Apply(&rep)
	var buf bytes.Buffer
	if err := WriteGateAdvice(&buf, rep, TableOptions{}); err != nil || buf.Len() != 0 {
		t.Errorf("passed gate: advice %q, %v", buf.String(), err)
	}
	// A signal that tripped the gate is no finding: no entry for it.
	Policy{FailOn: "critical", Unverified: true}.Apply(&rep)
	lines := gateAdvice(rep, now, 80)
	if out := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); !strings.Contains(out, "signals github unavailable, judge unavailable, socket error: a third party did not answer") || strings.Contains(out, "ignore:") {
		t.Errorf("signals only:\n%s", out)
	}
}

func TestYAMLQuote(t *testing.T) {
	for _, s := range []string{"plain", `quote " and \ back`, "sync\u202egnp.exe", "bell\x07 esc\x1b[31m", "tag \U000E0041", "wide 名前 e\u0301", "nel\u0085 ls\u2028", "# not a comment: @x"} {
		q := yamlQuote(s)
		var got string
		if err := yaml.Unmarshal([]byte("v: "+q), &struct {
			V *string `yaml:"v"`
		}{&got}); err != nil {
			t.Errorf("%q: %s does not parse: %v", s, q, err)
			continue
		}
		if got != s {
			t.Errorf("yamlQuote(%q) = %s reads back as %q", s, q, got)
		}
		for _, r := range q {
			if !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
				t.Errorf("yamlQuote(%q) = %q writes %U", s, q, r)
			}
		}
	}
}
