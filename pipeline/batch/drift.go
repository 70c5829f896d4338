package batch

import (
	"cmp"
	"slices"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// ItemDrift is how one scan compared with its identity's pin, and what
// moved within its session.
type ItemDrift struct {
	// State is "compared", "first_scan" or "not_compared".
	State string `json:"state"`
	// Baseline is the pinned run compared with.
	Baseline string `json:"baseline,omitempty"`
	// Changes are since the pin; Session within the session.
	Changes []contract.Change `json:"changes"`
	Session []contract.Change `json:"session"`
}

// Drift states of an item.
const (
	DriftCompared    = "compared"
	DriftFirstScan   = "first_scan"
	DriftNotCompared = "not_compared"
)

// ItemDriftOf reads the drift of a scanned bundle.
func ItemDriftOf(b *evidence.Bundle) *ItemDrift {
	d := &ItemDrift{State: DriftNotCompared, Changes: []contract.Change{}, Session: []contract.Change{}}
	if dr := b.Drift; dr != nil {
		switch {
		case dr.FirstScan:
			d.State = DriftFirstScan
		case dr.Baseline != nil:
			d.State, d.Baseline, d.Changes = DriftCompared, dr.Baseline.RunID, dr.Changes
		}
	}
	if b.Session != nil && b.Session.Relist != nil && b.Session.Relist.Changes != nil {
		d.Session = b.Session.Relist.Changes
	}
	return d
}

// DriftSummary sums up the drift of a batch's scans: how many were
// compared with a pin or pinned, every change counted by kind, and the
// surfaced changes listed, those with the safety bit first.
type DriftSummary struct {
	Compared    int            `json:"compared"`
	FirstScans  int            `json:"first_scans"`
	NotCompared int            `json:"not_compared"`
	ByKind      map[string]int `json:"by_kind"`
	Surfaced    []DriftEntry   `json:"surfaced"`
}

// DriftEntry is one surfaced change of one target.
type DriftEntry struct {
	Line    int    `json:"line"`
	Target  string `json:"target"`
	Version string `json:"version"`
	RunID   string `json:"run_id"`
	// Scope is "pin" (since the pin) or "session" (within the session).
	Scope string `json:"scope"`
	contract.Change
}

// SummarizeDrift sums up the drift of items scanned now.
func SummarizeDrift(items []*Item) DriftSummary {
	s := DriftSummary{ByKind: map[string]int{}, Surfaced: []DriftEntry{}}
	for _, it := range items {
		d := it.Drift
		if d == nil {
			continue
		}
		switch d.State {
		case DriftCompared:
			s.Compared++
		case DriftFirstScan:
			s.FirstScans++
		default:
			s.NotCompared++
		}
		for _, sc := range []struct {
			scope   string
			changes []contract.Change
		}{{"pin", d.Changes}, {"session", d.Session}} {
			for _, c := range sc.changes {
				s.ByKind[string(c.Kind)]++
				if c.Surfaced {
					s.Surfaced = append(s.Surfaced, DriftEntry{Line: it.Line, Target: it.Name, Version: it.Version, RunID: it.RunID, Scope: sc.scope, Change: c})
				}
			}
		}
	}
	slices.SortStableFunc(s.Surfaced, func(a, b DriftEntry) int {
		if a.Safety != b.Safety {
			if a.Safety {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Line, b.Line)
	})
	return s
}
