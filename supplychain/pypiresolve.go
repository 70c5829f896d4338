package supplychain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/pkgspec"
)

// ErrBadRequirement: the version specifier of a requirement is not valid
// PEP 440 (the name is ErrBadName). It is pkgspec's, so that errors.Is
// holds whichever package a caller names.
var ErrBadRequirement = pkgspec.ErrBadRequirement

// DefaultPyPIIndex is the public Python Package Index.
const DefaultPyPIIndex = "https://pypi.org"

// PyPI is a client for the JSON API of a Python package index: PyPI
// itself, or a mirror that serves the same paths (/pypi/<name>/json and
// /pypi/<name>/<version>/json) under a base URL, as devpi and
// Artifactory do.
type PyPI struct{ endpoint }

// NewPyPI returns a client for the index at indexURL (DefaultPyPIIndex
// when empty), without the /pypi path. A nil hc gets a client with a 30
// second timeout.
func NewPyPI(hc *http.Client, indexURL string) *PyPI {
	return &PyPI{newEndpoint(hc, indexURL, DefaultPyPIIndex)}
}

// WithRetry sets how network errors, 429 and 5xx are retried (by default
// four attempts, half a second apart and doubling, as the npm client).
func (p *PyPI) WithRetry(rt thirdparty.Retry) *PyPI {
	p.retry = rt
	return p
}

// Index returns the index's base URL.
func (p *PyPI) Index() string { return p.base }

// PyPIFile is one distribution file of a release.
type PyPIFile struct {
	Filename string
	// URL is absolute: a relative URL in the document is resolved against
	// the document's own.
	URL            string
	SHA256         string
	PackageType    string // bdist_wheel or sdist (older: bdist_egg, ...)
	RequiresPython string
	Size           int64
	Yanked         bool
	YankedReason   string
	Uploaded       *time.Time
}

// PyPIRelease is one resolved, exact release and its files.
type PyPIRelease struct {
	// Name is the normalised project name (PEP 503).
	Name string
	// Version is the release as the index spells it.
	Version string
	// Requested is the specifier resolved, as asked ("" for the latest).
	Requested string
	// Yanked is true when every file of the release is yanked (PEP 592);
	// only an exact pin resolves to a yanked release.
	Yanked       bool
	YankedReason string
	Files        []PyPIFile
	// Published is the earliest upload of the release's files.
	Published *time.Time
	// Document is the JSON API document that describes the release, for
	// PyPIMetadata: the project document (with the release history) when
	// the release is the one its "info" describes, otherwise the release
	// document. An index that does not serve release documents leaves the
	// project document here, and PyPIMetadata then says it describes
	// another version.
	Document json.RawMessage
}

// pypiProjectDoc is what Resolve reads of a project document.
type pypiProjectDoc struct {
	Info *struct {
		Version string `json:"version"`
	} `json:"info"`
	Releases map[string][]pypiResolveFile `json:"releases"`
}

type pypiResolveFile struct {
	Filename string `json:"filename"`
	URL      string `json:"url"`
	Digests  struct {
		SHA256 string `json:"sha256"`
	} `json:"digests"`
	PackageType    string          `json:"packagetype"`
	RequiresPython json.RawMessage `json:"requires_python"`
	Size           int64           `json:"size"`
	UploadTime     string          `json:"upload_time_iso_8601"`
	UploadTimeOld  string          `json:"upload_time"`
	Yanked         bool            `json:"yanked"`
	YankedReason   json.RawMessage `json:"yanked_reason"`
}

// Resolve finds the exact release of the project name that spec selects,
// as pip and uv do:
//
//   - "" or "latest": the newest release that is neither yanked nor a
//     pre-release (or development release); a pre-release only when no
//     final release qualifies.
//   - an exact version ("1.2", "==1.2", "===1.2"): that release, even when
//     it is yanked (PEP 592 lets an installer use a yanked release that
//     is pinned exactly), with Yanked set; a non-yanked release equal to
//     it (1.2 and 1.2.0, 1.2+local) is preferred.
//   - a specifier set (">=1.2,<2", "~=1.4", "!=1.5", "==1.*"): the newest
//     release matching every clause under PEP 440's rules (ordering with
//     epochs, pre-, post-, development and local versions; the exclusive
//     < and > do not admit pre-releases or post-releases of the bound),
//     never a yanked one. Pre-releases are admitted when a clause names
//     one (">=2.0b1"), or, as pip does, when no final release matches.
//
// A release with no files, or whose version is not valid PEP 440, is
// never a candidate. A malformed name is ErrBadName and a malformed
// specifier ErrBadRequirement, before any request; an unknown project is
// ErrPackageNotFound, no matching release ErrVersionNotFound (naming the
// newest releases), and an index that does not answer after the retries
// ErrRegistryUnreachable (wrapping thirdparty.ErrUnavailable too).
func (p *PyPI) Resolve(ctx context.Context, name, spec string) (*PyPIRelease, error) {
	if err := pkgspec.ValidPyPIName(name); err != nil {
		return nil, err
	}
	norm := pkgspec.NormalizePyPIName(name)
	spec = strings.TrimSpace(spec)
	set, err := pkgspec.ParseVersionSpec(spec)
	req := pypiRequirement{set}
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", norm, spec, err)
	}
	docURL := p.base + "/pypi/" + url.PathEscape(norm) + "/json"
	raw, status, err := p.get(ctx, docURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", norm, err)
	}
	if status == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %s is not on the index %s", ErrPackageNotFound, norm, p.base)
	}
	var doc pypiProjectDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: decode %s: %v", ErrRegistryUnreachable, docURL, err)
	}
	if doc.Releases == nil {
		return nil, fmt.Errorf("%w: the project document of %s has no release list (%s)", ErrRegistryUnreachable, norm, docURL)
	}
	cands := pypiCandidates(doc.Releases)
	if len(cands) == 0 {
		return nil, fmt.Errorf("%w: %s has no release with files", ErrVersionNotFound, norm)
	}
	chosen, err := req.pick(cands)
	if err != nil {
		if req.Exact() {
			for key, files := range doc.Releases {
				if v, perr := parsePEP440(key); perr == nil && len(files) == 0 && req.matches(pypiCandidate{key: key, v: v}) {
					err = fmt.Errorf("%w: release %s has no files (registered, never installable)", ErrVersionNotFound, key)
				}
			}
		}
		return nil, fmt.Errorf("%s %s: %w", norm, pypiSpecLabel(spec), err)
	}
	rel := &PyPIRelease{Name: norm, Version: chosen.key, Requested: spec, Yanked: chosen.yanked}
	base, _ := url.Parse(docURL)
	for _, f := range doc.Releases[chosen.key] {
		pf := f.file(base)
		if rel.YankedReason == "" && chosen.yanked {
			rel.YankedReason = pf.YankedReason
		}
		if pf.Uploaded != nil && (rel.Published == nil || pf.Uploaded.Before(*rel.Published)) {
			t := *pf.Uploaded
			rel.Published = &t
		}
		rel.Files = append(rel.Files, pf)
	}
	rel.Document = raw
	if doc.Info == nil || doc.Info.Version != chosen.key {
		relURL := p.base + "/pypi/" + url.PathEscape(norm) + "/" + url.PathEscape(chosen.key) + "/json"
		rraw, status, err := p.get(ctx, relURL)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", norm, chosen.key, err)
		}
		if status == http.StatusOK && json.Valid(rraw) {
			rel.Document = rraw
		}
	}
	return rel, nil
}

func pypiSpecLabel(spec string) string {
	if spec == "" {
		return "(latest)"
	}
	return spec
}

// get fetches u with retries. A 404 is returned as a status, not an
// error; any other answer but 200 is ErrRegistryUnreachable.
func (p *PyPI) get(ctx context.Context, u string) ([]byte, int, error) {
	resp, err := p.retry.Do(ctx, p.hc, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		return req, nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrRegistryUnreachable, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, resp.StatusCode, nil
	default:
		return nil, resp.StatusCode, fmt.Errorf("%w: GET %s: %s", ErrRegistryUnreachable, thirdparty.RedactURL(u), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: GET %s: %v", ErrRegistryUnreachable, thirdparty.RedactURL(u), err)
	}
	return bytes.TrimSpace(data), resp.StatusCode, nil
}

func (f pypiResolveFile) file(base *url.URL) PyPIFile {
	out := PyPIFile{
		Filename: f.Filename, URL: f.URL, SHA256: strings.ToLower(f.Digests.SHA256), PackageType: f.PackageType,
		RequiresPython: metaString(f.RequiresPython), Size: f.Size, Yanked: f.Yanked, YankedReason: strings.TrimSpace(metaString(f.YankedReason)),
	}
	if ref, err := url.Parse(f.URL); err == nil && base != nil && f.URL != "" {
		out.URL = base.ResolveReference(ref).String()
	}
	if t, ok := pypiUploadTime(f); ok {
		out.Uploaded = &t
	}
	return out
}

func pypiUploadTime(f pypiResolveFile) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, f.UploadTime); err == nil {
		return t.UTC(), true
	}
	// Some mirrors give only upload_time, without a zone (PyPI's is UTC).
	if t, err := time.Parse("2006-01-02T15:04:05", f.UploadTimeOld); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// pypiCandidate is a release that has files and a valid version.
type pypiCandidate struct {
	key    string
	v      pep440Version
	yanked bool
}

// pypiCandidates returns the releases with files and a PEP 440 version,
// newest first. A release is yanked when all its files are.
func pypiCandidates(releases map[string][]pypiResolveFile) []pypiCandidate {
	var out []pypiCandidate
	for key, files := range releases {
		if len(files) == 0 {
			continue
		}
		v, err := parsePEP440(key)
		if err != nil {
			continue
		}
		yanked := true
		for _, f := range files {
			yanked = yanked && f.Yanked
		}
		out = append(out, pypiCandidate{key: key, v: v, yanked: yanked})
	}
	slices.SortFunc(out, func(a, b pypiCandidate) int {
		if d := b.v.compare(a.v); d != 0 {
			return d
		}
		return strings.Compare(a.key, b.key)
	})
	return out
}

// pypiRequirement is a parsed version specifier set (pkgspec's PEP 440
// grammar); no clauses means the latest release.
type pypiRequirement struct{ pkgspec.SpecifierSet }

func (r pypiRequirement) matches(c pypiCandidate) bool { return r.Contains(c.v.Version) }

// pick chooses among the candidates (newest first); see Resolve.
func (r pypiRequirement) pick(cands []pypiCandidate) (pypiCandidate, error) {
	var match []pypiCandidate
	yankedSkipped := 0
	for _, c := range cands {
		if !r.matches(c) {
			continue
		}
		if c.yanked && !r.Exact() {
			yankedSkipped++
			continue
		}
		match = append(match, c)
	}
	if !r.Prereleases() {
		finals := slices.DeleteFunc(slices.Clone(match), func(c pypiCandidate) bool { return c.v.IsPrerelease() })
		if len(finals) > 0 {
			match = finals
		}
	}
	// An exact pin prefers an equal release that is not yanked.
	for _, c := range match {
		if !c.yanked {
			return c, nil
		}
	}
	if len(match) > 0 {
		return match[0], nil
	}
	var newest []string
	for _, c := range cands[:min(len(cands), 5)] {
		s := c.key
		if c.yanked {
			s += " (yanked)"
		}
		newest = append(newest, s)
	}
	hint := ""
	if yankedSkipped > 0 {
		hint = fmt.Sprintf("; %d matching release(s) are yanked, which only an exact == pin selects", yankedSkipped)
	}
	return pypiCandidate{}, fmt.Errorf("%w: no release with files matches%s (newest: %s)", ErrVersionNotFound, hint, strings.Join(newest, ", "))
}

// pep440Version is a PEP 440 version (pkgspec's), with the ordering
// the resolver and the OSV ranges use.
type pep440Version struct{ pkgspec.Version }

func parsePEP440(s string) (pep440Version, error) {
	v, err := pkgspec.ParseVersion(s)
	return pep440Version{v}, err
}

func (v pep440Version) compare(w pep440Version) int { return v.Compare(w.Version) }
