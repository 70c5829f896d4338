// Package ecosystem is the one list of the package ecosystems verifymcp
// scans, and what every layer may ask of one without naming it: how its
// names compare, how an exact release is written and read, its package
// URL, and the packages of the lockfile its installer writes. Each
// ecosystem is a folder below this one; a new one is a new folder and one
// line in All. Code outside an ecosystem's folder asks it, and never
// compares an ecosystem's name.
//
// The pipeline's resolution and the sandbox's install drivers are kept by
// those layers, in a table keyed by Name (pipeline/ecosystems.go,
// sandbox/ecosystems.go).
package ecosystem

import (
	"strings"

	"github.com/verifymcp/verifymcp/ecosystem/mcpb"
	"github.com/verifymcp/verifymcp/ecosystem/npm"
	"github.com/verifymcp/verifymcp/ecosystem/oci"
	"github.com/verifymcp/verifymcp/ecosystem/pypi"
	"github.com/verifymcp/verifymcp/pkgspec"
)

// Ecosystem is one package ecosystem.
type Ecosystem interface {
	// Name is the ecosystem's name in targets (npm:, pypi:), in the
	// evidence and in stored runs.
	Name() string
	// Title is its name in prose and in OSV's list of ecosystems: npm, PyPI.
	Title() string
	// Registry is the ecosystem's public registry (its URL) and what the
	// ecosystem calls one in prose: "npm registry", "package index".
	Registry() (url, noun string)
	// Normalize is a package name in the form its registry compares
	// names: npm's as written, PyPI's in PEP 503 normal form.
	Normalize(name string) string
	// Pin writes an exact release: NAME@VERSION (npm), NAME==VERSION (PyPI).
	Pin(name, version string) string
	// Unpin reads what Pin writes; version is "" when ref names none.
	Unpin(ref string) (name, version string)
	// Exact is the version a target's spec names exactly (npm: 1.2.3;
	// PyPI: ==1.2.3); ok is false for a range, a tag or no spec.
	Exact(spec string) (version string, ok bool)
	// Purl is the package URL of an exact release.
	Purl(name, version string) string
	// PurlName is the package name a package URL's namespace and name
	// make: @scope/name for a scoped npm package, a PyPI project's PEP 503
	// form.
	PurlName(namespace, name string) string
	// Key is NAME@VERSION in the form in which every spelling of one
	// release is the same string.
	Key(name, version string) string
	// TreePurls are the package URLs of the packages of a lockfile as the
	// sandbox's installer writes it (package-lock.json, pylock.toml), in
	// a stable order and without repeats, skip left out: a package URL, or (PyPI)
	// a project name, all of whose versions are left out.
	TreePurls(lockfile []byte, skip string) []string
}

// All are the ecosystems, npm first: a target without a prefix is npm's.
var All = []Ecosystem{npm.Ecosystem{}, pypi.Ecosystem{}, oci.Ecosystem{}, mcpb.Ecosystem{}}

// Of is the ecosystem named name, or npm's for "" (a target without a
// prefix); ok is false for a name no ecosystem has.
func Of(name string) (e Ecosystem, ok bool) {
	if name == "" {
		return All[0], true
	}
	for _, e := range All {
		if e.Name() == name {
			return e, true
		}
	}
	return nil, false
}

// MustOf is Of for a name that came from a parsed target or stored
// evidence: a name no ecosystem has is npm's, as Of gives for "".
func MustOf(name string) Ecosystem {
	if e, ok := Of(name); ok {
		return e
	}
	return All[0]
}

// SameName reports whether two names name one package of the ecosystem
// named eco, compared as its registry compares them, case aside.
func SameName(eco, a, b string) bool {
	e := MustOf(eco)
	return strings.EqualFold(e.Normalize(strings.TrimSpace(a)), e.Normalize(strings.TrimSpace(b)))
}

// PurlKey is TYPE/NAME@VERSION for a package URL, in the form in which
// every spelling of one release is the same string (an ecosystem's Key);
// a type no ecosystem has is kept as written, and a string that is not a
// package URL is returned as it is.
func PurlKey(p string) string {
	typ, name, version, ok := pkgspec.SplitPurl(p)
	if !ok {
		return p
	}
	if e, known := Known(typ); known {
		return typ + "/" + e.Key(name, version)
	}
	return typ + "/" + name + "@" + version
}

// Known is the ecosystem whose name or package URL type is typ, compared
// case-insensitively; ok is false for "" and for a type no ecosystem has.
func Known(typ string) (e Ecosystem, ok bool) {
	if typ == "" {
		return nil, false
	}
	return Of(strings.ToLower(typ))
}

// Inventory is implemented by an ecosystem whose lockfile names packages
// of other ecosystems (a container image holds OS packages and language
// trees): the vulnerability scan asks about its packages instead of
// reading the lockfile as an installer's.
type Inventory interface {
	// OSVPackages are the packages the lockfile names, in a stable order.
	OSVPackages(lockfile []byte) []pkgspec.OSVPackage
}
