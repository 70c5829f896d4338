package report

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// Ignored says why a finding is ignored.
type Ignored struct {
	Reason  string `json:"reason"`
	By      string `json:"by"`
	Expires string `json:"expires"`
	// File and Line name the entry.
	File string `json:"file"`
	Line int    `json:"line"`
}

// Summary is a report's first member: the outcome, the findings by
// severity, the gate, the signals that were not observed and what the
// score covers.
type Summary struct {
	Outcome string `json:"outcome"`
	// Findings counts the findings by severity, ignored ones left out;
	// Ignored counts those.
	Findings map[string]int `json:"findings"`
	Ignored  int            `json:"ignored"`
	// Expired lists ignore entries that no longer apply.
	Expired []string `json:"expired"`
	Gate    Gate     `json:"gate"`
	// NotObserved names the signals that were not observed, with their
	// states: what they would have found is unknown, not clean.
	NotObserved []string `json:"not_observed"`
	Score       *float64 `json:"score"`
	// Cap is set when a critical finding capped the score (rubric v9 on):
	// the cap, why, the critical codes and the score before the cap.
	Cap *rubric.Cap `json:"cap"`
	// Coverage splits the rubric's weight: the share scored from
	// evidence, the share at zero point (not observed), the share
	// dropped (not assessed). They sum to 1.
	Coverage Coverage `json:"coverage"`
}

// Coverage is how the rubric's weight was spent on a result.
type Coverage struct {
	Scored    float64 `json:"scored"`
	ZeroPoint float64 `json:"zero_point"`
	Dropped   float64 `json:"dropped"`
}

// Gate is the result of --fail-on.
type Gate struct {
	// FailOn is the severity that fails the gate, "" when none was set.
	FailOn     string `json:"fail_on"`
	Unverified bool   `json:"unverified"`
	// Result is "passed", "failed" or "not_set".
	Result string `json:"result"`
	// Tripped lists the findings that failed it: "code subject".
	Tripped []string `json:"tripped"`
}

// Gate results.
const (
	GatePassed = "passed"
	GateFailed = "failed"
	GateNotSet = "not_set"
)

// Policy is what is applied to a report when it is written: the gate's
// severity and the ignore file.
type Policy struct {
	FailOn rubric.Severity
	// Unverified makes a third-party signal that did not answer
	// (unavailable or error) trip the gate too, as "signal NAME STATE",
	// and, in a report scored under a rubric before v11, an unverified
	// marker (*.unverified). A signal that did not answer is never a
	// finding; this is the operator's choice to treat it as a failure.
	Unverified bool
	Ignore     *IgnoreFile
	// Now dates the ignore entries' expiry (the run date is not used: an
	// entry expires for reports written after it).
	Now time.Time
}

// ParseSeverity reads --fail-on.
func ParseSeverity(s string) (rubric.Severity, error) {
	for _, sev := range rubric.Severities() {
		if string(sev) == s && sev != rubric.Severity("info") {
			return sev, nil
		}
	}
	return "", errors.New("must be critical, high, medium or low, not " + fmt.Sprintf("%q", s))
}

// signalPrefix starts a tripped entry that is a signal state, not a
// finding (--fail-on-unverified).
const signalPrefix = "signal "

// Failed says what failed the gate: "2 finding(s) at or above high", and,
// with --fail-on-unverified, "1 signal not observed"; a signal state is
// never counted as a finding.
func (g Gate) Failed() string {
	findings, signals := 0, 0
	for _, t := range g.Tripped {
		if strings.HasPrefix(t, signalPrefix) {
			signals++
		} else {
			findings++
		}
	}
	var parts []string
	if findings > 0 || signals == 0 {
		parts = append(parts, fmt.Sprintf("%d finding(s) at or above %s", findings, g.FailOn))
	}
	if signals > 0 {
		parts = append(parts, fmt.Sprintf("%d signal(s) not observed (--fail-on-unverified)", signals))
	}
	return strings.Join(parts, "; ")
}

// IsUnverified reports whether a code is an unverified marker: it says a
// signal could not be checked, not that something was found.
func IsUnverified(code string) bool { return strings.HasSuffix(code, ".unverified") }

// trips reports whether finding f fails the gate: a finding (not a
// measurement) not ignored, at or above the gate's severity, and not an
// unverified marker unless the gate counts them.
func (g Gate) trips(f Finding) bool {
	return g.FailOn != "" && f.Ignored == nil && f.Kind == string(rubric.KindFinding) && (g.Unverified || !IsUnverified(f.Code)) &&
		rubric.Severity(f.Severity).Rank() >= rubric.Severity(g.FailOn).Rank()
}

// Apply marks the findings the policy's ignore file accepts, evaluates
// the gate and fills the report's summary.
func (p Policy) Apply(rep *Report) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	s := &rep.Summary
	s.Expired = []string{}
	if ig := p.Ignore; ig != nil {
		used := map[int]bool{}
		for i := range rep.Findings {
			f := &rep.Findings[i]
			for j, e := range ig.Entries {
				if !e.matches(f, rep.Target) {
					continue
				}
				if e.ExpiredAt(now) {
					if !used[j] {
						s.Expired = append(s.Expired, fmt.Sprintf("%s:%d: %s expired on %s: no longer applied", ig.Path, e.Line, strings.TrimSpace(e.Code+" "+e.Subject), e.Expires))
					}
					used[j] = true
					continue
				}
				f.Ignored = &Ignored{Reason: e.Reason, By: e.By, Expires: e.Expires, File: ig.Path, Line: e.Line}
				break
			}
		}
	}
	s.Findings = map[string]int{}
	for _, sev := range rubric.Severities() {
		s.Findings[string(sev)] = 0
	}
	s.Gate = Gate{FailOn: string(p.FailOn), Unverified: p.Unverified, Result: GateNotSet, Tripped: []string{}}
	for _, f := range rep.Findings {
		if f.Ignored != nil {
			s.Ignored++
			continue
		}
		s.Findings[f.Severity]++
		if s.Gate.trips(f) {
			s.Gate.Tripped = append(s.Gate.Tripped, strings.TrimSpace(f.Code+" "+f.Subject))
		}
	}
	if p.FailOn != "" && p.Unverified {
		for _, name := range slices.Sorted(maps.Keys(rep.Signals)) {
			sig := rep.Signals[name]
			if sig.ThirdParty && (sig.State == string(evidence.StateUnavailable) || sig.State == string(evidence.StateError)) {
				s.Gate.Tripped = append(s.Gate.Tripped, signalPrefix+name+" "+sig.State)
			}
		}
	}
	if p.FailOn != "" {
		s.Gate.Result = GatePassed
		if len(s.Gate.Tripped) > 0 {
			s.Gate.Result = GateFailed
		}
	}
}

// summarize fills the parts of the summary the evidence decides.
func summarize(rep *Report, b *evidence.Bundle) {
	s := &rep.Summary
	s.Outcome = string(b.Sandbox.Outcome)
	s.Score = rep.Score
	s.NotObserved = []string{}
	for _, name := range sortedKeys(rep.Signals) {
		if st := rep.Signals[name].State; st != string(evidence.StateObserved) {
			s.NotObserved = append(s.NotObserved, name+" ("+st+")")
		}
	}
	var total, scored, zero, dropped float64
	for _, d := range rep.Dimensions {
		total += d.Weight
		switch d.State {
		case string(rubric.StateScored):
			scored += d.Weight
		case string(rubric.StateZeroPoint):
			zero += d.Weight
		default:
			dropped += d.Weight
		}
	}
	if total > 0 {
		s.Coverage = Coverage{Scored: round3(scored / total), ZeroPoint: round3(zero / total), Dropped: round3(dropped / total)}
	}
	(Policy{}).Apply(rep)
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

// adviceDays is how long the ignore entry a failed gate suggests lasts.
const adviceDays = 90

// gateAdvice says, after a failed gate, what to do about each code that
// failed it: the command that explains the code, and, for each finding,
// the ignore entry that accepts it once it has been reviewed, expiring
// adviceDays after now (the run's date when now is zero). A signal that
// tripped the gate (--fail-on-unverified) is not a finding and gets no
// entry. The prose is wrapped to width; the entries never are, so that
// they paste as they are. It is nil unless the gate failed.
func gateAdvice(rep Report, now time.Time, width int) []string {
	g := rep.Summary.Gate
	if g.Result != GateFailed {
		return nil
	}
	if now.IsZero() {
		now, _ = time.Parse(time.RFC3339, rep.Run.Date)
	}
	expires := now.UTC().AddDate(0, 0, adviceDays)
	var codes []string
	subjects := map[string][]string{}
	var tripped []Finding
	for _, f := range rep.Findings {
		if !g.trips(f) {
			continue
		}
		if !slices.Contains(codes, f.Code) {
			codes = append(codes, f.Code)
		}
		if f.Subject != "" {
			subjects[f.Code] = append(subjects[f.Code], clean(f.Subject))
		}
		tripped = append(tripped, f)
	}
	out := []string{"GATE FAILED  what to do about each code that failed it"}
	for _, c := range codes {
		head := "  " + clean(c)
		if ss := subjects[c]; len(ss) > 0 {
			head += "  " + strings.Join(ss, ", ")
		}
		out = append(out, hang(head, "", 4, width)...)
		out = append(out, "    read more: verifymcp rubric explain "+clean(c))
	}
	var signals []string
	for _, t := range g.Tripped {
		if name, ok := strings.CutPrefix(t, signalPrefix); ok {
			signals = append(signals, clean(name))
		}
	}
	if len(signals) > 0 {
		out = append(out, hang("  ", "signals "+strings.Join(signals, ", ")+": a third party did not answer, which fails the gate "+
			"with --fail-on-unverified; a signal is not a finding, and the ignore file does not apply to it", 4, width)...)
	}
	if len(tripped) == 0 {
		return out
	}
	out = append(out, hang("  ", "To accept a finding once it has been reviewed, paste its entry into the ignore file ("+IgnoreFileName+
		" in the current directory, or --ignore-file), under its ignore: line, and fill in the reason and who decided:", 2, width)...)
	out = append(out, "ignore:")
	for _, f := range tripped {
		out = append(out, ignoreEntryYAML(f, rep.Target, expires)...)
	}
	return out
}

// WriteGateAdvice writes, after a failed gate, what to do about each code
// that failed it (see the table's GATE FAILED section): for a report
// written in another format, on the stream a person reads. It writes
// nothing unless the gate failed.
func WriteGateAdvice(w io.Writer, rep Report, o TableOptions) error {
	lines := gateAdvice(rep, o.Now, tableWidth(o.Width))
	if len(lines) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n"); err != nil {
		return fmt.Errorf("report: write gate advice: %w", err)
	}
	return nil
}
