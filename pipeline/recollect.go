package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
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
}

// Recollect makes a new run from a stored one: the same evidence, its run
// date and tool included, with only signals collected again, from what the
// stored run holds (the contract for the judge, the registry metadata for
// DNSSEC and GitHub, the lockfile for OSV and Socket; lockfile may be nil
// when neither is asked for). Run.Recollected names the stored run, the
// signals and when. The stored run is not changed: evidence is immutable.
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
	if want(evidence.SignalOSV) || want(evidence.SignalSocket) {
		p.treeScansOf(ctx, b, lockfile, want(evidence.SignalOSV), want(evidence.SignalSocket))
	}

	now := time.Now
	if p.Now != nil {
		now = p.Now
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
		Tool: evidence.Tool{Name: "verifymcp", Version: p.ToolVersion},
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
