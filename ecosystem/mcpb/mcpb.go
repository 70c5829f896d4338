// Package mcpb is the MCP Bundle ecosystem (.mcpb, formerly .dxt): a zip
// archive with a manifest.json at its root, installed by desktop clients
// such as Claude Desktop. It reads a bundle safely, its manifest, its
// signature block, the command a client would run, and the npm packages of
// the lockfile it ships.
//
// The format is the one of github.com/anthropics/mcpb (MANIFEST.md,
// src/schemas/0.1.ts to 0.4.ts, src/shared/config.ts, src/node/sign.ts).
package mcpb

import (
	"github.com/verifymcp/verifymcp/pkgspec"

	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/package-url/packageurl-go"
	"github.com/pelletier/go-toml/v2"
)

// Ecosystem is MCPB. A bundle has no registry: it is a file.
type Ecosystem struct{}

// Name is "mcpb".
func (Ecosystem) Name() string { return "mcpb" }

// Title is "MCPB".
func (Ecosystem) Title() string { return "MCPB" }

// Registry is none: a bundle is handed over as a file.
func (Ecosystem) Registry() (url, noun string) { return "", "bundle file" }

// Normalize is name as written: MANIFEST.md gives a manifest's name as a
// machine-readable name and no rule that folds it.
func (Ecosystem) Normalize(name string) string { return name }

// Pin is NAME@VERSION.
func (Ecosystem) Pin(name, version string) string { return name + "@" + version }

// Unpin reads NAME@VERSION at the last '@': a manifest's version is a
// semantic version, which has none.
func (Ecosystem) Unpin(ref string) (name, version string) {
	if i := strings.LastIndexByte(ref, '@'); i > 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// Exact is a strict semantic version (1.2.3, 1.2.3-rc.1), as a manifest's
// version is one; ranges, tags and a leading v are not.
func (Ecosystem) Exact(spec string) (string, bool) {
	if _, err := semver.StrictNewVersion(spec); err != nil {
		return "", false
	}
	return spec, true
}

// Purl is pkg:generic/NAME@VERSION?type=mcpb. The purl specification has
// no type for bundles; generic with a type qualifier keeps the manifest's
// name and version, and says what they name.
func (Ecosystem) Purl(name, version string) string {
	return "pkg:generic/" + url.PathEscape(name) + "@" + url.PathEscape(version) + "?type=mcpb"
}

// PurlName is name, or namespace/name with a namespace.
func (Ecosystem) PurlName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Key is NAME@VERSION as written.
func (Ecosystem) Key(name, version string) string { return name + "@" + version }

// TreePurls are the package URLs of a bundle's tree (see OSVPackages:
// the npm packages of the lockfile it ships, or the PyPI packages a uv
// bundle's dependencies were resolved into), sorted and without repeats,
// skip left out. A bundle without a lockfile has none.
func (e Ecosystem) TreePurls(lockfile []byte, skip string) []string {
	var out []string
	for _, p := range e.OSVPackages(lockfile) {
		if p.Purl != skip {
			out = append(out, p.Purl)
		}
	}
	return out
}

// OSVPackages are the packages of the bundle's tree, as OSV is asked
// about them (ecosystem.Inventory): the npm packages of the lockfile it
// ships, or the PyPI packages of the pylock.toml a uv bundle's
// dependencies were resolved into. The bundle itself is no package of its
// lockfile, so each is looked up on its own rather than as a dependency
// of a target. In the order of their package URLs, without repeats.
func (Ecosystem) OSVPackages(lockfile []byte) []pkgspec.OSVPackage {
	if len(lockfile) > 0 && lockfile[0] != '{' {
		return pylockPackages(lockfile)
	}
	var lock struct {
		Packages map[string]struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Link    bool   `json:"link"`
		} `json:"packages"`
	}
	if len(lockfile) == 0 || json.Unmarshal(lockfile, &lock) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []pkgspec.OSVPackage
	for path, p := range lock.Packages {
		i := strings.LastIndex(path, "node_modules/")
		if i < 0 || p.Link || p.Version == "" {
			continue
		}
		name := p.Name
		if name == "" {
			name = path[i+len("node_modules/"):]
		}
		if purl := npmPurl(name, p.Version); !seen[purl] {
			seen[purl] = true
			out = append(out, pkgspec.OSVPackage{Ecosystem: "npm", Name: name, Version: p.Version, Purl: purl})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Purl < out[j].Purl })
	return out
}

// npmPurl is the package URL of an npm release, written as the npm
// ecosystem writes it (a scope's @ as %40), which this package does not
// import: ecosystems are siblings.
func npmPurl(name, version string) string {
	if rest, ok := strings.CutPrefix(name, "@"); ok {
		name = "%40" + rest
	}
	return "pkg:npm/" + name + "@" + url.PathEscape(version)
}

// pylockPackages are the PyPI packages with a version of a pylock.toml
// (PEP 751), as OSV is asked about them; nil for a document that is not
// one. The pypi ecosystem reads pylock.toml too, but ecosystems are
// siblings: only name and version are read here.
func pylockPackages(pylock []byte) []pkgspec.OSVPackage {
	var lock struct {
		Packages []struct {
			Name    string `toml:"name"`
			Version string `toml:"version"`
		} `toml:"packages"`
	}
	if toml.Unmarshal(pylock, &lock) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []pkgspec.OSVPackage
	for _, p := range lock.Packages {
		if p.Name == "" || p.Version == "" {
			continue
		}
		name := pkgspec.NormalizePyPIName(p.Name)
		purl := packageurl.NewPackageURL(packageurl.TypePyPi, "", name, p.Version, nil, "").ToString()
		if !seen[purl] {
			seen[purl] = true
			out = append(out, pkgspec.OSVPackage{Ecosystem: "PyPI", Name: name, Version: p.Version, Purl: purl})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Purl < out[j].Purl })
	return out
}
