package evidence

import "time"

// Signal names of the supply-chain signals (besides SignalRegistry).
const (
	SignalRegistryMeta = "registry.metadata"
)

// Supply is what third parties know about the package.
type Supply struct {
	Registry *RegistryMeta `json:"registry,omitempty"`
	OSV      *OSVResult    `json:"osv,omitempty"`
	Socket   *SocketResult `json:"socket,omitempty"`
	GitHub   *GitHubResult `json:"github,omitempty"`
	DNSSEC   *DNSSECResult `json:"dnssec,omitempty"`
	// MCPRegistry is the MCP registry's answer about the mcpName (signal
	// mcp_registry); nil in bundles recorded before it was asked.
	MCPRegistry *MCPNameCheck `json:"mcp_registry,omitempty"`
}

// RegistryMeta is the registry's document for the exact version, reduced
// to what a reviewer weighs. The shape is ecosystem-neutral (npm now, PyPI
// next).
type RegistryMeta struct {
	Ecosystem   string     `json:"ecosystem"`
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	PublishedAt *time.Time `json:"published_at,omitempty"`
	// PreviousVersion is the version published just before this one, by time.
	PreviousVersion     string     `json:"previous_version,omitempty"`
	PreviousPublishedAt *time.Time `json:"previous_published_at,omitempty"`
	// VersionCount is the number of published versions of the package.
	VersionCount int `json:"version_count"`
	// FirstPublishedAt is when the package's first version was published.
	FirstPublishedAt *time.Time   `json:"first_published_at,omitempty"`
	Maintainers      []Maintainer `json:"maintainers"`
	// Deprecated is the deprecation message, empty when not deprecated.
	Deprecated string `json:"deprecated,omitempty"`
	// RepositoryURL is the repository as declared; Repository is it parsed,
	// nil when absent or unparseable (RepositoryError says why).
	RepositoryURL   string      `json:"repository_url,omitempty"`
	Repository      *Repository `json:"repository,omitempty"`
	RepositoryError string      `json:"repository_error,omitempty"`
	Homepage        string      `json:"homepage,omitempty"`
	AuthorURL       string      `json:"author_url,omitempty"`
	License         string      `json:"license,omitempty"`

	// Links are the other fields of the document that name a URL, where
	// publishers put their repository when they declare none (npm:
	// homepage, bugs.url; PyPI: every project_urls label in the
	// document's order, home_page, download_url); see FindRepository.
	// LinksRead is true when the collector read them all; metadata
	// recorded before they were kept has neither.
	Links     []RegistryLink `json:"links,omitempty"`
	LinksRead bool           `json:"links_read,omitempty"`

	// MCPName is the package's mcpName (the MCP registry's server name).
	MCPName string `json:"mcp_name,omitempty"`
	// Provenance is true when the registry holds a provenance attestation
	// (npm: dist.attestations with a SLSA provenance predicate).
	Provenance bool `json:"provenance"`
	// LifecycleScripts are the install-time scripts the manifest declares.
	LifecycleScripts map[string]string `json:"lifecycle_scripts,omitempty"`
	// Unserved names facts the registry's document did not carry at all
	// ("provenance", "maintainers", "deprecation"), as mirrors that strip
	// documents do: nothing can be said about them, in either direction.
	Unserved []string `json:"unserved,omitempty"`
}

// Maintainer is one maintainer of the package. Only the email's domain is
// kept: the domain is the evidence (an expired domain can be re-registered
// to take the account over); the address itself is personal data.
type Maintainer struct {
	Name        string `json:"name"`
	EmailDomain string `json:"email_domain,omitempty"`
}

// Repository is a parsed source repository reference.
type Repository struct {
	Host  string `json:"host"`
	Owner string `json:"owner"`
	Name  string `json:"name"`
	// Directory is a monorepo sub-directory, when declared.
	Directory string `json:"directory,omitempty"`
}

// OSVResult is what OSV knows about the installed tree.
type OSVResult struct {
	// Source is "api" (the OSV API at the signal's endpoint) or
	// "offline-db" (a local database).
	Source string `json:"source"`
	// Packages is the number of packages queried (the whole installed tree).
	Packages int `json:"packages"`
	// Vulnerabilities lists each advisory affecting a package in the tree.
	Vulnerabilities []Vulnerability `json:"vulnerabilities"`
}

// Vulnerability is one OSV advisory affecting one package of the tree.
type Vulnerability struct {
	ID      string   `json:"id"`
	Aliases []string `json:"aliases"`
	Summary string   `json:"summary,omitempty"`
	// Severity is the highest CVSS score found (0 when none), and its
	// vector or the database's rating.
	Score    float64 `json:"score"`
	Severity string  `json:"severity,omitempty"`
	Package  string  `json:"package"`
	Version  string  `json:"version"`
	// Direct is true when the package is the scanned package or one of its
	// direct dependencies.
	Direct bool `json:"direct"`
	// Target is true when the package is the scanned package itself.
	Target bool     `json:"target"`
	Fixed  []string `json:"fixed"`
	// Malware is true for MAL- advisories: malicious packages, not bugs.
	Malware bool `json:"malware"`
}

// SocketResult is Socket's verdict on the package and its tree.
type SocketResult struct {
	// Malware is true when Socket flags the package (or a dependency, see
	// Alerts) as malware.
	Malware bool `json:"malware"`
	// Scores are Socket's 0..1 scores for the package (supply_chain,
	// quality, maintenance, vulnerability, license, overall).
	Scores map[string]float64 `json:"scores,omitempty"`
	Alerts []SocketAlert      `json:"alerts"`
}

// SocketAlert is one Socket alert on a package of the tree.
type SocketAlert struct {
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Category string `json:"category,omitempty"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	// Target is true when the alert is on the scanned package itself.
	Target bool `json:"target"`
}

// GitHubResult is what GitHub says about the repository the metadata names.
type GitHubResult struct {
	// Requested is the owner/name asked for.
	Requested string `json:"requested"`
	Exists    bool   `json:"exists"`
	// FullName is GitHub's owner/name; it differs from Requested when the
	// repository was renamed or moved.
	FullName      string     `json:"full_name,omitempty"`
	Archived      bool       `json:"archived"`
	Disabled      bool       `json:"disabled"`
	Fork          bool       `json:"fork"`
	DefaultBranch string     `json:"default_branch,omitempty"`
	PushedAt      *time.Time `json:"pushed_at,omitempty"`
	CreatedAt     *time.Time `json:"created_at,omitempty"`
	Stars         int        `json:"stars"`
}

// DNSSECResult is the chain-of-trust validation of the domains the package
// leans on (homepage, repository host off the well-known forges, maintainer
// email domains, author URL, the namespace of a reverse-DNS mcpName). The
// signal is observed only when the trust anchor's keys were fetched and
// validated; otherwise nothing below could be judged and the signal is
// unavailable.
type DNSSECResult struct {
	// Resolver is the recursive resolver asked ("host:port"); Anchor the
	// trust anchor the chains start from.
	Resolver  string       `json:"resolver"`
	Anchor    DNSSECAnchor `json:"anchor"`
	CheckedAt time.Time    `json:"checked_at"`
	Domains   []DNSDomain  `json:"domains"`
}

// DNSSECAnchor names a trust anchor: its zone, key tags and where it came
// from ("embedded IANA root anchors" or a file).
type DNSSECAnchor struct {
	Zone    string   `json:"zone"`
	KeyTags []uint16 `json:"key_tags"`
	Source  string   `json:"source"`
}

// DNSSEC states of a domain (RFC 4035 section 4.3).
const (
	DNSSecure        = "secure"
	DNSInsecure      = "insecure"
	DNSBogus         = "bogus"
	DNSIndeterminate = "indeterminate"
)

// DNSDomain is the judgement on one domain.
type DNSDomain struct {
	Name string `json:"name"`
	// Sources say where the name came from: homepage, repository,
	// maintainer_email, author_url, mcp_name.
	Sources []string `json:"sources"`
	// Status is secure, insecure, bogus or indeterminate; BogusReason
	// says why a bogus chain is bogus (bad_signature, signature_expired,
	// signature_not_yet_valid, no_dnskey_matching_ds, dnskey_revoked,
	// missing_rrsig, missing_dnskey, missing_denial_proof,
	// dname_synthesis_mismatch).
	Status      string `json:"status"`
	BogusReason string `json:"bogus_reason,omitempty"`
	// Exists is yes, no (NXDOMAIN) or unknown; NXDomainProof how a
	// nonexistence was proven (nsec, nsec3, nsec3_optout, none).
	Exists        string   `json:"exists"`
	NXDomainProof string   `json:"nxdomain_proof,omitempty"`
	CNAMEs        []string `json:"cnames,omitempty"`
	DanglingCNAME bool     `json:"dangling_cname,omitempty"`
	// Chain lists the zones from the anchor down, each with its state.
	Chain []DNSZoneStep `json:"chain"`
	Error string        `json:"error,omitempty"`
}

// DNSZoneStep is one zone on a chain of trust.
type DNSZoneStep struct {
	Zone        string   `json:"zone"`
	Status      string   `json:"status"`
	BogusReason string   `json:"bogus_reason,omitempty"`
	DSKeyTags   []uint16 `json:"ds_key_tags,omitempty"`
	KeyTags     []uint16 `json:"key_tags,omitempty"`
	Algorithms  []int    `json:"algorithms,omitempty"`
	DSDenial    string   `json:"ds_denial,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// HasSource reports whether the domain came from src.
func (d DNSDomain) HasSource(src string) bool {
	for _, s := range d.Sources {
		if s == src {
			return true
		}
	}
	return false
}
