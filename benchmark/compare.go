package benchmark

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// Emitted is one finding the scanner reported: a code about a subject.
type Emitted struct {
	Code    string `json:"code"`
	Subject string `json:"subject"`
}

// SignalState is the state of one evidence signal during a scan.
type SignalState struct {
	State      evidence.State `json:"state"`
	ThirdParty bool           `json:"third_party"`
	Reason     string         `json:"reason,omitempty"`
}

// Observed is what one scan of a case's target produced, scored under the
// rubric of the run: fresh from the pipeline, or a stored bundle rescored.
type Observed struct {
	// RunID, Date and ToolVersion identify the scan.
	RunID       string    `json:"run_id"`
	Date        time.Time `json:"date"`
	ToolVersion string    `json:"tool_version"`
	// RubricVersion is the rubric the findings were scored under; it must
	// be the run's.
	RubricVersion string `json:"rubric_version"`
	// Name, Version and Integrity identify the artefact that was scanned.
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
	// Bin, Args and EnvNames are how the server was started; nil Args or
	// EnvNames mean unknown and are not checked against the case.
	Bin      string   `json:"bin,omitempty"`
	Args     []string `json:"args"`
	EnvNames []string `json:"env_names"`
	// Findings are every emitted finding, in or out of the case's scope.
	Findings []Emitted `json:"findings"`
	// Signals are the state of every signal of the scan, by name.
	Signals map[string]SignalState `json:"signals"`
	// Error, when set, says why there is no scan to compare (the scan
	// failed, or no stored run was found); Findings are then ignored.
	Error string `json:"error,omitempty"`
	// FirstScan is the earliest stored run of the case's exact target
	// (any run, this one included), when the store was asked: a reviewed
	// case selected after it was selected after scoring.
	FirstScan *ScanRef `json:"first_scan,omitempty"`
}

// ScanRef names one stored run.
type ScanRef struct {
	RunID string    `json:"run_id"`
	Date  time.Time `json:"date"`
}

// Observe turns a bundle and its evaluation into an Observed, the same way
// for a fresh scan and for a stored bundle rescored.
func Observe(b *evidence.Bundle, res rubric.Result) Observed {
	o := Observed{
		RunID: b.Run.ID, Date: b.Run.Date, ToolVersion: b.Run.Tool.Version,
		RubricVersion: res.RubricVersion,
		Name:          b.Target.Name, Version: b.Target.Version, Integrity: b.Target.Integrity,
		Args: nonNil(b.Target.Args), EnvNames: nonNil(b.Target.EnvNames),
		Findings: make([]Emitted, 0, len(res.Findings)),
		Signals:  make(map[string]SignalState, len(b.Signals)),
	}
	if b.Target.Bin != nil {
		o.Bin = b.Target.Bin.Name
	}
	for _, f := range res.Findings {
		o.Findings = append(o.Findings, Emitted{Code: f.Code, Subject: f.Subject})
	}
	for name, s := range b.Signals {
		o.Signals[name] = SignalState{State: s.State, ThirdParty: s.ThirdParty, Reason: s.Reason}
	}
	return o
}

// prefixSignals maps code prefixes to the signal whose evidence the codes
// under them are claims about, longest prefix first where they nest. The
// method groups codes by evidence source under their prefixes (rule 7), so
// the prefix names the producing signal where a dimension reads several.
var prefixSignals = []struct {
	prefix string
	signal string
}{
	{"pkg.supply.osv.", evidence.SignalOSV},
	{"pkg.supply.socket.", evidence.SignalSocket},
	{"pkg.supply.github.", evidence.SignalGitHub},
	{"pkg.supply.registry.", evidence.SignalRegistryMeta},
	{"pkg.dnssec.", evidence.SignalDNSSEC},
	{"pkg.judge.", evidence.SignalJudge},
	{"pkg.behavior.", evidence.SignalBehavior},
	{"pkg.install.", evidence.SignalInstall},
	{"pkg.session.", evidence.SignalSession},
	{"pkg.protocol.", evidence.SignalSession},
	{"pkg.contract.", evidence.SignalContract},
	// Drift codes are claims about the comparison with the pin (and
	// within the session, which the drift dimension reads beside it).
	{"pkg.drift.", evidence.SignalDrift},
	// A release's declared surface against its listing: the session
	// listed what is compared.
	{"pkg.artefact.surface.", evidence.SignalSession},
}

func prefixSignal(code string) string {
	for _, p := range prefixSignals {
		if strings.HasPrefix(code, p.prefix) {
			return p.signal
		}
	}
	return ""
}

// ProducingSignal returns the evidence signal that produces code, or ""
// when it cannot tell. The rubric's catalog names each code's dimension,
// and the dimension the signals it reads; where it reads one, that signal
// produces the code. Where it reads several (provenance reads registry
// metadata, GitHub and DNSSEC), the code's prefix names the one it comes
// from: pkg.supply.registry.no_repository is registry metadata's, whatever
// GitHub's state. With a nil rubric, or a code not in its catalog, the
// prefix alone decides.
func ProducingSignal(r *rubric.Rubric, code string) string {
	prefix := prefixSignal(code)
	if r == nil {
		return prefix
	}
	def, ok := r.Code(code)
	if !ok {
		return prefix
	}
	d, ok := r.Dimension(def.Dimension)
	switch {
	case !ok:
		return prefix
	case slices.Contains(d.Signals, prefix):
		return prefix
	case len(d.Signals) == 1:
		return d.Signals[0]
	}
	return ""
}

// Counts are the confusion counts of a case, a code or a kind. FN counts
// every expected code that was not emitted, as the method defines it,
// whatever the state of any signal. FNUnavailable is part of FN, never
// apart from it: those misses whose producing signal was not observed
// during the scan, shown beside FN so that a reader can tell a check that
// missed from a signal that did not answer.
type Counts struct {
	TP            int `json:"tp"`
	FP            int `json:"fp"`
	FN            int `json:"fn"`
	FNUnavailable int `json:"fn_of_which_signal_unavailable"`
}

func (c *Counts) add(o Counts) {
	c.TP += o.TP
	c.FP += o.FP
	c.FN += o.FN
	c.FNUnavailable += o.FNUnavailable
}

// Match is one code emitted for a case, with every subject it was emitted
// for ("" is the package itself). A code counts once per case however many
// subjects it names.
type Match struct {
	Code     string   `json:"code"`
	Subjects []string `json:"subjects"`
	// Measurement marks a measurement code: it fires whenever the
	// measurement was made, whatever its value, so its match says that
	// the measurement was made.
	Measurement bool `json:"measurement"`
}

// Missed is an expected code that was not emitted: a false negative.
type Missed struct {
	Code string `json:"code"`
	// Signals holds the signal that produces the code and its state
	// during the scan; it is empty when the producing signal is not known.
	Signals []NamedSignal `json:"signals"`
	// SignalUnavailable says the producing signal was not observed
	// (unavailable, error, not assessed, or not recorded). The miss is a
	// false negative all the same.
	SignalUnavailable bool `json:"signal_unavailable"`
	// Measurement marks a measurement code: the measurement was not made.
	Measurement bool `json:"measurement"`
}

// NamedSignal is a signal and its state during the scan.
type NamedSignal struct {
	Name  string         `json:"name"`
	State evidence.State `json:"state"`
}

// CaseResult is the comparison of one case with one scan.
type CaseResult struct {
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`
	File   string `json:"file"`
	Target string `json:"target"`
	// Form is how the case's evidence is obtained: FormCapture (a static
	// capture, scored with no engine and no network, reproducible) or
	// FormLive (run in the sandbox: it depends on the world).
	Form string `json:"form"`
	// Artefact is what was scanned: the case's package and version, and
	// the integrity of the fixture or of the registry's tarball.
	Artefact ScanTarget `json:"artefact"`
	// Reviewer, Provenance, Selected and ReviewedUnder come from the case
	// file.
	Reviewer      string   `json:"reviewer"`
	Provenance    string   `json:"provenance"`
	Selected      string   `json:"selected,omitempty"`
	ReviewedUnder string   `json:"reviewed_under_rubric"`
	Scope         []string `json:"scope"`
	Expected      []string `json:"expected"`
	EnvNames      []string `json:"env_names"`
	Args          []string `json:"args"`
	OpenDisputes  int      `json:"open_disputes"`
	Disputes      int      `json:"disputes"`
	// DisputeLog is every dispute of the case with its status and answer:
	// an upheld one keeps the disagreement on record.
	DisputeLog []Dispute `json:"dispute_log"`
	// Withdrawn, when set, says why the case counts in no total: a dispute
	// withdrew it, or an open one asks for its withdrawal. It is still
	// compared and listed.
	Withdrawn string `json:"withdrawn,omitempty"`
	// SelectedAfterScoring is the stored run of the case's target made
	// before the date the case says it was selected (reviewed cases): the
	// method selects real servers before they are scored, never after.
	SelectedAfterScoring *ScanRef `json:"selected_after_scoring,omitempty"`
	// Publishable is false while any of NotPublishable holds: the case was
	// reviewed under another rubric than the run's, no person has signed
	// it, a dispute is open, or the scan failed.
	Publishable    bool     `json:"publishable"`
	NotPublishable []string `json:"not_publishable"`
	// RunID, ScannedAt and ScanToolVersion identify the scan compared;
	// empty when there was none.
	RunID           string    `json:"run_id,omitempty"`
	ScannedAt       time.Time `json:"scanned_at,omitzero"`
	ScanToolVersion string    `json:"scan_tool_version,omitempty"`
	// Error says why the case could not be compared; it then counts in
	// nothing.
	Error string `json:"error,omitempty"`
	// Refused lists why the case was refused when the corpus was read,
	// each problem with its file and line; a refused case was not scanned
	// and counts in nothing.
	Refused []string `json:"refused"`

	TP []Match `json:"tp"`
	FP []Match `json:"fp"`
	// FN are every expected code not emitted, each saying whether its
	// producing signal was observed.
	FN []Missed `json:"fn"`
	// OutOfScope are emitted codes outside the scope: shown, counted in
	// nothing.
	OutOfScope []Match `json:"out_of_scope"`
	// Unverified are the signals that produce codes within the scope and
	// were not observed during the scan (unavailable, error, not assessed
	// or not recorded): what they would have found is unknown, so a case
	// with no FP and no FN is not clean in that part of its scope. They are
	// signal states, never findings, and count in nothing.
	Unverified []NamedSignal          `json:"unverified"`
	Counts     Counts                 `json:"counts"`
	Signals    map[string]SignalState `json:"signals"`
}

// Compare scores one case against one scan of its target. rubricVersion is
// the rubric in force for the run, and cat its catalog, which says which
// signal produces a code and which codes are measurements (nil: the code's
// prefix names its signal, and no code is known as a measurement).
//
// Within the case's scope, an expected code that was emitted is a TP, an
// emitted code nobody expected is an FP, and an expected code not emitted
// is an FN, whatever the state of any signal. An FN whose producing signal
// was not observed during the scan (unavailable, error, not assessed or not
// recorded) is also counted in FNUnavailable, which is part of FN. Codes
// are compared as codes: each counts once per case however many findings
// (subjects) carry it, and values are never compared, so a measurement
// matches when the measurement was made. Findings outside the scope are
// listed in OutOfScope and counted in nothing. If target names an artefact
// (name, version, and for a fixture its integrity), a scan of anything else
// is an error, not a result. A case refused when the corpus was read is
// reported as refused, and no scan of it is compared.
func Compare(c Case, target ScanTarget, o Observed, rubricVersion string, cat *rubric.Rubric) CaseResult {
	measurement := func(code string) bool {
		if cat == nil {
			return false
		}
		def, ok := cat.Code(code)
		return ok && def.Kind == rubric.KindMeasurement
	}
	r := CaseResult{
		ID: c.ID, Kind: c.Kind, File: c.File, Target: c.Target, Form: c.Form(), Artefact: ScanTarget{Name: target.Name, Version: target.Version, Integrity: target.Integrity},
		Reviewer: c.Reviewer, Provenance: strings.TrimSpace(c.Provenance), Selected: c.Selected, ReviewedUnder: c.RubricVersion,
		Scope: nonNil(c.Scope), Expected: nonNil(c.Expected), EnvNames: c.EnvNames(), Args: nonNil(c.Args),
		OpenDisputes: c.OpenDisputes(), Disputes: len(c.Disputes), DisputeLog: nonNil(c.Disputes),
		NotPublishable: []string{},
		RunID:          o.RunID, ScannedAt: o.Date, ScanToolVersion: o.ToolVersion,
		Refused: []string{},
		TP:      []Match{}, FP: []Match{}, FN: []Missed{}, OutOfScope: []Match{},
		Unverified: []NamedSignal{},
		Signals:    map[string]SignalState{},
	}
	if len(c.Refused) > 0 {
		for _, err := range c.Refused {
			r.Refused = append(r.Refused, err.Error())
		}
		r.NotPublishable = append(r.NotPublishable, "refused when the corpus was read ("+plural(len(c.Refused), "problem")+", listed with the case): it was not scanned and counts in nothing")
		return r
	}
	for k, v := range o.Signals {
		r.Signals[k] = v
	}
	if !sameVersion(c.RubricVersion, rubricVersion) {
		r.NotPublishable = append(r.NotPublishable, "reviewed under rubric "+c.RubricVersion+", but rubric "+rubricVersion+
			" is in force: re-review the case under it before publishing")
	}
	if strings.EqualFold(strings.TrimSpace(c.Reviewer), ReviewerPending) {
		r.NotPublishable = append(r.NotPublishable, "no person has signed the case (reviewer: pending)")
	}
	if n := c.OpenDisputes(); n > 0 {
		r.NotPublishable = append(r.NotPublishable, plural(n, "open dispute"))
	}
	if why, ok := c.Withdrawn(); ok {
		r.Withdrawn = why
		r.NotPublishable = append(r.NotPublishable, why+": it counts in no total")
	}
	if c.Kind == KindReviewed {
		switch sel, err := time.Parse(time.DateOnly, c.Selected); {
		case c.Selected == SelectedUnknown:
			r.NotPublishable = append(r.NotPublishable, "the date it was selected is not recorded (selected: unknown), so selection before scoring cannot be checked")
		case err == nil && o.FirstScan != nil && o.FirstScan.Date.Before(sel):
			r.SelectedAfterScoring = o.FirstScan
			r.NotPublishable = append(r.NotPublishable, fmt.Sprintf("selected after scoring: its target was scanned on %s (run %s), before it was selected on %s",
				o.FirstScan.Date.UTC().Format(time.DateOnly), o.FirstScan.RunID, c.Selected))
		}
	}
	if err := checkObserved(c, target, o, rubricVersion); err != "" {
		r.Error = err
	}
	if r.Error != "" {
		r.NotPublishable = append(r.NotPublishable, "no comparison: "+r.Error)
		r.Publishable = false
		return r
	}
	r.Publishable = len(r.NotPublishable) == 0
	if r.Artefact.Integrity == "" {
		r.Artefact.Integrity = o.Integrity
	}

	emitted := map[string][]string{}
	for _, f := range o.Findings {
		if !slices.Contains(emitted[f.Code], f.Subject) {
			emitted[f.Code] = append(emitted[f.Code], f.Subject)
		}
	}
	expected := map[string]bool{}
	for _, code := range c.Expected {
		expected[code] = true
	}
	for _, code := range sortedKeys(emitted) {
		subjects := emitted[code]
		sort.Strings(subjects)
		m := Match{Code: code, Subjects: subjects, Measurement: measurement(code)}
		switch {
		case !c.InScope(code):
			r.OutOfScope = append(r.OutOfScope, m)
		case expected[code]:
			r.TP = append(r.TP, m)
		default:
			r.FP = append(r.FP, m)
		}
	}
	for _, code := range sortedKeys(expected) {
		if _, ok := emitted[code]; ok {
			continue
		}
		m := Missed{Code: code, Signals: []NamedSignal{}, Measurement: measurement(code)}
		if name := ProducingSignal(cat, code); name != "" {
			s, ok := o.Signals[name]
			state := s.State
			if !ok {
				// A signal the scan did not record never reads as observed.
				state = evidence.StateError
			}
			m.Signals = append(m.Signals, NamedSignal{Name: name, State: state})
			m.SignalUnavailable = state != evidence.StateObserved
		}
		r.FN = append(r.FN, m)
		r.Counts.FN++
		if m.SignalUnavailable {
			r.Counts.FNUnavailable++
		}
	}
	r.Counts.TP, r.Counts.FP = len(r.TP), len(r.FP)
	r.Unverified = unverifiedScope(c, o, cat)
	return r
}

// unverifiedScope lists the signals that produce a code within c's scope
// (by the catalog of cat, or by the scope's prefixes without one) and were
// not observed during the scan, by name.
func unverifiedScope(c Case, o Observed, cat *rubric.Rubric) []NamedSignal {
	producers := map[string]bool{}
	if cat != nil {
		for _, def := range cat.Codes {
			if c.InScope(def.Code) {
				if name := ProducingSignal(cat, def.Code); name != "" {
					producers[name] = true
				}
			}
		}
	}
	for _, entry := range c.Scope {
		if name := prefixSignal(entry); name != "" {
			producers[name] = true
		}
	}
	out := []NamedSignal{}
	for _, name := range sortedKeys(producers) {
		s, ok := o.Signals[name]
		state := s.State
		if !ok {
			state = evidence.StateError
		}
		if state != evidence.StateObserved {
			out = append(out, NamedSignal{Name: name, State: state})
		}
	}
	return out
}

// checkObserved says why o cannot be compared for c and target, or "".
func checkObserved(c Case, target ScanTarget, o Observed, rubricVersion string) string {
	envNames := o.EnvNames
	if envNames != nil {
		envNames = slices.Clone(envNames)
		sort.Strings(envNames)
	}
	switch {
	case o.Error != "":
		return o.Error
	case !sameVersion(o.RubricVersion, rubricVersion):
		if o.RubricVersion == "" {
			return "the findings carry no rubric version"
		}
		return "the findings were scored under rubric " + o.RubricVersion + ", not " + rubricVersion + "; rescore the bundle"
	case target.Name != "" && o.Name != target.Name, target.Version != "" && o.Version != target.Version:
		return "the scan is of " + o.Name + "@" + o.Version + ", not " + target.Name + "@" + target.Version
	case target.Integrity != "" && o.Integrity != target.Integrity:
		return "the scan is of another build of " + target.Name + "@" + target.Version + " (integrity " + o.Integrity + ", the fixture packs to " + target.Integrity + ")"
	case c.Bin != "" && o.Bin != c.Bin:
		return "the scan started bin " + strconv.Quote(o.Bin) + ", the case names " + strconv.Quote(c.Bin)
	case o.Args != nil && !slices.Equal(o.Args, nonNil(c.Args)):
		return "the scan started the server with arguments " + strconv.Quote(strings.Join(o.Args, " ")) + ", the case names " + strconv.Quote(strings.Join(c.Args, " "))
	case envNames != nil && !slices.Equal(envNames, c.EnvNames()):
		return "the scan set the environment variables " + strings.Join(envNames, ", ") + ", the case names " + strings.Join(c.EnvNames(), ", ")
	}
	return ""
}

// sameVersion compares rubric versions, allowing a leading v.
func sameVersion(a, b string) bool {
	a, b = strings.TrimPrefix(strings.TrimSpace(a), "v"), strings.TrimPrefix(strings.TrimSpace(b), "v")
	return a != "" && a == b
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func plural(n int, what string) string {
	s := strconv.Itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}
