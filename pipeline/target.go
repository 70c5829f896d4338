// Package pipeline runs one target end to end: it resolves the exact
// version, prepares the sandbox, scans, assembles the evidence bundle
// (turning every collector's error into a signal state, never into a lost
// signal), scores it and saves it through a small Saver (Run). A stored
// run's third-party signals are collected again the same way (Recollect,
// RecollectRuns).
package pipeline

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/package-url/packageurl-go"

	"github.com/verifymcp/verifymcp/supplychain"
)

// ErrBadTarget is returned for a target that cannot be parsed.
var ErrBadTarget = errors.New("invalid target")

// pypiLikeRe is a bare Python requirement with a specifier, which is not
// an npm target: NAME==1.2, NAME>=1.
var pypiLikeRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\s*(==|~=|>=|<=|!=)`)

// ErrUnsupported is returned for targets of another track or ecosystem.
var ErrUnsupported = errors.New("unsupported target")

// Target is a parsed scan target.
type Target struct {
	// Raw is the target as written.
	Raw       string
	Ecosystem string
	Name      string
	// Spec is the version, range or dist-tag asked for. For pypi it is
	// what supplychain.(*PyPI).Resolve takes: "" for the latest release,
	// "==VERSION" (or "===VERSION") for an exact one, else a PEP 440
	// specifier set such as ">=1.2,<2".
	Spec string
	// File is the path of a local target: an npm tarball, or a wheel or
	// sdist (Ecosystem "pypi", Name and Spec "==VERSION" from its
	// metadata).
	File string
	// MCPRegistryName is set for a target named by its MCP registry name
	// (registry:NAME[@VERSION], or a bare io.github.owner/server); Spec is
	// then the server.json version asked for ("latest" when none).
	MCPRegistryName string
}

// ParseTarget accepts npm:NAME@VERSION (or a range or dist-tag),
// pkg:npm/NAME@VERSION purls (scope as %40scope or @scope), and the path of
// a local .tgz. A bare NAME@VERSION is taken as npm. PyPI targets are
// pypi:NAME[SPECIFIERS], uvx:NAME[SPECIFIERS|@VERSION],
// pkg:pypi/NAME[@VERSION] and local wheels and sdists (see pypitarget.go);
// a .tar.gz is an sdist when it has PKG-INFO in its top directory, else
// an npm tarball.
func ParseTarget(s string) (Target, error) {
	t := Target{Raw: s}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return t, fmt.Errorf("%w: empty target", ErrBadTarget)
	case strings.HasPrefix(s, "pkg:"): // before the tarball case: a purl may end in .tgz
		return parsePurl(t, s)
	case strings.HasSuffix(s, ".whl"), strings.HasSuffix(s, ".zip"):
		return parseLocalDist(t, s)
	case strings.HasSuffix(s, ".tgz") || strings.HasSuffix(s, ".tar.gz"):
		if _, err := os.Stat(s); err != nil {
			return t, fmt.Errorf("%w: local tarball %s: %v", ErrBadTarget, s, err)
		}
		// .tar.gz is an npm tarball or a Python sdist: by content, an
		// sdist has PKG-INFO in its top directory.
		if strings.HasSuffix(s, ".tar.gz") && isSdist(s) {
			return parseLocalDist(t, s)
		}
		t.Ecosystem, t.File = "npm", s
		return t, nil
	case strings.HasSuffix(s, ".json") || strings.HasSuffix(s, ".jsonc"):
		return t, fmt.Errorf("%w: %s looks like an MCP client config file, not a package: read it with `verifymcp config scan %s` (add --scan-servers to scan its servers)", ErrBadTarget, s, s)
	case strings.HasPrefix(s, "registry:"):
		return parseRegistryName(t, strings.TrimPrefix(s, "registry:"))
	case !strings.HasPrefix(s, "@") && !strings.Contains(s, ":") && strings.Contains(s, "/") &&
		strings.Contains(strings.SplitN(s, "/", 2)[0], "."):
		// A reverse-DNS namespace and a name: no npm name has a slash
		// without an @scope.
		return parseRegistryName(t, s)
	case strings.HasPrefix(s, "pypi:"):
		return parsePyPIRequirement(t, "pypi", strings.TrimPrefix(s, "pypi:"))
	case strings.HasPrefix(s, "uvx:"):
		return parsePyPIRequirement(t, "uvx", strings.TrimPrefix(s, "uvx:"))
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		return t, fmt.Errorf("%w: %s looks like a remote endpoint; remote servers are another track with another rubric, and verifymcp scores packages only", ErrUnsupported, s)
	case strings.HasPrefix(s, "npm:"):
		s = strings.TrimPrefix(s, "npm:")
	case strings.Contains(s, ":"):
		return t, fmt.Errorf("%w: %q: unknown scheme (want npm:NAME@VERSION, pkg:npm/NAME@VERSION, pypi:NAME==VERSION, uvx:NAME, pkg:pypi/NAME@VERSION, a .tgz, a .whl or an sdist)", ErrBadTarget, t.Raw)
	case pypiLikeRe.MatchString(s):
		return t, fmt.Errorf("%w: %q looks like a Python requirement; write pypi:%s (a bare target is npm)", ErrBadTarget, t.Raw, s)
	}
	name, spec := splitNameSpec(s)
	if err := pkgspec.ValidNPMName(name); err != nil {
		return t, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if spec == "" && strings.HasSuffix(s, "@") {
		base := strings.TrimSuffix(strings.TrimSpace(t.Raw), "@")
		return t, fmt.Errorf("%w: %q: empty version after @ (write %s@VERSION, or %s for the latest release)", ErrBadTarget, t.Raw, base, base)
	}
	t.Ecosystem, t.Name, t.Spec = "npm", name, spec
	if t.Spec == "" {
		t.Spec = "latest"
	}
	return t, nil
}

// parseRegistryName reads NAME[@VERSION] of the official MCP registry.
func parseRegistryName(t Target, s string) (Target, error) {
	name, spec := s, "latest"
	if at := strings.LastIndex(s, "@"); at > 0 {
		name, spec = s[:at], s[at+1:]
		if spec == "" {
			base := strings.TrimSuffix(strings.TrimSpace(t.Raw), "@")
			return t, fmt.Errorf("%w: %q: empty version after @ (write %s@VERSION, or %s for the latest release)", ErrBadTarget, t.Raw, base, base)
		}
	}
	if err := supplychain.ValidMCPServerName(name); err != nil {
		return t, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if spec == "" {
		return t, fmt.Errorf("%w: %q: an empty version after @", ErrBadTarget, t.Raw)
	}
	t.Ecosystem, t.MCPRegistryName, t.Spec = "mcp-registry", name, spec
	return t, nil
}

func splitNameSpec(s string) (string, string) {
	at := strings.LastIndex(s, "@")
	if at <= 0 { // no version, or only the scope's @
		return s, ""
	}
	return s[:at], s[at+1:]
}

// parsePurl reads a pkg:npm purl with packageurl-go. A qualifier or subpath
// the scanner cannot honour is refused rather than dropped: a
// repository_url names another registry, a checksum or download_url
// another artefact, and a subpath one file of a package that is scanned
// whole; scanning the default registry's package instead would report on
// something the purl does not name.
func parsePurl(t Target, s string) (Target, error) {
	p, err := packageurl.FromString(s)
	if err != nil {
		return t, fmt.Errorf("%w: purl %q: %v", ErrBadTarget, s, err)
	}
	if p.Type == packageurl.TypePyPi {
		return parsePyPIPurl(t, s, p)
	}
	if p.Type != packageurl.TypeNPM {
		return t, fmt.Errorf("%w: purl type %q (npm and pypi only)", ErrUnsupported, p.Type)
	}
	for _, q := range p.Qualifiers {
		if q.Key == "repository_url" && publicNPMRegistry(q.Value) {
			continue
		}
		return t, fmt.Errorf("%w: purl %q: qualifier %s=%s %s", ErrUnsupported, s, q.Key, q.Value, qualifierRefusal(q.Key))
	}
	if p.Subpath != "" {
		return t, fmt.Errorf("%w: purl %q: subpath %s names a file inside the package; verifymcp scans whole packages (drop the #subpath)", ErrUnsupported, s, p.Subpath)
	}
	name := p.Name
	if p.Namespace != "" {
		name = "@" + strings.TrimPrefix(p.Namespace, "@") + "/" + p.Name
	}
	if err := pkgspec.ValidNPMName(name); err != nil {
		return t, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if path, _, _ := strings.Cut(s, "?"); p.Version == "" && strings.HasSuffix(strings.SplitN(path, "#", 2)[0], "@") {
		return t, fmt.Errorf("%w: purl %q: empty version after @ (drop the @ for the latest release)", ErrBadTarget, s)
	}
	t.Ecosystem, t.Name, t.Spec = "npm", name, p.Version
	if t.Spec == "" {
		t.Spec = "latest"
	}
	return t, nil
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

// tarballInfo reads package.json from an npm tarball and computes the
// tarball's sha512 integrity.
func tarballInfo(path string) (name, version, integrity string, data []byte, err error) {
	tb, err := readTarball(path)
	return tb.name, tb.version, tb.integrity, tb.data, err
}

// localTarball is a local npm tarball: its identity, bytes and manifest.
type localTarball struct {
	name, version, integrity string
	data, manifest           []byte
}

// readTarball reads a local npm tarball's package.json.
func readTarball(path string) (tb localTarball, err error) {
	fail := func(err error) (localTarball, error) { return localTarball{}, err }
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrBadTarget, err))
	}
	sum := sha512.Sum512(data)
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		return fail(fmt.Errorf("%w: %s is not a gzip tarball: %v", ErrBadTarget, path, err))
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fail(fmt.Errorf("%w: %s has no package.json at its top", ErrBadTarget, path))
		}
		if err != nil {
			return fail(fmt.Errorf("%w: %s: %v", ErrBadTarget, path, err))
		}
		// npm tarballs keep the package in one top directory, usually package/.
		parts := strings.Split(strings.TrimPrefix(h.Name, "./"), "/")
		if len(parts) != 2 || parts[1] != "package.json" {
			continue
		}
		var pj struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		manifest, err := io.ReadAll(io.LimitReader(tr, 4<<20))
		if err == nil {
			err = json.Unmarshal(manifest, &pj)
		}
		if err != nil {
			return fail(fmt.Errorf("%w: %s: package.json: %v", ErrBadTarget, path, err))
		}
		if err := pkgspec.ValidNPMName(pj.Name); err != nil || pj.Version == "" {
			return fail(fmt.Errorf("%w: %s: package.json lacks a valid name and version", ErrBadTarget, path))
		}
		return localTarball{name: pj.Name, version: pj.Version, integrity: integrity, data: data, manifest: manifest}, nil
	}
}

// ParseEnv reads NAME=VALUE placeholders (--env) into a map. An error
// never echoes a value: it may be a secret.
func ParseEnv(kvs []string) (map[string]string, error) {
	env := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return nil, fmt.Errorf("--env wants NAME=VALUE (got an entry named %q)", k)
		}
		env[k] = v
	}
	return env, nil
}
