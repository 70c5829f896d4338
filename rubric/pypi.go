package rubric

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// CodeRegistryYanked is a PyPI release the index marks yanked (PEP 592),
// from rubric v10. Before v10 a yank, which PyPIMetadata records in
// RegistryMeta.Deprecated as "yanked: <reason>", read as
// pkg.supply.registry.deprecated.
const CodeRegistryYanked = "pkg.supply.registry.yanked"

// pypiSince is the first rubric version that reads a PyPI bundle's
// evidence as the rubric file's dimensions' ecosystems.pypi say; older
// versions read every bundle as npm's, so that rescoring under them is
// unchanged.
const pypiSince = "10"

// ecosystemPyPI is evidence.Target.Ecosystem of a PyPI target.
const ecosystemPyPI = "pypi"

// readsPyPI reports whether the bundle is a PyPI target scored under a
// rubric that reads PyPI evidence as such (v10 on).
func (p *probe) readsPyPI() bool {
	return p.atLeast(pypiSince) && strings.EqualFold(strings.TrimSpace(p.b.Target.Ecosystem), ecosystemPyPI)
}

// yankReason splits PyPIMetadata's "yanked: <reason>" (or "yanked (no
// reason given)"); ok is false when deprecated does not record a yank.
func yankReason(deprecated string) (reason string, ok bool) {
	rest, ok := strings.CutPrefix(deprecated, "yanked")
	if !ok {
		return "", false
	}
	switch {
	case rest == "" || strings.TrimSpace(rest) == "(no reason given)":
		return "", true
	case strings.HasPrefix(rest, ":"):
		return strings.TrimSpace(rest[1:]), true
	default:
		// "yankedfoo" is not PyPIMetadata's form: not a yank.
		return "", false
	}
}

// emitYank reports a yanked PyPI release.
func (p *probe) emitYank(target, reason string) {
	msg := "the index marks " + target + " as yanked (PEP 592): its publisher withdrew the release, and installers choose it only when it is pinned exactly; "
	ev := "yanked: true; yanked_reason: "
	if reason == "" {
		msg += "no reason was given"
		ev += "(none)"
	} else {
		msg += "the reason given: " + strconv.Quote(reason)
		ev += strconv.Quote(reason)
	}
	p.emit(CodeRegistryYanked, target, msg, p.clip(ev))
}

// reachNote says where an advisory's package sits, for messages. For a
// PyPI target (v10 on) a package that is not the target is "in the tree,
// role unknown": uv's pylock.toml records no dependency graph, so
// Direct false does not say the package is transitive.
func (p *probe) reachNote(v evidence.Vulnerability) string {
	if p.readsPyPI() && reach(v) == reachTransitive {
		return "a package of the installed tree whose role (direct or transitive dependency) the lock does not record, scored as transitive"
	}
	return reachNote(v)
}

// reachLabel names a reach in the vulnerability dimension's reason.
func (p *probe) reachLabel(r int) string {
	if p.readsPyPI() && r == reachTransitive {
		return "in the tree, role unknown (scored as transitive)"
	}
	return [...]string{"on the package itself", "direct", "transitive"}[r]
}

// pypiBuildVerdict scores install_scripts for a PyPI tree (v10 on) where
// its reading differs from npm's: the script step is the build step, which
// builds each sdist (the install-time code) and then installs the whole
// tree, wheels included, into the environment. ok is false where the
// common rules apply: a build failed or timed out without having been
// denied the network, or the step succeeded with at least one build.
func pypiBuildVerdict(in *evidence.Install, failed, ran int, denied []string) (v verdict, ok bool) {
	n := len(in.Scripts)
	switch {
	case n == 0 && in.Outcome == installOK:
		return scored(100, "no sdist in the installed tree had to be built: every package was installed from a wheel, which runs no code at install"), true
	case failed > 0 || in.Outcome == installOK:
		return verdict{}, false
	case len(denied) > 0:
		// A failed build stops the build step; one that failed after the
		// sandbox denied it the network is not known to be broken.
		return zeroPoint(fmt.Sprintf("%s failed after the sandbox denied it the network, which stopped the build step: %s; whether it works with a network is not known",
			plural(len(denied), "sdist build"), strings.Join(denied, "; "))), true
	case n == 0:
		// No package code was to run; the failure is uv's, installing
		// wheels, which installability reports (pkg.install.failed).
		return zeroPoint("the build step " + in.Outcome + " with no sdist to build, so no package code was to run at install; " +
			"the failure, installing the tree's wheels, is scored under installability"), true
	case ran == n:
		return scored(50, fmt.Sprintf("%s ran and exited 0; the build step then %s installing the tree, which installability scores",
			plural(n, "sdist build"), in.Outcome)), true
	default:
		return zeroPoint(fmt.Sprintf("the build step %s before %d of %s ran, none having failed: what the others do at install is not known",
			in.Outcome, n-ran, plural(n, "sdist build"))), true
	}
}
