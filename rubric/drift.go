package rubric

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
)

// DimensionContractDrift is the dimension that scores how far a contract
// moved: from its identity's pin, and within the session that listed it.
const DimensionContractDrift = "contract_drift"

// DriftParams parameterise the contract_drift dimension.
type DriftParams struct {
	// SeverityPenalties is what one surfaced change costs, by its code's
	// severity, counting a code once per subject and scope (the pin, the
	// session).
	SeverityPenalties map[Severity]float64 `yaml:"severity_penalties"`
}

// DriftCode is the reason code of a surfaced drift kind.
func DriftCode(k contract.Kind) string { return "pkg.drift." + string(k) }

func driftEmits() map[string]Kind {
	m := map[string]Kind{}
	for _, k := range contract.Kinds {
		if k.Surfaced() {
			m[DriftCode(k)] = KindFinding
		}
	}
	m[CodeSurfaceUndeclared] = KindFinding
	m[CodeSurfaceUnserved] = KindFinding
	return m
}

// validateDrift checks parameters.contract_drift: present and valid
// exactly when the rubric has the dimension.
func (r *Rubric) validateDrift() []error {
	_, has := r.Dimension(DimensionContractDrift)
	p := r.Params.Drift
	switch {
	case has && p == nil:
		return []error{errors.New("parameters.contract_drift: missing, and the rubric has dimension " + DimensionContractDrift)}
	case !has && p != nil:
		return []error{errors.New("parameters.contract_drift: present, but the rubric has no dimension " + DimensionContractDrift + ", so nothing reads it")}
	case !has:
		return nil
	}
	var errs []error
	for _, s := range Severities() {
		v, ok := p.SeverityPenalties[s]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("parameters.contract_drift.severity_penalties: %s missing", s))
		case v < 0 || math.IsNaN(v) || math.IsInf(v, 0):
			errs = append(errs, fmt.Errorf("parameters.contract_drift.severity_penalties.%s: %v must be 0 or more", s, v))
		}
	}
	for s := range p.SeverityPenalties {
		if s.Rank() < 0 {
			errs = append(errs, fmt.Errorf("parameters.contract_drift.severity_penalties: unknown severity %q", s))
		}
	}
	return errs
}

// observeDrift scores the surfaced changes of the run's contract: those
// since its identity's pin (signal drift observed) and those within the
// session (the relisting after the idle watch, part of sandbox.session).
// A change seen within the session is positive evidence and decides the
// score whatever the drift signal's state; a first scan with none gets
// the zero point the rubric justifies; a failed session, or a run with
// no drift evidence at all, earns no credit.
func observeDrift(p *probe, gate verdict) verdict {
	b := p.b
	if s, ok := b.Signals[evidence.SignalSession]; !ok || s.State != evidence.StateObserved || b.Contract == nil || b.Session == nil {
		return noCredit("no contract was captured to compare" + gateReason(gate))
	}
	var sessionChanges []contract.Change
	relisted := ""
	if rl := b.Session.Relist; rl != nil {
		switch {
		case rl.Error != "":
			relisted = "the second listing within the session failed (" + rl.Error + ")"
		default:
			sessionChanges = rl.Changes
			relisted = "relisted " + formatMS(rl.AfterMS) + " after the first listing"
			if rl.AfterCalls > 0 && p.atLeast(toolCallsFrom) {
				relisted += ", after " + plural(rl.AfterCalls, "tool call")
			}
		}
	}
	var pinChanges []contract.Change
	var base *evidence.Baseline
	driftSig := b.Signals[evidence.SignalDrift]
	if driftSig.State == evidence.StateObserved && b.Drift != nil && b.Drift.Baseline != nil {
		pinChanges, base = b.Drift.Changes, b.Drift.Baseline
	}
	penalties := p.p.Drift.SeverityPenalties
	type key struct{ code, subject, scope string }
	counted := map[key]bool{}
	var bySeverity [5]int
	score := 100.0
	add := func(ch contract.Change, scope, message string) {
		if !ch.Surfaced || !ch.Kind.Known() {
			return
		}
		code := DriftCode(ch.Kind)
		def, ok := p.r.Code(code)
		if !ok || def.Dimension != p.dimension {
			return
		}
		p.emit(code, ch.Subject, message, p.clip(changeEvidence(ch)))
		k := key{code, ch.Subject, scope}
		if !ch.Safety {
			// A change without the safety bit (titles given, tools
			// removed) counts once per code and scope, however many
			// subjects a release touched.
			k.subject = ""
		}
		if counted[k] {
			return
		}
		counted[k] = true
		bySeverity[def.Severity.Rank()]++
		score -= penalties[def.Severity]
	}
	after := "the surface listed after the idle watch differs from the first listing"
	if rl := b.Session.Relist; rl != nil && rl.AfterCalls > 0 && p.atLeast(toolCallsFrom) {
		// v13: the relisting came after the tools were called, so a
		// change is the rug pull that waits for a tool to be used.
		after = "the surface listed after " + plural(rl.AfterCalls, "tool call") + " differs from the first listing: it changed on use"
	}
	usedData := 0
	for _, ch := range sessionChanges {
		if ch.Kind == contract.ResourceChanged && b.Session.Relist.AfterCalls > 0 && p.atLeast(toolCallsFrom) {
			// v13: a resource or template that came or went after the
			// tools were called is data the calls made (a session
			// resource, a stored entity), not the surface drifting; its
			// text is still checked (relistChecks).
			usedData++
			continue
		}
		add(ch, "session", "within one session, after start-up: "+kindText(ch.Kind)+" ("+after+")")
	}
	dataNote := ""
	if usedData > 0 {
		dataNote = "; " + plural(usedData, "resource change") + " after the calls not scored (data the calls made)"
		relisted += dataNote
	}
	// v14: a shipped release's declared surface (a bundle's manifest)
	// against the listing; each difference counts as a change.
	manifest := ""
	for _, sd := range p.emitManifestDiffs() {
		if k := (key{sd.code, sd.kind + " " + sd.name, "manifest"}); !counted[k] {
			counted[k] = true
			bySeverity[sd.sev.Rank()]++
			score -= penalties[sd.sev]
		}
		manifest = "; the listing differs from the surface " + p.b.Shipped.Declared.Source + " declares"
	}
	nSession := len(counted)
	if base != nil {
		since := "since the pin (run " + base.RunID + " of " + base.RunDate.UTC().Format("2006-01-02") + ", version " + base.Version + ", pinned by " + base.PinnedBy + ")"
		for _, ch := range pinChanges {
			add(ch, "pin", kindText(ch.Kind)+" "+since)
		}
	}
	summary := func() string {
		parts := make([]string, 0, 5)
		for _, s := range Severities() {
			if n := bySeverity[s.Rank()]; n > 0 {
				parts = append(parts, strconv.Itoa(n)+" "+string(s)+" (-"+formatScore(float64(n)*penalties[s])+")")
			}
		}
		return strings.Join(parts, ", ")
	}
	switch {
	case base != nil:
		if len(counted) == 0 {
			return scored(100, "no surfaced change from the baseline pinned "+base.PinnedAt.UTC().Format("2006-01-02")+" by "+base.PinnedBy+
				" (run "+base.RunID+", version "+base.Version+") nor within the session; this is distance from that baseline, not from honest"+sessionNote(relisted))
		}
		return scored(score, "surfaced changes, counting a code once per subject and scope (once per scope without the safety bit): "+summary()+manifest+sessionNote(relisted))
	case nSession > 0:
		what := "surfaced changes within the session"
		if manifest != "" {
			what = "surfaced changes within the session or from the declared surface"
		}
		return scored(score, what+", counting a code once per subject (once without the safety bit): "+summary()+
			manifest+"; not compared with a pin: "+stateText(driftSig)+dataNote)
	case gate.state == StateScored:
		// drift observed, but no baseline recorded: a malformed bundle.
		return noCredit("signal drift is observed but the bundle names no baseline")
	case gate.state == StateZeroPoint && b.Drift != nil && b.Drift.FirstScan:
		return zeroPoint("first scan of this server identity: there was no pin to compare with, and this run became its pin (trust on first use)" + sessionNote(relisted))
	case gate.state == StateZeroPoint:
		return noCredit(strings.TrimPrefix(gate.reason, "") + sessionNote(relisted))
	}
	return gate
}

func sessionNote(relisted string) string {
	if relisted == "" {
		return "; the surface was not listed a second time within the session"
	}
	return "; " + relisted
}

func stateText(s evidence.Signal) string {
	if s.State == "" {
		return "signal drift is not recorded in the bundle"
	}
	return "signal drift is " + string(s.State) + because(s.Reason)
}

func gateReason(g verdict) string {
	if g.reason == "" {
		return ""
	}
	return " (" + g.reason + ")"
}

func formatMS(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
}

// changeEvidence quotes a change: what moved, and its two sides.
func changeEvidence(ch contract.Change) string {
	if ch.Before == "" && ch.After == "" {
		// An addition or removal: the subject names what.
		return ch.Detail
	}
	var sb strings.Builder
	if ch.Detail != "" {
		sb.WriteString(ch.Detail)
		sb.WriteString(": ")
	}
	before, after := ch.Before, ch.After
	if before == "" {
		before = "(none)"
	}
	if after == "" {
		after = "(none)"
	}
	sb.WriteString(before)
	sb.WriteString(" → ")
	sb.WriteString(after)
	return sb.String()
}

// kindText says what a kind of change is, in words.
func kindText(k contract.Kind) string {
	switch k {
	case contract.ToolRemoved:
		return "a tool was removed"
	case contract.TitleChanged:
		return "a title changed"
	case contract.AnnotationTowardDestructive:
		return "a tool's hints moved toward destructive"
	case contract.AnnotationTowardOpenWorld:
		return "a tool's hints moved toward the open world"
	case contract.AnnotationRemoved:
		return "a declared hint was removed, so the specification's default applies"
	case contract.ParameterAdded:
		return "a parameter was added"
	case contract.SchemaLoosened:
		return "an input schema was loosened"
	case contract.InstructionsChanged:
		return "the server's instructions changed"
	case contract.PromptChanged:
		return "a prompt was added, removed or changed"
	case contract.ResourceChanged:
		return "a resource or template was added, removed or moved"
	case contract.CapabilityAdded:
		return "the server declared a new capability"
	case contract.ServerIdentityChanged:
		return "the server's identity changed"
	}
	return string(k)
}
