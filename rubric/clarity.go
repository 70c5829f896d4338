package rubric

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// DimensionCapabilityClarity is the dimension scored from the LLM judge's
// verdicts (rubric v5 on).
const DimensionCapabilityClarity = "tool_capability_clarity"

// Reason codes of the tool_capability_clarity probe. The verdict codes are
// those of judge spec 1 (judge/specs/v1.yaml), which the rubric tests
// compare with the spec; the rubric does not import the judge package,
// whose client pulls in the network.
const (
	CodeJudgeInjection         = "pkg.judge.injection"
	CodeJudgeExfiltration      = "pkg.judge.exfiltration"
	CodeJudgeConcealment       = "pkg.judge.concealment"
	CodeJudgeShadowing         = "pkg.judge.shadowing"
	CodeJudgeCredentialRequest = "pkg.judge.credential_request"
	CodeJudgeSensitiveAccess   = "pkg.judge.sensitive_access"
	CodeJudgeMismatch          = "pkg.judge.mismatch"
	// CodeJudgeUnverified: the verdicts are unknown under this rubric.
	CodeJudgeUnverified = "pkg.judge.unverified"
)

// judgeVerdictCodes are the verdict codes the judge may answer with.
var judgeVerdictCodes = []string{
	CodeJudgeInjection, CodeJudgeExfiltration, CodeJudgeConcealment, CodeJudgeShadowing,
	CodeJudgeCredentialRequest, CodeJudgeSensitiveAccess, CodeJudgeMismatch,
}

// subjectInstructions is the subject of a verdict about the server
// instructions (a verdict whose tool is empty).
const subjectInstructions = "server instructions"

// CapabilityClarityParams parameterise the tool_capability_clarity
// dimension. They are required by a rubric that has it, and absent from
// the others.
type CapabilityClarityParams struct {
	// CodePenalties is the deduction for each verdict code and subject;
	// every verdict code must be listed, and nothing else.
	CodePenalties map[string]float64 `yaml:"code_penalties"`
}

// JudgePin names the judge specification whose verdicts a rubric scores.
type JudgePin struct {
	SpecVersion   string `yaml:"spec_version"`
	PromptVersion string `yaml:"prompt_version"`
	// SpecDigest is "sha256:" and the hex SHA-256 of the spec file.
	SpecDigest string `yaml:"spec_digest"`
}

func (j JudgePin) String() string {
	return j.SpecVersion + " (prompt " + j.PromptVersion + ", " + j.SpecDigest + ")"
}

// JudgeSpec returns the judge specification r pins: the spec version and
// the digest of its file, which the pipeline asks the judge under. ok is
// false for a rubric that scores no judge verdicts (v1 to v4), whose
// evaluation never reads the judge signal. Verdicts a bundle holds under
// another spec are not scored by r (the dimension gets its zero point), so
// rescoring a stored bundle under r re-collects the judge signal exactly
// when JudgeCurrent reports false.
func (r *Rubric) JudgeSpec() (version, digest string, ok bool) {
	if r.Params.Judge == nil {
		return "", "", false
	}
	return r.Params.Judge.SpecVersion, r.Params.Judge.SpecDigest, true
}

// JudgeCurrent reports whether r can score the judge verdicts of jr: they
// were given under the judge specification r pins. It is false for a nil
// jr and for a rubric that pins no spec.
func (r *Rubric) JudgeCurrent(jr *evidence.JudgeResult) bool {
	pin := r.Params.Judge
	return pin != nil && jr != nil && jr.SpecVersion == pin.SpecVersion &&
		jr.PromptVersion == pin.PromptVersion && jr.SpecDigest == pin.SpecDigest
}

// readsJudge reports whether a dimension of r names the judge signal.
func (r *Rubric) readsJudge() bool {
	for _, d := range r.Dimensions {
		if slices.Contains(d.Signals, evidence.SignalJudge) {
			return true
		}
	}
	return false
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// validateCapabilityClarity checks parameters.tool_capability_clarity and
// parameters.judge: each present and valid exactly when something reads
// it, so that a block no probe reads cannot pass for one that changes a
// score.
func (r *Rubric) validateCapabilityClarity() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	_, has := r.Dimension(DimensionCapabilityClarity)
	p := r.Params.CapabilityClarity
	switch {
	case has && p == nil:
		add("parameters.tool_capability_clarity: missing, and the rubric has dimension %s", DimensionCapabilityClarity)
	case !has && p != nil:
		add("parameters.tool_capability_clarity: present, but the rubric has no dimension %s, so nothing reads it", DimensionCapabilityClarity)
	case has:
		for _, code := range judgeVerdictCodes {
			v, ok := p.CodePenalties[code]
			switch {
			case !ok:
				add("parameters.tool_capability_clarity.code_penalties: %s missing", code)
			case v < 0 || math.IsNaN(v) || math.IsInf(v, 0):
				add("parameters.tool_capability_clarity.code_penalties.%s: %v must be 0 or more", code, v)
			}
		}
		extra := make([]string, 0)
		for code := range p.CodePenalties {
			if !slices.Contains(judgeVerdictCodes, code) {
				extra = append(extra, code)
			}
		}
		sort.Strings(extra)
		for _, code := range extra {
			add("parameters.tool_capability_clarity.code_penalties: %s is not a verdict code of the judge", code)
		}
	}

	pin := r.Params.Judge
	switch reads := r.readsJudge(); {
	case reads && pin == nil:
		add("parameters.judge: missing, and a dimension names signal judge")
	case !reads && pin != nil:
		add("parameters.judge: present, but no dimension names signal judge, so nothing reads it")
	case reads:
		if strings.TrimSpace(pin.SpecVersion) == "" || strings.TrimSpace(pin.PromptVersion) == "" {
			add("parameters.judge: spec_version and prompt_version are required")
		}
		if !digestPattern.MatchString(pin.SpecDigest) {
			add("parameters.judge.spec_digest: %q is not sha256:<64 hex digits>", pin.SpecDigest)
		}
	}
	return errs
}

// scoreCapabilityClarity scores the judge's verdicts. It runs whatever the
// gate decided so that a judge that was not consulted is reported as
// unverified; a judge that was deliberately not assessed says nothing.
func scoreCapabilityClarity(p *probe, g verdict) verdict {
	const unknown = ": whether the tool surface tries to steer the agent is unknown, not absent"
	sig, recorded := p.b.Signals[evidence.SignalJudge]
	switch {
	case !recorded:
		p.unverified(CodeJudgeUnverified, p.targetSubject(), "the LLM judge's signal is not recorded in the bundle"+unknown,
			"signal judge is not recorded in the bundle")
		return g
	case sig.State == evidence.StateObserved:
	case sig.State == evidence.StateNotAssessed:
		return g
	case sig.State == evidence.StateUnavailable:
		p.unverified(CodeJudgeUnverified, p.targetSubject(), "the LLM judge was not consulted (unavailable)"+unknown,
			p.signalEvidence(evidence.SignalJudge, sig))
		return g
	case sig.State == evidence.StateError:
		p.unverified(CodeJudgeUnverified, p.targetSubject(), "the LLM judge gave no usable answer (error)"+unknown,
			p.signalEvidence(evidence.SignalJudge, sig))
		return g
	default:
		p.unverified(CodeJudgeUnverified, p.targetSubject(), "the LLM judge's signal has an unknown state"+unknown,
			p.signalEvidence(evidence.SignalJudge, sig))
		return g
	}
	if g.state != StateScored {
		return g
	}
	// unverified gives the zero point for verdicts this rubric cannot
	// score; the reason says why, the evidence quotes what differs.
	unverified := func(why, ev string) verdict {
		p.unverified(CodeJudgeUnverified, p.targetSubject(),
			"the LLM judge's verdicts cannot be scored under this rubric: what it would say of the tool surface is unknown, not absent",
			p.clip(ev))
		return zeroPoint(why)
	}
	jr := p.b.Judge
	if jr == nil {
		why := "signal judge is observed but the bundle holds no judge result"
		return unverified(why, why)
	}
	pin := p.p.Judge
	if !p.r.JudgeCurrent(jr) {
		got := JudgePin{SpecVersion: orUnknown(jr.SpecVersion), PromptVersion: orUnknown(jr.PromptVersion), SpecDigest: orUnknown(jr.SpecDigest)}
		return unverified("verdicts were given under judge spec "+got.String()+", this rubric pins "+pin.String()+
			": rescoring needs the judge again",
			"judged under spec "+got.String()+"; pinned "+pin.String())
	}
	if c := p.b.Contract; c != nil && c.SchemaHash != "" && jr.SchemaHash != "" && jr.SchemaHash != c.SchemaHash {
		return unverified("verdicts are about surface "+jr.SchemaHash+", the bundle's contract is "+c.SchemaHash+
			": rescoring needs the judge again",
			"judged surface "+jr.SchemaHash+"; contract "+c.SchemaHash)
	}
	penalties := p.p.CapabilityClarity.CodePenalties
	for _, v := range jr.Verdicts {
		if _, ok := penalties[v.Code]; !ok {
			why := "verdict code " + strconv.Quote(v.Code) + " is not one of judge spec " + pin.SpecVersion + "'s codes"
			return unverified(why, why+"; tool "+strconv.Quote(v.Tool))
		}
	}
	type key struct{ code, subject string }
	counted := make(map[key]bool, len(jr.Verdicts))
	perCode := make(map[string]int, len(judgeVerdictCodes))
	score := 100.0
	for _, v := range jr.Verdicts {
		subject, what := v.Tool, "tool "+strconv.Quote(v.Tool)
		if v.Tool == "" {
			subject, what = subjectInstructions, "the server instructions"
		}
		msg := "the LLM judge flags " + what + " (" + strings.TrimPrefix(v.Code, "pkg.judge.") + ")"
		if r := strings.TrimSpace(v.Rationale); r != "" {
			msg += ": " + p.clip(r)
		}
		p.emit(v.Code, subject, msg, p.clip(v.Evidence))
		k := key{v.Code, subject}
		if counted[k] {
			continue
		}
		counted[k] = true
		perCode[v.Code]++
		score -= penalties[v.Code]
	}
	model := orUnknown(jr.Model)
	if len(counted) == 0 {
		return scored(100, "the LLM judge ("+model+", judge spec "+pin.SpecVersion+") returned no verdict")
	}
	parts := make([]string, 0, len(perCode))
	for _, code := range judgeVerdictCodes {
		if n := perCode[code]; n > 0 {
			parts = append(parts, strings.TrimPrefix(code, "pkg.judge.")+" on "+plural(n, "subject")+
				" (-"+formatScore(float64(n)*penalties[code])+")")
		}
	}
	return scored(score, "the LLM judge ("+model+", judge spec "+pin.SpecVersion+") returned "+plural(len(jr.Verdicts), "verdict")+
		", counting each code once per subject: "+strings.Join(parts, "; "))
}
