package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// unknownWithout says, per supply-chain check, what stays unknown when it
// did not answer.
var unknownWithout = map[string]string{
	"registry": "the version's deprecation, repository, provenance, mcpName and publish times are unknown",
	"osv":      "known vulnerabilities and malicious-package advisories are unknown, not absent",
	"socket":   "Socket's malware verdict is unverified, which is not a clean verdict",
	"github":   "whether the repository exists, was renamed, archived or recently pushed to is unknown",
	"dnssec":   "whether the package's domains are signed, bogus, nonexistent or dangling is unknown",
}

// Labels of a supply-chain check's line, padded to one width because each
// line is its own grid.
const (
	labelObserved    = "observed    "
	labelUnverified  = "UNVERIFIED  "
	labelNotAssessed = "not assessed"
)

// supply writes the SUPPLY CHAIN section: per third-party check, what it
// said or, when its signal was not observed, that it is unverified (or,
// when it was deliberately not run, not assessed) and what stays unknown.
func (t *table) supply(rep Report) {
	t.line("")
	sp := rep.Supply
	if sp == nil {
		t.line("SUPPLY CHAIN  not collected: this evidence predates supply-chain checks; all of them are unverified")
		return
	}
	t.line("SUPPLY CHAIN")
	var unverified []string
	head := func(name string, c Check, summary string) {
		if c.Status != StatusObserved {
			unverified = append(unverified, name)
			state := clean(c.State)
			if c.Reason != "" {
				state += " (" + clean(c.Reason) + ")"
			}
			// A check deliberately not run is still unverified, but it
			// is told apart from one that failed or went unanswered.
			label := labelUnverified
			if c.State == string(evidence.StateNotAssessed) {
				label = labelNotAssessed
			}
			t.grid([][]string{{padName(name), label, "signal " + clean(c.Signal) + " is " + state + ": " + unknownWithout[name]}})
			return
		}
		t.grid([][]string{{padName(name), labelObserved, summary}})
	}

	head("registry", sp.Registry.Check, registrySummary(sp.Registry.Metadata))
	if m := sp.Registry.Metadata; m != nil {
		t.detail(registryRows(m))
	}
	head("osv", sp.OSV.Check, osvSummary(sp.OSV.Result))
	if r := sp.OSV.Result; r != nil && len(r.Vulnerabilities) > 0 {
		rows := [][]string{{"ADVISORY", "PACKAGE", "REACH", "CVSS", "FIXED", ""}}
		for _, v := range r.Vulnerabilities {
			cvss := "-"
			switch {
			case v.Score > 0:
				cvss = num(v.Score)
			case v.Severity != "":
				cvss = "(" + strings.ToLower(clean(v.Severity)) + ")"
			}
			fixed := "none listed"
			if len(v.Fixed) > 0 {
				fixed = clean(strings.Join(v.Fixed, ", "))
			}
			mark := ""
			if v.Malware {
				mark = "MALWARE"
			}
			rows = append(rows, []string{clean(v.ID), at(v.Package, v.Version), reachLabel(v.Reach), cvss, fixed, mark})
		}
		t.detail(rows)
	}
	head("socket", sp.Socket.Check, socketSummary(sp.Socket.Result))
	if r := sp.Socket.Result; r != nil {
		if len(r.Alerts) > 0 {
			rows := [][]string{{"ALERT", "SEVERITY", "CATEGORY", "PACKAGE"}}
			for _, a := range r.Alerts {
				rows = append(rows, []string{clean(a.Type), clean(a.Severity), orDash(clean(a.Category)), at(a.Package, a.Version)})
			}
			t.detail(rows)
		}
		if len(r.Scores) > 0 {
			keys := make([]string, 0, len(r.Scores))
			for k := range r.Scores {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, 0, len(keys))
			for _, k := range keys {
				parts = append(parts, clean(k)+" "+num(r.Scores[k]))
			}
			t.line("    scores (0..1): " + strings.Join(parts, ", "))
		}
	}
	head("github", sp.GitHub.Check, githubSummary(sp.GitHub.Result))
	head("dnssec", sp.DNSSEC.Check, dnssecSummary(sp.DNSSEC.Result))
	if r := sp.DNSSEC.Result; r != nil {
		t.detail(dnssecRows(r))
		if len(r.Domains) > 0 {
			rows := [][]string{{"DOMAIN", "SOURCES", "STATUS", "EXISTS", "CNAME", "CHAIN"}}
			for _, d := range r.Domains {
				rows = append(rows, []string{
					orDash(clean(d.Name)), orDash(clean(strings.Join(d.Sources, ", "))), dnsStatus(d.Status, d.BogusReason),
					dnsExists(d), dnsCNAMEs(d), dnsChain(d),
				})
			}
			t.detail(rows)
		}
		for _, d := range r.Domains {
			if d.Error != "" {
				t.line("    error on " + orDash(clean(d.Name)) + ": " + clean(d.Error))
			}
		}
	}

	if len(unverified) > 0 {
		t.line("  Unverified: " + strings.Join(unverified, ", ") + ". What these checks would have found is unknown, not clean.")
	}
}

// padName aligns the check names of the separate grids.
func padName(name string) string { return name + strings.Repeat(" ", len("registry")-len(name)) }

// detail writes rows indented under a check.
func (t *table) detail(rows [][]string) {
	for i := range rows {
		rows[i][0] = "  " + rows[i][0]
	}
	t.grid(rows)
}

func at(pkg, version string) string {
	if version == "" {
		return orDash(clean(pkg))
	}
	return clean(pkg) + "@" + clean(version)
}

func reachLabel(r string) string {
	if r == "target" {
		return "the package"
	}
	return clean(r)
}

func registrySummary(m *RegistryMeta) string {
	if m == nil {
		return ""
	}
	s := at(m.Name, m.Version)
	if m.Ecosystem != "" {
		s = clean(m.Ecosystem) + " " + s
	}
	if m.Deprecated != "" {
		s += "  DEPRECATED"
	}
	return s
}

func registryRows(m *RegistryMeta) [][]string {
	published := orDash(deref(m.PublishedAt))
	if m.PreviousVersion != "" || m.PreviousPublishedAt != nil {
		published += "; previous " + orDash(clean(m.PreviousVersion)) + " at " + orDash(deref(m.PreviousPublishedAt))
	}
	published += "; " + plural(m.VersionCount, "version")
	if m.FirstPublishedAt != nil {
		published += " since " + *m.FirstPublishedAt
	}
	rows := [][]string{{"published", published}}
	if m.Deprecated != "" {
		rows = append(rows, []string{"deprecated", clean(strconv.Quote(m.Deprecated))})
	}
	var repo string
	switch {
	case m.Repository != nil:
		r := m.Repository
		repo = clean(m.RepositoryURL) + " -> " + clean(r.Host) + "/" + clean(r.Owner) + "/" + clean(r.Name)
		if r.Directory != "" {
			repo += " (directory " + clean(r.Directory) + ")"
		}
	case m.RepositoryURL != "":
		repo = clean(strconv.Quote(m.RepositoryURL)) + " (unparseable"
		if m.RepositoryError != "" {
			repo += ": " + clean(m.RepositoryError)
		}
		repo += ")"
	default:
		repo = "none declared"
	}
	rows = append(rows, []string{"repository", repo})
	prov := "none"
	if m.Provenance {
		prov = "attested"
	}
	rows = append(rows, []string{"provenance", prov}, []string{"mcpName", orDash(clean(m.MCPName))})
	var ms []string
	for _, mt := range m.Maintainers {
		s := clean(mt.Name)
		if mt.EmailDomain != "" {
			s += " (" + clean(mt.EmailDomain) + ")"
		}
		ms = append(ms, s)
	}
	rows = append(rows, []string{"maintainers", orDash(strings.Join(ms, ", "))})
	if len(m.LifecycleScripts) > 0 {
		var ss []string
		for _, k := range sortedKeys(m.LifecycleScripts) {
			ss = append(ss, clean(k)+": "+clean(m.LifecycleScripts[k]))
		}
		rows = append(rows, []string{"install scripts", strings.Join(ss, "; ")})
	}
	rows = append(rows, []string{"license", orDash(clean(m.License))}, []string{"homepage", orDash(clean(m.Homepage))})
	return rows
}

func osvSummary(r *OSVResult) string {
	if r == nil {
		return ""
	}
	s := strconv.Itoa(len(r.Vulnerabilities)) + " advisories"
	if len(r.Vulnerabilities) == 1 {
		s = "1 advisory"
	}
	s += " over " + plural(r.Packages, "package") + " queried"
	if r.Source != "" {
		s += " (" + clean(r.Source) + ")"
	}
	return s
}

func socketSummary(r *SocketResult) string {
	if r == nil {
		return ""
	}
	verdict := "malware: not flagged by Socket"
	if r.Malware {
		verdict = "MALWARE: flagged by Socket"
	}
	return verdict + "; " + plural(len(r.Alerts), "alert")
}

func githubSummary(r *GitHubResult) string {
	if r == nil {
		return ""
	}
	parts := []string{"github.com/" + orDash(clean(r.Requested))}
	if !r.Exists {
		return parts[0] + "  NOT FOUND on GitHub"
	}
	if r.FullName != "" && !strings.EqualFold(r.FullName, r.Requested) {
		parts = append(parts, "RENAMED to github.com/"+clean(r.FullName))
	}
	if r.Disabled {
		parts = append(parts, "DISABLED")
	}
	if r.Archived {
		parts = append(parts, "ARCHIVED")
	}
	if r.Fork {
		parts = append(parts, "fork")
	}
	parts = append(parts, "pushed "+orDash(deref(r.PushedAt)), "created "+orDash(deref(r.CreatedAt)), plural(r.Stars, "star"))
	return strings.Join(parts, "  ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func dnssecSummary(r *DNSSECResult) string {
	if r == nil {
		return ""
	}
	s := plural(len(r.Domains), "domain")
	if len(r.Domains) == 0 {
		return s + " to check"
	}
	counts := map[string]int{}
	var missing, dangling int
	for _, d := range r.Domains {
		counts[d.Status]++
		if d.Exists == dnsExistsNo {
			missing++
		}
		if d.DanglingCNAME {
			dangling++
		}
	}
	var parts []string
	for _, st := range []string{evidence.DNSSecure, evidence.DNSInsecure, evidence.DNSBogus, evidence.DNSIndeterminate} {
		if n := counts[st]; n > 0 {
			label := st
			if st == evidence.DNSBogus {
				label = "BOGUS"
			}
			parts = append(parts, strconv.Itoa(n)+" "+label)
		}
		delete(counts, st)
	}
	// A status no version of the validator defines is still counted.
	for _, st := range sortedKeys(counts) {
		parts = append(parts, strconv.Itoa(counts[st])+" "+orDash(clean(st)))
	}
	s += ": " + strings.Join(parts, ", ")
	if missing > 0 {
		s += "; " + strconv.Itoa(missing) + " NONEXISTENT"
	}
	if dangling > 0 {
		s += "; " + strconv.Itoa(dangling) + " DANGLING CNAME"
	}
	return s
}

func dnssecRows(r *DNSSECResult) [][]string {
	resolver := orDash(clean(r.Resolver))
	if r.CheckedAt != nil {
		resolver += "  checked " + *r.CheckedAt
	}
	tags := make([]string, 0, len(r.Anchor.KeyTags))
	for _, k := range r.Anchor.KeyTags {
		tags = append(tags, strconv.Itoa(int(k)))
	}
	anchor := "zone " + orDash(clean(r.Anchor.Zone)) + "  key tags " + orDash(strings.Join(tags, ", "))
	if r.Anchor.Source != "" {
		anchor += "  (" + clean(r.Anchor.Source) + ")"
	}
	return [][]string{{"resolver", resolver}, {"anchor", anchor}}
}

// dnsExistsNo is DNSDomain.Exists for a name that does not exist.
const dnsExistsNo = "no"

// dnsStatus is a domain's or zone's status, bogus in capitals with why.
func dnsStatus(status, reason string) string {
	if status != evidence.DNSBogus {
		return orDash(clean(status))
	}
	if reason == "" {
		return "BOGUS"
	}
	return "BOGUS (" + clean(reason) + ")"
}

func dnsExists(d DNSDomain) string {
	switch d.Exists {
	case dnsExistsNo:
		return "NO (proof: " + orDash(clean(d.NXDomainProof)) + ")"
	default:
		return orDash(clean(d.Exists))
	}
}

func dnsCNAMEs(d DNSDomain) string {
	if len(d.CNAMEs) == 0 {
		return "-"
	}
	s := "-> " + clean(strings.Join(d.CNAMEs, " -> "))
	if d.DanglingCNAME {
		s += " DANGLING"
		if d.NXDomainProof != "" {
			s += " (proof: " + clean(d.NXDomainProof) + ")"
		}
	}
	return s
}

// dnsChain says where a domain's chain of trust stopped being secure: the
// first zone on it that is not, and how. A chain secure throughout is
// "unbroken"; the domain's error, if any, is written below the grid.
func dnsChain(d DNSDomain) string {
	if len(d.Chain) == 0 {
		return "-"
	}
	for _, z := range d.Chain {
		switch z.Status {
		case evidence.DNSSecure:
			continue
		case evidence.DNSInsecure:
			s := "insecure from " + orDash(clean(z.Zone))
			if z.DSDenial != "" {
				s += " (no DS, proof: " + clean(z.DSDenial) + ")"
			}
			return s
		default:
			return strings.ToLower(dnsStatus(z.Status, "")) + " at " + orDash(clean(z.Zone))
		}
	}
	return "unbroken"
}
