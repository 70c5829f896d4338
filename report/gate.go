package report

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// IgnoreFileName is the ignore file a scan reads from the current
// directory when no other is named.
const IgnoreFileName = ".verifymcp-ignore.yaml"

// IgnoreFile is a reviewed list of findings an operator has accepted:
// each entry names a code (and, optionally, a subject and a target), why,
// who decided and until when. Entries are applied when a report is
// written: an ignored finding is still in the report, marked as such, and
// does not trip the gate; an expired entry stops applying and the report
// says so.
type IgnoreFile struct {
	Path    string        `yaml:"-"`
	Entries []IgnoreEntry `yaml:"ignore"`
}

// IgnoreEntry is one accepted finding.
type IgnoreEntry struct {
	Code string `yaml:"code"`
	// Subject, when set, limits the entry to findings about it (a tool's
	// name, "server instructions", ...); empty matches every subject.
	Subject string `yaml:"subject"`
	// Target, when set, limits the entry to one package (npm:NAME, any
	// version, or npm:NAME@VERSION).
	Target  string `yaml:"target"`
	Reason  string `yaml:"reason"`
	By      string `yaml:"by"`
	Expires string `yaml:"expires"` // YYYY-MM-DD, the last day it applies
	Line    int    `yaml:"-"`

	expires time.Time
}

// LoadIgnoreFile reads an ignore file. Every entry needs a code, a
// reason, who decided and an expiry date; a malformed file is an error
// naming FILE:LINE.
func LoadIgnoreFile(path string) (*IgnoreFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseIgnoreFile(path, data)
}

// ParseIgnoreFile parses the ignore file named path.
func ParseIgnoreFile(path string, data []byte) (*IgnoreFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &IgnoreFile{Path: path}
	if len(doc.Content) == 0 {
		return f, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Lines, from the node tree: ignore -> sequence -> entries.
	var lines []int
	if root := doc.Content[0]; root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "ignore" {
				for _, n := range root.Content[i+1].Content {
					lines = append(lines, n.Line)
				}
			}
		}
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if i < len(lines) {
			e.Line = lines[i]
		}
		where := fmt.Sprintf("%s:%d", path, e.Line)
		switch {
		case strings.TrimSpace(e.Code) == "":
			return nil, fmt.Errorf("%s: an ignore entry needs the code it accepts", where)
		case strings.TrimSpace(e.Reason) == "":
			return nil, fmt.Errorf("%s: ignoring %s needs a reason", where, e.Code)
		case strings.TrimSpace(e.By) == "":
			return nil, fmt.Errorf("%s: ignoring %s needs who decided it (by)", where, e.Code)
		case strings.TrimSpace(e.Expires) == "":
			return nil, fmt.Errorf("%s: ignoring %s needs an expiry date (expires: YYYY-MM-DD): an acceptance is reviewed again", where, e.Code)
		}
		t, err := time.Parse("2006-01-02", e.Expires)
		if err != nil {
			return nil, fmt.Errorf("%s: expires %q is not a date YYYY-MM-DD", where, e.Expires)
		}
		e.expires = t
	}
	return f, nil
}

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
				if now.After(e.expires.AddDate(0, 0, 1)) {
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
		if p.FailOn == "" || f.Kind != string(rubric.KindFinding) || (IsUnverified(f.Code) && !p.Unverified) {
			continue
		}
		if rubric.Severity(f.Severity).Rank() >= p.FailOn.Rank() {
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

func (e IgnoreEntry) matches(f *Finding, t Target) bool {
	if f.Code != e.Code || (e.Subject != "" && f.Subject != e.Subject) {
		return false
	}
	if e.Target == "" {
		return true
	}
	name := strings.TrimPrefix(e.Target, "npm:")
	if at := strings.LastIndex(name, "@"); at > 0 {
		return name[:at] == t.Name && name[at+1:] == t.Version
	}
	return name == t.Name
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
