package supplychain

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/pkgspec"
)

// ErrBadRequirement: the version specifier of a requirement is not valid
// PEP 440 (the name is ErrBadName).
var ErrBadRequirement = errors.New("invalid requirement")

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
func (p *PyPI) WithRetry(rt Retry) *PyPI {
	p.retry = rt
	return p
}

// Index returns the index's base URL.
func (p *PyPI) Index() string { return p.base }

// pypiNameRunsRe splits a local version label into its parts.
var pypiNameRunsRe = regexp.MustCompile(`[-_.]+`)

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
// ErrRegistryUnreachable (wrapping ErrUnavailable too).
func (p *PyPI) Resolve(ctx context.Context, name, spec string) (*PyPIRelease, error) {
	if err := pkgspec.ValidPyPIName(name); err != nil {
		return nil, err
	}
	norm := pkgspec.NormalizePyPIName(name)
	spec = strings.TrimSpace(spec)
	req, err := parsePyPIRequirement(spec)
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
		if req.exact {
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
		return nil, resp.StatusCode, fmt.Errorf("%w: GET %s: %s", ErrRegistryUnreachable, redactURL(u), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: GET %s: %v", ErrRegistryUnreachable, redactURL(u), err)
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

// pypiRequirement is a parsed version specifier set; no clauses means the
// latest release.
type pypiRequirement struct {
	clauses []pep440Clause
	exact   bool
}

// parsePyPIRequirement parses "" / "latest", a bare version (an exact
// pin), or a comma-separated PEP 440 specifier set.
func parsePyPIRequirement(spec string) (pypiRequirement, error) {
	if spec == "" || spec == "latest" {
		return pypiRequirement{}, nil
	}
	if !strings.ContainsAny(spec[:1], "=!<>~") {
		v, err := parsePEP440(spec)
		if err != nil {
			return pypiRequirement{}, fmt.Errorf("%w: %q is neither \"latest\", a version nor a PEP 440 specifier set", ErrBadRequirement, spec)
		}
		return pypiRequirement{clauses: []pep440Clause{{op: "==", v: v, raw: spec}}, exact: true}, nil
	}
	var r pypiRequirement
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return pypiRequirement{}, fmt.Errorf("%w: %q has an empty clause", ErrBadRequirement, spec)
		}
		c, err := parsePEP440Clause(part)
		if err != nil {
			return pypiRequirement{}, err
		}
		r.clauses = append(r.clauses, c)
	}
	r.exact = len(r.clauses) == 1 && !r.clauses[0].wildcard && (r.clauses[0].op == "==" || r.clauses[0].op == "===")
	return r, nil
}

// prereleases reports whether a clause admits pre-releases by naming one
// (packaging's Specifier.prereleases).
func (r pypiRequirement) prereleases() bool {
	for _, c := range r.clauses {
		v := c.v
		if c.op == "===" {
			v, _ = parsePEP440(c.raw) // not a version: no pre-release
		}
		switch c.op {
		case "==", ">=", "<=", "~=", "===":
			if v.isPrerelease() {
				return true
			}
		}
	}
	return false
}

func (r pypiRequirement) matches(c pypiCandidate) bool {
	for _, cl := range r.clauses {
		if !cl.match(c.key, c.v) {
			return false
		}
	}
	return true
}

// pick chooses among the candidates (newest first); see Resolve.
func (r pypiRequirement) pick(cands []pypiCandidate) (pypiCandidate, error) {
	var match []pypiCandidate
	yankedSkipped := 0
	for _, c := range cands {
		if !r.matches(c) {
			continue
		}
		if c.yanked && !r.exact {
			yankedSkipped++
			continue
		}
		match = append(match, c)
	}
	if !r.prereleases() {
		finals := slices.DeleteFunc(slices.Clone(match), func(c pypiCandidate) bool { return c.v.isPrerelease() })
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

// PEP 440 versions, as the packaging library parses and orders them
// (packaging.version.Version; VERSION_PATTERN of PEP 440's appendix B).

var pep440Re = regexp.MustCompile(`(?i)^\s*v?(?:(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*)` +
	`([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?` +
	`((?:-([0-9]+))|(?:[-_.]?(post|rev|r)[-_.]?([0-9]+)?))?` +
	`([-_.]?(dev)[-_.]?([0-9]+)?)?)` +
	`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$`)

type pep440Version struct {
	epoch   uint64
	release []uint64
	// preL is "a", "b" or "rc", "" for none; preN its number.
	preL  string
	preN  uint64
	post  *uint64
	dev   *uint64
	local []string
}

func parsePEP440(s string) (pep440Version, error) {
	m := pep440Re.FindStringSubmatch(s)
	if m == nil {
		return pep440Version{}, fmt.Errorf("%q is not a PEP 440 version", s)
	}
	var v pep440Version
	var err error
	num := func(s string) uint64 {
		if s == "" || err != nil {
			return 0
		}
		n, e := strconv.ParseUint(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("version number %s is too large", s)
		}
		return n
	}
	v.epoch = num(m[1])
	for r := range strings.SplitSeq(m[2], ".") {
		v.release = append(v.release, num(r))
	}
	if m[3] != "" {
		switch strings.ToLower(m[4]) {
		case "alpha", "a":
			v.preL = "a"
		case "beta", "b":
			v.preL = "b"
		default:
			v.preL = "rc"
		}
		v.preN = num(m[5])
	}
	if m[6] != "" {
		n := num(m[7] + m[9])
		v.post = &n
	}
	if m[10] != "" {
		n := num(m[12])
		v.dev = &n
	}
	if m[13] != "" {
		v.local = pypiNameRunsRe.Split(strings.ToLower(m[13]), -1)
	}
	if err != nil {
		return pep440Version{}, err
	}
	return v, nil
}

func (v pep440Version) isPrerelease() bool { return v.preL != "" || v.dev != nil }

// public drops the local label; base keeps only the epoch and release.
func (v pep440Version) public() pep440Version { v.local = nil; return v }

func (v pep440Version) base() pep440Version {
	return pep440Version{epoch: v.epoch, release: v.release}
}

// compare orders versions as packaging's _cmpkey does: epoch, release
// (trailing zeros ignored), pre-release (a development release of the
// release itself sorts before its pre-releases; no pre-release sorts
// after them), post-release (none first), development release (none
// last), local label (none first; numeric segments above alphanumeric
// ones, then compared segment by segment).
func (v pep440Version) compare(w pep440Version) int {
	if d := cmp.Compare(v.epoch, w.epoch); d != 0 {
		return d
	}
	for i := range max(len(v.release), len(w.release)) {
		var a, b uint64
		if i < len(v.release) {
			a = v.release[i]
		}
		if i < len(w.release) {
			b = w.release[i]
		}
		if d := cmp.Compare(a, b); d != 0 {
			return d
		}
	}
	if d := cmp.Compare(v.preRank(), w.preRank()); d != 0 {
		return d
	}
	if v.preL != "" && w.preL != "" {
		if d := cmp.Compare(v.preN, w.preN); d != 0 {
			return d
		}
	}
	if d := compareOpt(v.post, w.post, -1); d != 0 {
		return d
	}
	if d := compareOpt(v.dev, w.dev, 1); d != 0 {
		return d
	}
	return compareLocal(v.local, w.local)
}

// preRank: 0 for a development release without pre- or post-release,
// 1, 2, 3 for a, b, rc, 4 for no pre-release.
func (v pep440Version) preRank() int {
	switch {
	case v.preL == "" && v.post == nil && v.dev != nil:
		return 0
	case v.preL == "a":
		return 1
	case v.preL == "b":
		return 2
	case v.preL == "rc":
		return 3
	}
	return 4
}

// compareOpt compares optional numbers; a missing one sorts below every
// number when missing is -1, above when 1.
func compareOpt(a, b *uint64, missing int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return missing
	case b == nil:
		return -missing
	}
	return cmp.Compare(*a, *b)
}

func compareLocal(a, b []string) int {
	if a == nil || b == nil {
		return cmp.Compare(len(a), len(b)) // none sorts first
	}
	for i := range min(len(a), len(b)) {
		an, aerr := strconv.ParseUint(a[i], 10, 64)
		bn, berr := strconv.ParseUint(b[i], 10, 64)
		var d int
		switch {
		case aerr == nil && berr == nil:
			d = cmp.Compare(an, bn)
		case aerr == nil:
			d = 1
		case berr == nil:
			d = -1
		default:
			d = strings.Compare(a[i], b[i])
		}
		if d != 0 {
			return d
		}
	}
	return cmp.Compare(len(a), len(b))
}

// pep440Clause is one specifier of a set (packaging.specifiers.Specifier).
type pep440Clause struct {
	op       string
	v        pep440Version
	wildcard bool
	raw      string // the version as written (for ===)
}

var (
	pep440ClauseRe  = regexp.MustCompile(`^(~=|===|==|!=|<=|>=|<|>)\s*(.*)$`)
	pep440ReleaseRe = regexp.MustCompile(`(?i)^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*$`)
)

func parsePEP440Clause(s string) (pep440Clause, error) {
	bad := func(why string) (pep440Clause, error) {
		return pep440Clause{}, fmt.Errorf("%w: %q %s", ErrBadRequirement, s, why)
	}
	m := pep440ClauseRe.FindStringSubmatch(s)
	if m == nil {
		return bad("does not start with a PEP 440 operator (~=, ==, !=, <=, >=, <, >, ===)")
	}
	c := pep440Clause{op: m[1], raw: strings.TrimSpace(m[2])}
	if c.raw == "" || strings.ContainsAny(c.raw, " \t;),") {
		return bad("has no version after its operator, or more than one")
	}
	if c.op == "===" {
		return c, nil
	}
	vs := c.raw
	if strings.HasSuffix(vs, ".*") {
		if c.op != "==" && c.op != "!=" {
			return bad("uses a wildcard, which only == and != allow")
		}
		vs = strings.TrimSuffix(vs, ".*")
		if !pep440ReleaseRe.MatchString(vs) {
			return bad("has a wildcard after a pre-, post-, development or local part")
		}
		c.wildcard = true
	}
	v, err := parsePEP440(vs)
	if err != nil {
		return bad("has an invalid version")
	}
	c.v = v
	if v.local != nil && c.op != "==" && c.op != "!=" {
		return bad("has a local version label, which only == and != allow")
	}
	if c.op == "~=" && len(v.release) < 2 {
		return bad("~= needs a version with at least two release numbers")
	}
	return c, nil
}

// match reports whether the release spelled key, parsed as v, satisfies
// the clause (packaging's Specifier.contains, pre-releases aside).
func (c pep440Clause) match(key string, v pep440Version) bool {
	switch c.op {
	case "===":
		return strings.EqualFold(strings.TrimSpace(key), c.raw)
	case "==":
		return c.equal(v)
	case "!=":
		return !c.equal(v)
	case "~=":
		// ~=V.N is >=V.N together with ==V.*, suffixes of V.N dropped.
		prefix := pep440Clause{op: "==", wildcard: true, v: pep440Version{epoch: c.v.epoch, release: c.v.release[:len(c.v.release)-1]}}
		return v.public().compare(c.v) >= 0 && prefix.equal(v)
	case "<=":
		return v.public().compare(c.v) <= 0
	case ">=":
		return v.public().compare(c.v) >= 0
	case "<":
		// <V never admits a pre-release of V itself unless V is one.
		if v.compare(c.v) >= 0 {
			return false
		}
		return c.v.isPrerelease() || !v.isPrerelease() || v.base().compare(c.v.base()) != 0
	case ">":
		// >V never admits a post-release of V unless V is one, nor V
		// with a local label.
		if v.compare(c.v) <= 0 {
			return false
		}
		if c.v.post == nil && v.post != nil && v.base().compare(c.v.base()) == 0 {
			return false
		}
		return v.local == nil || v.base().compare(c.v.base()) != 0
	}
	return false
}

func (c pep440Clause) equal(v pep440Version) bool {
	if c.wildcard {
		// Prefix match on the release, the shorter padded with zeros.
		if v.epoch != c.v.epoch {
			return false
		}
		for i, n := range c.v.release {
			var m uint64
			if i < len(v.release) {
				m = v.release[i]
			}
			if m != n {
				return false
			}
		}
		return true
	}
	if c.v.local == nil {
		v = v.public()
	}
	return v.compare(c.v) == 0
}
