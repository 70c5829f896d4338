package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// recollectStore is a RecollectStore in memory over memStore.
type recollectStore struct {
	memStore
	bundles map[string][]byte
	derived map[string][]string
	results map[string]rubric.Result
}

func (s *recollectStore) Derived(_ context.Context, id string) ([]string, error) {
	return s.derived[id], nil
}
func (s *recollectStore) Bundle(_ context.Context, id string) ([]byte, error) {
	return s.bundles[id], nil
}
func (s *recollectStore) Artifact(context.Context, string) ([]byte, error) {
	return []byte(`{"lockfileVersion":3}`), nil
}
func (s *recollectStore) Result(_ context.Context, id, _ string) (rubric.Result, error) {
	return s.results[id], nil
}

// TestRecollectRuns: a run is recollected into a new saved run with only
// what a stored run can supply; what needs a scan is counted, never
// collected; a run recollected before is skipped; the summary says how
// each signal came back.
func TestRecollectRuns(t *testing.T) {
	ctx := context.Background()
	old := storedRun(t)
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	st := &recollectStore{
		bundles: map[string][]byte{old.Run.ID: data, "r2": data},
		derived: map[string][]string{"r2": {"r3"}},
		results: map[string]rubric.Result{},
	}
	c := &countingSupply{}
	p := testPipeline(Config{ToolVersion: "0.9.0", Supply: Supply{GitHub: githubFake{c}}, Rubric: rubric.Current()})
	sum, err := p.RecollectRuns(ctx, st, t.TempDir(), []RecollectItem{
		{RunID: old.Run.ID, Signals: []string{evidence.SignalGitHub, evidence.SignalBehavior}},
		{RunID: "r2", Signals: []string{evidence.SignalGitHub}},
		{RunID: "r4", Signals: []string{evidence.SignalContract}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 3 || sum.Derived != 1 || sum.AlreadyDerived != 1 || len(sum.Failed) != 0 {
		t.Errorf("summary %+v", sum)
	}
	if diff := cmp.Diff(map[string]int{evidence.SignalBehavior: 1, evidence.SignalContract: 1}, sum.NeedScan); diff != "" {
		t.Errorf("need scan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]map[string]int{evidence.SignalGitHub: {string(evidence.StateObserved): 1}}, sum.Signals); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	if c.github.Load() != 1 || len(st.runs) != 1 {
		t.Errorf("GitHub asked %d times, %d runs saved; want 1 and 1", c.github.Load(), len(st.runs))
	}
}
