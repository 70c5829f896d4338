package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// Recollectable lists the signals Recollect can collect again from a
// stored run's evidence, with what each needs. The others (the registry
// resolution and everything the sandbox observed) need a new scan.
var Recollectable = map[string]string{
	evidence.SignalJudge:  "the stored contract",
	evidence.SignalDNSSEC: "the stored registry metadata",
	evidence.SignalGitHub: "the stored registry metadata",
	evidence.SignalOSV:    "the stored lockfile",
	evidence.SignalSocket: "the stored lockfile",
	// The mcpName the stored registry metadata declares.
	evidence.SignalMCPRegistry: "the stored registry metadata",
}

// Recollect makes a new run from a stored one: the same evidence, its run
// date and tool included, with only signals collected again, from what the
// stored run holds (the contract for the judge, the registry metadata for
// DNSSEC, GitHub and the MCP registry, the lockfile for OSV and Socket;
// lockfile may be nil when neither is asked for). Run.Recollected names
// the stored run, the signals and when. The stored run is not changed: evidence is immutable.
// Signals outside Recollectable are an error. Recollecting from a derived
// run derives from the same original run, the signals adding up.
func (p *Pipeline) Recollect(ctx context.Context, stored *evidence.Bundle, signals []string, lockfile []byte, runID string) (*Scanned, error) {
	if len(signals) == 0 {
		return nil, fmt.Errorf("recollect run %s: no signal asked for", stored.Run.ID)
	}
	for _, s := range signals {
		if _, ok := Recollectable[s]; !ok {
			return nil, fmt.Errorf("recollect run %s: %s can only be collected by a new scan", stored.Run.ID, s)
		}
	}
	// A deep copy, through the stored form.
	data, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("recollect run %s: %w", stored.Run.ID, err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("recollect run %s: %w", stored.Run.ID, err)
	}
	if b.Signals == nil {
		b.Signals = map[string]evidence.Signal{}
	}
	var meta *evidence.RegistryMeta
	if b.Supply != nil {
		meta = b.Supply.Registry
	}
	supply := func() *evidence.Supply {
		if b.Supply == nil {
			b.Supply = &evidence.Supply{}
		}
		return b.Supply
	}

	want := func(s string) bool { return slices.Contains(signals, s) }

	if want(evidence.SignalJudge) {
		r, sig := p.judgeContract(ctx, b.Contract)
		b.Judge, b.Signals[evidence.SignalJudge] = r, sig
	}
	if want(evidence.SignalGitHub) {
		gh, sig := p.githubRepo(ctx, meta)()
		b.Signals[evidence.SignalGitHub] = sig
		supply().GitHub = gh
	}
	if want(evidence.SignalDNSSEC) {
		rt := &Resolved{Name: b.Target.Name, Version: b.Target.Version}
		dv, sig := p.dnssecDomains(ctx, rt, meta)()
		b.Signals[evidence.SignalDNSSEC] = sig
		supply().DNSSEC = dv
	}
	if want(evidence.SignalMCPRegistry) {
		rt := &Resolved{Name: b.Target.Name, Version: b.Target.Version}
		mn, sig := p.mcpNameCheck(ctx, rt, meta)()
		b.Signals[evidence.SignalMCPRegistry] = sig
		supply().MCPRegistry = mn
	}
	if want(evidence.SignalOSV) || want(evidence.SignalSocket) {
		p.treeScansOf(ctx, b, lockfile, want(evidence.SignalOSV), want(evidence.SignalSocket))
	}

	now := time.Now
	if p.cfg.Now != nil {
		now = p.cfg.Now
	}
	from := b.Run.ID
	if b.Run.Recollected != nil {
		// Recollecting a derived run derives from the same original.
		from = b.Run.Recollected.From
		signals = append(slices.Clone(b.Run.Recollected.Signals), signals...)
	}
	signals = slices.Compact(slices.Sorted(slices.Values(signals)))
	b.Run.ID = runID
	if b.Run.ID == "" {
		b.Run.ID = NewRunID(now())
	}
	b.Run.Recollected = &evidence.Recollection{
		From: from, Signals: signals, At: now().UTC(),
		Tool: evidence.Tool{Name: "verifymcp", Version: p.cfg.ToolVersion},
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("recollect run %s: %w", stored.Run.ID, err)
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("recollect run %s: encode: %w", stored.Run.ID, err)
	}
	derived, err := evidence.Decode(out)
	if err != nil {
		return nil, err
	}
	return &Scanned{Bundle: derived, BundleJSON: out}, nil
}

// recollectConcurrency bounds the runs recollected at once: the work is
// waiting on third parties, not CPU.
const recollectConcurrency = 4

// RecollectStore is the run store as RecollectRuns uses it (a
// *store.Store is one).
type RecollectStore interface {
	RunStore
	// Derived lists the runs made from runID by an earlier recollection.
	Derived(ctx context.Context, runID string) ([]string, error)
	Bundle(ctx context.Context, runID string) ([]byte, error)
	Artifact(ctx context.Context, sha256hex string) ([]byte, error)
	Result(ctx context.Context, runID, rubricVersion string) (rubric.Result, error)
}

// RecollectItem is a stored run whose evidence lacks signals the rubric
// reads.
type RecollectItem struct {
	RunID   string
	Signals []string
}

// RecollectFailure is a run that could not be recollected.
type RecollectFailure struct {
	RunID string `json:"run_id"`
	Error string `json:"error"`
}

// RecollectSummary is what RecollectRuns did (the JSON form is part of
// `rescore --recollect`'s output).
type RecollectSummary struct {
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
	Up             int                `json:"up"`
	Down           int                `json:"down"`
	Unchanged      int                `json:"unchanged"`
	MeanDelta      float64            `json:"mean_delta"`
	Failed         []RecollectFailure `json:"failed"`
	ElapsedSeconds float64            `json:"elapsed_seconds"`
}

// RecollectRuns collects again, into new runs saved through Run (into st,
// bundle files in bundleDir when set), the signals each item lacks that a
// stored run can supply; the others are counted in NeedScan. A run
// recollected before is not recollected again. Failures of one run are
// listed in the summary; only an interrupt is returned as an error, with
// what was done so far.
func (p *Pipeline) RecollectRuns(ctx context.Context, st RecollectStore, bundleDir string, items []RecollectItem) (*RecollectSummary, error) {
	start := time.Now()
	sum := &RecollectSummary{Runs: len(items), Signals: map[string]map[string]int{}, NeedScan: map[string]int{}, Failed: []RecollectFailure{}}
	if len(items) == 0 {
		return sum, nil
	}
	rb := p.cfg.Rubric
	save := StoreSaver{Store: st, BundleDir: bundleDir, BundleFileOptional: true, Detached: true}
	if p.cfg.Logger != nil {
		save.Logger = p.cfg.Logger
	}

	var mu sync.Mutex
	var deltaSum float64
	var scored int
	var last time.Time
	done := 0
	fail := func(id string, err error) {
		mu.Lock()
		sum.Failed = append(sum.Failed, RecollectFailure{RunID: id, Error: err.Error()})
		mu.Unlock()
	}
	sem := make(chan struct{}, recollectConcurrency)
	var wg sync.WaitGroup
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		var can []string
		for _, s := range it.Signals {
			if _, ok := Recollectable[s]; ok {
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
			derived, err := st.Derived(ctx, it.RunID)
			if err != nil {
				fail(it.RunID, err)
				return
			}
			if len(derived) > 0 {
				mu.Lock()
				sum.AlreadyDerived++
				mu.Unlock()
				return
			}
			b, lockfile, err := storedForRecollect(ctx, st, it.RunID, can)
			if err != nil {
				fail(it.RunID, err)
				return
			}
			ran, err := p.Run(ctx, Job{Options: Options{RunID: NewRunID(time.Now())}, Recollect: &RecollectJob{From: b, Signals: can, Lockfile: lockfile}}, save)
			if err != nil {
				fail(it.RunID, err)
				return
			}
			old, oldErr := st.Result(context.WithoutCancel(ctx), it.RunID, rb.Version)

			mu.Lock()
			defer mu.Unlock()
			sum.Derived++
			for _, s := range can {
				m := sum.Signals[s]
				if m == nil {
					m = map[string]int{}
					sum.Signals[s] = m
				}
				m[string(ran.Bundle.Signal(s).State)]++
			}
			if res := ran.Result; oldErr == nil && old.Score != nil && res.Score != nil {
				d := ScoreDelta(*res.Score, *old.Score)
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
			if now := time.Now(); now.Sub(last) >= time.Second && p.cfg.Logger != nil {
				last = now
				p.cfg.Logger.Info("recollected", "runs", fmt.Sprintf("%d/%d", done, len(items)))
			}
		}()
	}
	wg.Wait()
	if scored > 0 {
		sum.MeanDelta = deltaSum / float64(scored)
	}
	sum.ElapsedSeconds = time.Since(start).Seconds()
	if err := ctx.Err(); err != nil {
		if p.cfg.Logger != nil {
			p.cfg.Logger.Warn("recollection interrupted; the new runs saved so far stay, run it again to finish", "derived", sum.Derived)
		}
		return sum, err
	}
	return sum, nil
}

// storedForRecollect reads the stored bundle of run id and, when one of
// the signals to recollect (can) reads it, the run's stored lockfile.
func storedForRecollect(ctx context.Context, st RecollectStore, id string, can []string) (*evidence.Bundle, []byte, error) {
	data, err := st.Bundle(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	b, err := evidence.Decode(data)
	if err != nil {
		return nil, nil, err
	}
	var lockfile []byte
	if (slices.Contains(can, evidence.SignalOSV) || slices.Contains(can, evidence.SignalSocket)) && b.Install != nil && b.Install.LockfileSHA256 != "" {
		if lockfile, err = st.Artifact(ctx, b.Install.LockfileSHA256); err != nil {
			return nil, nil, fmt.Errorf("the stored lockfile: %w", err)
		}
	}
	return b, lockfile, nil
}

// ScoreDelta is after - before for scores rounded to one decimal, rounded
// again.
func ScoreDelta(after, before float64) float64 { return math.Round((after-before)*10) / 10 }
