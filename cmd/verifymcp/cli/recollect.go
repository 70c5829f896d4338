package cli

import (
	"context"
	"path/filepath"

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
	p, _, closeFn, err := g.newScanPipeline(ctx, &f.scan, dataDir, rb, nil)
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
