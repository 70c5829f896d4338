// Package pypi is the PyPI ecosystem: its names (PEP 503), pins, package
// URLs and the packages of a pylock.toml (PEP 751).
package pypi

import (
	"slices"
	"strings"

	"github.com/package-url/packageurl-go"

	"github.com/verifymcp/verifymcp/pkgspec"
)

// Ecosystem is PyPI.
type Ecosystem struct{}

// Name is "pypi".
func (Ecosystem) Name() string { return "pypi" }

// Title is "PyPI".
func (Ecosystem) Title() string { return "PyPI" }

// Registry is pypi.org.
func (Ecosystem) Registry() (url, noun string) { return "https://pypi.org", "package index" }

// Normalize is the PEP 503 normal form of a project name.
func (Ecosystem) Normalize(name string) string { return pkgspec.NormalizePyPIName(name) }

// Pin is NAME==VERSION.
func (Ecosystem) Pin(name, version string) string { return name + "==" + version }

// Unpin reads NAME==VERSION.
func (Ecosystem) Unpin(ref string) (name, version string) {
	name, version, _ = strings.Cut(ref, "==")
	return name, version
}

// Exact: ==VERSION, VERSION without a wildcard, a comma or another
// operator.
func (Ecosystem) Exact(spec string) (string, bool) {
	v, ok := strings.CutPrefix(spec, "==")
	if !ok || v == "" || strings.ContainsAny(v, "<>=!~*,; ") {
		return "", false
	}
	return v, true
}

// Purl is the package URL of a PyPI release: pkg:pypi/<PEP 503
// name>@<version>, encoded by packageurl-go (the '+' of a local version
// label as %2B, an epoch's '!' kept).
func (Ecosystem) Purl(name, version string) string {
	return packageurl.NewPackageURL(packageurl.TypePyPi, "", pkgspec.NormalizePyPIName(name), version, nil, "").ToString()
}

// PurlName is the project's PEP 503 form; PyPI has no namespaces.
func (Ecosystem) PurlName(_, name string) string { return pkgspec.NormalizePyPIName(name) }

// Key is NAME@VERSION, the name in PEP 503 form and the version in lower
// case.
func (Ecosystem) Key(name, version string) string {
	return pkgspec.NormalizePyPIName(name) + "@" + strings.ToLower(version)
}

// TreePurls are the package URLs (pkg:pypi/<PEP 503 name>@<version>) of
// every package in a pylock.toml, sorted and without repeats. skip leaves
// out a package: a project name leaves out every version of that project
// (names compared in PEP 503 form), a package URL only that one. Packages
// without a version (a directory, a VCS checkout, an archive) have no
// package URL a registry can answer for and are left out. A document
// that is not a version 1 pylock.toml gives nil.
func (e Ecosystem) TreePurls(pylock []byte, skip string) []string {
	l, err := ParsePylock(pylock)
	if err != nil {
		return nil
	}
	skipName, skipKey := "", ""
	if typ, name, version, ok := pkgspec.SplitPurl(skip); ok {
		skipKey = typ + "/" + e.Key(name, version)
	} else if skip != "" {
		skipName = pkgspec.NormalizePyPIName(skip)
	}
	out := []string{}
	for _, p := range l.Packages {
		if p.Root() || p.Name == "" || p.Version == "" {
			continue
		}
		name := pkgspec.NormalizePyPIName(p.Name)
		if name == skipName {
			continue
		}
		u := e.Purl(name, p.Version)
		if skipKey != "" && "pypi/"+e.Key(name, p.Version) == skipKey {
			continue
		}
		out = append(out, u)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
