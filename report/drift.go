package report

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// Drift is how far the contract moved: from the pin of its server
// identity, and within the session. It is distance from a baseline,
// never a statement that either side is honest.
type Drift struct {
	// State is the drift signal's state: observed when a pin was
	// compared with, unavailable on a first scan, not_assessed when the
	// scan kept no pins or captured no contract.
	State  string `json:"state"`
	Reason string `json:"reason"`
	// Identity is the server identity's key (package, arguments, names of
	// the placeholder environment).
	Identity  string `json:"identity"`
	FirstScan bool   `json:"first_scan"`
	// Statement says in words what the comparison does and does not mean.
	Statement string    `json:"statement"`
	Baseline  *Baseline `json:"baseline"`
	// Changes are since the pin; Counts counts them by kind, recorded
	// kinds included.
	Changes    []Change       `json:"changes"`
	Counts     map[string]int `json:"counts"`
	Superseded []Superseded   `json:"superseded"`
	Session    *SessionDrift  `json:"session"`
}

// Baseline is the pinned run a scan was compared with.
type Baseline struct {
	RunID      string `json:"run_id"`
	RunDate    string `json:"run_date"`
	Version    string `json:"version"`
	SchemaHash string `json:"schema_hash"`
	PinnedBy   string `json:"pinned_by"`
	PinnedAt   string `json:"pinned_at"`
}

// Change is one classified change.
type Change struct {
	Kind     string `json:"kind"`
	Subject  string `json:"subject"`
	Detail   string `json:"detail"`
	Before   string `json:"before"`
	After    string `json:"after"`
	Safety   bool   `json:"safety"`
	Surfaced bool   `json:"surfaced"`
}

// Superseded is a description change left out of the changes because
// its new text trips contract checks the old did not.
type Superseded struct {
	Subject string   `json:"subject"`
	Codes   []string `json:"codes"`
}

// SessionDrift is the surface listed again after the idle watch, in the
// same session.
type SessionDrift struct {
	AfterMS     int64        `json:"after_ms"`
	SchemaHash  string       `json:"schema_hash"`
	Changes     []Change     `json:"changes"`
	ListChanged int          `json:"list_changed"`
	Error       string       `json:"error"`
	Superseded  []Superseded `json:"superseded"`
	// AfterCalls is how many tool calls were made between the two
	// listings: a change with calls before it came after use.
	AfterCalls int `json:"after_calls"`
}

// FirstScanStatement and BaselineStatement are what a report says of a
// pin.
const (
	FirstScanStatement = "First scan of this server identity: this run is now its pin (trust on first use). " +
		"A pin is not a statement that the server was honest then; later scans are compared with it."
	BaselineStatement = "Compared with the pin of this server identity. No change since the pin is distance from that baseline, not from honest."
)

func buildDrift(b *evidence.Bundle) *Drift {
	s, recorded := b.Signals[evidence.SignalDrift]
	var rl *evidence.Relist
	if b.Session != nil {
		rl = b.Session.Relist
	}
	if !recorded && rl == nil && b.Drift == nil {
		return nil
	}
	d := &Drift{State: string(s.State), Reason: s.Reason, Changes: []Change{}, Counts: map[string]int{}, Superseded: []Superseded{}}
	if !recorded {
		d.State = string(evidence.StateError)
		d.Reason = "not recorded in the bundle"
	}
	if dr := b.Drift; dr != nil {
		d.Identity, d.FirstScan = dr.Identity, dr.FirstScan
		if bl := dr.Baseline; bl != nil {
			d.Baseline = &Baseline{RunID: bl.RunID, RunDate: utc(bl.RunDate), Version: bl.Version, SchemaHash: bl.SchemaHash,
				PinnedBy: bl.PinnedBy, PinnedAt: utc(bl.PinnedAt)}
		}
		d.Changes = changes(dr.Changes)
		for _, c := range dr.Changes {
			d.Counts[string(c.Kind)]++
		}
		d.Superseded = superseded(dr.Superseded)
	}
	switch {
	case d.FirstScan:
		d.Statement = FirstScanStatement
	case d.Baseline != nil:
		d.Statement = BaselineStatement
	default:
		d.Statement = "Not compared with a pin: " + orDash(d.Reason) + "."
	}
	if rl != nil {
		d.Session = &SessionDrift{AfterMS: rl.AfterMS, SchemaHash: rl.SchemaHash, Changes: changes(rl.Changes),
			ListChanged: rl.ListChanged, Error: rl.Error, Superseded: superseded(rl.Superseded), AfterCalls: rl.AfterCalls}
	}
	return d
}

func changes(cs []contract.Change) []Change {
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		out = append(out, Change{Kind: string(c.Kind), Subject: c.Subject, Detail: c.Detail, Before: c.Before, After: c.After,
			Safety: c.Safety, Surfaced: c.Surfaced})
	}
	return out
}

func superseded(ss []evidence.SupersededChange) []Superseded {
	out := make([]Superseded, 0, len(ss))
	for _, s := range ss {
		out = append(out, Superseded{Subject: s.Subject, Codes: nonNil(s.Codes)})
	}
	return out
}

// SafetyFirst returns the surfaced changes of cs, those with the safety
// bit first, each group in its given order.
func SafetyFirst(cs []Change) []Change {
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if c.Surfaced {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		switch {
		case a.Safety == b.Safety:
			return 0
		case a.Safety:
			return -1
		}
		return 1
	})
	return out
}

// drift prints the DRIFT section.
func (t *table) drift(rep Report) {
	d := rep.Drift
	if d == nil {
		return
	}
	t.line("")
	t.line("DRIFT  " + clean(d.Statement))
	if bl := d.Baseline; bl != nil {
		t.grid([][]string{{"baseline", "run " + clean(bl.RunID) + " of " + clean(bl.RunDate) + ", version " + clean(bl.Version) +
			", pinned by " + clean(bl.PinnedBy) + " at " + clean(bl.PinnedAt)}})
	}
	rows := [][]string{{"SCOPE", "KIND", "SAFETY", "SUBJECT", "CHANGE"}}
	add := func(scope string, cs []Change) {
		for _, c := range SafetyFirst(cs) {
			rows = append(rows, []string{scope, clean(c.Kind), yesNo(c.Safety), clean(c.Subject), clean(changeText(c))})
		}
	}
	add("since pin", d.Changes)
	if s := d.Session; s != nil {
		add("in session", s.Changes)
	}
	if len(rows) > 1 {
		t.grid(rows)
	}
	var notes []string
	if n := recordedOnly(d.Changes); n != "" {
		notes = append(notes, "since the pin, recorded but not surfaced: "+n)
	}
	for _, s := range d.Superseded {
		notes = append(notes, clean(s.Subject)+": its new description trips "+clean(strings.Join(s.Codes, ", "))+" (a finding below, not drift)")
	}
	if s := d.Session; s != nil {
		switch {
		case s.Error != "":
			notes = append(notes, "second listing within the session failed: "+clean(s.Error))
		default:
			line := "listed again " + strconv.FormatInt(s.AfterMS, 10) + " ms after the first listing"
			if s.AfterCalls > 0 {
				line += " and " + plural(s.AfterCalls, "tool call")
			}
			line += ": "
			if len(s.Changes) == 0 {
				line += "the same surface"
			} else {
				line += strconv.Itoa(len(s.Changes)) + " change(s)"
			}
			if s.ListChanged > 0 {
				line += "; the server sent list_changed " + strconv.Itoa(s.ListChanged) + " time(s) (a hint; the surface was listed again regardless)"
			}
			notes = append(notes, line)
		}
		if n := recordedOnly(s.Changes); n != "" {
			notes = append(notes, "within the session, recorded but not surfaced: "+n)
		}
	}
	for _, n := range notes {
		t.line("  " + n)
	}
}

func recordedOnly(cs []Change) string {
	counts := map[string]int{}
	for _, c := range cs {
		if !c.Surfaced {
			counts[c.Kind]++
		}
	}
	var parts []string
	for _, k := range sortedKeys(counts) {
		parts = append(parts, clean(k)+" "+strconv.Itoa(counts[k]))
	}
	return strings.Join(parts, ", ")
}

func changeText(c Change) string {
	if c.Before == "" && c.After == "" {
		// An addition or removal: the subject names what.
		return orDash(c.Detail)
	}
	before, after := c.Before, c.After
	if before == "" {
		before = "(none)"
	}
	if after == "" {
		after = "(none)"
	}
	s := before + " -> " + after
	if c.Detail != "" {
		s = c.Detail + ": " + s
	}
	return s
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ChangeText is how a drift change reads in a table: "detail: before ->
// after", or its detail alone for an addition or removal.
func ChangeText(c Change) string { return changeText(c) }
