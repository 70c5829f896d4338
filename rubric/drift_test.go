package rubric

import (
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

func change(k contract.Kind, subject, detail, before, after string) contract.Change {
	return contract.Change{Kind: k, Subject: subject, Detail: detail, Before: before, After: after, Safety: k.Safety(), Surfaced: k.Surfaced()}
}

var baseline = &evidence.Baseline{RunID: "run-0", RunDate: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Version: "1.2.2",
	SchemaHash: "sha256:00", PinnedBy: "first scan (trust on first use)", PinnedAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}

// pinned is a bundle compared with a pin, with changes since it.
func pinned(changes ...contract.Change) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) {
		b.Signals[evidence.SignalDrift] = sig("observed", "")
		b.Drift = &evidence.Drift{Identity: "sha256:id", Baseline: baseline, Changes: append([]contract.Change{}, changes...)}
		b.Session.Relist = &evidence.Relist{AfterMS: 2000, SchemaHash: "sha256:11", Changes: []contract.Change{}}
	}
}

// firstScan is a bundle of an identity that had no pin.
func firstScan(session ...contract.Change) func(*evidence.Bundle) {
	return func(b *evidence.Bundle) {
		b.Signals[evidence.SignalDrift] = sig("unavailable", "first scan of this server identity")
		b.Drift = &evidence.Drift{Identity: "sha256:id", FirstScan: true, Changes: []contract.Change{}}
		b.Session.Relist = &evidence.Relist{AfterMS: 2000, SchemaHash: "sha256:11", Changes: append([]contract.Change{}, session...)}
	}
}

func TestContractDrift(t *testing.T) {
	destructive := change(contract.AnnotationTowardDestructive, "tool:archive_note", "readOnlyHint", "true", "false")
	param := change(contract.ParameterAdded, "tool:search_notes", "/properties/path", "", `{"type":"string"}`)
	added := change(contract.ToolAdded, "tool:delete_note", "", "", "delete_note")
	reworded := change(contract.DescriptionChanged, "tool:search_notes", "description", "Search notes.", "Search the notes.")
	removed := change(contract.ToolRemoved, "tool:old", "", "old", "")
	runProbeCases(t, DimensionContractDrift, []probeCase{
		{name: "no change since the pin", modify: pinned(), want: outcome{State: StateScored, Score: 100}},
		{name: "recorded kinds are not findings", modify: pinned(added, reworded), want: outcome{State: StateScored, Score: 100}},
		{name: "changes since the pin", modify: pinned(destructive, param, removed), want: outcome{State: StateScored, Score: 50,
			Findings: []string{"pkg.drift.annotation_toward_destructive tool:archive_note", "pkg.drift.parameter_added tool:search_notes", "pkg.drift.tool_removed tool:old"}}},
		{name: "a code counts once per subject", modify: pinned(param, change(contract.ParameterAdded, "tool:search_notes", "/properties/other", "", `{}`)),
			want: outcome{State: StateScored, Score: 85, Findings: []string{"pkg.drift.parameter_added tool:search_notes", "pkg.drift.parameter_added tool:search_notes"}}},
		{name: "a change without the safety bit counts once per scope", modify: pinned(change(contract.TitleChanged, "tool:a", "title", "", "A"),
			change(contract.TitleChanged, "tool:b", "title", "", "B")),
			want: outcome{State: StateScored, Score: 95, Findings: []string{"pkg.drift.title_changed tool:a", "pkg.drift.title_changed tool:b"}}},
		{name: "first scan", modify: firstScan(), want: outcome{State: StateZeroPoint, Score: 100}},
		{name: "first scan with a change within the session", modify: firstScan(destructive),
			want: outcome{State: StateScored, Score: 70, Findings: []string{"pkg.drift.annotation_toward_destructive tool:archive_note"}}},
		{name: "within the session and since the pin are two scopes", modify: func(b *evidence.Bundle) {
			pinned(destructive)(b)
			b.Session.Relist.Changes = []contract.Change{destructive}
		}, want: outcome{State: StateScored, Score: 40, Findings: []string{"pkg.drift.annotation_toward_destructive tool:archive_note", "pkg.drift.annotation_toward_destructive tool:archive_note"}}},
		{name: "no run store", modify: func(b *evidence.Bundle) {
			b.Signals[evidence.SignalDrift] = sig("not_assessed", "no run store")
		}, want: outcome{State: StateDropped}},
		{name: "no run store, change within the session", modify: func(b *evidence.Bundle) {
			b.Signals[evidence.SignalDrift] = sig("not_assessed", "no run store")
			b.Session.Relist = &evidence.Relist{Changes: []contract.Change{param}}
		}, want: outcome{State: StateScored, Score: 85, Findings: []string{"pkg.drift.parameter_added tool:search_notes"}}},
		{name: "bundle recorded before pins", want: outcome{State: StateZeroPoint, Score: 0}},
		{name: "failed session earns no credit", modify: func(b *evidence.Bundle) {
			firstScan()(b)
			b.Signals[evidence.SignalSession] = sig("error", "crashed")
			b.Contract = nil
		}, want: outcome{State: StateZeroPoint, Score: 0}},
		{name: "a failed relisting is not a change", modify: func(b *evidence.Bundle) {
			pinned()(b)
			b.Session.Relist = &evidence.Relist{Error: "the server exited", Changes: []contract.Change{}}
		}, want: outcome{State: StateScored, Score: 100}},
	})
}

// TestContractDriftAfterCalls: from v13 a resource that came after the
// tool calls is data the calls made, not drift; before v13, and with no
// call before the relisting, it is drift.
func TestContractDriftAfterCalls(t *testing.T) {
	destructive := change(contract.AnnotationTowardDestructive, "tool:archive_note", "readOnlyHint", "true", "false")
	resource := change(contract.ResourceChanged, "resource:demo://session/a.gz", "added", "", "")
	for _, tt := range []struct {
		version string
		calls   int
		want    []string
	}{
		{"13", 14, []string{"pkg.drift.annotation_toward_destructive tool:archive_note"}},
		{"13", 0, []string{"pkg.drift.annotation_toward_destructive tool:archive_note", "pkg.drift.resource_changed resource:demo://session/a.gz"}},
		{"12", 14, []string{"pkg.drift.annotation_toward_destructive tool:archive_note", "pkg.drift.resource_changed resource:demo://session/a.gz"}},
	} {
		b := okBundle()
		firstScan(resource, destructive)(b)
		b.Session.Relist.AfterCalls = tt.calls
		got := outcomeOf(Evaluate(b, mustLoad(t, tt.version)), DimensionContractDrift)
		if strings.Join(got.Findings, ",") != strings.Join(tt.want, ",") {
			t.Errorf("v%s, %d calls: findings %v, want %v", tt.version, tt.calls, got.Findings, tt.want)
		}
		if reason := dimensionOf(Evaluate(b, mustLoad(t, tt.version)), DimensionContractDrift).Reason; tt.version == "13" && tt.calls > 0 && !strings.Contains(reason, "1 resource change after the calls not scored") {
			t.Errorf("reason %q", reason)
		}
	}
}

func TestContractDriftReasons(t *testing.T) {
	r := Current()
	b := okBundle()
	pinned()(b)
	got := dim(Evaluate(b, r), DimensionContractDrift).Reason
	for _, want := range []string{"distance from that baseline, not from honest", "run-0", "first scan (trust on first use)", "relisted 2.0 s after"} {
		if !strings.Contains(got, want) {
			t.Errorf("reason %q lacks %q", got, want)
		}
	}
	if strings.Contains(strings.ToLower(got), "safe") {
		t.Errorf("reason %q calls something safe", got)
	}
	b = okBundle()
	firstScan()(b)
	got = dim(Evaluate(b, r), DimensionContractDrift).Reason
	for _, want := range []string{"trust on first use", "zero point 100", "no prior snapshot to churn from"} {
		if !strings.Contains(got, want) {
			t.Errorf("first-scan reason %q lacks %q", got, want)
		}
	}
}

// TestDriftCatalog checks that every surfaced kind has a code and only
// those: the two recorded kinds are never findings.
func TestDriftCatalog(t *testing.T) {
	r := Current()
	n, safety := 0, 0
	for _, k := range contract.Kinds {
		def, ok := r.Code(DriftCode(k))
		if ok != k.Surfaced() {
			t.Errorf("%s: catalogued %v, surfaced %v", k, ok, k.Surfaced())
		}
		if ok {
			n++
			if def.Dimension != DimensionContractDrift || strings.TrimSpace(def.Remediation) == "" {
				t.Errorf("%s: dimension %q, remediation %q", def.Code, def.Dimension, def.Remediation)
			}
		}
		if k.Safety() {
			safety++
		}
	}
	if len(contract.Kinds) != 14 || n != 12 || safety != 10 {
		t.Errorf("%d kinds, %d surfaced, %d with the safety bit; want 14, 12, 10", len(contract.Kinds), n, safety)
	}
}
