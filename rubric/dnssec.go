package rubric

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// Reason codes of the DNSSEC part of the provenance probe (rubric v4 on).
// Their prefix names the dnssec signal, so that a benchmark case can scope
// itself to that source; the subject of a domain finding is the domain.
const (
	CodeDNSSECNXDomain      = "pkg.dnssec.nxdomain"
	CodeDNSSECDanglingCNAME = "pkg.dnssec.dangling_cname"
	CodeDNSSECBogus         = "pkg.dnssec.bogus"
	CodeDNSSECUnsigned      = "pkg.dnssec.unsigned"
	CodeDNSSECIndeterminate = "pkg.dnssec.indeterminate"
	CodeDNSSECUnverified    = "pkg.dnssec.unverified"
)

// Where a domain of the DNSSEC evidence came from in the package's
// metadata (evidence.DNSDomain.Sources).
const (
	sourceHomepage        = "homepage"
	sourceRepository      = "repository"
	sourceMaintainerEmail = "maintainer_email"
	sourceAuthorURL       = "author_url"
	sourceMCPName         = "mcp_name"
)

var domainSources = []string{sourceHomepage, sourceRepository, sourceMaintainerEmail, sourceAuthorURL, sourceMCPName}

// Whether a name exists (evidence.DNSDomain.Exists).
const existsNo = "no"

// DNSSECParams are the deductions the provenance dimension takes from the
// dnssec signal. They are required by a rubric whose provenance dimension
// names that signal, and absent from the others.
type DNSSECParams struct {
	NXDomainPenalty      float64 `yaml:"nxdomain_penalty"`
	DanglingCNAMEPenalty float64 `yaml:"dangling_cname_penalty"`
	BogusPenalty         float64 `yaml:"bogus_penalty"`
	InsecurePenalty      float64 `yaml:"insecure_penalty"`
	// InsecurePenaltySources are the sources through which the project
	// claims a domain as its own; an unsigned domain from one of them
	// takes InsecurePenalty, one named only elsewhere (a maintainer's
	// email provider) is reported without a deduction.
	InsecurePenaltySources []string `yaml:"insecure_penalty_sources"`
	IndeterminatePenalty   float64  `yaml:"indeterminate_penalty"`
}

// readsDNSSEC reports whether the provenance dimension of r names the
// dnssec signal, so that its probe reads DNSSEC evidence and parameters.
func (r *Rubric) readsDNSSEC() bool {
	d, ok := r.Dimension(DimensionProvenance)
	return ok && slices.Contains(d.Signals, evidence.SignalDNSSEC)
}

// validateDNSSEC checks parameters.supply.dnssec: present and valid
// exactly when the provenance probe reads the dnssec signal, so that a
// block no probe reads cannot pass for one that changes a score.
func (r *Rubric) validateDNSSEC() []error {
	sp := r.Params.Supply
	if sp == nil {
		return nil // reported by SupplyParams.validate
	}
	p := sp.DNSSEC
	switch reads := r.readsDNSSEC(); {
	case reads && p == nil:
		return []error{errors.New("parameters.supply.dnssec: missing, and the provenance dimension names signal dnssec")}
	case !reads && p != nil:
		return []error{errors.New("parameters.supply.dnssec: present, but the provenance dimension does not name signal dnssec, so nothing reads it")}
	case !reads:
		return nil
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("parameters.supply.dnssec."+format, args...))
	}
	penalty := func(name string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			add("%s: %v must be 0 or more", name, v)
		}
	}
	penalty("nxdomain_penalty", p.NXDomainPenalty)
	penalty("dangling_cname_penalty", p.DanglingCNAMEPenalty)
	penalty("bogus_penalty", p.BogusPenalty)
	penalty("insecure_penalty", p.InsecurePenalty)
	penalty("indeterminate_penalty", p.IndeterminatePenalty)
	if len(p.InsecurePenaltySources) == 0 {
		add("insecure_penalty_sources: empty")
	}
	for _, s := range p.InsecurePenaltySources {
		if !slices.Contains(domainSources, s) {
			add("insecure_penalty_sources: %q is not one of %s", s, strings.Join(domainSources, ", "))
		}
	}
	return errs
}

// dnssecInput is what the provenance probe knows of the dnssec signal.
type dnssecInput struct {
	// named is true when the dimension names the dnssec signal; the rest
	// is zero otherwise.
	named bool
	sig   evidence.Signal
	// res is the DNSSEC evidence, nil unless the signal was observed.
	res *evidence.DNSSECResult
	// skipped says why the dimension is scored without DNSSEC: the signal
	// is not_assessed (no domain to check, or the operator skipped it).
	skipped string
}

// dnssecGate reads the dnssec signal for the provenance probe and returns
// the gate's verdict to use. dnssec not_assessed means there was no domain
// to check or the check was skipped: the dimension is then scored from its
// other signals, so the verdict is recomputed without dnssec.
func (p *probe) dnssecGate(g verdict) (dnssecInput, verdict) {
	if !slices.Contains(p.signals, evidence.SignalDNSSEC) {
		return dnssecInput{}, g
	}
	in := dnssecInput{named: true, sig: p.b.Signal(evidence.SignalDNSSEC)}
	switch in.sig.State {
	case evidence.StateObserved:
		if p.b.Supply != nil {
			in.res = p.b.Supply.DNSSEC
		}
	case evidence.StateNotAssessed:
		in.skipped = "signal dnssec is not_assessed" + because(in.sig.Reason)
		others := make([]string, 0, len(p.signals))
		for _, s := range p.signals {
			if s != evidence.SignalDNSSEC {
				others = append(others, s)
			}
		}
		g = gate(p.b, Dimension{ID: p.dimension, Signals: others})
	}
	return in, g
}

// dnssecDeduction is one deduction the DNSSEC evidence calls for.
type dnssecDeduction struct {
	penalty float64
	why     string
}

// dnssecFindings emits the findings of the dnssec signal and returns its
// deductions, each kind at most once however many domains call for it.
// An unavailable or errored signal (or one missing from the bundle) is
// reported as unverified; a not_assessed one says nothing.
func (p *probe) dnssecFindings(in dnssecInput) []dnssecDeduction {
	if !in.named {
		return nil
	}
	switch in.sig.State {
	case evidence.StateObserved, evidence.StateNotAssessed:
	default:
		p.unverified(CodeDNSSECUnverified, p.targetSubject(),
			"DNSSEC was not validated: whether the package's domains are signed, bogus or even exist is unknown, not absent",
			p.signalEvidence(evidence.SignalDNSSEC, in.sig))
	}
	if in.res == nil {
		return nil
	}
	dp := p.p.Supply.DNSSEC
	var nx, dangling, bogus, insecure, indeterminate []string
	for _, d := range in.res.Domains {
		if d.Exists == existsNo {
			nx = append(nx, d.Name)
			p.nxdomainFinding(d)
		}
		if d.DanglingCNAME {
			dangling = append(dangling, d.Name)
			target := "(unknown)"
			if len(d.CNAMEs) > 0 {
				target = d.CNAMEs[len(d.CNAMEs)-1]
			}
			p.emit(CodeDNSSECDanglingCNAME, d.Name,
				d.Name+" ("+sourceList(d)+") is a CNAME whose chain ends at "+target+
					", which does not exist: whoever registers "+target+" serves "+d.Name,
				p.clip(domainEvidence(d)+"; cnames "+strings.Join(d.CNAMEs, " -> ")+"; target exists: no; nxdomain_proof: "+orNone(d.NXDomainProof)))
		}
		switch d.Status {
		case evidence.DNSSecure:
		case evidence.DNSInsecure:
			if slices.ContainsFunc(d.Sources, func(s string) bool { return slices.Contains(dp.InsecurePenaltySources, s) }) {
				insecure = append(insecure, d.Name)
			}
			p.emit(CodeDNSSECUnsigned, d.Name,
				d.Name+" ("+sourceList(d)+") is not DNSSEC-signed: answers for it cannot be authenticated",
				p.clip(domainEvidence(d)+"; status insecure"+insecureFrom(d)))
		case evidence.DNSBogus:
			bogus = append(bogus, d.Name)
			reason := orNone(d.BogusReason)
			zone := brokenZone(d)
			ev := domainEvidence(d) + "; bogus_reason " + reason + "; broken at zone " + zone
			if d.Error != "" {
				ev += "; " + d.Error
			}
			p.emit(CodeDNSSECBogus, d.Name,
				"DNSSEC validation of "+d.Name+" ("+sourceList(d)+") fails ("+reason+" at zone "+zone+
					"): validating resolvers refuse its answers, and a forged answer looks the same",
				p.clip(ev))
		default:
			// Indeterminate, or a status this rubric does not know: the
			// chain was not judged, so the domain earns no credit.
			indeterminate = append(indeterminate, d.Name)
			ev := domainEvidence(d) + "; status " + orUnknown(d.Status)
			if d.Error != "" {
				ev += "; " + d.Error
			}
			p.emit(CodeDNSSECIndeterminate, d.Name,
				"the DNSSEC chain of "+d.Name+" ("+sourceList(d)+") could not be judged: whether it is signed, and whether it exists, is unknown",
				p.clip(ev))
		}
	}
	var out []dnssecDeduction
	add := func(names []string, penalty float64, one, many string) {
		if len(names) == 0 {
			return
		}
		names = sortedCopy(names)
		if len(names) == 1 {
			out = append(out, dnssecDeduction{penalty, fmt.Sprintf(one, names[0])})
			return
		}
		out = append(out, dnssecDeduction{penalty, fmt.Sprintf(many, strings.Join(names, ", "))})
	}
	add(nx, dp.NXDomainPenalty, "domain %s does not exist", "domains %s do not exist")
	add(dangling, dp.DanglingCNAMEPenalty, "dangling CNAME at %s", "dangling CNAMEs at %s")
	add(bogus, dp.BogusPenalty, "DNSSEC bogus for %s", "DNSSEC bogus for %s")
	add(insecure, dp.InsecurePenalty, "own domain %s not DNSSEC-signed", "own domains %s not DNSSEC-signed")
	add(indeterminate, dp.IndeterminatePenalty, "DNSSEC state of %s not judged", "DNSSEC state of %s not judged")
	return out
}

// nxdomainFinding reports a domain the package names that does not exist.
// A maintainer's email domain is the worse case: whoever registers it
// receives the registry's password-reset mail for that account.
func (p *probe) nxdomainFinding(d evidence.DNSDomain) {
	proof := d.NXDomainProof
	if proof == "" {
		proof = "none"
	}
	proven := "the denial is not signed, so it is not proven"
	if proof == "nsec" || proof == "nsec3" {
		proven = "proven by a signed " + strings.ToUpper(proof) + " denial"
	}
	ev := p.clip(domainEvidence(d) + "; exists: no; nxdomain_proof: " + proof)
	if d.HasSource(sourceMaintainerEmail) {
		p.emitGraded(CodeDNSSECNXDomain, SeverityHigh, d.Name,
			"the maintainer email domain "+d.Name+" does not exist ("+proven+
				"): anyone can register it and take the maintainer's registry account over by a password reset", ev)
		return
	}
	p.emitGraded(CodeDNSSECNXDomain, SeverityMedium, d.Name,
		"the domain "+d.Name+" ("+sourceList(d)+") does not exist ("+proven+
			"): whoever registers it controls what the package points its users to", ev)
}

func sourceList(d evidence.DNSDomain) string {
	if len(d.Sources) == 0 {
		return "source unknown"
	}
	return strings.Join(d.Sources, ", ")
}

// domainEvidence quotes a domain's name and sources.
func domainEvidence(d evidence.DNSDomain) string {
	return "name " + orUnknown(d.Name) + "; sources " + sourceList(d)
}

// brokenZone is the first zone of a bogus domain's chain that is bogus,
// else the last zone of the chain.
func brokenZone(d evidence.DNSDomain) string {
	for _, s := range d.Chain {
		if s.Status == evidence.DNSBogus {
			return orUnknown(s.Zone)
		}
	}
	if n := len(d.Chain); n > 0 {
		return orUnknown(d.Chain[n-1].Zone)
	}
	return "(unknown)"
}

// insecureFrom says where an insecure domain's chain stops being signed.
func insecureFrom(d evidence.DNSDomain) string {
	for _, s := range d.Chain {
		if s.Status == evidence.DNSInsecure {
			out := " from zone " + orUnknown(s.Zone)
			if s.DSDenial != "" {
				out += " (no DS, proven by " + s.DSDenial + ")"
			}
			return out
		}
	}
	return ""
}

// note completes a scored provenance reason with what the dnssec
// signal contributed when nothing was deducted for it.
func (in dnssecInput) note() string {
	switch {
	case !in.named:
		return ""
	case in.skipped != "":
		return "; scored without DNSSEC: " + in.skipped
	case in.res == nil:
		return ""
	case len(in.res.Domains) == 0:
		return "; DNSSEC: no domain checked"
	}
	return "; DNSSEC: " + plural(len(in.res.Domains), "domain") + " checked, no deduction"
}
