package supplychain

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// TXTAnswer is a TXT RRset as a validating resolver judged it: its
// DNSSEC status (secure, insecure, bogus, indeterminate), whether the
// name exists (yes, no, unknown), and the records, which are set only
// when the status is secure or insecure.
type TXTAnswer struct {
	Status, Exists string
	Records        []string
	Error          string
}

// TXTLookup asks for a name's TXT records through the project's DNSSEC
// validator (the pipeline adapts dnssec.Validator.LookupTXT). An error
// means nothing could be judged (no resolver, a filtering one).
type TXTLookup interface {
	LookupTXT(ctx context.Context, name string) (TXTAnswer, error)
}

// MCPNameChecker asks what the MCP registry, and the domain of a
// reverse-DNS namespace, say about an mcpName, as the registry itself
// checks a namespace and a package (see evidence.MCPNameCheck).
type MCPNameChecker struct {
	// Registry is the MCP registry (nil: the signal is unavailable).
	Registry *MCPRegistry
	// DNS looks up the namespace's TXT key record (nil: unavailable);
	// HTTP fetches its well-known key document (nil: unavailable).
	DNS  TXTLookup
	HTTP *WellKnown
	// Now stamps the answer; nil means time.Now.
	Now func() time.Time
}

// maxKeyDomains bounds the DNS names asked for a namespace's key record:
// the namespace's domain and its parents down to two labels.
const maxKeyDomains = 3

// Check asks the registry for every version of the entry called name and,
// for a reverse-DNS namespace, looks for the registry's key record at the
// domain (DNS TXT at the domain and its parents, whose record grants
// their subdomains; the HTTP document at the domain itself). The error
// wraps ErrNotApplicable for a name that is not a registry server name
// (nothing to ask), thirdparty.ErrUnavailable when no registry is configured or it
// did not answer; otherwise the check is the registry's answer, an entry
// or none. A key record that could not be read has its own state in the
// result and does not fail the check.
func (c *MCPNameChecker) Check(ctx context.Context, name string) (*evidence.MCPNameCheck, Fetch, error) {
	if err := ValidMCPServerName(name); err != nil {
		return nil, Fetch{}, fmt.Errorf("%w: %v", ErrNotApplicable, err)
	}
	if c.Registry == nil {
		return nil, Fetch{}, fmt.Errorf("%w: no MCP registry configured", thirdparty.ErrUnavailable)
	}
	fetch := Fetch{Endpoint: c.Registry.Base()}
	out := &evidence.MCPNameCheck{Name: name, Registry: c.Registry.Base()}
	domain := NamespaceDomain(name)
	out.Domain = domain

	var wg sync.WaitGroup
	if domain != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.KeyRecords = c.keyRecords(ctx, domain)
		}()
	}
	servers, all, err := c.Registry.Versions(ctx, name)
	wg.Wait()
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	switch {
	case errors.Is(err, ErrServerNotFound):
	case errors.Is(err, ErrRegistryUnreachable), errors.Is(err, thirdparty.ErrUnavailable):
		return nil, fetch, fmt.Errorf("%w: %v", thirdparty.ErrUnavailable, err)
	case err != nil:
		return nil, fetch, err
	default:
		out.Found, out.AllVersions, out.VersionCount = true, all, len(servers)
		out.Packages = listedPackages(servers)
		for _, s := range servers {
			if s.IsLatest && out.Latest == "" {
				out.Latest = s.Version
			}
		}
		if out.Latest == "" && len(servers) > 0 && !all {
			out.Latest = servers[0].Version
		}
	}
	out.CheckedAt = now().UTC()
	fetch.FetchedAt = out.CheckedAt
	return out, fetch, nil
}

// listedPackages summarises the packages the versions list, one per
// registry type and identifier, in the order first met.
func listedPackages(servers []*RegistryServer) []evidence.MCPListedPackage {
	var out []evidence.MCPListedPackage
	index := map[string]int{}
	for _, s := range servers {
		for _, p := range s.Packages {
			key := strings.ToLower(p.RegistryType) + "\x00" + p.Identifier
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, evidence.MCPListedPackage{RegistryType: p.RegistryType, Identifier: p.Identifier, RegistryBaseURL: p.RegistryBaseURL, ServerVersions: []string{}})
			}
			lp := &out[i]
			if !slices.Contains(lp.ServerVersions, s.Version) {
				lp.ServerVersionCount++
				if len(lp.ServerVersions) < evidence.MCPListedVersionsKept {
					lp.ServerVersions = append(lp.ServerVersions, s.Version)
				}
			}
			if p.Version != "" && !slices.Contains(lp.PackageVersions, p.Version) && len(lp.PackageVersions) < evidence.MCPListedVersionsKept {
				lp.PackageVersions = append(lp.PackageVersions, p.Version)
			}
			if s.Status != "deleted" {
				lp.Active = true
			}
		}
	}
	return out
}

// NamespaceDomain is the domain a reverse-DNS namespace names
// (com.example.mcp/x is mcp.example.com), lower-cased; "" for an
// io.github.<owner> namespace, which GitHub proves, and for a name
// without a namespace of at least two labels.
func NamespaceDomain(name string) string {
	ns, _, ok := strings.Cut(name, "/")
	labels := strings.Split(strings.ToLower(ns), ".")
	if !ok || len(labels) < 2 || slices.Contains(labels, "") {
		return ""
	}
	if len(labels) >= 2 && labels[0] == "io" && labels[1] == "github" {
		return ""
	}
	slices.Reverse(labels)
	return strings.Join(labels, ".")
}

// mcpKeyRe is the registry's key record: "v=MCPv1; k=<algorithm>;
// p=<base64 public key>" (ed25519, and ecdsap384 since the registry
// added it), read anywhere in a TXT record or the document.
var mcpKeyRe = regexp.MustCompile(`v=MCPv1;\s*k=([^;\s]+);\s*p=([A-Za-z0-9+/=]+)`)

func mcpKeys(texts ...string) []string {
	var out []string
	for _, t := range texts {
		for _, m := range mcpKeyRe.FindAllString(t, -1) {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// keyRecords looks for the registry's key record of domain: a DNS TXT
// record at the domain and each parent down to two labels (a record there
// grants its subdomains), and the HTTP document at the domain itself.
func (c *MCPNameChecker) keyRecords(ctx context.Context, domain string) []evidence.MCPKeyRecord {
	labels := strings.Split(domain, ".")
	var names []string
	for i := 0; i+2 <= len(labels) && len(names) < maxKeyDomains; i++ {
		names = append(names, strings.Join(labels[i:], "."))
	}
	out := make([]evidence.MCPKeyRecord, len(names)+1)
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.dnsKey(ctx, n)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		out[len(names)] = c.httpKey(ctx, domain)
	}()
	wg.Wait()
	return out
}

func (c *MCPNameChecker) dnsKey(ctx context.Context, name string) evidence.MCPKeyRecord {
	k := evidence.MCPKeyRecord{Method: evidence.MCPKeyDNS, Domain: name, Covers: "domain and subdomains"}
	if c.DNS == nil {
		k.State, k.Reason = evidence.StateUnavailable, "no DNS resolver configured (--dnssec-resolver)"
		return k
	}
	a, err := c.DNS.LookupTXT(ctx, name)
	switch {
	case errors.Is(err, ErrNotApplicable):
		k.State, k.Reason = evidence.StateNotAssessed, err.Error()
		return k
	case err != nil:
		k.State, k.Reason = evidence.StateUnavailable, "dns: "+err.Error()
		return k
	}
	k.DNSSEC, k.Exists = a.Status, a.Exists
	switch a.Status {
	case "secure", "insecure":
		k.State = evidence.StateObserved
		k.Keys = mcpKeys(a.Records...)
	case "bogus":
		// The answer fails validation: its data says nothing.
		k.State, k.Reason = evidence.StateObserved, "the TXT answer is bogus: "+a.Error
	default:
		k.State, k.Reason = evidence.StateUnavailable, "the resolver failed for "+name+": "+a.Error
	}
	return k
}

func (c *MCPNameChecker) httpKey(ctx context.Context, domain string) evidence.MCPKeyRecord {
	k := evidence.MCPKeyRecord{Method: evidence.MCPKeyHTTP, Domain: domain, Covers: "domain", URL: "https://" + domain + MCPRegistryAuthPath}
	if c.HTTP == nil {
		k.State, k.Reason = evidence.StateUnavailable, "no HTTP client configured"
		return k
	}
	a, err := c.HTTP.MCPRegistryAuth(ctx, domain)
	k.HTTPStatus = a.Status
	switch {
	case err != nil:
		k.State, k.Reason = evidence.StateUnavailable, err.Error()
	case a.Status >= 500:
		k.State, k.Reason = evidence.StateUnavailable, fmt.Sprintf("the server answered %d", a.Status)
	default:
		k.State = evidence.StateObserved
		k.Keys = mcpKeys(a.Body)
	}
	return k
}
