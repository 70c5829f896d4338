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
	"os"
	"strings"

	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/verifymcp/verifymcp/supplychain"
)

// ErrBadTarget is returned for a target that cannot be parsed
// (pkgspec's: the target grammar is pkgspec's).
var ErrBadTarget = pkgspec.ErrBadTarget

// ErrUnsupported is returned for targets of another track or ecosystem.
var ErrUnsupported = pkgspec.ErrUnsupported

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
// an npm tarball. The grammar of the package forms is pkgspec's
// (pkgspec.ParseTarget); local files and MCP registry names are read
// here.
func ParseTarget(s string) (Target, error) {
	t := Target{Raw: s}
	s = strings.TrimSpace(s)
	if st, ok, err := shippedTarget(t, s); ok {
		return st, err
	}
	switch {
	case strings.HasPrefix(s, "pkg:"): // before the tarball case: a purl may end in .tgz
		return t.withPackage(pkgspec.ParsePurl(s))
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
	}
	// npm:, pypi:, uvx:, a bare npm name, and the refusals of the rest
	// (an empty target among them).
	return t.withPackage(pkgspec.ParseTarget(t.Raw))
}

// withPackage is t with the package pkgspec read, or t and err.
func (t Target) withPackage(p pkgspec.Package, err error) (Target, error) {
	if err != nil {
		return t, err
	}
	t.Ecosystem, t.Name, t.Spec = p.Ecosystem, p.Name, p.Spec
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
