package cli

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// recollectItem is a rescored run whose evidence lacks signals the rubric
// reads.
type recollectItem struct {
	runID   string
	signals []string
}

// recollectSummary is what `rescore --recollect` did.
type recollectSummary = pipeline.RecollectSummary

// recollectRuns collects again, into new runs, the signals each item
// lacks that a stored run can supply (see pipeline.RecollectRuns).
func (g *globals) recollectRuns(ctx context.Context, st *store.Store, dataDir string, rb *rubric.Rubric, f *rescoreFlags, items []recollectItem) (*recollectSummary, error) {
	if len(items) == 0 {
		return emptyRecollectSummary(), nil
	}
	p, _, closeFn, err := g.newScanPipeline(ctx, &f.scan, dataDir, rb)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	its := make([]pipeline.RecollectItem, len(items))
	for i, it := range items {
		its[i] = pipeline.RecollectItem{RunID: it.runID, Signals: it.signals}
	}
	return p.RecollectRuns(ctx, scoredStore{st}, filepath.Join(dataDir, "bundles"), its)
}

// emptyRecollectSummary is the summary of a recollection with nothing to do.
func emptyRecollectSummary() *recollectSummary {
	return &recollectSummary{Signals: map[string]map[string]int{}, NeedScan: map[string]int{}, Failed: []pipeline.RecollectFailure{}}
}

func writeRecollectTable(b *strings.Builder, r *recollectSummary) {
	fmt.Fprintf(b, "Recollected: %d new runs from %d runs lacking a signal", r.Derived, r.Runs)
	if r.AlreadyDerived > 0 {
		fmt.Fprintf(b, " (%d skipped: recollected before)", r.AlreadyDerived)
	}
	fmt.Fprintf(b, ", in %.1fs.\n", r.ElapsedSeconds)
	for _, s := range slices.Sorted(maps.Keys(r.Signals)) {
		var parts []string
		for _, state := range rescoreKeys(r.Signals[s]) {
			parts = append(parts, fmt.Sprintf("%s %d", state, r.Signals[s][state]))
		}
		fmt.Fprintf(b, "  %s: %s\n", s, strings.Join(parts, ", "))
	}
	if r.Derived > 0 {
		fmt.Fprintf(b, "  composite against the earlier run: %d up, %d down, %d unchanged, mean delta %s\n", r.Up, r.Down, r.Unchanged, rescoreDelta(r.MeanDelta))
	}
	if len(r.NeedScan) > 0 {
		var parts []string
		for _, s := range rescoreKeys(r.NeedScan) {
			parts = append(parts, fmt.Sprintf("%s %d runs", s, r.NeedScan[s]))
		}
		fmt.Fprintf(b, "  needs a new scan (batch): %s\n", strings.Join(parts, ", "))
	}
	for _, f := range r.Failed {
		fmt.Fprintf(b, "  failed %s: %s\n", f.RunID, oneLine(f.Error))
	}
}
