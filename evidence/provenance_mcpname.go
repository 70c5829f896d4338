package evidence

import "time"

// SignalMCPRegistry is the MCP registry asked about the package's mcpName:
// whether the entry of that name lists this package, as the registry
// itself checked when the entry was published, and whether the domain of a
// reverse-DNS namespace publishes the registry's key record. It is
// observed when the registry answered (an entry, or none of that name);
// not_assessed when there was nothing to ask (no mcpName, or one that is
// not a registry server name) or the operator skipped it; unavailable when
// the registry did not answer or none is configured.
const SignalMCPRegistry = "mcp_registry"

// MCPNameCheck is the MCP registry's answer about an mcpName, and what the
// namespace's domain publishes (Supply.MCPRegistry).
//
// The registry proves a namespace when a server is published: io.github.
// <owner> by a GitHub login or a GitHub Actions token of that owner; a
// reverse-DNS namespace (com.example, com.example.sub) by a signature with
// a key the domain publishes, in a DNS TXT record at the domain (which
// grants the domain and its subdomains) or at
// https://<domain>/.well-known/mcp-registry-auth (which grants that exact
// domain). It then checks that every npm or PyPI package the entry lists
// names the entry: npm's mcpName in package.json, PyPI's "mcp-name:"
// marker in the README. So an entry that lists a package corroborates the
// package's mcpName; an entry that lists only other packages contradicts
// it.
type MCPNameCheck struct {
	// Name is the mcpName asked about; Registry the registry's base URL.
	Name     string `json:"name"`
	Registry string `json:"registry"`
	// CheckedAt is when the registry answered.
	CheckedAt time.Time `json:"checked_at"`
	// Found: the registry has an entry of that name (a version of it,
	// deleted ones included).
	Found bool `json:"found"`
	// AllVersions: Packages come from every version the registry lists
	// (its versions endpoint answered); false when only the latest version
	// could be read (a registry that does not serve the list).
	AllVersions bool `json:"all_versions"`
	// VersionCount is the number of versions read; Latest the latest one.
	VersionCount int    `json:"version_count"`
	Latest       string `json:"latest,omitempty"`
	// Packages are the packages the versions read list, one per registry
	// type and identifier, in the order first met (newest version first).
	Packages []MCPListedPackage `json:"packages,omitempty"`
	// Domain is the domain a reverse-DNS namespace names (com.example.mcp
	// is mcp.example.com); "" for io.github.<owner> namespaces.
	Domain string `json:"domain,omitempty"`
	// KeyRecords are the places the registry would read the namespace's
	// key from, each with its own state: a missing key record is not a
	// contradiction (the registry reads it only at publication, and a
	// namespace may be granted otherwise), and a key record found does not
	// tie this package to the namespace.
	KeyRecords []MCPKeyRecord `json:"key_records,omitempty"`
}

// MCPListedPackage is one package an MCP registry entry lists.
type MCPListedPackage struct {
	// RegistryType is "npm", "pypi", "oci", "nuget", "mcpb", ...
	RegistryType    string `json:"registry_type"`
	Identifier      string `json:"identifier"`
	RegistryBaseURL string `json:"registry_base_url,omitempty"`
	// ServerVersions are the entry's versions that list the package,
	// newest first (at most MCPListedVersionsKept), ServerVersionCount
	// how many in all, and PackageVersions the package versions they
	// name (distinct, in the same order, at most MCPListedVersionsKept).
	ServerVersions     []string `json:"server_versions"`
	ServerVersionCount int      `json:"server_version_count"`
	PackageVersions    []string `json:"package_versions,omitempty"`
	// Active: at least one of those versions is not deleted (the registry
	// deletes a version under its moderation policy).
	Active bool `json:"active"`
}

// MCPListedVersionsKept bounds the versions kept per listed package.
const MCPListedVersionsKept = 20

// Key record methods (MCPKeyRecord.Method) and what each grants.
const (
	MCPKeyDNS  = "dns"  // a TXT record at the domain: the domain and its subdomains
	MCPKeyHTTP = "http" // https://<domain>/.well-known/mcp-registry-auth: that domain only
)

// MCPKeyRecord is one place a namespace's registry key is published.
type MCPKeyRecord struct {
	Method string `json:"method"`
	Domain string `json:"domain"`
	// Covers says which namespaces the record would prove: "domain and
	// subdomains" (DNS) or "domain" (HTTP).
	Covers string `json:"covers"`
	// State is this check's own state (observed, unavailable, error,
	// not_assessed) and Reason why it is not observed.
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// URL is the document asked for (HTTP) and HTTPStatus its answer's
	// status.
	URL        string `json:"url,omitempty"`
	HTTPStatus int    `json:"http_status,omitempty"`
	// DNSSEC is the DNSSEC status of the TXT answer, as the validator
	// judged it (secure, insecure, bogus, indeterminate), and Exists
	// whether the name exists (yes, no, unknown).
	DNSSEC string `json:"dnssec,omitempty"`
	Exists string `json:"exists,omitempty"`
	// Keys are the registry key records found ("v=MCPv1; k=ed25519;
	// p=..."): public keys, nothing secret.
	Keys []string `json:"keys,omitempty"`
}

// Found reports whether the record holds a registry key.
func (k MCPKeyRecord) Found() bool { return k.State == StateObserved && len(k.Keys) > 0 }
