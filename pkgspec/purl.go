package pkgspec

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/package-url/packageurl-go"
)

// SplitPurl reads a package URL's type (lower case), name (its namespace
// and name, unescaped) and version (unescaped), qualifiers and subpath
// dropped; ok is false for a string that is not a package URL.
func SplitPurl(p string) (typ, name, version string, ok bool) {
	rest, ok := strings.CutPrefix(p, "pkg:")
	if !ok {
		return "", "", "", false
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	typ, name, _ = strings.Cut(rest, "/")
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		name, version = name[:i], name[i+1:]
	}
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	if v, err := url.PathUnescape(version); err == nil {
		version = v
	}
	return strings.ToLower(typ), name, version, true
}

// CutPurlVersion splits the path of a package URL after its type,
// NAME@VERSION (the namespace in NAME), at its last '@', and unescapes
// both: found is false when there is no '@' after a non-empty name; err
// is a bad escape, the name's first.
func CutPurlVersion(path string) (name, version string, found bool, err error) {
	at := strings.LastIndex(path, "@")
	if at <= 0 {
		return "", "", false, nil
	}
	if name, err = url.PathUnescape(path[:at]); err != nil {
		return "", "", true, err
	}
	if version, err = url.PathUnescape(path[at+1:]); err != nil {
		return "", "", true, err
	}
	return name, version, true, nil
}

// ParsePurl reads a pkg:npm or pkg:pypi package URL (packageurl-go). A
// qualifier or subpath the scanner cannot honour is refused
// (ErrUnsupported) rather than dropped: a repository_url names another
// registry, a checksum or download_url another artefact, and a subpath
// one file of a package that is scanned whole; scanning the default
// registry's package instead would report on something the purl does not
// name. A repository_url naming the public registry or index is what a
// purl without it names, and is honoured.
func ParsePurl(s string) (Package, error) {
	p, err := packageurl.FromString(s)
	if err != nil {
		return Package{}, fmt.Errorf("%w: purl %q: %v", ErrBadTarget, s, err)
	}
	if p.Type == packageurl.TypePyPi {
		return parsePyPIPurl(s, p)
	}
	if p.Type != packageurl.TypeNPM {
		return Package{}, fmt.Errorf("%w: purl type %q (npm and pypi only)", ErrUnsupported, p.Type)
	}
	for _, q := range p.Qualifiers {
		if q.Key == "repository_url" && publicNPMRegistry(q.Value) {
			continue
		}
		return Package{}, fmt.Errorf("%w: purl %q: qualifier %s=%s %s", ErrUnsupported, s, q.Key, q.Value, qualifierRefusal(q.Key))
	}
	if p.Subpath != "" {
		return Package{}, fmt.Errorf("%w: purl %q: subpath %s names a file inside the package; verifymcp scans whole packages (drop the #subpath)", ErrUnsupported, s, p.Subpath)
	}
	name := p.Name
	if p.Namespace != "" {
		name = "@" + strings.TrimPrefix(p.Namespace, "@") + "/" + p.Name
	}
	if err := ValidNPMName(name); err != nil {
		return Package{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if path, _, _ := strings.Cut(s, "?"); p.Version == "" && strings.HasSuffix(strings.SplitN(path, "#", 2)[0], "@") {
		return Package{}, fmt.Errorf("%w: purl %q: empty version after @ (drop the @ for the latest release)", ErrBadTarget, s)
	}
	spec := p.Version
	if spec == "" {
		spec = "latest"
	}
	return Package{Ecosystem: "npm", Name: name, Spec: spec}, nil
}

// parsePyPIPurl reads a pkg:pypi purl (packageurl-go has normalised the
// name: lower case, '_' as '-').
func parsePyPIPurl(s string, p packageurl.PackageURL) (Package, error) {
	for _, q := range p.Qualifiers {
		if q.Key == "repository_url" && publicPyPIIndex(q.Value) {
			continue
		}
		why := qualifierRefusal(q.Key)
		switch q.Key {
		case "repository_url":
			why = "names another index; scan it with --index-url and a purl without the qualifier"
		case "file_name":
			why = "names one distribution file; verifymcp installs the release from the index (or scan the local wheel or sdist)"
		case "download_url":
			why = "names a file outside the index; download it and scan the local wheel or sdist"
		}
		return Package{}, fmt.Errorf("%w: purl %q: qualifier %s=%s %s", ErrUnsupported, s, q.Key, q.Value, why)
	}
	if p.Subpath != "" {
		return Package{}, fmt.Errorf("%w: purl %q: subpath %s names a file inside the package; verifymcp scans whole packages (drop the #subpath)", ErrUnsupported, s, p.Subpath)
	}
	if p.Namespace != "" {
		return Package{}, fmt.Errorf("%w: purl %q: a pypi purl has no namespace (%s/)", ErrBadTarget, s, p.Namespace)
	}
	if err := ValidPyPIName(p.Name); err != nil {
		return Package{}, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	spec := ""
	if p.Version != "" {
		if strings.ContainsAny(p.Version, " \t=<>~,*") {
			return Package{}, fmt.Errorf("%w: purl %q: version %q is not one version (a purl names an exact release)", ErrBadTarget, s, p.Version)
		}
		spec = "==" + p.Version
		if err := checkPyPISpec(p.Name, spec); err != nil {
			return Package{}, fmt.Errorf("%w: purl %q: %v", ErrBadTarget, s, err)
		}
	}
	return Package{Ecosystem: "pypi", Name: p.Name, Spec: spec}, nil
}

// publicNPMRegistry reports whether a purl's repository_url names the
// public npm registry, the purl spec's default for npm, which is what a purl
// without the qualifier names too.
func publicNPMRegistry(v string) bool {
	if !strings.Contains(v, "://") {
		v = "https://" + v
	}
	u, err := url.Parse(v)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Host, "registry.npmjs.org") &&
		(u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && u.User == nil
}

// publicPyPIIndex reports whether a purl's repository_url names the
// public index, the purl spec's default for pypi: https://pypi.org, its
// simple API (/simple) or its JSON API (/pypi).
func publicPyPIIndex(v string) bool {
	if !strings.Contains(v, "://") {
		v = "https://" + v
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return false
	}
	host := strings.ToLower(u.Host)
	switch strings.TrimSuffix(u.Path, "/") {
	case "", "/simple", "/pypi":
	default:
		return false
	}
	return host == "pypi.org" || host == "www.pypi.org" || host == "pypi.python.org"
}

// qualifierRefusal says why the scanner cannot honour a purl qualifier.
func qualifierRefusal(key string) string {
	switch key {
	case "repository_url":
		return "names another registry; scan it with --registry and a purl without the qualifier"
	case "checksum":
		return "is not verified by verifymcp; scan the exact version and compare the report's integrity"
	case "download_url":
		return "names a tarball outside the registry; download it and scan the local .tgz"
	default:
		return "is not one verifymcp can honour; drop it to scan the registry's package"
	}
}

// OSVPackage is one package as OSV is asked about it.
type OSVPackage struct {
	// Ecosystem is OSV's name of the package's ecosystem ("Debian:12",
	// "Alpine:v3.20", "npm", "PyPI").
	Ecosystem string
	Name      string
	Version   string
	Purl      string
}
