package report

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

func TestDriftSectionFirstScan(t *testing.T) {
	b := loadBundle(t, "everything")
	b.Signals[evidence.SignalDrift] = evidence.Signal{State: evidence.StateUnavailable, Reason: "first scan of this server identity"}
	b.Drift = &evidence.Drift{Identity: "sha256:id", FirstScan: true, Changes: []contract.Change{}}
	b.Session.Relist = &evidence.Relist{AfterMS: 2000, Changes: []contract.Change{{Kind: contract.ParameterAdded, Subject: "tool:echo",
		Detail: "/properties/x", After: `{"type":"string"}`, Safety: true, Surfaced: true}}, ListChanged: 1}
	rep := build(t, b)
	if rep.Drift == nil || !rep.Drift.FirstScan || rep.Drift.Statement != FirstScanStatement || rep.Drift.Baseline != nil {
		t.Fatalf("drift %+v", rep.Drift)
	}
	out := tableText(t, rep)
	ds := section(t, out, "DRIFT")
	for _, want := range []string{
		"DRIFT  First scan of this server identity: this run is now its pin (trust on first use). A pin is not a statement that the server was honest then",
		"in session  parameter_added  yes     tool:echo  /properties/x: (none) -> {\"type\":\"string\"}",
		"the server sent list_changed 1 time(s) (a hint; the surface was listed again regardless)",
	} {
		if !strings.Contains(ds, want) {
			t.Errorf("DRIFT section lacks %q:\n%s", want, ds)
		}
	}
	if strings.Contains(strings.ToLower(ds), "safe ") {
		t.Errorf("DRIFT section calls something safe:\n%s", ds)
	}
}
