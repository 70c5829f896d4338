package dnssec

import (
	"net/mail"
	"net/netip"
	"net/url"
	"strings"

	"github.com/miekg/dns"
)

// Source says where a domain name came from in a package's metadata.
type Source string

// The sources Domains derives names from.
const (
	SourceHomepage        Source = "homepage"
	SourceRepository      Source = "repository"
	SourceMaintainerEmail Source = "maintainer_email"
	SourceAuthorURL       Source = "author_url"
	SourceMCPName         Source = "mcp_name"
)

// Domain is one name to validate and every place it came from.
type Domain struct {
	// Name is lower case, without the trailing dot.
	Name    string   `json:"name"`
	Sources []Source `json:"sources"`
}

// Inputs are the plain metadata fields Domains reads. Empty fields are
// ignored.
type Inputs struct {
	Homepage         string
	Repository       string
	MaintainerEmails []string
	AuthorURL        string
	// MCPName is the server's MCP registry name, a reverse-DNS namespace
	// and a server name: "com.example/server".
	MCPName string
}

// hostedSuffixes are code forges, their page hosts and package registries.
// A name under one of them says nothing about the package's own domain (its
// DNSSEC is the forge's), so Domains leaves it out.
var hostedSuffixes = []string{
	"github.com", "githubusercontent.com", "github.io",
	"gitlab.com", "gitlab.io",
	"bitbucket.org", "bitbucket.io",
	"codeberg.org", "codeberg.page",
	"sourceforge.net", "sourceforge.io",
	"gitee.com", "sr.ht", "launchpad.net", "savannah.gnu.org",
	"npmjs.com", "npmjs.org", "pypi.org",
}

// Domains derives the names to validate from a package's metadata: the
// hosts of the homepage, repository and author URLs, the domains of the
// maintainers' email addresses, and the namespace of the MCP registry name
// read as reverse DNS ("com.example.mcp/x" is mcp.example.com). Names under
// code forges and registries are skipped, as are "io.github.*" registry
// names (GitHub's namespace), IP literals, localhost, single-label names and
// names that are not ASCII host names. Each name appears once, in the order
// first seen, with all its sources.
func Domains(in Inputs) []Domain {
	var out []Domain
	index := map[string]int{}
	add := func(name string, src Source) {
		name, ok := normalize(name)
		if !ok || hosted(name) {
			return
		}
		if i, ok := index[name]; ok {
			for _, s := range out[i].Sources {
				if s == src {
					return
				}
			}
			out[i].Sources = append(out[i].Sources, src)
			return
		}
		index[name] = len(out)
		out = append(out, Domain{Name: name, Sources: []Source{src}})
	}
	add(urlHost(in.Homepage), SourceHomepage)
	add(repositoryHost(in.Repository), SourceRepository)
	for _, e := range in.MaintainerEmails {
		add(emailDomain(e), SourceMaintainerEmail)
	}
	add(urlHost(in.AuthorURL), SourceAuthorURL)
	add(mcpNameDomain(in.MCPName), SourceMCPName)
	return out
}

// normalize lower-cases a host name and strips the trailing dot; ok is
// false for anything that is not a multi-label ASCII host name.
func normalize(name string) (string, bool) {
	name, labels, ok := hostName(name)
	if !ok || labels < 2 {
		return "", false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return "", false
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return "", false
	}
	return name, true
}

// hostName lower-cases a name, strips the trailing dot and checks that it
// is an ASCII host name (letters, digits, hyphens, underscores, dots),
// returning its label count.
func hostName(name string) (string, int, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.TrimSuffix(name, ".")
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return "", 0, false
	}
	for _, r := range name {
		ok := r == '-' || r == '.' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		if !ok {
			return "", 0, false
		}
	}
	n, ok := dns.IsDomainName(name)
	return name, n, ok
}

func hosted(name string) bool {
	for _, s := range hostedSuffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return true
		}
	}
	return false
}

// urlHost returns the host of an absolute URL, or of "host/path" written
// without a scheme.
func urlHost(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// repositoryHost understands the forms package.json uses: URLs with a
// "git+" prefix, scp-like "git@host:path", and the "github:user/repo" or
// bare "user/repo" shorthands (which name a forge, so they give nothing).
func repositoryHost(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	raw = strings.TrimPrefix(raw, "git+")
	if strings.Contains(raw, "://") {
		return urlHost(raw)
	}
	// scp-like: [user@]host:path
	if at := strings.Index(raw, "@"); at >= 0 {
		rest := raw[at+1:]
		if colon := strings.Index(rest, ":"); colon > 0 {
			return rest[:colon]
		}
		return ""
	}
	// "github:user/repo", "gitlab:...", "gist:..." and "user/repo" are npm
	// shorthands for forges.
	return ""
}

func emailDomain(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if a, err := mail.ParseAddress(raw); err == nil {
		raw = a.Address
	}
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return ""
	}
	return strings.Trim(raw[at+1:], "<> ")
}

// mcpNameDomain reads the namespace of an MCP registry name as reverse DNS:
// "com.example.mcp/x" names mcp.example.com. "io.github.user/x" is a GitHub
// account, not a domain, and gives nothing.
func mcpNameDomain(raw string) string {
	raw = strings.TrimSpace(raw)
	slash := strings.Index(raw, "/")
	if slash <= 0 {
		return ""
	}
	labels := strings.Split(strings.ToLower(raw[:slash]), ".")
	if len(labels) < 2 {
		return ""
	}
	if labels[0] == "io" && labels[1] == "github" {
		return ""
	}
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.Join(labels, ".")
}
