package supplychain

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/verifymcp/verifymcp/evidence"
)

// NPMMetadata reduces the registry's documents for v to what a reviewer
// weighs: publish times and the release before this one, maintainers
// (email domains only), deprecation, repository, homepage, author URL,
// license, mcpName, provenance and the install-time lifecycle scripts. It
// is pure: everything comes from the packument Resolve already fetched.
//
// A field the manifest gives in an unexpected form is left empty (or, for
// the repository, explained in RepositoryError) rather than failing the
// whole signal; only a Version that did not come from Resolve, or a
// manifest that is not a JSON object, is an error.
func NPMMetadata(v *Version) (*evidence.RegistryMeta, error) {
	if v == nil {
		return nil, fmt.Errorf("npm metadata: no version")
	}
	if v.history == nil {
		return nil, fmt.Errorf("npm metadata of %s@%s: the version carries no packument (it was not made by Resolve)", v.Name, v.Version)
	}
	var m npmMeta
	if err := json.Unmarshal(v.Manifest, &m); err != nil {
		return nil, fmt.Errorf("npm metadata of %s@%s: version document: %w", v.Name, v.Version, err)
	}
	h := v.history
	meta := &evidence.RegistryMeta{
		Ecosystem:        "npm",
		Name:             v.Name,
		Version:          v.Version,
		VersionCount:     h.count,
		Homepage:         metaString(m.Homepage),
		AuthorURL:        npmAuthorURL(m.Author),
		License:          npmLicense(m.License, m.Licenses),
		MCPName:          metaString(m.MCPName),
		Provenance:       npmProvenance(m.Dist.Attestations),
		LifecycleScripts: npmLifecycleScripts(m.Scripts, m.Gypfile),
	}
	if h.first != nil {
		first := *h.first
		meta.FirstPublishedAt = &first
	}
	if t, ok := h.published[v.Version]; ok {
		meta.PublishedAt = &t
		meta.PreviousVersion, meta.PreviousPublishedAt = previousRelease(v.Version, h.published, npmPrerelease)
	}
	// The top-level list is who can publish now, which is what an expired
	// email domain puts at risk; the version's own list is who could when
	// it was published, used only when the registry gives no top-level one.
	meta.Maintainers = npmMaintainers(h.maintainers)
	if len(meta.Maintainers) == 0 {
		meta.Maintainers = npmMaintainers(m.Maintainers)
	}
	meta.Deprecated = npmDeprecated(m.Deprecated)
	meta.RepositoryURL, meta.Repository, meta.RepositoryError = npmRepository(m.Repository)
	meta.Links, meta.LinksRead = npmLinks(m), true
	// A mirror that strips documents (no registry signatures, no
	// maintainers) says nothing about what it left out: record it, so that
	// no finding claims an absence the registry did not report.
	stripped := !h.signed && len(h.maintainers) == 0
	if !meta.Provenance && !h.signed {
		meta.Unserved = append(meta.Unserved, "provenance")
	}
	if len(meta.Maintainers) == 0 && len(h.maintainers) == 0 && len(m.Maintainers) == 0 {
		meta.Unserved = append(meta.Unserved, "maintainers")
	}
	if meta.Deprecated == "" && stripped {
		meta.Unserved = append(meta.Unserved, "deprecation")
	}
	return meta, nil
}

// npmMeta is the part of a version manifest metadata reads. Every field
// stays raw because published manifests hold every shape npm ever
// accepted, and some it never did.
type npmMeta struct {
	Deprecated  json.RawMessage `json:"deprecated"`
	Repository  json.RawMessage `json:"repository"`
	Homepage    json.RawMessage `json:"homepage"`
	Bugs        json.RawMessage `json:"bugs"`
	Author      json.RawMessage `json:"author"`
	License     json.RawMessage `json:"license"`
	Licenses    json.RawMessage `json:"licenses"`
	MCPName     json.RawMessage `json:"mcpName"`
	Maintainers json.RawMessage `json:"maintainers"`
	Scripts     json.RawMessage `json:"scripts"`
	Gypfile     json.RawMessage `json:"gypfile"`
	Dist        struct {
		Attestations json.RawMessage `json:"attestations"`
	} `json:"dist"`
}

// metaString returns raw when it is a JSON string, trimmed, and "" for
// anything else.
func metaString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// npmPrerelease reports whether v is a semver prerelease. A version that
// does not parse counts as a release: the registry has accepted it as one.
func npmPrerelease(v string) bool {
	sv, err := semver.NewVersion(v)
	return err == nil && sv.Prerelease() != ""
}

// previousRelease returns the version published last before target, by
// publish time, among published (version -> time). When target is a
// release, prereleases are passed over: users of a release line never
// received them, so the release before is the meaningful comparison (and
// a long gap since it is the signal). For a prerelease target every
// version counts. Ties in time go to the higher version, so the answer
// does not depend on map order.
func previousRelease(target string, published map[string]time.Time, prerelease func(string) bool) (string, *time.Time) {
	at, ok := published[target]
	if !ok {
		return "", nil
	}
	skipPre := !prerelease(target)
	var best string
	var bestAt time.Time
	for v, t := range published {
		if v == target || !t.Before(at) || (skipPre && prerelease(v)) {
			continue
		}
		if best == "" || t.After(bestAt) || (t.Equal(bestAt) && releaseLess(best, v)) {
			best, bestAt = v, t
		}
	}
	if best == "" {
		return "", nil
	}
	return best, &bestAt
}

// releaseLess orders two versions by semver when both parse and as
// strings otherwise.
func releaseLess(a, b string) bool {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	if errA == nil && errB == nil && !va.Equal(vb) {
		return va.LessThan(vb)
	}
	return a < b
}

// npmMaintainers reads a maintainers list: objects {name, email} (the
// registry's form) or "Name <email> (url)" strings (old documents). Only
// the email's domain is kept.
func npmMaintainers(raw json.RawMessage) []evidence.Maintainer {
	out := []evidence.Maintainer{}
	var list []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil {
		return out
	}
	for _, item := range list {
		var name, email string
		var obj struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		}
		if s := metaString(item); s != "" {
			name, email, _ = parsePerson(s)
		} else if json.Unmarshal(item, &obj) == nil {
			name, email = strings.TrimSpace(obj.Name), obj.Email
		}
		if name == "" && email == "" {
			continue
		}
		out = append(out, evidence.Maintainer{Name: name, EmailDomain: emailDomain(email)})
	}
	return out
}

var emailDomainRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)

// emailDomain returns the lower-cased domain of an email address, or ""
// when there is none that looks like a host name. The rest of the address
// is personal data and never leaves this function.
func emailDomain(email string) string {
	email = strings.TrimSpace(email)
	email = strings.TrimSuffix(strings.TrimPrefix(email, "<"), ">")
	i := strings.LastIndexByte(email, '@')
	if i < 0 {
		return ""
	}
	d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(email[i+1:])), ".")
	if !emailDomainRe.MatchString(d) {
		return ""
	}
	return d
}

// parsePerson splits npm's person string, "Name <email> (url)" with
// every part optional, into its parts: the url is the trailing
// parenthesised group and the email the last <...>, so a name holding
// parentheses of its own ("Foo (Bar Corp) <a@b.c> (https://…)") still
// splits right. A bare address as the whole string is an email.
func parsePerson(s string) (name, email, u string) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndexByte(s, '('); i >= 0 {
			u, s = strings.TrimSpace(s[i+1:len(s)-1]), strings.TrimSpace(s[:i])
		}
	}
	if strings.HasSuffix(s, ">") {
		if i := strings.LastIndexByte(s, '<'); i >= 0 {
			email, s = strings.TrimSpace(s[i+1:len(s)-1]), strings.TrimSpace(s[:i])
		}
	}
	name = s
	if email == "" && strings.Contains(name, "@") && !strings.ContainsAny(name, " \t") {
		name, email = "", name
	}
	return name, email, u
}

// personURL returns u when it is a web address and not an email address
// in the url's place ("Name (name@example.com)"), which must not be
// stored.
func personURL(u string) string {
	u = strings.TrimSpace(u)
	if hasPrefixFold(u, "mailto:") || (strings.Contains(u, "@") && !strings.Contains(u, "://")) {
		return ""
	}
	return u
}

// npmAuthorURL returns the url of the manifest's author: the "(url)" part
// of the person string or the object's url (very old manifests said web).
func npmAuthorURL(raw json.RawMessage) string {
	if s := metaString(raw); s != "" {
		_, _, u := parsePerson(s)
		return personURL(u)
	}
	var obj struct {
		URL json.RawMessage `json:"url"`
		Web json.RawMessage `json:"web"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	if u := personURL(metaString(obj.URL)); u != "" {
		return u
	}
	return personURL(metaString(obj.Web))
}

// npmLicense reads license in its current form (an SPDX expression or
// "SEE LICENSE IN <file>") and its legacy ones: an object {type, url}, or
// an array of those in "license" or "licenses". A legacy list offered the
// package under any of its licenses, so it is joined with OR.
func npmLicense(license, licenses json.RawMessage) string {
	if l := licenseValue(license); l != "" {
		return l
	}
	return licenseValue(licenses)
}

func licenseValue(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if s := metaString(raw); s != "" {
		return s
	}
	var obj struct {
		Type json.RawMessage `json:"type"`
		Name json.RawMessage `json:"name"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if t := metaString(obj.Type); t != "" {
			return t
		}
		return metaString(obj.Name)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var parts []string
	for _, item := range list {
		if l := licenseValue(item); l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " OR ")
}

// SLSA provenance predicate types npm attaches to dist.attestations. The
// first provenance publishes (npm 9.5, April 2023) carried v0.2; npm has
// written v1 since. Both are build provenance from a CI identity.
const (
	slsaProvenanceV1  = "https://slsa.dev/provenance/v1"
	slsaProvenanceV02 = "https://slsa.dev/provenance/v0.2"
)

// npmProvenance reports whether dist.attestations names a SLSA provenance
// attestation: {"url": ".../-/npm/v1/attestations/<name>@<version>",
// "provenance": {"predicateType": "https://slsa.dev/provenance/v1"}}. The
// registry writes this only when it accepted a signed provenance bundle,
// unlike publishConfig.provenance in package.json, which is an intention.
func npmProvenance(raw json.RawMessage) bool {
	var att struct {
		Provenance struct {
			PredicateType string `json:"predicateType"`
		} `json:"provenance"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &att) != nil {
		return false
	}
	switch att.Provenance.PredicateType {
	case slsaProvenanceV1, slsaProvenanceV02:
		return true
	}
	return false
}

// npmInstallScripts are the lifecycle events npm runs when it installs a
// package from the registry. prepare is not among them: npm runs prepare
// only for a git dependency, a local directory or the project's own root,
// because a registry tarball is already built (the same holds for the
// legacy prepublish, and for preprepare and postprepare).
var npmInstallScripts = []string{"preinstall", "install", "postinstall"}

// npmLifecycleScripts returns the install-time scripts the manifest
// declares, nil when there are none. A manifest marked gypfile without an
// install or preinstall script gets npm's implicit "node-gyp rebuild",
// which npm runs at install for a package that ships a binding.gyp.
func npmLifecycleScripts(scripts, gypfile json.RawMessage) map[string]string {
	var all map[string]json.RawMessage
	if len(scripts) > 0 {
		_ = json.Unmarshal(scripts, &all) // scripts that are not an object declare nothing npm would run
	}
	var out map[string]string
	for _, event := range npmInstallScripts {
		if cmd := metaString(all[event]); cmd != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[event] = cmd
		}
	}
	var gyp bool
	if len(gypfile) > 0 && json.Unmarshal(gypfile, &gyp) == nil && gyp && out["install"] == "" && out["preinstall"] == "" {
		if out == nil {
			out = map[string]string{}
		}
		out["install"] = "node-gyp rebuild"
	}
	return out
}

// npmDeprecated returns the deprecation message. npm deprecate writes a
// string; npm undeprecate writes "", which means not deprecated. A bare
// true (seen in hand-edited documents) is deprecation without a message.
func npmDeprecated(raw json.RawMessage) string {
	if s := metaString(raw); s != "" {
		return s
	}
	var b bool
	if len(raw) > 0 && json.Unmarshal(raw, &b) == nil && b {
		return "true"
	}
	return ""
}

// npmRepository reads the repository field, a string or an object
// {type, url, directory}, into the declared URL (with any password
// removed), its parsed form, and why it did not parse. A package that
// declares no repository, or an empty one, gets three empty values.
func npmRepository(raw json.RawMessage) (declared string, repo *evidence.Repository, problem string) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, ""
	}
	var u, dir string
	if s, ok := metaRawString(raw); ok {
		u = s
	} else {
		var obj struct {
			URL       json.RawMessage `json:"url"`
			Directory json.RawMessage `json:"directory"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return "", nil, "repository: the field is neither a string nor an object"
		}
		if u, ok = metaRawString(obj.URL); !ok {
			return "", nil, "repository: the object has no url"
		}
		dir = metaString(obj.Directory)
	}
	if u = strings.TrimSpace(u); u == "" {
		return "", nil, ""
	}
	declared = redactUserinfo(u)
	r, err := ParseRepository(u, dir)
	if err != nil {
		return declared, nil, err.Error()
	}
	return declared, r, ""
}

func metaRawString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// RepositoryError says why a declared repository did not parse into a
// host, owner and name.
type RepositoryError struct {
	// URL is the repository as declared, with any password removed.
	URL    string
	Reason string
}

func (e *RepositoryError) Error() string {
	return fmt.Sprintf("repository %q: %s", e.URL, e.Reason)
}

// Hosts whose URL layout ParseRepository knows.
const (
	forgeGitHub    = "github.com"
	forgeGitLab    = "gitlab.com"
	forgeBitbucket = "bitbucket.org"
)

var (
	// repoShorthandRe is npm's "owner/repo" shorthand for GitHub.
	repoShorthandRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$`)
	// scpRe is git's scp-like syntax: [user@]host:path.
	scpRe = regexp.MustCompile(`^(?:[A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+\.[A-Za-z]{2,}):(.+)$`)
	// repoSegmentRe is one owner or name path segment.
	repoSegmentRe = regexp.MustCompile(`^[A-Za-z0-9~_.-]+$`)
)

// ParseRepository parses a repository reference as npm accepts it into
// host, owner and name: https, http, git, ssh, git+https, git+ssh and
// scp-like (git@host:owner/repo) URLs; the shorthands "owner/repo",
// "github:owner/repo", "gitlab:group/repo" and "bitbucket:owner/repo";
// a ".git" suffix, "#ref" and query; and web URLs to a tree or blob. On
// GitHub and Bitbucket the owner and name are the first two path
// segments; on GitLab and other hosts the owner is every segment before
// the name ("group/subgroup"), up to GitLab's "/-/" separator. directory,
// when not empty, is the declared monorepo sub-directory; otherwise a
// tree or blob URL's path on GitHub, GitLab or Bitbucket gives it (its
// ref taken as one segment, so a branch named "a/b" misplaces it).
func ParseRepository(raw, directory string) (*evidence.Repository, error) {
	s := strings.TrimSpace(raw)
	fail := func(reason string) (*evidence.Repository, error) {
		return nil, &RepositoryError{URL: redactUserinfo(s), Reason: reason}
	}
	if s == "" {
		return fail("empty")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '\\' || r == 0x7f }) {
		return fail("not a URL: contains white space, control characters or backslashes")
	}
	var host, p string
	switch {
	case hasPrefixFold(s, "github:"), hasPrefixFold(s, "gitlab:"), hasPrefixFold(s, "bitbucket:"):
		i := strings.IndexByte(s, ':')
		host = map[string]string{"github": forgeGitHub, "gitlab": forgeGitLab, "bitbucket": forgeBitbucket}[strings.ToLower(s[:i])]
		p = repoCutRef(s[i+1:])
	case hasPrefixFold(s, "gist:"):
		return fail("a gist has no owner and repository name")
	case strings.Contains(s, "://"):
		u, err := url.Parse(fixSCPInURL(s))
		if err != nil {
			return fail("not a URL: " + urlErrReason(err))
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "http", "git", "ssh", "git+https", "git+http", "git+ssh":
		case "file", "git+file":
			return fail("a local path, not a hosted repository")
		default:
			return fail(fmt.Sprintf("unsupported scheme %q", u.Scheme))
		}
		host, p = u.Hostname(), u.Path
	case scpRe.MatchString(s):
		m := scpRe.FindStringSubmatch(s)
		host, p = m[1], repoCutRef(m[2])
	case repoShorthandRe.MatchString(repoCutRef(s)):
		host, p = forgeGitHub, repoCutRef(s)
	case strings.Contains(s, ":"):
		return fail("not a repository URL or shorthand")
	default:
		// "host.tld/owner/repo" without a scheme.
		first, rest, ok := strings.Cut(repoCutRef(s), "/")
		if !ok || !strings.Contains(first, ".") || strings.HasPrefix(first, ".") {
			return fail("not a repository URL or shorthand")
		}
		host, p = first, rest
	}
	host = strings.ToLower(host)
	switch h := strings.TrimPrefix(host, "www."); h {
	case forgeGitHub, forgeGitLab, forgeBitbucket:
		host = h
	}
	if host == "" {
		return fail("no host")
	}
	var segs []string
	for seg := range strings.SplitSeq(p, "/") {
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	var owner, name string
	var rest []string // the segments after the repository, when the URL points into it
	switch host {
	case forgeGitHub, forgeBitbucket:
		if len(segs) < 2 {
			return fail("no owner/name in the path")
		}
		owner, name, rest = segs[0], segs[1], segs[2:]
	case forgeGitLab:
		// Group paths nest ("group/subgroup/project"); web URLs into a
		// project continue after a "-" segment ("/-/tree/main/dir").
		proj := segs
		if i := slices.Index(segs, "-"); i >= 0 {
			proj, rest = segs[:i], segs[i+1:]
		}
		if len(proj) < 2 {
			return fail("no group/name in the path")
		}
		owner, name = strings.Join(proj[:len(proj)-1], "/"), proj[len(proj)-1]
	default:
		// Self-hosted GitLab shares gitlab.com's "/-/" separator; other
		// forges' web URLs into a repository are not recognised here.
		proj := segs
		if i := slices.Index(segs, "-"); i >= 0 {
			proj = segs[:i]
		}
		if len(proj) < 2 {
			return fail("no owner/name in the path")
		}
		owner, name = strings.Join(proj[:len(proj)-1], "/"), proj[len(proj)-1]
	}
	name = strings.TrimSuffix(name, ".git")
	for _, seg := range append(strings.Split(owner, "/"), name) {
		if !repoSegmentRe.MatchString(seg) || seg == "." || seg == ".." {
			return fail(fmt.Sprintf("%q is not a valid owner or repository name", seg))
		}
	}
	repo := &evidence.Repository{Host: host, Owner: owner, Name: name, Directory: repoDirectory(directory)}
	if repo.Directory == "" {
		repo.Directory = webDirectory(host, rest)
	}
	return repo, nil
}

// webDirectory returns the directory a web URL into a repository points
// at: the path after tree/<ref> (GitHub, GitLab) or src/<ref>
// (Bitbucket), and the parent directory after blob/<ref>.
func webDirectory(host string, rest []string) string {
	if len(rest) < 3 {
		return ""
	}
	kind, p := rest[0], strings.Join(rest[2:], "/")
	switch {
	case kind == "tree" && (host == forgeGitHub || host == forgeGitLab), kind == "src" && host == forgeBitbucket:
		return repoDirectory(p)
	case kind == "blob" && (host == forgeGitHub || host == forgeGitLab):
		if d := path.Dir(p); d != "." {
			return repoDirectory(d)
		}
	}
	return ""
}

func repoDirectory(d string) string {
	d = strings.TrimSpace(d)
	if d == "" {
		return ""
	}
	d = path.Clean("/" + d)
	return strings.TrimPrefix(d, "/")
}

// fixSCPInURL turns the common mistake "git+ssh://git@host:owner/repo"
// (scp syntax inside a URL, which npm accepts) into a URL with a path.
var scpInURLRe = regexp.MustCompile(`^((?i:git\+ssh|ssh)://(?:[^/@]+@)?[^/:@]+):([^0-9/])`)

func fixSCPInURL(s string) string {
	return scpInURLRe.ReplaceAllString(s, "$1/$2")
}

func repoCutRef(s string) string {
	if i := strings.IndexAny(s, "#?"); i >= 0 {
		return s[:i]
	}
	return s
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// urlErrReason is the reason of a url.Parse error without the URL, which
// the RepositoryError already shows with its password removed.
func urlErrReason(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// redactUserinfo removes a password from a URL's user information. A
// repository URL with a token in it ("https://user:ghp_…@github.com/…")
// is a leaked credential, and evidence is stored: the user name stays,
// the secret does not.
func redactUserinfo(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	authEnd := len(s)
	if j := strings.IndexAny(s[i+3:], "/?#"); j >= 0 {
		authEnd = i + 3 + j
	}
	at := strings.LastIndexByte(s[i+3:authEnd], '@')
	if at < 0 {
		return s
	}
	userinfo := s[i+3 : i+3+at]
	user, _, hasPassword := strings.Cut(userinfo, ":")
	if !hasPassword {
		return s
	}
	return s[:i+3] + user + ":redacted" + s[i+3+at:]
}

// ManifestMeta reads what a package's own package.json says about where it
// comes from (homepage, repository, author URL, maintainers by email
// domain, license, mcpName, lifecycle scripts), for a package that has no
// registry document: a local tarball. Everything only a registry knows
// (publish times, versions, provenance, deprecation) is listed as unserved.
func ManifestMeta(name, version string, manifest []byte) (*evidence.RegistryMeta, error) {
	var m npmMeta
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("package.json of %s@%s: %w", name, version, err)
	}
	meta := &evidence.RegistryMeta{
		Ecosystem:        "npm",
		Name:             name,
		Version:          version,
		Homepage:         metaString(m.Homepage),
		AuthorURL:        npmAuthorURL(m.Author),
		License:          npmLicense(m.License, m.Licenses),
		MCPName:          metaString(m.MCPName),
		Maintainers:      npmMaintainers(m.Maintainers),
		LifecycleScripts: npmLifecycleScripts(m.Scripts, m.Gypfile),
		Unserved:         []string{"provenance", "deprecation", "publish_times"},
	}
	meta.RepositoryURL, meta.Repository, meta.RepositoryError = npmRepository(m.Repository)
	meta.Links, meta.LinksRead = npmLinks(m), true
	return meta, nil
}

// npmLinks lists the manifest's other URLs where publishers put their
// repository when the repository field names none: homepage, then
// bugs.url (bugs is an object {url, email} or, as npm also accepts, the
// URL itself). Passwords in them are removed.
func npmLinks(m npmMeta) []evidence.RegistryLink {
	var out []evidence.RegistryLink
	if h := metaString(m.Homepage); h != "" {
		out = append(out, evidence.RegistryLink{Field: "homepage", URL: redactUserinfo(h)})
	}
	bugs := metaString(m.Bugs)
	if bugs == "" {
		var obj struct {
			URL json.RawMessage `json:"url"`
		}
		if len(m.Bugs) > 0 && json.Unmarshal(m.Bugs, &obj) == nil {
			bugs = metaString(obj.URL)
		}
	}
	if bugs != "" && (strings.Contains(bugs, "://") || !strings.Contains(bugs, "@")) {
		// A bare address in the url's place is an email, not a link.
		out = append(out, evidence.RegistryLink{Field: "bugs.url", URL: redactUserinfo(bugs)})
	}
	return out
}
