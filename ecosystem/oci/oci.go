// Package oci is the container image ecosystem: the MCP registry's package
// type "oci", and Docker's mcp/<name> images. It holds the parts of
// scanning an image that need no engine: the names, pins and package URLs
// of images, the grammar of image targets, an OCI image layout turned
// into the archive Docker's image load reads, an image's configuration,
// and the packages installed in an image's filesystem.
//
// Pulling, loading and running images is the integrator's (the Docker
// engine's) work, not this package's.
package oci

import (
	"github.com/verifymcp/verifymcp/pkgspec"

	"net/url"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
)

// Ecosystem is container images.
type Ecosystem struct{}

// Name is "oci", the MCP registry's package type.
func (Ecosystem) Name() string { return "oci" }

// Title is "OCI image".
func (Ecosystem) Title() string { return "OCI image" }

// Registry has no one URL: an image's reference names its registry.
func (Ecosystem) Registry() (url, noun string) { return "", "container registry" }

// Normalize is an image reference's repository in the form the engine
// compares names: docker.io/library/x for "x", docker.io/acme/x for
// "acme/x", a tag or digest left off. A name that is not a valid
// reference is returned trimmed, as written.
func (Ecosystem) Normalize(name string) string {
	name = strings.TrimSpace(name)
	n, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return name
	}
	return n.Name()
}

// Pin is NAME@DIGEST for a version that is a digest ("sha256:<hex>"), the
// only exact pin of an image. A version that is not a digest is taken as
// a tag and written NAME:TAG, which is not exact: a tag can be moved.
func (Ecosystem) Pin(name, version string) string {
	if isDigest(version) {
		return name + "@" + version
	}
	return name + ":" + version
}

// Unpin reads what Pin writes: the digest after '@', else the tag after
// the last ':' that follows the last '/' (so a registry's port is not
// taken for a tag); version is "" when ref names neither.
func (Ecosystem) Unpin(ref string) (name, version string) {
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// Exact is the digest a spec names ("sha256:<hex>", or "@sha256:<hex>"),
// lower-cased; a tag is never exact.
func (Ecosystem) Exact(spec string) (string, bool) {
	spec = strings.TrimPrefix(strings.TrimSpace(spec), "@")
	if !isDigest(spec) {
		return "", false
	}
	return spec, true
}

// Purl is the package URL of an image as the purl specification's "oci"
// type writes it (package-url/purl-spec, types/oci-definition.json): the
// name is the last element of the
// repository's path, lower-cased, with no namespace; the version is the
// manifest digest with its ':' percent-encoded; the qualifier
// repository_url is the repository without a scheme. For example
// pkg:oci/debian@sha256%3A244f...?repository_url=docker.io/library/debian.
// A version that is not a digest has no place as a purl version: it is
// written as the qualifier tag instead, and the purl has no version.
func (Ecosystem) Purl(name, version string) string {
	repo := Ecosystem{}.Normalize(name)
	last := strings.ToLower(repo[strings.LastIndexByte(repo, '/')+1:])
	q := "?repository_url=" + repo
	if !isDigest(version) {
		if version != "" {
			q += "&tag=" + url.QueryEscape(version)
		}
		return "pkg:oci/" + last + q
	}
	return "pkg:oci/" + last + "@" + strings.Replace(version, ":", "%3A", 1) + q
}

// PurlName is the name an oci package URL carries: the last element of
// the repository's path (the repository itself is in the repository_url
// qualifier, which this does not see). An oci purl has no namespace; one
// given is joined in front.
func (Ecosystem) PurlName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Key is the normalised repository @ the lower-cased digest (or : the
// tag, when version is not a digest).
func (e Ecosystem) Key(name, version string) string {
	if v := strings.ToLower(version); isDigest(v) {
		return e.Normalize(name) + "@" + v
	}
	return e.Pin(e.Normalize(name), version)
}

// TreePurls are the package URLs of the packages installed in an image,
// read from the inventory Contents.Lockfile writes, sorted and without
// repeats, skip left out. Anything else gives none.
func (Ecosystem) TreePurls(lockfile []byte, skip string) []string {
	c, err := ReadLockfile(lockfile)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(c.Packages))
	for _, p := range c.Packages {
		if p.Purl != "" && p.Purl != skip {
			out = append(out, p.Purl)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// OSVPackages are the packages of an image's inventory (the lockfile
// Contents.Lockfile writes) as OSV is asked about them, in the inventory's
// order: those of an unknown distribution ("" ecosystem) are left out.
func (Ecosystem) OSVPackages(lockfile []byte) []pkgspec.OSVPackage {
	c, err := ReadLockfile(lockfile)
	if err != nil {
		return nil
	}
	out := make([]pkgspec.OSVPackage, 0, len(c.Packages))
	for _, p := range c.Packages {
		if p.Ecosystem != "" {
			out = append(out, pkgspec.OSVPackage{Ecosystem: p.Ecosystem, Name: p.Name, Version: p.Version, Purl: p.Purl})
		}
	}
	return out
}

// isDigest reports whether s is a valid digest of a registered algorithm
// (sha256, or sha384 and sha512, which the OCI specification allows).
func isDigest(s string) bool {
	d, err := digest.Parse(s)
	return err == nil && d.Validate() == nil
}
