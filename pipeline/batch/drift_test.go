package batch

import (
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

func change(k contract.Kind, subject string) contract.Change {
	return contract.Change{Kind: k, Subject: subject, Safety: k.Safety(), Surfaced: k.Surfaced()}
}

func TestSummarizeDrift(t *testing.T) {
	compared := &evidence.Bundle{Drift: &evidence.Drift{Baseline: &evidence.Baseline{RunID: "base"}, Changes: []contract.Change{
		change(contract.TitleChanged, "tool:a"), change(contract.ToolAdded, "tool:b"), change(contract.ParameterAdded, "tool:a"),
	}}, Session: &evidence.Session{Relist: &evidence.Relist{Changes: []contract.Change{}}}}
	first := &evidence.Bundle{Drift: &evidence.Drift{FirstScan: true, Changes: []contract.Change{}},
		Session: &evidence.Session{Relist: &evidence.Relist{Changes: []contract.Change{change(contract.AnnotationTowardDestructive, "tool:x")}}}}
	items := []*Item{
		{Line: 1, Name: "one", Drift: ItemDriftOf(compared)},
		{Line: 2, Name: "two", Drift: ItemDriftOf(first)},
		{Line: 3, Name: "three", Drift: ItemDriftOf(&evidence.Bundle{})},
		{Line: 4, Name: "skipped"},
	}
	s := SummarizeDrift(items)
	if s.Compared != 1 || s.FirstScans != 1 || s.NotCompared != 1 {
		t.Errorf("compared %d, first %d, not compared %d; want 1, 1, 1", s.Compared, s.FirstScans, s.NotCompared)
	}
	if s.ByKind["tool_added"] != 1 || s.ByKind["title_changed"] != 1 || s.ByKind["parameter_added"] != 1 || s.ByKind["annotation_toward_destructive"] != 1 {
		t.Errorf("by kind %v", s.ByKind)
	}
	var got []string
	for _, e := range s.Surfaced {
		got = append(got, e.Target+" "+e.Scope+" "+string(e.Kind))
	}
	// Safety bit first, then by line; the recorded tool_added is not listed.
	want := []string{"one pin parameter_added", "two session annotation_toward_destructive", "one pin title_changed"}
	if len(got) != len(want) {
		t.Fatalf("surfaced %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("surfaced %q, want %q", got, want)
		}
	}
	if d := ItemDriftOf(compared); d.State != DriftCompared || d.Baseline != "base" {
		t.Errorf("ItemDriftOf = %+v", d)
	}
}
