package cli

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/store"
)

// recollectConcurrency bounds the runs recollected at once: the work is
// waiting on third parties, not CPU.
const recollectConcurrency = 4

// recollectItem is a rescored run whose evidence lacks signals the rubric
// reads.
type recollectItem struct {
	runID   string
	signals []string
}

// recollectSummary is what `rescore --recollect` did.
type recollectSummary struct {
	// Runs counts the runs that lacked a signal; Derived the new runs
	// saved; AlreadyDerived the runs skipped because an earlier
	// --recollect made a run from them (that run was rescored in this pass
	// and is recollected itself if it still lacks something).
	Runs           int `json:"runs"`
	Derived        int `json:"derived"`
	AlreadyDerived int `json:"already_derived"`
	// Signals counts, per signal collected again, the new runs by the
	// state it came back in.
	Signals map[string]map[string]int `json:"signals"`
	// NeedScan counts, per signal only a new scan can collect (sandbox,
	// contract, registry resolution), the runs lacking it.
	NeedScan map[string]int `json:"need_scan"`
	// Score moves: the new run's composite against the earlier run's, both
	// under the rubric (the earlier one scored with the lacking signals at
	// their zero point).
	Up             int                    `json:"up"`
	Down           int                    `json:"down"`
	Unchanged      int                    `json:"unchanged"`
	MeanDelta      float64                `json:"mean_delta"`
	Failed         []store.RescoreFailure `json:"failed"`
	ElapsedSeconds float64                `json:"elapsed_seconds"`
}

// recollectRuns collects again, into new runs, the signals each item
// lacks that a stored run can supply.
func (g *globals) recollectRuns(ctx context.Context, st *store.Store, dataDir string, rb *rubric.Rubric, f *rescoreFlags, items []recollectItem) (*recollectSummary, error) {
	start := time.Now()
	sum := &recollectSummary{Runs: len(items), Signals: map[string]map[string]int{}, NeedScan: map[string]int{}, Failed: []store.RescoreFailure{}}
	if len(items) == 0 {
		return sum, nil
	}
	p, _, closeFn, err := g.newScanPipeline(ctx, &f.scan, dataDir, rb)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	p.ToolVersion = Version

	var mu sync.Mutex
	var deltaSum float64
	var scored int
	var last time.Time
	done := 0
	fail := func(id string, err error) {
		mu.Lock()
		sum.Failed = append(sum.Failed, store.RescoreFailure{RunID: id, Error: err.Error()})
		mu.Unlock()
	}
	sem := make(chan struct{}, recollectConcurrency)
	var wg sync.WaitGroup
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		var can []string
		for _, s := range it.signals {
			if _, ok := pipeline.Recollectable[s]; ok {
				can = append(can, s)
			} else {
				mu.Lock()
				sum.NeedScan[s]++
				mu.Unlock()
			}
		}
		if len(can) == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			derived, err := st.Derived(ctx, it.runID)
			if err != nil {
				fail(it.runID, err)
				return
			}
			if len(derived) > 0 {
				mu.Lock()
				sum.AlreadyDerived++
				mu.Unlock()
				return
			}
			data, err := st.Bundle(ctx, it.runID)
			if err != nil {
				fail(it.runID, err)
				return
			}
			b, err := store.DecodeBundle(data)
			if err != nil {
				fail(it.runID, err)
				return
			}
			var lockfile []byte
			if (slices.Contains(can, evidence.SignalOSV) || slices.Contains(can, evidence.SignalSocket)) && b.Install != nil && b.Install.LockfileSHA256 != "" {
				if lockfile, err = st.Artifact(ctx, b.Install.LockfileSHA256); err != nil {
					fail(it.runID, fmt.Errorf("the stored lockfile: %w", err))
					return
				}
			}
			scanned, err := p.Recollect(ctx, b, can, lockfile, pipeline.NewRunID(time.Now()))
			if err != nil {
				fail(it.runID, err)
				return
			}
			res := rubric.Evaluate(scanned.Bundle, rb)
			saveCtx := context.WithoutCancel(ctx)
			if err := st.SaveRun(saveCtx, scanned.BundleJSON, scanned.Bundle, res); err != nil {
				fail(it.runID, err)
				return
			}
			bundlePath := filepath.Join(dataDir, "bundles", scanned.Bundle.Run.ID+".json")
			if err := writeFileAtomic(bundlePath, scanned.BundleJSON); err != nil {
				g.log.Warn("could not write the bundle file", "path", bundlePath, "err", err)
			}
			old, oldErr := st.Result(saveCtx, it.runID, rb.Version)

			mu.Lock()
			defer mu.Unlock()
			sum.Derived++
			for _, s := range can {
				m := sum.Signals[s]
				if m == nil {
					m = map[string]int{}
					sum.Signals[s] = m
				}
				m[string(scanned.Bundle.Signal(s).State)]++
			}
			if oldErr == nil && old.Score != nil && res.Score != nil {
				d := delta(*res.Score, *old.Score)
				deltaSum += d
				scored++
				switch {
				case d > 0:
					sum.Up++
				case d < 0:
					sum.Down++
				default:
					sum.Unchanged++
				}
			}
			done++
			if now := time.Now(); now.Sub(last) >= time.Second {
				last = now
				g.log.Info("recollected", "runs", fmt.Sprintf("%d/%d", done, len(items)))
			}
		}()
	}
	wg.Wait()
	if scored > 0 {
		sum.MeanDelta = deltaSum / float64(scored)
	}
	sum.ElapsedSeconds = time.Since(start).Seconds()
	if err := ctx.Err(); err != nil {
		g.log.Warn("recollection interrupted; the new runs saved so far stay, run it again to finish", "derived", sum.Derived)
		return sum, err
	}
	return sum, nil
}

// delta is new - old for scores rounded to one decimal, rounded again.
func delta(after, before float64) float64 { return math.Round((after-before)*10) / 10 }

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
