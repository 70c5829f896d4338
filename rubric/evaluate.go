package rubric

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/verifymcp/verifymcp/evidence"
)

// State is what became of a dimension in one evaluation.
type State string

const (
	// StateScored means every needed signal was observed and the dimension
	// has a score.
	StateScored State = "scored"
	// StateZeroPoint means a needed signal was unavailable, error or
	// missing, or the evidence it promised is absent; the dimension gets the
	// rubric's zero point and counts in the composite.
	StateZeroPoint State = "zero_point"
	// StateDropped means a needed signal was deliberately not assessed, or
	// the question does not apply (no tools listed); the dimension is left
	// out of the composite's denominator.
	StateDropped State = "dropped"
)

// Finding is one emitted reason code about one subject.
type Finding struct {
	Code      string   `json:"code"`
	Kind      Kind     `json:"kind"`
	Severity  Severity `json:"severity"`
	Dimension string   `json:"dimension"`
	// Subject is what the finding is about: a tool, a package in the
	// installed tree, or an MCP method. Empty when it is the target itself.
	Subject string `json:"subject"`
	// Message is one sentence specific to this finding.
	Message string `json:"message"`
	// Evidence quotes what was observed, truncated to the rubric's
	// evidence_max_chars. It may contain text written by the package.
	Evidence string `json:"evidence"`
	// Value is set for measurements only.
	Value *float64 `json:"value"`
}

// DimensionScore is the outcome of one dimension.
type DimensionScore struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	State  State   `json:"state"`
	// Score is 0..100, rounded to one decimal: the probe's score when
	// scored, the zero point when zero_point, and 0 (not counted) when
	// dropped.
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
}

// Result is the outcome of evaluating one bundle under one rubric.
type Result struct {
	RubricVersion string           `json:"rubric_version"`
	RubricHash    string           `json:"rubric_hash"`
	Findings      []Finding        `json:"findings"`
	Dimensions    []DimensionScore `json:"dimensions"`
	// Score is the composite, 0..100 rounded to one decimal, over the
	// dimensions not dropped. Nil when every dimension was dropped. From
	// rubric v9 it is at most the rubric's critical cap when any finding
	// is critical.
	Score *float64 `json:"score"`
	// Cap is set when the critical cap lowered Score: its value and
	// written reason, the critical codes that triggered it and the
	// composite before it. Nil when no cap applied (no critical finding,
	// a composite already at or below the cap, or a rubric before v9).
	Cap *Cap `json:"cap,omitempty"`
	// ContractChecks names the contract checks the rubric scores and where
	// their findings came from; nil for a rubric without
	// prompt_contract_integrity (v1 to v4).
	ContractChecks *ChecksUse `json:"contract_checks,omitempty"`
}

// Evaluate scores a bundle under a rubric. It is a pure function of its
// arguments: no I/O, no clock, no randomness, and the same inputs always
// give the same Result, findings sorted by code, then subject.
//
// For each dimension, the signals it names decide whether it is scored: any
// signal unavailable, error or missing from the bundle gives the zero
// point; otherwise any signal not_assessed drops the dimension, except that
// a sandbox phase that was not reached because an earlier one failed gets
// the zero point too, since a failure is not an opt-out. Only then does the
// dimension's probe run, and it may still find the evidence absent (zero
// point) or the question inapplicable (dropped). The supply-chain probes
// run whatever the gate decided, so that each observed signal's findings
// are reported even when another signal of the dimension was not
// observed; they return the gate's verdict except where their rubric file
// says otherwise (positive evidence of malware; GitHub not assessed
// because no repository on GitHub is declared; from rubric v4, DNSSEC not
// assessed, which scores provenance from its other signals). So does the
// judge probe of rubric v5, to report a judge that was not consulted; it
// scores only verdicts given under the judge specification the rubric
// pins (see Rubric.JudgeSpec). From rubric v5, Evaluate also runs the
// deterministic contract checks (contract/checks) over the stored contract,
// which is most of its cost; a Memo runs them, and the other probes that
// read only the contract, once per contract over a series of bundles.
// From rubric v9, when any finding of kind finding is critical, the
// composite is at most the rubric's critical cap, and Result.Cap records
// that it applied (see criticalCap).
//
// r must come from Load or Current: Evaluate panics if a probe emits a code
// missing from r's catalog, which validation at load rules out.
func Evaluate(b *evidence.Bundle, r *Rubric) Result { return evaluate(b, r, nil) }

// evaluate is Evaluate; with memo, the contract checks and the outcomes
// of the probes that read only the contract are memo's for contracts it
// has seen.
func evaluate(b *evidence.Bundle, r *Rubric, memo *Memo) Result {
	res := Result{
		RubricVersion: r.Version,
		RubricHash:    r.Hash,
		Dimensions:    make([]DimensionScore, 0, len(r.Dimensions)),
	}
	p := &probe{b: b, r: r, p: &r.Params, findings: make([]Finding, 0, 16), memo: memo.contract(b.Contract)}
	var sum, weights float64
	// The gate depends on the signals alone, and dimensions that share
	// their signals are listed together, so one gate serves a run of them.
	var lastSignals []string
	var lastGate verdict
	// From rubric v11, what the sandbox could not do is not assessed
	// (limits.go).
	lim := scannerLimit(b, r)
	for i, d := range r.Dimensions {
		if i == 0 || !slices.Equal(lastSignals, d.Signals) {
			lastSignals, lastGate = d.Signals, limitGate(b, lim, d.Signals, gate(b, d))
		}
		v := lastGate
		switch sc, ok := scorers[d.ID]; {
		case ok && sc.observe != nil:
			// The probe runs whatever the gate said, so that what its
			// observed signals show is reported even when another of its
			// signals was not observed; it returns the gate's verdict
			// unless its evidence decides the score by itself.
			p.dimension, p.signals = d.ID, d.Signals
			v = sc.observe(p, v)
		case v.state != StateScored:
		case !ok:
			v = zeroPoint("no probe implements this dimension")
		case p.memo != nil && sc.contractOnly && (sc.contractOnlyUntil == "" || compareVersions(r.Version, sc.contractOnlyUntil) < 0):
			p.dimension, p.signals = d.ID, d.Signals
			v = p.memo.score(p, i, sc)
		default:
			p.dimension, p.signals = d.ID, d.Signals
			v = sc.score(p)
		}
		v = limitVerdict(lastGate, v)
		ds := DimensionScore{ID: d.ID, Weight: d.Weight, State: v.state, Reason: v.reason}
		switch v.state {
		case StateScored:
			ds.Score = round1(clamp(v.score))
		case StateZeroPoint:
			if v.noCredit {
				ds.Score = 0
				break
			}
			ds.Score = d.ZeroPoint
			if d.ZeroPointReason != "" {
				ds.Reason += "; zero point " + formatScore(d.ZeroPoint) + ": " + strings.TrimSpace(d.ZeroPointReason)
			}
		case StateDropped:
			ds.Score = 0
		}
		if ds.State != StateDropped {
			sum += ds.Weight * ds.Score
			weights += ds.Weight
		}
		res.Dimensions = append(res.Dimensions, ds)
	}
	p.flushFolds()
	sortFindings(p.findings)
	res.Findings = p.findings
	if weights > 0 {
		s := round1(sum / weights)
		// From rubric v9, a critical finding caps the composite; the
		// dimensions keep what was measured.
		if c := criticalCap(r.Params.Composite, res.Findings, s); c != nil {
			res.Cap, s = c, c.Value
		}
		res.Score = &s
	}
	if pin, ok := r.ContractChecks(); ok {
		res.ContractChecks = p.checks
		if res.ContractChecks == nil {
			res.ContractChecks = &ChecksUse{ChecksPin: pin, Source: ChecksNotRun}
		}
	}
	return res
}

// compareFindings orders findings by code, then subject, evidence and
// message.
func compareFindings(a, b *Finding) int {
	if c := strings.Compare(a.Code, b.Code); c != 0 {
		return c
	}
	if c := strings.Compare(a.Subject, b.Subject); c != 0 {
		return c
	}
	if c := strings.Compare(a.Evidence, b.Evidence); c != 0 {
		return c
	}
	return strings.Compare(a.Message, b.Message)
}

// sortFindings sorts fs stably by compareFindings. It sorts indices and
// then moves each finding once, along the cycles of the permutation: a
// stable sort of the findings themselves moved these large structs many
// times over, which was a tenth of Evaluate. Ties are broken by index,
// which makes the order exactly that of a stable sort.
func sortFindings(fs []Finding) {
	sorted := true
	for i := 1; i < len(fs); i++ {
		if compareFindings(&fs[i-1], &fs[i]) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	idx := make([]int32, len(fs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := compareFindings(&fs[a], &fs[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	// fs[i] must become the finding now at fs[idx[i]]; a moved position
	// is marked by idx[j] = j.
	for i := range idx {
		if idx[i] == int32(i) {
			continue
		}
		tmp := fs[i]
		j := int32(i)
		for {
			k := idx[j]
			idx[j] = j
			if k == int32(i) {
				fs[j] = tmp
				break
			}
			fs[j] = fs[k]
			j = k
		}
	}
}

// laterPhases are signals whose collection depends on an earlier sandbox
// phase having succeeded. The judge reads the listed contract; only rubric
// v5 on names its signal.
var laterPhases = map[string]bool{
	evidence.SignalSession:  true,
	evidence.SignalContract: true,
	evidence.SignalBehavior: true,
	evidence.SignalJudge:    true,
	evidence.SignalDrift:    true,
}

// gate decides from the signal states alone whether a dimension can be
// scored. Rescoring a store runs it for every dimension of every bundle,
// so the common reasons are built by concatenation, without fmt.
func gate(b *evidence.Bundle, d Dimension) verdict {
	var skipped []string
	var onlySkip string // the reason when exactly one signal is not_assessed
	for _, name := range d.Signals {
		s, ok := b.Signals[name]
		if !ok {
			return zeroPoint("signal " + name + " is not recorded in the bundle")
		}
		switch s.State {
		case evidence.StateObserved:
		case evidence.StateUnavailable, evidence.StateError:
			return zeroPoint("signal " + name + " is " + string(s.State) + because(s.Reason))
		case evidence.StateNotAssessed:
			if laterPhases[name] && b.Sandbox.Outcome != "" && b.Sandbox.Outcome != evidence.OutcomeOK {
				return zeroPoint("signal " + name + " was not assessed because the sandbox run ended with " + string(b.Sandbox.Outcome) + "; a failed phase earns no credit")
			}
			why := "signal " + name + " is not_assessed"
			if s.Reason != "" {
				why = "signal " + name + " is not_assessed: " + s.Reason
			}
			if onlySkip == "" && skipped == nil {
				onlySkip = why
				continue
			}
			if skipped == nil {
				skipped = []string{onlySkip}
			}
			skipped = append(skipped, why)
		default:
			return zeroPoint(fmt.Sprintf("signal %s has unknown state %q", name, s.State))
		}
	}
	switch {
	case len(skipped) > 0:
		return dropped(strings.Join(skipped, "; "))
	case onlySkip != "":
		return dropped(onlySkip)
	}
	return verdict{state: StateScored}
}

func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// verdict is what a probe concludes about its dimension.
type verdict struct {
	state  State
	score  float64
	reason string
	// noCredit marks a zero point that is 0 whatever the dimension's
	// written zero point, which justifies another case (see
	// observeDrift).
	noCredit bool
	// limited marks a gate that dropped the dimension for a scanner
	// limit (see limitGate).
	limited bool
}

func scored(score float64, reason string) verdict {
	return verdict{state: StateScored, score: score, reason: reason}
}

func zeroPoint(reason string) verdict { return verdict{state: StateZeroPoint, reason: reason} }

// noCredit is a zero point of 0 for a dimension whose written zero point
// covers another case.
func noCredit(reason string) verdict {
	return verdict{state: StateZeroPoint, reason: reason, noCredit: true}
}

func dropped(reason string) verdict { return verdict{state: StateDropped, reason: reason} }

// scorer is the probe of one dimension and the codes it can emit, which
// load-time validation checks against the catalog.
type scorer struct {
	emits map[string]Kind
	// score runs only when the gate found every signal of the dimension
	// observed.
	score func(*probe) verdict
	// contractOnly marks a score that reads nothing of the bundle but its
	// contract, so that a Memo may reuse its outcome for the same
	// contract.
	contractOnly bool
	// contractOnlyUntil is the first rubric version whose score reads
	// more of the bundle than its contract (action_safety reads the tool
	// calls from v13), so that a Memo no longer reuses it; "" for never.
	contractOnlyUntil string
	// observe, set instead of score, runs whatever the gate decided and is
	// given its verdict; needs are the signals it reads, which the
	// dimension must name.
	observe func(p *probe, gate verdict) verdict
	needs   []string
	// graded are the codes whose findings take their severity from the
	// evidence (see CodeDef.Graded).
	graded map[string]bool
	// withSignal maps a code to the signal the dimension must name for the
	// probe to emit it: the probe reads that signal only in rubric versions
	// whose dimension names it (dnssec in provenance from rubric v4), so the
	// catalog of an older version need not hold the code.
	withSignal map[string]string
	// since maps a code to the first rubric version whose probe emits it,
	// so that the catalog of an older version need not hold it.
	since map[string]string
	// until maps a code to the first rubric version whose probe no longer
	// emits it, so that the catalog of that version and later ones need
	// not hold it (the unverified markers, which are signal states, not
	// findings, from rubric v11).
	until map[string]string
}

// emitsFor returns the codes the probe can emit under dimension d of the
// given rubric version.
func (sc scorer) emitsFor(d Dimension, version string) map[string]Kind {
	if len(sc.withSignal) == 0 && len(sc.since) == 0 && len(sc.until) == 0 {
		return sc.emits
	}
	out := make(map[string]Kind, len(sc.emits))
	for code, kind := range sc.emits {
		if s, ok := sc.withSignal[code]; ok && !slices.Contains(d.Signals, s) {
			continue
		}
		if v, ok := sc.since[code]; ok && compareVersions(version, v) < 0 {
			continue
		}
		if v, ok := sc.until[code]; ok && compareVersions(version, v) >= 0 {
			continue
		}
		out[code] = kind
	}
	return out
}

// atLeast reports whether the rubric being evaluated is version v or later.
func (p *probe) atLeast(v string) bool { return compareVersions(p.r.Version, v) >= 0 }

// probe carries one evaluation's inputs and collects its findings.
type probe struct {
	b         *evidence.Bundle
	r         *Rubric
	p         *Parameters
	dimension string
	// signals are the signals the dimension being scored names.
	signals  []string
	findings []Finding
	// checks is what prompt_contract_integrity scored, once it ran.
	checks *ChecksUse
	// memo is the Memo's entry for the bundle's contract, nil when
	// Evaluate runs without a Memo.
	memo *memoContract
	// folds, foldOrder and capped are the floods folded so far
	// (aggregate.go).
	folds     map[foldKey]*fold
	foldOrder []foldKey
	capped    map[foldKey]int
}

func (p *probe) emit(code, subject, message, ev string) {
	def := p.def(code)
	p.findings = append(p.findings, Finding{
		Code: code, Kind: def.Kind, Severity: def.Severity, Dimension: def.Dimension,
		Subject: subject, Message: message, Evidence: ev,
	})
}

// unverifiedUntil is the first rubric version that lists no unverified
// marker among the findings.
const unverifiedUntil = "11"

// unverified emits an unverified marker (a signal that was not consulted,
// an integrity that could not be checked), as rubrics before v11 did.
// From v11 it emits nothing: that a signal did not answer is a fact about
// the run, shown with the signal states and in the dimension's reason,
// never a claim about the package, so it is not listed, gated or counted
// as a finding.
// A rubric that emits it catalogues it; from v11 none does.
func (p *probe) unverified(code, subject, message, ev string) {
	if _, ok := p.r.Code(code); !ok {
		return
	}
	p.emit(code, subject, message, ev)
}

// emitGraded emits a finding of a graded code with the severity the
// evidence gives it, capped at the catalog's severity.
func (p *probe) emitGraded(code string, sev Severity, subject, message, ev string) {
	def := p.def(code)
	if sev.Rank() < 0 || sev.Rank() > def.Severity.Rank() {
		sev = def.Severity
	}
	p.findings = append(p.findings, Finding{
		Code: code, Kind: def.Kind, Severity: sev, Dimension: def.Dimension,
		Subject: subject, Message: message, Evidence: ev,
	})
}

func (p *probe) measure(code, message string, value float64) {
	def := p.def(code)
	v := round1(value)
	p.findings = append(p.findings, Finding{
		Code: code, Kind: def.Kind, Severity: def.Severity, Dimension: def.Dimension,
		Message: message, Evidence: formatScore(v) + "%", Value: &v,
	})
}

func (p *probe) def(code string) CodeDef {
	def, ok := p.r.Code(code)
	if !ok {
		panic(fmt.Sprintf("rubric %s: probe %s emitted %s, which is not in the catalog", p.r.Version, p.dimension, code))
	}
	return def
}

// clip quotes the start of s, at most the rubric's evidence_max_chars runes.
func (p *probe) clip(s string) string {
	limit := p.p.EvidenceMaxChars
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}

// tail quotes the end of s, for logs whose last lines explain a failure.
func (p *probe) tail(s string) string {
	s = strings.TrimSpace(s)
	limit := p.p.EvidenceMaxChars
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return "…" + string(r[len(r)-limit+1:])
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func clamp(x float64) float64 { return math.Max(0, math.Min(100, x)) }

// formatScore prints a score without trailing zeros: 100, 87.5.
func formatScore(x float64) string {
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], x, 'f', 1, 64)
	if i := len(b) - 1; b[i] == '0' && b[i-1] == '.' {
		b = b[:i-1]
	}
	return string(b)
}
