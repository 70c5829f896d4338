package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/store"
)

// Pins is the part of the run store that keeps the pins of server
// identities (a *store.Store is one).
type Pins interface {
	CurrentPin(ctx context.Context, key string) (*store.Pin, error)
	Bundle(ctx context.Context, runID string) ([]byte, error)
}

// ErrPins wraps failures to read a pin: the store's, not the package's,
// so there is no run to save.
var ErrPins = errors.New("read the pin")

// relistChecks runs the contract checks over the session's second listing
// when it differs from the first: a finding the first listing did not
// have is added to the bundle's checks, marked as the relisting's, and a
// description change of the same subject is superseded by it.
func relistChecks(b *evidence.Bundle) {
	s := b.Session
	if s == nil || s.Relist == nil || s.Relist.Contract == nil || b.ContractChecks == nil {
		return
	}
	rl := s.Relist
	have := map[string]bool{}
	for _, f := range b.ContractChecks.Findings {
		have[f.Code+"\x00"+f.Kind+"\x00"+f.Subject+"\x00"+f.Field+"\x00"+f.Evidence] = true
	}
	newCodes := map[string][]string{} // change subject -> codes
	for _, f := range contractChecks(rl.Contract).Findings {
		if have[f.Code+"\x00"+f.Kind+"\x00"+f.Subject+"\x00"+f.Field+"\x00"+f.Evidence] {
			continue
		}
		f.Listing = "relist"
		f.Message = "in the second listing of the session, after start-up: " + f.Message
		b.ContractChecks.Findings = append(b.ContractChecks.Findings, f)
		subj := changeSubject(f.Kind, f.Subject)
		if !slices.Contains(newCodes[subj], f.Code) {
			newCodes[subj] = append(newCodes[subj], f.Code)
		}
	}
	rl.Changes, rl.Superseded = supersede(rl.Changes, newCodes)
}

// supersede takes out of changes the description changes of subjects
// whose new text trips checks the old did not (newCodes by subject).
func supersede(changes []contract.Change, newCodes map[string][]string) ([]contract.Change, []evidence.SupersededChange) {
	out := make([]contract.Change, 0, len(changes))
	var sup []evidence.SupersededChange
	for _, ch := range changes {
		if codes := newCodes[ch.Subject]; ch.Kind == contract.DescriptionChanged && len(codes) > 0 {
			sup = append(sup, evidence.SupersededChange{Subject: ch.Subject, Codes: codes})
			continue
		}
		out = append(out, ch)
	}
	return out, sup
}

// changeSubject names a checks finding's subject as drift changes do.
func changeSubject(kind, subject string) string {
	switch kind {
	case checks.KindServer:
		return "server"
	case checks.KindTemplate:
		return "template:" + subject
	}
	return kind + ":" + subject
}

// drift compares b's contract with the pin of its server identity and
// records the outcome in b.Drift and the drift signal. A first scan
// records that the run will be the pin; Run pins it once the run is
// saved. A pin that cannot be read is an error: the store failed, and the
// comparison is not a fact about the package.
func (p *Pipeline) drift(ctx context.Context, b *evidence.Bundle) error {
	switch {
	case b.Contract == nil:
		b.Signals[evidence.SignalDrift] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "no contract was captured to compare"}
		return nil
	case p.cfg.Pins == nil:
		b.Signals[evidence.SignalDrift] = evidence.Signal{State: evidence.StateNotAssessed, Reason: "not compared with a pin: this scan keeps no pins (benchmark cases keep none)"}
		return nil
	}
	t0 := time.Now()
	key := store.IdentityKey(store.IdentityOf(b.Target))
	pin, err := p.cfg.Pins.CurrentPin(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		b.Drift = &evidence.Drift{Identity: key, FirstScan: true, Changes: []contract.Change{}}
		b.Signals[evidence.SignalDrift] = evidence.Signal{State: evidence.StateUnavailable, DurationMS: time.Since(t0).Milliseconds(),
			Reason: "first scan of this server identity: there is no pin to compare with; this run becomes its pin (trust on first use), which is no statement that the server was honest"}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPins, err)
	}
	data, err := p.cfg.Pins.Bundle(ctx, pin.RunID)
	if err != nil {
		return fmt.Errorf("%w: bundle of pinned run %s: %w", ErrPins, pin.RunID, err)
	}
	base, err := evidence.Decode(data)
	if err != nil {
		return fmt.Errorf("%w: bundle of pinned run %s: %w", ErrPins, pin.RunID, err)
	}
	if base.Contract == nil {
		return fmt.Errorf("%w: pinned run %s holds no contract", ErrPins, pin.RunID)
	}
	changes := contract.Classify(base.Contract, b.Contract)
	changes = append(changes, contract.ClassifyRepository(repositoryOf(base), repositoryOf(b))...)
	changes, sup := supersede(changes, newCheckCodes(base.Contract, b.ContractChecks))
	b.Drift = &evidence.Drift{
		Identity: key,
		Baseline: &evidence.Baseline{RunID: pin.RunID, RunDate: base.Run.Date, Version: base.Target.Version,
			SchemaHash: base.Contract.SchemaHash, PinnedBy: pin.PinnedBy, PinnedAt: pin.PinnedAt},
		Changes:    changes,
		Superseded: sup,
	}
	b.Signals[evidence.SignalDrift] = evidence.Signal{State: evidence.StateObserved, DurationMS: time.Since(t0).Milliseconds()}
	return nil
}

// newCheckCodes returns, by change subject, the codes the checks found
// on the new contract (its stored findings) that they do not find on the
// baseline's.
func newCheckCodes(old *contract.Contract, now *evidence.ContractChecks) map[string][]string {
	if now == nil {
		return nil
	}
	before := map[string]bool{}
	for _, f := range checks.Check(old) {
		before[changeSubject(f.Kind, f.Subject)+"\x00"+f.Code] = true
	}
	out := map[string][]string{}
	for _, f := range now.Findings {
		subj := changeSubject(f.Kind, f.Subject)
		if !before[subj+"\x00"+f.Code] && !slices.Contains(out[subj], f.Code) {
			out[subj] = append(out[subj], f.Code)
		}
	}
	return out
}

// repositoryOf is the repository the bundle's registry metadata names.
func repositoryOf(b *evidence.Bundle) string {
	if b.Supply == nil || b.Supply.Registry == nil {
		return ""
	}
	return b.Supply.Registry.RepositoryURL
}

// FirstPinner is a run store that can pin a first scan (a *store.Store
// is one); a StoreSaver whose store is one pins each saved first scan.
type FirstPinner interface {
	PinFirst(ctx context.Context, id store.Identity, runID string, at time.Time) (*store.Pin, bool, error)
}

// pinFirst makes a saved first scan its identity's pin. A failure leaves
// the run saved and unpinned: the identity's next scan is a first scan
// again, and says so.
func (s StoreSaver) pinFirst(ctx context.Context, b *evidence.Bundle) {
	fp, ok := s.Store.(FirstPinner)
	if !ok || b.Drift == nil || !b.Drift.FirstScan || b.Run.Recollected != nil {
		return
	}
	pin, created, err := fp.PinFirst(ctx, store.IdentityOf(b.Target), b.Run.ID, time.Now().UTC())
	switch {
	case err != nil && s.Logger != nil:
		s.Logger.Warn("could not pin the first scan; the next scan of this identity will be a first scan again", "run", b.Run.ID, "err", err)
	case err == nil && !created && s.Logger != nil:
		s.Logger.Warn("another scan pinned this identity first; later scans compare with it", "run", b.Run.ID, "pin", pin.RunID)
	}
}
