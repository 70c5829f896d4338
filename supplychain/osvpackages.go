package supplychain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/osv-scalibr/extractor"
	apkmeta "github.com/google/osv-scalibr/extractor/filesystem/os/apk/metadata"
	dpkgmeta "github.com/google/osv-scalibr/extractor/filesystem/os/dpkg/metadata"
	"github.com/google/osv-scalibr/inventory"
	"github.com/google/osv-scalibr/purl"
	"github.com/package-url/packageurl-go"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/pkgspec"
)

// PackageRef is one installed package to ask OSV about, as an image's
// inventory lists it (ecosystem/oci's Package).
type PackageRef struct {
	// Ecosystem is the package's OSV ecosystem: "npm", "PyPI",
	// "Debian:12", "Ubuntu:22.04", "Alpine:v3.20".
	Ecosystem string
	Name      string
	Version   string
	// Purl is the package URL osv-scalibr wrote for it. For an OS package
	// its qualifiers carry what OSV is asked by: a Debian package's source
	// package (source=openssl for libssl3), an Alpine package's origin.
	Purl string
}

// osvPackagesEcosystem is the cache-key ecosystem of a ScanPackages
// question, which may span ecosystems; each key names its own.
const osvPackagesEcosystem = "packages"

// ScanPackages queries OSV for installed packages that come from no
// lockfile (an image's OS and language packages), as Scan does for a
// lockfile's: the same client, cache, offline database, result and
// severity. The packages are put into an osv-scalibr inventory as its
// extractors would have written them, so osv-scalibr's matchers ask OSV
// what osv-scanner asks for an image: a Debian package by its source
// package in "Debian:12", an Alpine package by its origin in
// "Alpine:v3.20". Vulnerabilities name the installed package (libssl3),
// not the source package.
//
// target is the scanned package's purl or NAME@VERSION when it is among
// pkgs (then it is Target and Direct), or "" when none is (an image: no
// package of it is the scanned one, and Direct is false for all, which
// means "in the image"). In offline mode each ecosystem's database must
// be there (osv-scalibr/Debian/all.zip for Debian:12) and FetchedAt is
// the oldest one's time.
//
// No packages is ErrNotApplicable. A package whose ecosystem this cannot
// ask about (rpm, for one) is an error, not left out silently.
func (o *OSV) ScanPackages(ctx context.Context, pkgs []PackageRef, target string) (*evidence.OSVResult, Fetch, error) {
	fetch := Fetch{Endpoint: o.endpoint}
	if len(pkgs) == 0 {
		return nil, fetch, fmt.Errorf("osv: no packages: %w", ErrNotApplicable)
	}
	inv, keys, err := packageRefsInventory(pkgs)
	if err != nil {
		return nil, fetch, err
	}
	var ans *osvAnswer
	source := "api"
	if o.opts.OfflineDB != "" {
		source = "offline-db"
		ans, err = o.matchOfflineEach(ctx, inv)
	} else {
		ans, fetch.Cached, err = o.matchAPI(ctx, inv, osvPackagesEcosystem, keys)
	}
	if err != nil {
		return nil, fetch, err
	}
	fetch.FetchedAt = ans.FetchedAt
	targets := map[string]bool{}
	if target != "" {
		for _, p := range pkgs {
			if p.Purl == target || p.Name+"@"+p.Version == target {
				name := p.Name
				if p.Ecosystem == osvEcosystemPyPI {
					name = pkgspec.NormalizePyPIName(name) // as the inventory and the evidence write it
				}
				targets[name+"@"+p.Version] = true
			}
		}
	}
	res := &evidence.OSVResult{Source: source, Packages: len(keys), Vulnerabilities: make([]evidence.Vulnerability, 0, len(ans.Vulns))}
	for _, v := range ans.Vulns {
		v.Target = targets[v.Package+"@"+v.Version]
		v.Direct = v.Target
		res.Vulnerabilities = append(res.Vulnerabilities, v)
	}
	return res, fetch, nil
}

// packageRefsInventory builds the inventory osv-scalibr's extractors
// would have written for pkgs, and the sorted, distinct keys
// (ECOSYSTEM/NAME@VERSION, and " as NAME" when OSV knows the package by
// another name) of the question.
func packageRefsInventory(pkgs []PackageRef) (*inventory.Inventory, []string, error) {
	inv := &inventory.Inventory{}
	seen := map[string]bool{}
	for _, r := range pkgs {
		if r.Name == "" || r.Version == "" {
			return nil, nil, fmt.Errorf("osv: package %q: a name and a version are needed to ask OSV", cmp.Or(r.Purl, r.Name))
		}
		p, err := packageRefPackage(r)
		if err != nil {
			return nil, nil, err
		}
		// The key names what OSV is asked (openssl for libssl3) as well
		// as the package, so a cached answer is one to this question.
		key := r.Ecosystem + "/" + p.Name + "@" + p.Version
		if m := osvMatchName(p); m != p.Name {
			key += " as " + m
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		inv.Packages = append(inv.Packages, p)
	}
	keys := slices.Sorted(maps.Keys(seen))
	slices.SortFunc(inv.Packages, func(a, b *extractor.Package) int {
		return cmp.Or(strings.Compare(a.Ecosystem().String(), b.Ecosystem().String()), strings.Compare(a.Name+"@"+a.Version, b.Name+"@"+b.Version))
	})
	return inv, keys, nil
}

// packageRefPackage is the package osv-scalibr's extractor would have
// written for r (the dpkg, apk, package.json or Python one). It is
// checked by asking the package its OSV ecosystem back: what OSV is
// asked is then what the inventory said.
func packageRefPackage(r PackageRef) (*extractor.Package, error) {
	base, suffix, _ := strings.Cut(r.Ecosystem, ":")
	q := map[string]string{}
	if r.Purl != "" {
		u, err := purl.FromString(r.Purl)
		if err != nil {
			return nil, fmt.Errorf("osv: package %s@%s: purl %q: %w", r.Name, r.Version, r.Purl, err)
		}
		q = packageurl.Qualifiers(u.Qualifiers).Map()
	}
	p := &extractor.Package{Name: r.Name, Version: r.Version}
	switch base {
	case osvEcosystemNPM:
		p.PURLType = purl.TypeNPM
	case osvEcosystemPyPI:
		p.PURLType = purl.TypePyPi
		p.Name = pkgspec.NormalizePyPIName(r.Name)
	case "Debian", "Ubuntu":
		p.PURLType = purl.TypeDebian
		p.Metadata = &dpkgmeta.Metadata{
			PackageName: r.Name, PackageVersion: r.Version, OSID: strings.ToLower(base), OSVersionID: suffix,
			OSVersionCodename: q[purl.Distro], SourceName: q[purl.Source], SourceVersion: q[purl.SourceVersion],
		}
	case "Alpine":
		p.PURLType = purl.TypeApk
		p.Metadata = &apkmeta.Metadata{
			PackageName: r.Name, OriginName: q[purl.Origin], OSID: "alpine",
			OSVersionID: cmp.Or(q[purl.Distro], strings.TrimPrefix(suffix, "v")),
		}
	default:
		return nil, fmt.Errorf("osv: package %s@%s: ecosystem %q is not one this client asks OSV about (npm, PyPI, Debian, Ubuntu, Alpine)", r.Name, r.Version, r.Ecosystem)
	}
	if got := p.Ecosystem().String(); got != r.Ecosystem {
		return nil, fmt.Errorf("osv: package %s@%s: ecosystem %q would be asked about as %q", r.Name, r.Version, r.Ecosystem, got)
	}
	return p, nil
}

// matchOfflineEach matches each ecosystem's packages against that
// ecosystem's offline database (osv-scalibr/<ecosystem>/all.zip, the
// ecosystem without its release: Debian for Debian:12).
func (o *OSV) matchOfflineEach(ctx context.Context, inv *inventory.Inventory) (*osvAnswer, error) {
	groups := map[string]*inventory.Inventory{}
	for _, p := range inv.Packages {
		eco := string(p.Ecosystem().Ecosystem)
		if groups[eco] == nil {
			groups[eco] = &inventory.Inventory{}
		}
		groups[eco].Packages = append(groups[eco].Packages, p)
	}
	out := &osvAnswer{}
	for _, eco := range slices.Sorted(maps.Keys(groups)) {
		ans, err := o.matchOffline(ctx, groups[eco], eco)
		if err != nil {
			return nil, err
		}
		if out.FetchedAt.IsZero() || ans.FetchedAt.Before(out.FetchedAt) {
			out.FetchedAt = ans.FetchedAt
		}
		out.Vulns = append(out.Vulns, ans.Vulns...)
	}
	slices.SortFunc(out.Vulns, func(a, b evidence.Vulnerability) int {
		return cmp.Or(strings.Compare(a.Package, b.Package), strings.Compare(a.Version, b.Version), strings.Compare(a.ID, b.ID))
	})
	if out.FetchedAt.IsZero() {
		out.FetchedAt = time.Now().UTC()
	}
	return out, nil
}

// osvMatchName is the name OSV knows a package by: a Debian package's
// source package, an Alpine package's origin, else its name (as
// osv-scalibr's matchers ask).
func osvMatchName(p *extractor.Package) string {
	switch m := p.Metadata.(type) {
	case *dpkgmeta.Metadata:
		return cmp.Or(m.SourceName, p.Name)
	case *apkmeta.Metadata:
		return cmp.Or(m.OriginName, p.Name)
	}
	return p.Name
}
