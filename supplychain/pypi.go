package supplychain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
)

// PyPIMetadata reduces a document of PyPI's JSON API to the same shape
// NPMMetadata gives. doc is either the release document
// (/pypi/<name>/<version>/json) or the project document (/pypi/<name>/json);
// both describe one version in "info" and its files in "urls".
//
// The two differ in what they can say:
//   - Only the project document has "releases" (PyPI dropped it from the
//     release document in 2022), so the release history (version count,
//     first publish, previous version) is filled only from it; with the
//     release document those fields stay empty and VersionCount is 0.
//   - The project document's "info" describes the latest version only, so
//     for any other version it is an error: fetch the release document.
//
// What PyPI's core metadata does not hold stays empty, never guessed:
// Maintainers are the author and maintainer declared in the metadata
// (PyPI's account roles are not in the API), AuthorURL is always empty,
// Provenance is false and "provenance" is listed in Unserved, because
// attestations are served by the Integrity API and the simple API, not
// this one (ApplyPyPIProvenance fills it from PyPI.Provenance's answers),
// and LifecycleScripts is nil (a
// Python package declares no install hooks; an sdist-only release runs
// its build backend at install, which this shape does not express).
// Deprecated holds PyPI's nearest equivalent, a yank: "yanked: <reason>".
func PyPIMetadata(doc []byte, version string) (*evidence.RegistryMeta, error) {
	var d pypiDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("pypi metadata: decode: %w", err)
	}
	if d.Info == nil || d.Info.Name == "" || d.Info.Version == "" {
		return nil, fmt.Errorf("pypi metadata: the document has no info with a name and version")
	}
	info := d.Info
	if !pep440Same(info.Version, version) {
		return nil, fmt.Errorf("pypi metadata of %s: %w: the document describes %s, not %s (the project document describes only the latest version; use /pypi/%s/%s/json)",
			info.Name, ErrVersionNotFound, info.Version, version, info.Name, version)
	}
	meta := &evidence.RegistryMeta{
		Ecosystem:   "pypi",
		Name:        info.Name,
		Version:     info.Version,
		Maintainers: pypiMaintainers(info),
		License:     pypiLicense(info),
		MCPName:     pypiMCPName(info.Description),
		// The JSON API does not serve attestations: until the Integrity
		// API is asked, nothing is known about provenance.
		Unserved: []string{"provenance"},
	}
	if t, ok := earliestUpload(d.URLs); ok {
		meta.PublishedAt = &t
	}
	if d.Releases != nil {
		published := map[string]time.Time{}
		for v, files := range d.Releases {
			// A release with no files was registered but never
			// installable; it is not counted as published.
			if t, ok := earliestUpload(files); ok {
				published[v] = t
			}
		}
		meta.VersionCount = len(published)
		for _, t := range published {
			if meta.FirstPublishedAt == nil || t.Before(*meta.FirstPublishedAt) {
				meta.FirstPublishedAt = &t
			}
		}
		target := info.Version
		if _, ok := published[target]; !ok && meta.PublishedAt != nil {
			published[target] = *meta.PublishedAt
		}
		meta.PreviousVersion, meta.PreviousPublishedAt = previousRelease(target, published, pep440Prerelease)
	}
	meta.Deprecated = pypiYanked(info, d.URLs)
	urls := pypiProjectURLs(info.ProjectURLs)
	meta.Homepage = urls["homepage"]
	if meta.Homepage == "" {
		meta.Homepage = metaString(info.HomePage)
	}
	meta.RepositoryURL, meta.Repository, meta.RepositoryError = pypiRepository(urls, meta.Homepage)
	meta.Links, meta.LinksRead = pypiLinks(info), true
	return meta, nil
}

// pypiLinks lists every URL of the core metadata where publishers put
// their repository: each project_urls entry with its label as published,
// in the document's order (PyPI serves them in the metadata's order), then
// home_page and download_url. Passwords in them are removed.
func pypiLinks(info *pypiInfo) []evidence.RegistryLink {
	var out []evidence.RegistryLink
	for _, kv := range orderedURLs(info.ProjectURLs) {
		out = append(out, evidence.RegistryLink{Field: "project_urls." + kv[0], URL: redactUserinfo(kv[1])})
	}
	if h := metaString(info.HomePage); h != "" {
		out = append(out, evidence.RegistryLink{Field: "home_page", URL: redactUserinfo(h)})
	}
	if d := metaString(info.DownloadURL); d != "" {
		out = append(out, evidence.RegistryLink{Field: "download_url", URL: redactUserinfo(d)})
	}
	return out
}

// orderedURLs reads a JSON object of label to URL in the document's
// order, skipping values that are not strings or are empty; anything but
// an object gives nothing.
func orderedURLs(raw json.RawMessage) [][2]string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out [][2]string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		label, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		if u := metaString(v); u != "" && strings.TrimSpace(label) != "" {
			out = append(out, [2]string{strings.TrimSpace(label), u})
		}
	}
	return out
}

type pypiDoc struct {
	Info *pypiInfo `json:"info"`
	// Releases is nil when the document has no "releases" key.
	Releases map[string][]pypiFile `json:"releases"`
	URLs     []pypiFile            `json:"urls"`
}

// pypiInfo holds the core metadata fields read. Most are null when the
// uploader left them out, so they stay raw.
type pypiInfo struct {
	Name              string          `json:"name"`
	Version           string          `json:"version"`
	Author            json.RawMessage `json:"author"`
	AuthorEmail       json.RawMessage `json:"author_email"`
	Maintainer        json.RawMessage `json:"maintainer"`
	MaintainerEmail   json.RawMessage `json:"maintainer_email"`
	HomePage          json.RawMessage `json:"home_page"`
	DownloadURL       json.RawMessage `json:"download_url"`
	License           json.RawMessage `json:"license"`
	LicenseExpression json.RawMessage `json:"license_expression"`
	Classifiers       []string        `json:"classifiers"`
	ProjectURLs       json.RawMessage `json:"project_urls"`
	Description       string          `json:"description"`
	Yanked            bool            `json:"yanked"`
	YankedReason      json.RawMessage `json:"yanked_reason"`
}

type pypiFile struct {
	Filename     string          `json:"filename"`
	PackageType  string          `json:"packagetype"`
	UploadTime   string          `json:"upload_time_iso_8601"`
	Yanked       bool            `json:"yanked"`
	YankedReason json.RawMessage `json:"yanked_reason"`
}

// earliestUpload is a release's publish time: the upload of its first
// file (wheels for other platforms often follow later).
func earliestUpload(files []pypiFile) (time.Time, bool) {
	var first time.Time
	for _, f := range files {
		t, err := time.Parse(time.RFC3339, f.UploadTime)
		if err != nil {
			continue
		}
		if t = t.UTC(); first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// pep440Same compares versions as PyPI spells them, ignoring case and a
// leading "v", which PEP 440 normalisation drops.
func pep440Same(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		return strings.TrimPrefix(s, "v")
	}
	return norm(a) == norm(b)
}

// pep440PreRe finds a PEP 440 pre-release segment (a, b, rc and their
// other spellings) or a development release; post-releases are releases.
var pep440PreRe = regexp.MustCompile(`\d[-_.]?(alpha|a|beta|b|c|rc|preview|pre|dev)[-_.]?\d*`)

func pep440Prerelease(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	v, _, _ = strings.Cut(v, "+") // a local version label is free text
	return pep440PreRe.MatchString(v)
}

// pypiYanked returns "yanked: <reason>" when the version is yanked (the
// release as a whole, or every one of its files), "" otherwise.
func pypiYanked(info *pypiInfo, files []pypiFile) string {
	yanked, reason := info.Yanked, metaString(info.YankedReason)
	if !yanked && len(files) > 0 {
		yanked = true
		for _, f := range files {
			if !f.Yanked {
				yanked = false
				break
			}
			if reason == "" {
				reason = metaString(f.YankedReason)
			}
		}
	}
	switch {
	case !yanked:
		return ""
	case reason == "":
		return "yanked (no reason given)"
	default:
		return "yanked: " + reason
	}
}

// pypiMaintainers lists the maintainers, then the authors, of the core
// metadata, each with the domain of its address only. An email field may
// hold a list ("A <a@x.org>, b@y.org"); a name field without addresses
// gives one entry without a domain.
func pypiMaintainers(info *pypiInfo) []evidence.Maintainer {
	out := []evidence.Maintainer{}
	add := func(nameRaw, emailRaw json.RawMessage) {
		name, emails := metaString(nameRaw), metaString(emailRaw)
		addrs := pypiAddresses(emails)
		if len(addrs) == 0 {
			if name != "" {
				out = appendMaintainer(out, evidence.Maintainer{Name: name})
			}
			return
		}
		for _, a := range addrs {
			n := a.Name
			if n == "" && len(addrs) == 1 {
				n = name
			}
			out = appendMaintainer(out, evidence.Maintainer{Name: n, EmailDomain: emailDomain(a.Address)})
		}
	}
	add(info.Maintainer, info.MaintainerEmail)
	add(info.Author, info.AuthorEmail)
	return out
}

func appendMaintainer(list []evidence.Maintainer, m evidence.Maintainer) []evidence.Maintainer {
	for _, x := range list {
		if x == m {
			return list
		}
	}
	return append(list, m)
}

// pypiAddressRe finds addresses in an email field net/mail cannot parse.
var pypiAddressRe = regexp.MustCompile(`[^\s<>,;"]+@[^\s<>,;"]+`)

func pypiAddresses(s string) []*mail.Address {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if addrs, err := mail.ParseAddressList(s); err == nil {
		return addrs
	}
	var out []*mail.Address
	for _, a := range pypiAddressRe.FindAllString(s, -1) {
		out = append(out, &mail.Address{Address: a})
	}
	return out
}

// pypiLicense prefers the SPDX expression of metadata 2.4
// (license_expression), then a short License field, then the license
// classifiers. Older packages often paste the whole license text into
// License; that is not kept.
func pypiLicense(info *pypiInfo) string {
	if l := metaString(info.LicenseExpression); l != "" {
		return l
	}
	if l := metaString(info.License); l != "" && !strings.ContainsAny(l, "\r\n") && len(l) <= 120 {
		return l
	}
	var names []string
	for _, c := range info.Classifiers {
		parts := strings.Split(c, " :: ")
		if len(parts) < 2 || strings.TrimSpace(parts[0]) != "License" {
			continue
		}
		last := strings.TrimSpace(parts[len(parts)-1])
		if last == "OSI Approved" || last == "" {
			continue
		}
		names = append(names, last)
	}
	return strings.Join(names, " OR ")
}

// mcpNameRe finds the MCP registry's ownership marker, which PyPI
// packages carry in their README ("<!-- mcp-name: io.github.user/server -->").
var mcpNameRe = regexp.MustCompile(`mcp-name:\s*([A-Za-z0-9][A-Za-z0-9.-]*/[A-Za-z0-9._-]+)`)

func pypiMCPName(description string) string {
	m := mcpNameRe.FindStringSubmatch(description)
	if m == nil {
		return ""
	}
	return m[1]
}

// pypiProjectURLs returns project_urls keyed by normalised label, as PyPI
// itself compares them (PEP 753: lower case, punctuation and white space
// removed), so "Source Code", "source-code" and "SourceCode" agree.
func pypiProjectURLs(raw json.RawMessage) map[string]string {
	var m map[string]json.RawMessage
	out := map[string]string{}
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return out
	}
	for label, v := range m {
		u := metaString(v)
		if u == "" {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(label) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				b.WriteRune(r)
			}
		}
		out[b.String()] = u
	}
	return out
}

// pypiSourceLabels are the project_urls labels that name the source
// repository, in order of preference (PEP 753's well-known labels and
// their common spellings).
var pypiSourceLabels = []string{"source", "sourcecode", "repository", "code", "github", "gitlab", "git"}

// pypiRepository takes the repository from a source label of
// project_urls; failing that, from the homepage when it points at a
// known forge (many packages give only their GitHub page as homepage).
func pypiRepository(urls map[string]string, homepage string) (string, *evidence.Repository, string) {
	for _, label := range pypiSourceLabels {
		u := urls[label]
		if u == "" {
			continue
		}
		declared := redactUserinfo(u)
		r, err := ParseRepository(u, "")
		if err != nil {
			return declared, nil, err.Error()
		}
		return declared, r, ""
	}
	if homepage != "" {
		if r, err := ParseRepository(homepage, ""); err == nil {
			switch r.Host {
			case forgeGitHub, forgeGitLab, forgeBitbucket:
				return redactUserinfo(homepage), r, ""
			}
		}
	}
	return "", nil, ""
}
