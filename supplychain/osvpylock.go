package supplychain

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem/pypi"
	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/inventory"
	"github.com/google/osv-scalibr/purl"
	"github.com/pelletier/go-toml/v2"
)

// lockKind is the kind of lockfile OSV.Scan was given.
type lockKind int

const (
	lockUnknown lockKind = iota
	// lockNPM is npm's package-lock.json (JSON).
	lockNPM
	// lockPylock is a PEP 751 pylock.toml (TOML), as `uv pip compile -o
	// pylock.toml` writes it.
	lockPylock
)

// detectLockfile tells an npm package-lock.json from a pylock.toml by
// content: a JSON object is npm's; a TOML document with a top-level
// lock-version key is a pylock.toml. Anything else is unknown.
func detectLockfile(b []byte) lockKind {
	b = bytes.TrimPrefix(bytes.TrimSpace(b), []byte("\xef\xbb\xbf"))
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return lockUnknown
	}
	if b[0] == '{' {
		return lockNPM
	}
	var head struct {
		LockVersion string `toml:"lock-version"`
	}
	if err := toml.Unmarshal(b, &head); err == nil && head.LockVersion != "" {
		return lockPylock
	}
	return lockUnknown
}

// extractPylockPackages lists the packages of a pylock.toml the way
// osv-scalibr's pylock extractor (extractor/filesystem/language/python/
// pylock) does, as PyPI packages: every package but the root, a VCS
// commit kept as its source code identifier. It does not call that
// extractor because the extractor's TOML library (BurntSushi/toml) is not
// in this module's go.sum; the TOML library used here is already a
// dependency of the module. Names are put in PEP 503 normal form, as
// OSV's PyPI matching compares them, so the evidence and the roles agree
// whatever spelling the lock uses. Packages without a version (a
// directory, a VCS checkout or an archive without one) cannot be matched
// and are left out, as osv-scanner does.
func extractPylockPackages(l *pypi.Pylock) *inventory.Inventory {
	inv := &inventory.Inventory{}
	for _, p := range l.Packages {
		if p.Root() || p.Name == "" || p.Version == "" {
			continue
		}
		pkg := &extractor.Package{
			Name:     pkgspec.NormalizePyPIName(p.Name),
			Version:  p.Version,
			PURLType: purl.TypePyPi,
			Location: extractor.LocationFromPath("pylock.toml"),
		}
		if p.VCS.Commit != "" {
			pkg.SourceCode = &extractor.SourceCodeIdentifier{Commit: p.VCS.Commit}
		}
		inv.Packages = append(inv.Packages, pkg)
	}
	slices.SortFunc(inv.Packages, func(a, b *extractor.Package) int {
		return strings.Compare(a.Name+"@"+a.Version, b.Name+"@"+b.Version)
	})
	return inv
}

// pylockRoles names the scanned package in a pylock.toml. A lock written
// by `uv pip compile` lists the resolved packages without the graph
// between them (PEP 751 has no dependency edges that uv fills in for
// it), so the only roles that can be told are the target and the tree:
// the target is both Target and Direct, and every other package is in
// the tree with Direct false, which here means "a dependency, direct or
// transitive", not "transitive". Every version of the target the lock
// holds (PEP 751 allows one per environment marker) is the target.
//
// A target missing from the lock is our failure (the sandbox installed
// it, so its lock must list it); a target without a version (installed
// from a directory, a VCS checkout or an archive) cannot be matched
// against OSV: ErrNotApplicable, with what the lock says.
func pylockRoles(l *pypi.Pylock, target string) (osvRoles, error) {
	norm := pkgspec.NormalizePyPIName(target)
	r := osvRoles{direct: map[string]bool{}, targets: map[string]bool{}}
	var unversioned *pypi.PylockPackage
	for i, p := range l.Packages {
		if p.Root() || pkgspec.NormalizePyPIName(p.Name) != norm {
			continue
		}
		if p.Version == "" {
			unversioned = &l.Packages[i]
			continue
		}
		key := norm + "@" + p.Version
		if r.target == "" {
			r.target = key
		}
		r.targets[key] = true
		r.direct[key] = true
	}
	if r.target != "" {
		return r, nil
	}
	if unversioned != nil {
		return osvRoles{}, fmt.Errorf("osv: pylock.toml records the scanned package %q from %s without a version, so OSV cannot match it: %w", target, unversioned.Source(), ErrNotApplicable)
	}
	return osvRoles{}, fmt.Errorf("osv: scanned package %q (%s) is not in the pylock.toml", target, norm)
}
