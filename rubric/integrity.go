package rubric

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/contract/checks"
)

// DimensionPromptIntegrity is the dimension scored from the deterministic
// contract checks (rubric v5 on).
const DimensionPromptIntegrity = "prompt_contract_integrity"

// integrityCodes are the codes of the contract checks that the
// prompt_contract_integrity probe reports. They are listed here rather than
// taken from checks.CheckCodes at run time, so that a rubric version pins
// what it scores: a code the checks gain later is neither reported nor
// scored under a rubric whose catalog lacks it, and the rubric tests fail
// until a new rubric version adopts it.
var integrityCodes = []string{
	checks.CodeUnicodeInvisible, checks.CodeUnicodeBidi, checks.CodeUnicodeTag, checks.CodeUnicodeVariation,
	checks.CodeHiddenEncoded, checks.CodeHiddenMarkup, checks.CodeHiddenWhitespace,
	checks.CodeInjectionOverride, checks.CodeInjectionConceal, checks.CodeInjectionSecret, checks.CodeInjectionExfil,
	checks.CodeInjectionToolOrder, checks.CodeInjectionTag, checks.CodeShadowing,
	checks.CodeParamCredential, checks.CodeCapabilityEnv, checks.CodeCapabilityPath,
	checks.CodeCapabilityConfig,
}

func integrityEmits() map[string]Kind {
	m := make(map[string]Kind, len(integrityCodes))
	for _, c := range integrityCodes {
		m[c] = KindFinding
	}
	m[CodeToolResultInjection] = KindFinding
	m[CodeToolRequestInjection] = KindFinding
	return m
}

// PromptIntegrityParams parameterise the prompt_contract_integrity
// dimension. They are required by a rubric that has it, and absent from
// the others.
type PromptIntegrityParams struct {
	// SeverityPenalties is the deduction for each code and subject, by the
	// catalog severity of the code; every severity must be listed.
	SeverityPenalties map[Severity]float64 `yaml:"severity_penalties"`
	// ChecksVersion and ChecksDigest pin the contract checks whose
	// findings the rubric scores (checks.Version, checks.Digest), as
	// parameters.judge pins the judge. Required from rubric v7; rubrics v5
	// and v6, written before the checks had a version, scored checks 1.
	ChecksVersion string `yaml:"checks_version"`
	ChecksDigest  string `yaml:"checks_digest"`
}

// BuildChecksVersion is the version of the contract checks this build
// runs (checks.Version): a rubric that pins another scores only findings
// stored with them (see ChecksRunnable).
const BuildChecksVersion = checks.Version

// legacyChecksVersion is the contract checks of rubrics v5 and v6, which
// pin none; no build since has them, and no bundle stores their findings.
const legacyChecksVersion = "1"

// ChecksPin names the contract checks a rubric scores.
type ChecksPin struct {
	Version string `json:"version"`
	// Digest is checks.Digest of that version; empty for checks 1, which
	// predate it.
	Digest string `json:"digest,omitempty"`
}

func (c ChecksPin) String() string {
	if c.Digest == "" {
		return c.Version
	}
	return c.Version + " (" + c.Digest + ")"
}

// ChecksUse is what a result's prompt_contract_integrity scored: the
// checks the rubric pins and where their findings came from.
type ChecksUse struct {
	ChecksPin
	// Source is "stored" (the findings the bundle recorded at scan time),
	// "recomputed" (this build's checks, which are the pinned ones, run
	// over the stored contract), "unavailable" (neither: the dimension
	// has its zero point, and the reason says why) or "not_run".
	Source string `json:"source"`
}

// Sources of a ChecksUse.
const (
	ChecksStored      = "stored"
	ChecksRecomputed  = "recomputed"
	ChecksUnavailable = "unavailable"
	// ChecksNotRun: the dimension was not scored (its contract signal was
	// not observed, or the bundle holds no contract), so no checks ran.
	ChecksNotRun = "not_run"
)

// ContractChecks returns the contract checks r scores; ok is false for a
// rubric without prompt_contract_integrity (v1 to v4).
func (r *Rubric) ContractChecks() (ChecksPin, bool) {
	p := r.Params.PromptIntegrity
	if p == nil {
		return ChecksPin{}, false
	}
	if p.ChecksVersion == "" {
		return ChecksPin{Version: legacyChecksVersion}, true
	}
	return ChecksPin{Version: p.ChecksVersion, Digest: p.ChecksDigest}, true
}

// ChecksRunnable reports whether this build's contract checks are the ones
// r pins, so that rescoring under r can compute their findings from a
// stored contract; when it is false, r scores only bundles that stored
// the findings of its checks.
func (r *Rubric) ChecksRunnable() bool {
	pin, ok := r.ContractChecks()
	return ok && pin.Version == checks.Version && pin.Digest == checks.Digest()
}

// checkFindings returns the findings of the checks p's rubric r pins for
// p's bundle b: those b stored, or this build's over b's contract when
// they are the pinned checks (run once per contract with a Memo). ok is
// false when neither holds.
func checkFindings(p *probe) (fs []checks.Finding, use ChecksUse, ok bool) {
	b, r := p.b, p.r
	pin, _ := r.ContractChecks()
	use.ChecksPin = pin
	if st := b.ContractChecks; st != nil && st.Version == pin.Version && st.Digest == pin.Digest {
		fs = make([]checks.Finding, 0, len(st.Findings))
		for _, f := range st.Findings {
			fs = append(fs, checks.Finding{Code: f.Code, Severity: checks.Severity(f.Severity), Kind: f.Kind, Subject: f.Subject,
				Field: f.Field, Evidence: f.Evidence, Decoded: f.Decoded, Message: f.Message})
		}
		use.Source = ChecksStored
		return fs, use, true
	}
	if r.ChecksRunnable() {
		use.Source = ChecksRecomputed
		return p.memo.check(b.Contract), use, true
	}
	use.Source = ChecksUnavailable
	return nil, use, false
}

// validatePromptIntegrity checks parameters.prompt_contract_integrity:
// present and valid exactly when the rubric has the dimension.
func (r *Rubric) validatePromptIntegrity() []error {
	_, has := r.Dimension(DimensionPromptIntegrity)
	p := r.Params.PromptIntegrity
	switch {
	case has && p == nil:
		return []error{errors.New("parameters.prompt_contract_integrity: missing, and the rubric has dimension " + DimensionPromptIntegrity)}
	case !has && p != nil:
		return []error{errors.New("parameters.prompt_contract_integrity: present, but the rubric has no dimension " + DimensionPromptIntegrity + ", so nothing reads it")}
	case !has:
		return nil
	}
	var errs []error
	switch {
	case p.ChecksVersion == "" && p.ChecksDigest == "":
		if v, err := strconv.Atoi(r.Version); err != nil || v >= 7 {
			errs = append(errs, errors.New("parameters.prompt_contract_integrity.checks_version and checks_digest: missing; a rubric pins the contract checks it scores (checks.Version, checks.Digest)"))
		}
	case strings.TrimSpace(p.ChecksVersion) == "":
		errs = append(errs, errors.New("parameters.prompt_contract_integrity.checks_version: missing, and checks_digest is set"))
	case !digestPattern.MatchString(p.ChecksDigest):
		errs = append(errs, fmt.Errorf("parameters.prompt_contract_integrity.checks_digest: %q is not sha256:<64 hex digits>", p.ChecksDigest))
	}
	for _, s := range Severities() {
		v, ok := p.SeverityPenalties[s]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("parameters.prompt_contract_integrity.severity_penalties: %s missing", s))
		case v < 0 || math.IsNaN(v) || math.IsInf(v, 0):
			errs = append(errs, fmt.Errorf("parameters.prompt_contract_integrity.severity_penalties.%s: %v must be 0 or more", s, v))
		}
	}
	for s := range p.SeverityPenalties {
		if s.Rank() < 0 {
			errs = append(errs, fmt.Errorf("parameters.prompt_contract_integrity.severity_penalties: unknown severity %q", s))
		}
	}
	return errs
}

// scorePromptIntegrity scores the findings of the contract checks the
// rubric pins: those the bundle stored, or, when this build runs the
// pinned checks, theirs over the stored contract; otherwise the zero point.
// Every finding of a code the catalog holds is reported; the score takes
// one deduction, by the code's catalog severity, per code and subject.
func scorePromptIntegrity(p *probe) verdict {
	c := p.b.Contract
	if c == nil {
		return zeroPoint("contract signal is observed but the bundle holds no contract")
	}
	fs, use, ok := checkFindings(p)
	p.checks = &use
	if !ok {
		stored := "the bundle stores no contract checks' findings"
		if st := p.b.ContractChecks; st != nil {
			stored = "the bundle stores the findings of checks " + ChecksPin{Version: st.Version, Digest: st.Digest}.String()
		}
		return zeroPoint("this rubric scores contract checks " + use.ChecksPin.String() + "; " + stored +
			", and this build runs checks " + checks.Version + " (" + checks.Digest() + "): the findings of the pinned checks are unknown; " +
			"rescore under a rubric that adopts checks " + checks.Version)
	}
	empty := len(c.Tools) == 0 && len(c.Prompts) == 0 && len(c.Resources) == 0 && len(c.Templates) == 0 &&
		strings.TrimSpace(c.Instructions) == ""
	if len(fs) == 0 && empty {
		return dropped("not applicable: the server lists no tools, prompts, resources or resource templates and gives no instructions")
	}
	penalties := p.p.PromptIntegrity.SeverityPenalties
	type key struct{ code, subject string }
	counted := make(map[key]bool, len(fs))
	var bySeverity [5]int // counted pairs, by Severity.Rank
	score := 100.0
	for _, f := range fs {
		def, ok := p.r.Code(f.Code)
		if !ok || def.Dimension != p.dimension {
			// A code the checks gained after this rubric version.
			continue
		}
		subject := checkSubject(f)
		p.emit(f.Code, subject, f.Message, p.checkEvidence(f))
		k := key{f.Code, subject}
		if counted[k] {
			continue
		}
		counted[k] = true
		bySeverity[def.Severity.Rank()]++
		score -= penalties[def.Severity]
	}
	// From v13, the tools' results and the server's requests to the
	// client, read by the same checks (integrity_tool.go).
	deduct, note := p.emitCallInjections()
	score -= deduct
	what := surfaceSummary(len(c.Tools), len(c.Prompts), len(c.Resources), len(c.Templates), c.Instructions != "")
	if len(counted) == 0 {
		return scored(score, "the contract checks found nothing in "+what+note)
	}
	parts := make([]string, 0, 5)
	for _, s := range Severities() {
		if n := bySeverity[s.Rank()]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+string(s)+" (-"+formatScore(float64(n)*penalties[s])+")")
		}
	}
	return scored(score, "the contract checks found, counting each code once per subject, "+strings.Join(parts, ", ")+" in "+what+note)
}

// checkSubject names what a check finding is about: a tool by its name,
// as the other contract probes and the judge do; anything else by its kind
// and name, and the server by the field of its own text.
func checkSubject(f checks.Finding) string {
	switch f.Kind {
	case checks.KindTool:
		return f.Subject
	case checks.KindServer:
		return "server " + f.Field
	default:
		return f.Kind + " " + f.Subject
	}
}

// checkEvidence quotes where a check finding was found and the span it
// quotes; the hidden text it decoded goes first, so that clipping keeps it.
func (p *probe) checkEvidence(f checks.Finding) string {
	var b strings.Builder
	b.WriteString(f.Field)
	if f.Decoded != "" {
		b.WriteString(" hides ")
		b.WriteString(strconv.Quote(f.Decoded))
		b.WriteString("; as written ")
	} else {
		b.WriteString(": ")
	}
	b.WriteString(strconv.Quote(f.Evidence))
	return p.clip(b.String())
}

// surfaceSummary says what the checks read, for a reason.
func surfaceSummary(tools, prompts, resources, templates int, instructions bool) string {
	parts := []string{plural(tools, "tool"), plural(prompts, "prompt"), plural(resources, "resource")}
	if templates > 0 {
		parts = append(parts, plural(templates, "resource template"))
	}
	s := strings.Join(parts, ", ")
	if instructions {
		s += " and the server instructions"
	}
	return s
}
