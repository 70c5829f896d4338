// Package supplychain gathers what third parties know about a package:
// registry metadata now; OSV, Socket and GitHub later. Every client takes
// its endpoint (and credential) as a value, so operators can point it at a
// mirror and tests at a local server speaking the same protocol.
package supplychain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/pkgspec"

	"deps.dev/util/semver"
)

// Sentinel errors of registry resolution; the CLI maps them to exit codes.
var (
	// ErrBadName: the package name is not a valid name (pkgspec's error).
	ErrBadName = pkgspec.ErrBadName
	// ErrPackageNotFound: the registry does not know the package.
	ErrPackageNotFound = errors.New("package not found")
	// ErrVersionNotFound: no published version matches what was asked for.
	ErrVersionNotFound = errors.New("version not found")
	// ErrRegistryUnreachable: the registry did not answer (network, 5xx, timeout).
	ErrRegistryUnreachable = errors.New("registry unreachable")
)

// DefaultNPMRegistry is the public npm registry.
const DefaultNPMRegistry = "https://registry.npmjs.org/"

// NPM is a client for an npm registry.
type NPM struct {
	hc       *http.Client
	registry string
	retries  int
	// memo remembers a registry found unreachable (thirdparty.Unreachable when nil).
	memo *thirdparty.Reachability
}

// NewNPM returns a client for the registry at endpoint (DefaultNPMRegistry
// when empty).
func NewNPM(hc *http.Client, endpoint string) *NPM {
	if endpoint == "" {
		endpoint = DefaultNPMRegistry
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/"
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &NPM{hc: hc, registry: endpoint, retries: 3}
}

// WithReachability makes the client remember an unreachable registry in m
// instead of the process's memo, thirdparty.Unreachable.
func (n *NPM) WithReachability(m *thirdparty.Reachability) *NPM {
	n.memo = m
	return n
}

func (n *NPM) reach() *thirdparty.Reachability {
	if n.memo != nil {
		return n.memo
	}
	return thirdparty.Unreachable
}

// Registry returns the registry URL.
func (n *NPM) Registry() string { return n.registry }

// Version is one resolved, exact version and its registry metadata.
type Version struct {
	Name      string
	Version   string
	Requested string // the spec resolved: a version, a range or a dist-tag
	Integrity string
	Tarball   string
	Published *time.Time
	// Deprecated is the deprecation message, when the version is deprecated.
	Deprecated string
	// Manifest is the version document as the registry served it.
	Manifest json.RawMessage

	// history is what NPMMetadata needs from the rest of the packument, so
	// that metadata costs no second request; nil when the Version was not
	// made by Resolve.
	history *npmHistory
}

// packument is the registry's document for a whole package. Time and
// Maintainers stay raw: "time" also holds "created", "modified" and, for
// an unpublished package, an "unpublished" object, and old documents
// give maintainers as "name <email>" strings; one odd entry must not make
// the whole document unreadable.
type packument struct {
	Name        string                     `json:"name"`
	DistTags    map[string]string          `json:"dist-tags"`
	Versions    map[string]json.RawMessage `json:"versions"`
	Time        map[string]json.RawMessage `json:"time"`
	Maintainers json.RawMessage            `json:"maintainers"`
}

// published returns the publish time of key in the document's time map.
func (p *packument) published(key string) (time.Time, bool) {
	var s string
	if err := json.Unmarshal(p.Time[key], &s); err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// npmHistory is the part of a packument that describes the package rather
// than the exact version. Resolve keeps this summary instead of the whole
// document: the other versions' manifests can run to megabytes, and a
// Version lives as long as the scan.
type npmHistory struct {
	// published holds the publish time of every version still listed in
	// "versions"; versions without a readable time are left out.
	published map[string]time.Time
	// count is the number of versions listed.
	count int
	// first is the earliest time in the time map other than "modified":
	// "created" when the registry gives it, and it includes versions
	// since unpublished, which were published all the same.
	first *time.Time
	// maintainers is the top-level maintainers field, as served.
	maintainers json.RawMessage
	// signed is true when any version's dist carries the registry's
	// signatures. The public registry signs every version; a document
	// without any comes from a mirror that strips dist metadata, and so
	// says nothing about provenance attestations either.
	signed bool
}

func (p *packument) history() *npmHistory {
	h := &npmHistory{published: make(map[string]time.Time, len(p.Versions)), count: len(p.Versions), maintainers: p.Maintainers}
	for v, raw := range p.Versions {
		if t, ok := p.published(v); ok {
			h.published[v] = t
		}
		if !h.signed && bytes.Contains(raw, []byte(`"signatures"`)) {
			h.signed = true
		}
	}
	for k := range p.Time {
		if k == "modified" {
			continue
		}
		if t, ok := p.published(k); ok && (h.first == nil || t.Before(*h.first)) {
			h.first = &t
		}
	}
	return h
}

type manifest struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Deprecated any    `json:"deprecated"`
	Dist       struct {
		Integrity string `json:"integrity"`
		Shasum    string `json:"shasum"`
		Tarball   string `json:"tarball"`
	} `json:"dist"`
}

// Resolve finds the exact version of name that spec selects, as npm
// install does (npm-pick-manifest): a published version, a dist-tag
// ("latest") or a range in npm's grammar. For a range it takes the
// version the latest tag points to when that satisfies the range (for "*"
// whatever it points to) and is not deprecated, and otherwise the highest
// satisfying version, preferring versions that are not deprecated. A
// prerelease satisfies a range only when the range names a prerelease of
// the same major.minor.patch. npm's preference for versions whose engines
// fit the running Node.js is left out: the sandbox's Node.js, not the
// host's, would decide it.
func (n *NPM) Resolve(ctx context.Context, name, spec string) (*Version, error) {
	if err := pkgspec.ValidNPMName(name); err != nil {
		return nil, err
	}
	if spec == "" {
		spec = "latest"
	}
	p, err := n.packument(ctx, name)
	if err != nil {
		return nil, err
	}
	return p.resolve(name, spec)
}

// resolve picks the exact version spec selects from the document and
// builds its Version, with the history NPMMetadata needs.
func (p *packument) resolve(name, spec string) (*Version, error) {
	exact, err := pick(p, spec)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", name, spec, err)
	}
	raw := p.Versions[exact]
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: version document of %s@%s: %v", ErrRegistryUnreachable, name, exact, err)
	}
	v := &Version{Name: name, Version: exact, Requested: spec, Integrity: m.Dist.Integrity, Tarball: m.Dist.Tarball, Manifest: raw, history: p.history()}
	if v.Integrity == "" && m.Dist.Shasum != "" {
		// Very old packages have only a SHA-1; npm accepts it, we record it.
		v.Integrity = "sha1-" + m.Dist.Shasum
	}
	if s, ok := m.Deprecated.(string); ok {
		v.Deprecated = s
	}
	if t, ok := v.history.published[exact]; ok {
		v.Published = &t
	}
	return v, nil
}

// npmFullVersion tells a full version ("1.2.3", "v1.2.3", "=1.2.3-rc.1"),
// which npm looks up as written, from a partial one ("1.2"), which is a
// range.
var npmFullVersion = regexp.MustCompile(`^[=v\s]*\d+\.\d+\.\d+`)

// pick returns the published version spec selects (see Resolve). Ranges
// are matched by deps.dev's semver package in its npm mode, which agrees
// with node-semver on carets, tildes, x-ranges, hyphen ranges, ||, and
// prereleases (npm_test.go has the table checked against node-semver).
func pick(p *packument, spec string) (string, error) {
	if _, ok := p.Versions[spec]; ok {
		return spec, nil
	}
	if v, ok := p.DistTags[spec]; ok {
		if _, ok := p.Versions[v]; ok {
			return v, nil
		}
	}
	c, err := semver.NPM.ParseConstraint(spec)
	if err != nil {
		return "", fmt.Errorf("%w: %q is neither a published version, a dist-tag nor a semver range", ErrVersionNotFound, spec)
	}
	if c.IsSimple() && npmFullVersion.MatchString(spec) {
		// npm takes an exact version as that version, cleaned of a
		// leading "v" or "=" and of build metadata, never as a range.
		if v, err := semver.NPM.Parse(strings.TrimLeft(strings.TrimSpace(spec), "=v")); err == nil {
			if _, ok := p.Versions[v.Canon(false)]; ok {
				return v.Canon(false), nil
			}
		}
		return "", fmt.Errorf("%w: %s is not published", ErrVersionNotFound, spec)
	}
	if latest, ok := p.DistTags["latest"]; ok {
		if _, ok := p.Versions[latest]; ok && (spec == "*" || c.Match(latest)) && !p.deprecated(latest) {
			return latest, nil
		}
	}
	type candidate struct {
		raw string
		v   *semver.Version
	}
	var match []candidate
	for k := range p.Versions {
		if v, err := semver.NPM.Parse(k); err == nil && c.MatchVersion(v) {
			match = append(match, candidate{k, v})
		}
	}
	if len(match) == 0 {
		return "", fmt.Errorf("%w: no published version satisfies %q", ErrVersionNotFound, spec)
	}
	// Highest first; versions equal but for build metadata in text order,
	// so that the answer does not depend on map order.
	slices.SortFunc(match, func(a, b candidate) int {
		if d := b.v.Compare(a.v); d != 0 {
			return d
		}
		return strings.Compare(a.raw, b.raw)
	})
	for _, m := range match {
		if !p.deprecated(m.raw) {
			return m.raw, nil
		}
	}
	return match[0].raw, nil
}

// deprecated reports whether the document of version v is deprecated.
func (p *packument) deprecated(v string) bool {
	var m struct {
		Deprecated json.RawMessage `json:"deprecated"`
	}
	return json.Unmarshal(p.Versions[v], &m) == nil && npmDeprecated(m.Deprecated) != ""
}

func (n *NPM) packument(ctx context.Context, name string) (*packument, error) {
	u := n.registry + url.PathEscape(name)
	var lastErr error
	for attempt := 0; attempt <= n.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(1<<(attempt-1)) * 500 * time.Millisecond):
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: %v", ErrRegistryUnreachable, ctx.Err())
			}
		}
		p, retry, err := n.get(ctx, u, name)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !retry {
			return nil, err
		}
	}
	return nil, lastErr
}

func (n *NPM) get(ctx context.Context, u, name string) (*packument, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrRegistryUnreachable, err)
	}
	req.Header.Set("Accept", "application/json")
	// A registry whose name does not resolve or that refuses is not
	// retried, and is remembered (see thirdparty.Reachability).
	if err := n.reach().Check(ctx, req.URL); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrRegistryUnreachable, err)
	}
	resp, err := n.hc.Do(req)
	var ue *thirdparty.UnreachableError
	if errors.As(n.reach().Observe(ctx, req.URL, err), &ue) {
		return nil, false, fmt.Errorf("%w: %w", ErrRegistryUnreachable, ue)
	}
	if err != nil {
		return nil, ctx.Err() == nil, fmt.Errorf("%w: GET %s: %v", ErrRegistryUnreachable, u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, fmt.Errorf("%w: %s is not in the registry %s", ErrPackageNotFound, name, n.registry)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, true, fmt.Errorf("%w: GET %s: %s", ErrRegistryUnreachable, u, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, false, fmt.Errorf("%w: GET %s: %s", ErrRegistryUnreachable, u, resp.Status)
	}
	var p packument
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&p); err != nil {
		return nil, true, fmt.Errorf("%w: decode %s: %v", ErrRegistryUnreachable, u, err)
	}
	if len(p.Versions) == 0 {
		return nil, false, fmt.Errorf("%w: %s has no published versions", ErrVersionNotFound, name)
	}
	return &p, false, nil
}
