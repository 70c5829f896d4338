package rubric

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// ---- vulnerability_exposure and malware_signal ----

// advisorySeverity is an advisory's severity: from its CVSS score when it
// has one, else from the database's rating (GHSA's "moderate" is medium),
// else low.
func (vp VulnerabilityParams) advisorySeverity(v evidence.Vulnerability) (Severity, string) {
	switch c := vp.CVSS; {
	case v.Score >= c.Critical:
		return SeverityCritical, "CVSS " + formatScore(v.Score)
	case v.Score >= c.High:
		return SeverityHigh, "CVSS " + formatScore(v.Score)
	case v.Score >= c.Medium:
		return SeverityMedium, "CVSS " + formatScore(v.Score)
	case v.Score > 0:
		return SeverityLow, "CVSS " + formatScore(v.Score)
	}
	if s, ok := rating(v.Severity); ok {
		return s, "no CVSS score; rated " + strings.ToLower(strings.TrimSpace(v.Severity))
	}
	return SeverityLow, "no CVSS score or rating"
}

// rating reads a severity word as databases and Socket write them.
func rating(s string) (Severity, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical":
		return SeverityCritical, true
	case "high":
		return SeverityHigh, true
	case "moderate", "medium", "middle":
		return SeverityMedium, true
	case "low":
		return SeverityLow, true
	default:
		return "", false
	}
}

func reach(v evidence.Vulnerability) int {
	switch {
	case v.Target:
		return reachTarget
	case v.Direct:
		return reachDirect
	default:
		return reachTransitive
	}
}

// reachNote says where an advisory's package sits, for messages.
func reachNote(v evidence.Vulnerability) string {
	return [...]string{"the package itself", "a direct dependency", "a transitive dependency"}[reach(v)]
}

// distinctAdvisories returns the advisories that are not malware, one per
// vulnerability and package version: an advisory listed again under an
// alias (a GHSA and its CVE) is counted once, keeping the one with the
// highest score, then the lowest id. The order of the input does not
// matter.
func distinctAdvisories(vs []evidence.Vulnerability) []evidence.Vulnerability {
	list := make([]evidence.Vulnerability, 0, len(vs))
	for _, v := range vs {
		if !isMalwareAdvisory(v) {
			list = append(list, v)
		}
	}
	slices.SortStableFunc(list, func(a, b evidence.Vulnerability) int {
		if c := strings.Compare(a.Package, b.Package); c != 0 {
			return c
		}
		if c := strings.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(list) < 2 {
		return list
	}
	type key struct{ pkg, version, id string }
	seen := map[key]bool{}
	out := list[:0]
	for _, v := range list {
		dup := seen[key{v.Package, v.Version, v.ID}]
		for _, a := range v.Aliases {
			dup = dup || seen[key{v.Package, v.Version, a}]
		}
		seen[key{v.Package, v.Version, v.ID}] = true
		for _, a := range v.Aliases {
			seen[key{v.Package, v.Version, a}] = true
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

func isMalwareAdvisory(v evidence.Vulnerability) bool {
	return v.Malware || strings.HasPrefix(v.ID, "MAL-")
}

func scoreVulnerability(p *probe, gate verdict) verdict {
	sig, ok := p.observed(evidence.SignalOSV)
	switch sig.State {
	case evidence.StateObserved, evidence.StateNotAssessed:
	case evidence.StateUnavailable, evidence.StateError:
		p.unverified(CodeOSVUnverified, p.targetSubject(),
			"OSV was not consulted ("+string(sig.State)+"): known vulnerabilities in the installed tree are unknown, not absent",
			p.signalEvidence(evidence.SignalOSV, sig))
	default:
		p.unverified(CodeOSVUnverified, p.targetSubject(),
			"the OSV signal has an unknown state: known vulnerabilities in the installed tree are unknown, not absent",
			p.signalEvidence(evidence.SignalOSV, sig))
	}
	_, osv, _, _ := p.supply()
	if !ok || osv == nil {
		if gate.state != StateScored {
			return gate
		}
		return noEvidence(evidence.SignalOSV, "OSV result")
	}
	vp := p.p.Supply.Vulnerability
	// tally counts advisories by reach and severity, for the reason.
	type tally struct {
		reach   int
		sev     Severity
		n       int
		penalty float64
	}
	var backing [8]tally
	tallies := backing[:0]
	score := 100.0
	for _, v := range distinctAdvisories(osv.Vulnerabilities) {
		sev, basis := vp.advisorySeverity(v)
		table := vp.TransitivePenalty
		if reach(v) != reachTransitive {
			table = vp.DirectPenalty
		}
		fixed := "no fixed version is listed"
		if len(v.Fixed) > 0 {
			fixed = "fixed in " + strings.Join(v.Fixed, ", ")
		}
		subject := nameAt(v.Package, v.Version)
		p.emitGraded(CodeOSVVulnerable, sev, subject,
			v.ID+" ("+string(sev)+", "+basis+") affects "+subject+", "+p.reachNote(v)+"; "+fixed,
			p.clip(advisoryEvidence(v, basis)))
		pen := table.of(sev)
		score -= pen
		i := 0
		for i < len(tallies) && (tallies[i].reach != reach(v) || tallies[i].sev != sev) {
			i++
		}
		if i == len(tallies) {
			tallies = append(tallies, tally{reach: reach(v), sev: sev})
		}
		tallies[i].n++
		tallies[i].penalty += pen
	}
	if len(tallies) == 0 {
		return scored(100, "OSV lists no advisory for the "+plural(osv.Packages, "package")+" queried")
	}
	slices.SortFunc(tallies, func(a, b tally) int {
		if a.reach != b.reach {
			return a.reach - b.reach
		}
		return b.sev.Rank() - a.sev.Rank()
	})
	parts := make([]string, 0, len(tallies))
	for _, t := range tallies {
		where := p.reachLabel(t.reach)
		parts = append(parts, strconv.Itoa(t.n)+" "+string(t.sev)+" "+where+" (-"+formatScore(t.penalty)+")")
	}
	return scored(score, "advisories: "+strings.Join(parts, ", ")+"; "+plural(osv.Packages, "package")+" queried")
}

func advisoryEvidence(v evidence.Vulnerability, basis string) string {
	var b strings.Builder
	b.Grow(len(v.ID) + len(basis) + len(v.Severity) + len(v.Summary) + 64)
	b.WriteString(v.ID)
	if len(v.Aliases) > 0 {
		aliases := v.Aliases
		if len(aliases) > 1 {
			aliases = sortedCopy(aliases)
		}
		b.WriteString("; aliases ")
		b.WriteString(strings.Join(aliases, ", "))
	}
	b.WriteString("; ")
	b.WriteString(basis)
	if v.Score > 0 && v.Severity != "" {
		b.WriteString(" (" + v.Severity + ")")
	}
	if len(v.Fixed) > 0 {
		b.WriteString("; fixed: ")
		b.WriteString(strings.Join(v.Fixed, ", "))
	} else {
		b.WriteString("; fixed: none listed")
	}
	if v.Summary != "" {
		b.WriteString("; summary: ")
		b.WriteString(v.Summary)
	}
	return b.String()
}

// scoreMalware combines Socket and OSV. Positive evidence of malware from
// either observed signal scores 0 whatever the other's state, because the
// evidence is there; otherwise both must be observed to score 100, and a
// signal that was not observed gives the gate's verdict (the zero point
// when unavailable, error or missing; dropped when not assessed). A missing
// Socket verdict is never credited as clean.
func scoreMalware(p *probe, gate verdict) verdict {
	sockSig, sockOK := p.observed(evidence.SignalSocket)
	if !sockOK {
		p.unverified(CodeSocketUnverified, p.targetSubject(),
			"Socket was not consulted ("+string(sockSig.State)+"): whether Socket flags this package as malware is unverified, which is not a clean verdict",
			p.signalEvidence(evidence.SignalSocket, sockSig))
	}
	_, osv, sock, _ := p.supply()
	var sources []string
	if sock != nil {
		if n := p.socketFindings(sock); n > 0 {
			sources = append(sources, "Socket flags "+plural(n, "package")+" as malware")
		}
	}
	if osv != nil {
		n := 0
		for _, v := range osv.Vulnerabilities {
			if !isMalwareAdvisory(v) {
				continue
			}
			n++
			subject := nameAt(v.Package, v.Version)
			p.emit(CodeOSVMalware, subject,
				fmt.Sprintf("OSV lists %s, a malicious-package advisory, for %s, %s", v.ID, subject, p.reachNote(v)),
				p.clip(advisoryEvidence(v, "malware")))
		}
		if n > 0 {
			sources = append(sources, "OSV lists "+plural(n, "malicious-package advisory"))
		}
	}
	if len(sources) > 0 {
		return scored(0, strings.Join(sources, "; ")+"; positive evidence of malware scores 0 whatever the other signal's state")
	}
	if gate.state != StateScored {
		return gate
	}
	if sock == nil {
		return noEvidence(evidence.SignalSocket, "Socket answer")
	}
	if osv == nil {
		return noEvidence(evidence.SignalOSV, "OSV result")
	}
	return scored(100, "Socket flags no package as malware ("+plural(len(sock.Alerts), "alert")+" in all) and OSV lists no malicious-package advisory for the "+
		plural(osv.Packages, "package")+" queried")
}

// socketFindings emits the Socket malware verdicts and the alerts of the
// reported severities, and returns how many packages Socket flags as
// malware.
func (p *probe) socketFindings(sock *evidence.SocketResult) int {
	mp := p.p.Supply.Malware
	var flagged map[string]bool
	for _, a := range sock.Alerts {
		malware := slices.Contains(mp.MalwareAlertTypes, a.Type)
		sev, rated := rating(a.Severity)
		if !malware && (!rated || sev.Rank() < mp.AlertMinSeverity.Rank()) {
			continue // neither reported nor scored
		}
		if flagged == nil {
			flagged = map[string]bool{}
		}
		subject := nameAt(a.Package, a.Version)
		if a.Package == "" {
			subject = p.targetSubject()
		}
		if malware {
			if !flagged[subject] {
				flagged[subject] = true
				p.emit(CodeSocketMalware, subject, "Socket flags "+subject+" as malware (alert "+strconv.Quote(a.Type)+")", p.clip(alertEvidence(a)))
			}
			continue
		}
		p.emitGraded(CodeSocketAlert, sev, subject,
			fmt.Sprintf("Socket raises a %s %q alert on %s", sev, a.Type, subject), p.clip(alertEvidence(a)))
	}
	if sock.Malware && len(flagged) == 0 {
		// The verdict without an alert naming the package is on the
		// package itself.
		subject := p.targetSubject()
		flagged = map[string]bool{subject: true}
		p.emit(CodeSocketMalware, subject, "Socket flags "+subject+" as malware", "socket verdict: malware")
	}
	return len(flagged)
}

func alertEvidence(a evidence.SocketAlert) string {
	parts := []string{"alert " + orUnknown(a.Type), "severity " + orUnknown(a.Severity)}
	if a.Category != "" {
		parts = append(parts, "category "+a.Category)
	}
	parts = append(parts, "package "+nameAt(a.Package, a.Version))
	return strings.Join(parts, "; ")
}

// Where an advisory's package sits in the tree, in the order reasons
// list them.
const (
	reachTarget = iota
	reachDirect
	reachTransitive
)
