package report

import (
	"slices"
	"strings"
	"testing"
	"time"

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
	for _, tc := range []struct{ name, in, want string }{
		{"no reason", "ignore:\n  - code: pkg.x.y\n    by: a\n    expires: 2027-01-01\n", "f.yaml:2: ignoring pkg.x.y needs a reason"},
		{"no expiry", "ignore:\n  - code: pkg.x.y\n    by: a\n    reason: r\n", "f.yaml:2: ignoring pkg.x.y needs an expiry date"},
		{"bad date", "ignore:\n  - code: pkg.x.y\n    by: a\n    reason: r\n    expires: next week\n", `f.yaml:2: expires "next week" is not a date YYYY-MM-DD`},
		{"no one", "ignore:\n  - code: pkg.x.y\n    reason: r\n    expires: 2027-01-01\n", "f.yaml:2: ignoring pkg.x.y needs who decided it (by)"},
		{"unknown field", "ignore:\n  - code: pkg.x.y\n    reason: r\n    by: a\n    expires: 2027-01-01\n    until: x\n", "field until not found"},
		{"not yaml", "ignore: [", "f.yaml:"},
	} {
		_, err := ParseIgnoreFile("f.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
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
