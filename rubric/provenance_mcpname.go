package rubric

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem"

	"github.com/verifymcp/verifymcp/evidence"
)

// The mcpName check of rubric v11 on: a rubric whose provenance dimension
// names the mcp_registry signal checks the package's mcpName as the MCP
// registry itself does, from the registry's answer (evidence.MCPNameCheck),
// instead of from the homepage's and repository's hosts.
//
//   - corroborated: the registry's entry of that name lists this package
//     (registry type and identifier, in a version it has not deleted). The
//     registry proved the namespace when the entry was published and
//     checked then that the package's mcpName names it. No finding, no
//     deduction.
//   - contradicted: the registry answered with every version of the entry,
//     and they list other packages and never this one. The owner of the
//     name publishes other packages under it: the package claims a name
//     that is not its own. pkg.supply.registry.mcpname_mismatch (high: the
//     registry's answer is direct evidence of the false claim) and
//     mcpname_mismatch_penalty.
//   - unverified: the registry has no entry of that name, read only its
//     latest version, lists no package in it, or lists this package only
//     in versions it deleted; or the signal was not assessed. Nobody
//     corroborated the claim and nothing contradicts it: no finding, and
//     mcpname_unverified_penalty (no credit).
//   - the signal unavailable, error or missing: the dimension's zero point,
//     by the normal rule, and no finding.
//
// A namespace's key record (DNS TXT, HTTPS well-known document) is quoted
// but decides nothing: the registry reads it only when an entry is
// published, and it does not tie this package to the namespace.

// readsMCPRegistry reports whether the dimension being scored names the
// mcp_registry signal, so that its probe checks the mcpName as the
// registry does.
func (p *probe) readsMCPRegistry() bool {
	return slices.Contains(p.signals, evidence.SignalMCPRegistry)
}

// mcpInput is what the provenance probe knows of the mcp_registry signal.
type mcpInput struct {
	// named is true when the dimension names the signal; the rest is
	// zero otherwise.
	named bool
	sig   evidence.Signal
	// res is the registry's answer, nil unless the signal was observed.
	res *evidence.MCPNameCheck
	// entry is the registry entry a bundle recorded before the signal
	// existed was resolved through, when it lists the package: stored
	// evidence that corroborates the mcpName.
	entry *evidence.MCPRegistryEntry
	// skipped says why the dimension is scored without the signal.
	skipped string
}

// mcpRegistryGate reads the mcp_registry signal for the provenance probe
// and returns the gate's verdict to use. Not assessed (no mcpName, one
// that is not a registry name, or the operator skipped it) scores the
// dimension from its other signals, as dnssec not_assessed does. A bundle
// recorded before the signal existed is read from what it stored: no
// registry metadata, no mcpName, or an invalid one, means there was
// nothing to ask; a target
// resolved through the registry entry that lists the package is
// corroborated by that resolution; anything else is missing evidence, the
// zero point (`rescore --recollect` collects it).
func (p *probe) mcpRegistryGate(g verdict, dns dnssecInput) (mcpInput, verdict) {
	if !p.readsMCPRegistry() {
		return mcpInput{}, g
	}
	in := mcpInput{named: true}
	sig, recorded := p.b.Signals[evidence.SignalMCPRegistry]
	in.sig = sig
	reg, _, _, _ := p.supply()
	switch {
	case recorded && sig.State == evidence.StateObserved:
		if p.b.Supply != nil {
			in.res = p.b.Supply.MCPRegistry
		}
		return in, g
	case recorded && sig.State == evidence.StateNotAssessed:
		in.skipped = "signal mcp_registry is not_assessed" + because(sig.Reason)
	case !recorded && p.b.Signal(evidence.SignalRegistryMeta).State == evidence.StateNotAssessed:
		// No registry metadata (a local tarball): the collector has no
		// mcpName to ask about either.
		in.skipped = "no registry metadata to take an mcpName from"
	case !recorded && reg != nil && reg.MCPName == "":
		in.skipped = "no mcpName to ask the MCP registry about"
	case !recorded && reg != nil && !validMCPName(reg.MCPName):
		in.skipped = "the mcpName is not an MCP registry server name"
	case !recorded && reg != nil && p.entryListsTarget(reg):
		in.entry = p.b.Target.MCPRegistry
	default:
		return in, g
	}
	others := make([]string, 0, len(p.signals))
	for _, s := range p.signals {
		if s == evidence.SignalMCPRegistry || (s == evidence.SignalDNSSEC && dns.skipped != "") {
			continue
		}
		others = append(others, s)
	}
	return in, gate(p.b, Dimension{ID: p.dimension, Signals: others})
}

// entryListsTarget reports whether the bundle's target was resolved
// through the registry entry its mcpName names, whose package was the one
// scanned and whose package.json declared that name.
func (p *probe) entryListsTarget(reg *evidence.RegistryMeta) bool {
	e := p.b.Target.MCPRegistry
	return e != nil && e.MCPNameMatches && e.Name == reg.MCPName &&
		strings.HasPrefix(e.Package, p.mcpPackageType()+":"+p.b.Target.Name+"@")
}

// mcpServerNameRe is the server.json schema's pattern for a name.
var mcpServerNameRe = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// validMCPName reports whether name can be an MCP registry server name:
// the schema's pattern, 3 to 200 characters, a namespace of at least two
// labels.
func validMCPName(name string) bool {
	ns, _, _ := strings.Cut(name, "/")
	return len(name) >= 3 && len(name) <= 200 && mcpServerNameRe.MatchString(name) && strings.Contains(ns, ".") &&
		!strings.HasPrefix(ns, ".") && !strings.HasSuffix(ns, ".") && !strings.Contains(ns, "..")
}

// mcpPackageType is the registry type of the bundle's package.
func (p *probe) mcpPackageType() string {
	return ecosystem.MustOf(strings.ToLower(strings.TrimSpace(p.b.Target.Ecosystem))).Name()
}

// samePackage compares package names as their registry does: npm's
// case-insensitively, PyPI's by PEP 503's normal form.
func samePackage(kind, a, b string) bool { return ecosystem.SameName(kind, a, b) }

// mcpNameFromRegistry checks the mcpName from the MCP registry's answer
// (see the top of this file), emits what it finds and adds its deduction;
// it returns what the reason says of a corroborated mcpName.
func (p *probe) mcpNameFromRegistry(reg *evidence.RegistryMeta, in mcpInput, d *deductions) string {
	pp := p.p.Supply.Provenance
	target := p.targetSubject()
	unverified := pp.MCPNameAbsentPenalty
	if pp.MCPNameUnverifiedPenalty != nil {
		unverified = *pp.MCPNameUnverifiedPenalty
	}
	name := reg.MCPName
	kind := p.mcpPackageType()
	pkg := kind + ":" + orUnknown(reg.Name)
	switch {
	case name == "" && p.readsPyPI():
		p.emit(CodeRegistryMCPNameAbsent, target, target+"'s PyPI description (its README) carries no mcp-name marker, so it cannot be matched to an MCP registry entry",
			"mcp-name: (none in the description)")
		d.add(pp.MCPNameAbsentPenalty, "no mcp-name")
		return ""
	case name == "":
		p.emit(CodeRegistryMCPNameAbsent, target, target+" declares no mcpName, so it cannot be matched to an MCP registry entry",
			"mcpName: (none)")
		d.add(pp.MCPNameAbsentPenalty, "no mcpName")
		return ""
	case !validMCPName(name):
		p.emit(CodeRegistryMCPNameAbsent, target,
			target+" declares the mcpName "+strconv.Quote(name)+", which is not an MCP registry server name (a reverse-DNS namespace, \"/\", a name), so it cannot be matched to an entry",
			p.clip("mcpName "+strconv.Quote(name)))
		d.add(pp.MCPNameAbsentPenalty, "mcpName not a registry server name")
		return ""
	case in.entry != nil:
		return "mcpName " + strconv.Quote(name) + " is the MCP registry entry the scan resolved through (" + in.entry.Package + ")"
	case in.res == nil && in.skipped != "":
		d.add(unverified, "mcpName "+strconv.Quote(name)+" not checked in the MCP registry ("+in.skipped+")")
		return ""
	case in.res == nil:
		// Not observed: the zero point decides, and nothing is claimed.
		return ""
	}
	res := in.res
	if res.Name != name {
		d.add(unverified, "mcpName "+strconv.Quote(name)+" not checked: the MCP registry was asked about "+strconv.Quote(res.Name))
		return ""
	}
	var listing *evidence.MCPListedPackage
	var others []string
	active := 0
	for i := range res.Packages {
		lp := &res.Packages[i]
		if strings.EqualFold(lp.RegistryType, kind) && samePackage(kind, lp.Identifier, reg.Name) {
			listing = lp
			continue
		}
		others = append(others, lp.RegistryType+":"+lp.Identifier)
		if lp.Active {
			active++
		}
	}
	keys := mcpKeyNote(res)
	switch {
	case !res.Found:
		d.add(unverified, "mcpName "+strconv.Quote(name)+" unverified: the MCP registry has no entry of that name"+keys)
		return ""
	case listing != nil && listing.Active:
		return "mcpName " + strconv.Quote(name) + " listed by the MCP registry's entry (" + plural(listing.ServerVersionCount, "version") + ": " +
			strings.Join(listing.ServerVersions, ", ") + ")" + keys
	case listing != nil:
		d.add(unverified, "mcpName "+strconv.Quote(name)+" unverified: the MCP registry lists "+pkg+" only in versions it deleted ("+strings.Join(listing.ServerVersions, ", ")+")")
		return ""
	case res.AllVersions && active > 0:
		p.emit(CodeRegistryMCPNameMismatch, target,
			fmt.Sprintf("the MCP registry's entry %q lists %s and not %s: the mcpName claims a registry name whose entry, published under the registry's proof of the namespace, names other packages",
				name, strings.Join(others, ", "), pkg),
			p.clip(mcpEntryEvidence(res, pkg)))
		d.add(pp.MCPNameMismatchPenalty, "mcpName contradicted by the MCP registry")
		return ""
	case !res.AllVersions:
		d.add(unverified, "mcpName "+strconv.Quote(name)+" unverified: the MCP registry served only the latest version of the entry ("+orUnknown(res.Latest)+"), which does not list "+pkg)
		return ""
	default:
		d.add(unverified, "mcpName "+strconv.Quote(name)+" unverified: the MCP registry's entry lists no package in a version it has not deleted")
		return ""
	}
}

// mcpEntryEvidence quotes the registry's answer about an entry.
func mcpEntryEvidence(res *evidence.MCPNameCheck, pkg string) string {
	parts := make([]string, 0, len(res.Packages))
	for _, lp := range res.Packages {
		s := lp.RegistryType + ":" + lp.Identifier
		if len(lp.PackageVersions) > 0 {
			s += " (" + strings.Join(lp.PackageVersions, ", ") + ")"
		}
		if !lp.Active {
			s += " [deleted]"
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("registry %s; entry %s: %s, every version read (latest %s); lists %s; not %s",
		res.Registry, res.Name, plural(res.VersionCount, "version"), orUnknown(res.Latest), strings.Join(parts, "; "), pkg)
}

// mcpKeyNote says which key records the namespace's domain publishes, for
// a reason; "" when none was found.
func mcpKeyNote(res *evidence.MCPNameCheck) string {
	var found []string
	for _, k := range res.KeyRecords {
		if !k.Found() {
			continue
		}
		switch k.Method {
		case evidence.MCPKeyDNS:
			found = append(found, "DNS TXT at "+k.Domain+" (DNSSEC "+orUnknown(k.DNSSEC)+")")
		default:
			found = append(found, "HTTPS at "+k.Domain)
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "; the namespace's registry key is published: " + strings.Join(found, ", ")
}
