package supplychain

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/inventory"
	"github.com/google/osv-scalibr/purl"
	"github.com/package-url/packageurl-go"
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

// pylockFile is the part of a PEP 751 pylock.toml read here: the same
// fields osv-scalibr's pylock extractor reads (name, version, vcs
// commit-id, directory path).
type pylockFile struct {
	LockVersion string          `toml:"lock-version"`
	CreatedBy   string          `toml:"created-by"`
	Packages    []pylockPackage `toml:"packages"`
}

type pylockPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	VCS     struct {
		Type   string `toml:"type"`
		URL    string `toml:"url"`
		Commit string `toml:"commit-id"`
	} `toml:"vcs"`
	Directory struct {
		Path string `toml:"path"`
	} `toml:"directory"`
	Archive struct {
		URL  string `toml:"url"`
		Path string `toml:"path"`
	} `toml:"archive"`
}

// source says where a package without a version came from, for the
// reason a signal does not apply.
func (p pylockPackage) source() string {
	switch {
	case p.VCS.URL != "" || p.VCS.Commit != "":
		return "a " + cmpOr(p.VCS.Type, "vcs") + " checkout " + cmpOr(p.VCS.URL, p.VCS.Commit)
	case p.Directory.Path != "":
		return "the directory " + p.Directory.Path
	case p.Archive.URL != "" || p.Archive.Path != "":
		return "the archive " + cmpOr(p.Archive.URL, p.Archive.Path)
	}
	return "no source"
}

// parsePylock reads a pylock.toml. PEP 751 tells installers to refuse a
// lock-version whose major version they do not know, and so does this.
func parsePylock(b []byte) (*pylockFile, error) {
	var l pylockFile
	if err := toml.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("osv: parse pylock.toml: %w", err)
	}
	major, _, _ := strings.Cut(strings.TrimSpace(l.LockVersion), ".")
	if major != "1" {
		return nil, fmt.Errorf("osv: pylock.toml lock-version %q is not a version 1 lock (PEP 751)", l.LockVersion)
	}
	return &l, nil
}

// pylockRoot reports whether p is the project the lock was made for,
// which osv-scalibr's extractor also leaves out: no version, installed
// from ".". `uv pip compile` writes no such entry; `uv export` does.
func (p pylockPackage) root() bool {
	return p.Version == "" && p.Directory.Path == "."
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
func extractPylockPackages(l *pylockFile) *inventory.Inventory {
	inv := &inventory.Inventory{}
	for _, p := range l.Packages {
		if p.root() || p.Name == "" || p.Version == "" {
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
func (l *pylockFile) roles(target string) (osvRoles, error) {
	norm := pkgspec.NormalizePyPIName(target)
	r := osvRoles{direct: map[string]bool{}, targets: map[string]bool{}}
	var unversioned *pylockPackage
	for i, p := range l.Packages {
		if p.root() || pkgspec.NormalizePyPIName(p.Name) != norm {
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
		return osvRoles{}, fmt.Errorf("osv: pylock.toml records the scanned package %q from %s without a version, so OSV cannot match it: %w", target, unversioned.source(), ErrNotApplicable)
	}
	return osvRoles{}, fmt.Errorf("osv: scanned package %q (%s) is not in the pylock.toml", target, norm)
}

// PyPITreePurls returns the package URLs (pkg:pypi/<PEP 503 name>@<version>)
// of every package in a pylock.toml, sorted and without repeats, for
// Socket. skip leaves out a package: a project name leaves out every
// version of that project (names compared in PEP 503 form), a package URL
// only that one. Packages without a version (a directory, a VCS checkout,
// an archive) have no package URL Socket can answer for and are left out.
// A document that is not a version 1 pylock.toml gives nil.
func PyPITreePurls(pylock []byte, skip string) []string {
	l, err := parsePylock(pylock)
	if err != nil {
		return nil
	}
	skipName, skipPurl := "", ""
	if strings.HasPrefix(skip, "pkg:") {
		skipPurl = purlKey(skip)
	} else if skip != "" {
		skipName = pkgspec.NormalizePyPIName(skip)
	}
	out := []string{}
	for _, p := range l.Packages {
		if p.root() || p.Name == "" || p.Version == "" {
			continue
		}
		name := pkgspec.NormalizePyPIName(p.Name)
		if name == skipName {
			continue
		}
		u := PyPIPurl(name, p.Version)
		if skipPurl != "" && purlKey(u) == skipPurl {
			continue
		}
		out = append(out, u)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PyPIPurl is the package URL of a PyPI release: pkg:pypi/<PEP 503
// name>@<version>, encoded by packageurl-go (the '+' of a local version
// label as %2B, an epoch's '!' kept).
func PyPIPurl(name, version string) string {
	return packageurl.NewPackageURL(packageurl.TypePyPi, "", pkgspec.NormalizePyPIName(name), version, nil, "").ToString()
}
