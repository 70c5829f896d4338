package supplychain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// The official MCP registry API, as this client uses it.
//
// Where it was verified (github.com/modelcontextprotocol/registry):
//   - docs/reference/api/openapi.yaml (spec "2025-12-01"), the paths
//     /v0.1/servers/{serverName}/versions/{version} ("Use the special
//     version `latest` to get the latest version"; serverName and version
//     URL-encoded, "com.example%2Fmy-server"), its 404 "Server or version
//     not found", the include_deleted query parameter (default false), and
//     the ServerResponse schema: {"server": ServerDetail, "_meta":
//     {"io.modelcontextprotocol.registry/official": {status
//     (active|deprecated|deleted), statusMessage, statusChangedAt,
//     publishedAt, updatedAt, isLatest}}}.
//   - docs/reference/api/CHANGELOG.md: 2025-09-29 moved status from the
//     server to _meta; 2025-10-17 introduced /v0.1 as the stable API
//     ("all /v0/ endpoints are now also available at /v0.1/", identical
//     behaviour) and removed GET /v0/servers/{serverName} in favour of
//     .../versions/latest; an unreleased entry adds include_deleted.
//   - docs/guides/consuming/use-rest-api.md: "Use /v0.1/ for production
//     applications requiring API stability"; deleted entries are hidden
//     unless include_deleted=true.
//   - internal/api/handlers/v0/servers.go: one handler registered under
//     both prefixes (so /v0 answers the same shape), which URL-unescapes
//     the name and version, treats "latest" specially, and answers 404
//     "Server not found" through huma, i.e. an application/problem+json
//     body {"title": "Not Found", "status": 404, "detail": "..."}.
//   - The server.json format (ServerDetail): the same openapi.yaml and
//     docs/reference/server-json/server.schema.json and
//     generic-server-json.md: name pattern ^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$
//     (3 to 200 characters, exactly one "/"), packages with registryType,
//     identifier, version, registryBaseUrl, runtimeHint, transport {type},
//     runtimeArguments and packageArguments (Argument: positional or
//     named, Input fields value, default, isRequired, isSecret, variables),
//     environmentVariables (KeyValueInput: name plus Input fields), and
//     remotes {type, url}.
//
// The client asks /v0.1 first, with include_deleted=true so that a
// deleted entry is reported as deleted rather than as unknown. A registry
// (a mirror or subregistry) that serves only /v0 answers /v0.1 with a 404
// that is not the registry's JSON error; then the same path under /v0 is
// asked once. The shapes before 2025-09-29 (status inside the server,
// snake_case fields) are not read.

// DefaultMCPRegistry is the official MCP registry.
const DefaultMCPRegistry = "https://registry.modelcontextprotocol.io"

// Sentinel errors of MCP registry resolution. A registry that does not
// answer is ErrRegistryUnreachable, shared with the npm client.
var (
	// ErrServerNotFound: the registry does not know the server (or the
	// version asked for).
	ErrServerNotFound = errors.New("server not found in the MCP registry")
	// ErrServerDeleted: the registry lists the entry as deleted, which it
	// does for servers taken down under its moderation policy.
	ErrServerDeleted = errors.New("server deleted from the MCP registry")
	// ErrBadServerName: the name is not an MCP registry server name.
	ErrBadServerName = errors.New("invalid MCP registry server name")
	// ErrRemoteOnly: the server is offered only as remote endpoints, which
	// are another track with another rubric.
	ErrRemoteOnly = errors.New("server has only remote endpoints (remote track, not scanned here)")
	// ErrNoScannablePackage: the server declares packages, but none that
	// this program scans (an npm package run over stdio).
	ErrNoScannablePackage = errors.New("server has no npm or PyPI package run over stdio")
)

// mcpServerNameRe is the server.json schema's pattern for name.
var mcpServerNameRe = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// ValidMCPServerName reports whether name is a server name as the
// server.json schema defines it: a reverse-DNS namespace
// ("io.github.owner", "com.example"), one "/", and the server's own name,
// 3 to 200 characters in all.
func ValidMCPServerName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %q %s", ErrBadServerName, name, why) }
	switch {
	case name == "":
		return bad("is empty; give the name the registry shows, such as io.github.owner/server")
	case strings.HasPrefix(name, "@"):
		return bad("is an npm package name, not a registry server name (scan it as npm:" + name + ")")
	case !strings.Contains(name, "/"):
		return bad("has no \"/\": a server name is <reverse-DNS namespace>/<name>, such as io.github.owner/server or com.example/weather")
	case strings.Count(name, "/") > 1:
		return bad("has more than one \"/\": a server name is <reverse-DNS namespace>/<name>")
	case len(name) < 3 || len(name) > 200:
		return bad("must be 3 to 200 characters")
	case !mcpServerNameRe.MatchString(name):
		return bad("may hold only letters, digits, '.' and '-' before the \"/\" and letters, digits, '.', '_' and '-' after it")
	}
	return nil
}

// MCPRegistry is a client for the official MCP registry API or a registry
// that speaks it.
type MCPRegistry struct{ endpoint }

// NewMCPRegistry returns a client for the registry at baseURL (the host
// root, without /v0.1; DefaultMCPRegistry when empty). A nil hc gets a
// client with a 30 second timeout.
func NewMCPRegistry(hc *http.Client, baseURL string) *MCPRegistry {
	return &MCPRegistry{newEndpoint(hc, baseURL, DefaultMCPRegistry)}
}

// WithRetry sets how network errors, 429 and 5xx are retried (by default
// four attempts, half a second apart and doubling, as the npm client).
func (r *MCPRegistry) WithRetry(rt thirdparty.Retry) *MCPRegistry {
	r.retry = rt
	return r
}

// Base returns the registry's base URL.
func (r *MCPRegistry) Base() string { return r.base }

// RegistryServer is one version of a server as the registry lists it.
type RegistryServer struct {
	Name, Version, Description string
	Title                      string
	// SchemaURL is the server.json $schema the publisher declared.
	SchemaURL string
	// Status is the registry's lifecycle status (active, deprecated,
	// deleted) from its official metadata; "" when the registry gave none.
	Status        string
	StatusMessage string
	PublishedAt   *time.Time
	IsLatest      bool
	Packages      []RegistryPackage
	Remotes       []RegistryRemote
	// Repository is repository.url as declared; RepositorySubfolder its
	// monorepo sub-directory.
	Repository          string
	RepositorySubfolder string
	WebsiteURL          string
}

// RegistryRemote is a remote endpoint of a server.
type RegistryRemote struct {
	Type, URL string
}

// RegistryPackage is one package a server can be run from.
type RegistryPackage struct {
	RegistryType, Identifier, Version, RegistryBaseURL, RuntimeHint string
	// Transport is the package's transport type ("stdio",
	// "streamable-http", "sse"); "" when the record declares none.
	Transport  string
	FileSHA256 string
	// RuntimeArgs and PackageArgs are the declared arguments resolved to
	// literal argv elements, in order: a positional argument is its value,
	// a named one "name=value" (the schema's "A command-line
	// `--flag={value}`"). The value is the argument's value, else its
	// default; {identifiers} are replaced from its variables by their
	// value, else their default. An optional argument without either is
	// left out. An argument whose value is not fixed (required with no
	// value or default, a variable with neither, a secret with only a
	// default, an unknown type) is not guessed: it is left out and
	// described in Unfixed.
	RuntimeArgs, PackageArgs []string
	Unfixed                  []string
	// EnvNames are the declared environment variable names, in order;
	// values, even fixed ones, are never kept. EnvSecret and EnvRequired
	// hold each name's isSecret and isRequired.
	EnvNames    []string
	EnvSecret   map[string]bool
	EnvRequired map[string]bool
}

// Server returns the server called name at version from the registry:
// the latest when version is "" or "latest". A malformed name is an
// error before any request. A deprecated server is returned with its
// Status; a deleted one is ErrServerDeleted.
func (r *MCPRegistry) Server(ctx context.Context, name, version string) (*RegistryServer, error) {
	if err := ValidMCPServerName(name); err != nil {
		return nil, err
	}
	version = strings.TrimSpace(version)
	asked := version
	if version == "" {
		version = "latest"
	}
	what := name
	if asked != "" && asked != "latest" {
		what = name + " version " + asked
	}
	rel := "/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version) + "?include_deleted=true"
	body, err := r.get(ctx, "/v0.1"+rel, what)
	if errors.Is(err, errRouteNotFound) {
		body, err = r.get(ctx, "/v0"+rel, what)
	}
	if errors.Is(err, errRouteNotFound) {
		err = fmt.Errorf("%w: %s is not in the MCP registry at %s", ErrServerNotFound, what, r.base)
	}
	if err != nil {
		return nil, err
	}
	s, err := decodeServerResponse(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the answer for %s is not a registry server response: %v", ErrRegistryUnreachable, r.base, what, err)
	}
	if !strings.EqualFold(s.Name, name) {
		return nil, fmt.Errorf("%w: %s answered for %q when asked for %q", ErrRegistryUnreachable, r.base, s.Name, name)
	}
	if asked != "" && asked != "latest" && s.Version != asked {
		return nil, fmt.Errorf("%w: %s answered version %q of %s when asked for %q", ErrRegistryUnreachable, r.base, s.Version, name, asked)
	}
	if s.Status == "deleted" {
		msg := ""
		if s.StatusMessage != "" {
			msg = ": " + s.StatusMessage
		}
		return nil, fmt.Errorf("%w: %s %s is listed as deleted%s", ErrServerDeleted, s.Name, s.Version, msg)
	}
	return s, nil
}

// Versions returns every version of the server called name the registry
// lists, deleted ones included (each with its Status), in the registry's
// order (newest first): GET /v0.1/servers/{name}/versions. all is false
// when the registry does not serve that list (a registry older than the
// list, or a partial mirror) and only the latest version could be read,
// or when the list says it continues on another page. A server the
// registry does not know is ErrServerNotFound; a registry that does not
// answer, ErrRegistryUnreachable.
func (r *MCPRegistry) Versions(ctx context.Context, name string) (servers []*RegistryServer, all bool, err error) {
	if err := ValidMCPServerName(name); err != nil {
		return nil, false, err
	}
	what := name + " (all versions)"
	rel := "/servers/" + url.PathEscape(name) + "/versions?include_deleted=true"
	body, err := r.get(ctx, "/v0.1"+rel, what)
	if errors.Is(err, errRouteNotFound) {
		body, err = r.get(ctx, "/v0"+rel, what)
	}
	if errors.Is(err, errRouteNotFound) {
		// No list: the latest version is what can be read.
		latest := "/servers/" + url.PathEscape(name) + "/versions/latest?include_deleted=true"
		body, err = r.get(ctx, "/v0.1"+latest, name)
		if errors.Is(err, errRouteNotFound) {
			body, err = r.get(ctx, "/v0"+latest, name)
		}
		if errors.Is(err, errRouteNotFound) {
			err = fmt.Errorf("%w: %s is not in the MCP registry at %s", ErrServerNotFound, name, r.base)
		}
		if err != nil {
			return nil, false, err
		}
		s, err := decodeServerResponse(body)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %s: the answer for %s is not a registry server response: %v", ErrRegistryUnreachable, r.base, name, err)
		}
		if !strings.EqualFold(s.Name, name) {
			return nil, false, fmt.Errorf("%w: %s answered for %q when asked for %q", ErrRegistryUnreachable, r.base, s.Name, name)
		}
		return []*RegistryServer{s}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var list struct {
		Servers  []mcpServerResponse `json:"servers"`
		Metadata struct {
			NextCursor string `json:"nextCursor"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, false, fmt.Errorf("%w: %s: the answer for %s is not a registry server list: %v", ErrRegistryUnreachable, r.base, what, err)
	}
	for _, resp := range list.Servers {
		s, err := resp.decode()
		if err != nil {
			return nil, false, fmt.Errorf("%w: %s: an entry of the answer for %s is not a registry server response: %v", ErrRegistryUnreachable, r.base, what, err)
		}
		if !strings.EqualFold(s.Name, name) {
			return nil, false, fmt.Errorf("%w: %s answered for %q when asked for %q", ErrRegistryUnreachable, r.base, s.Name, name)
		}
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return nil, false, fmt.Errorf("%w: %s is not in the MCP registry at %s (no version listed)", ErrServerNotFound, name, r.base)
	}
	return servers, list.Metadata.NextCursor == "", nil
}

// errRouteNotFound is a 404 that is not the registry's own JSON error:
// the path is not served at all (an older or partial implementation).
var errRouteNotFound = errors.New("route not found")

func (r *MCPRegistry) get(ctx context.Context, p, what string) ([]byte, error) {
	u := r.base + p
	resp, err := r.retry.Do(ctx, r.hc, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrRegistryUnreachable, r.base, err)
		}
		req.Header.Set("Accept", "application/json, application/problem+json")
		return req, nil
	})
	if err != nil {
		if errors.Is(err, ErrRegistryUnreachable) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: the MCP registry at %s did not answer for %s: %v", ErrRegistryUnreachable, r.base, what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: the MCP registry at %s: reading the answer for %s: %v", ErrRegistryUnreachable, r.base, what, err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return body, nil
	case resp.StatusCode == http.StatusNotFound:
		if _, ok := registryErrorDetail(body); !ok {
			return nil, errRouteNotFound
		}
		return nil, fmt.Errorf("%w: %s is not in the MCP registry at %s", ErrServerNotFound, what, r.base)
	default:
		detail, _ := registryErrorDetail(body)
		if detail != "" {
			detail = ": " + detail
		}
		return nil, fmt.Errorf("%w: the MCP registry at %s answered %s for %s%s", ErrRegistryUnreachable, r.base, resp.Status, what, detail)
	}
}

// registryErrorDetail reads the registry's error body: huma's problem
// JSON {"title", "status", "detail"}, or {"error"} as the generic API's
// openapi.yaml describes it. ok is false when the body is neither.
func registryErrorDetail(body []byte) (string, bool) {
	var e struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", false
	}
	switch {
	case e.Detail != "":
		return e.Detail, true
	case e.Error != "":
		return e.Error, true
	case e.Title != "" || e.Status != 0:
		return e.Title, true
	}
	return "", false
}

// The wire form of a ServerResponse.
type (
	mcpServerResponse struct {
		Server *mcpServerJSON `json:"server"`
		Meta   struct {
			Official *struct {
				Status        string `json:"status"`
				StatusMessage string `json:"statusMessage"`
				PublishedAt   string `json:"publishedAt"`
				IsLatest      bool   `json:"isLatest"`
			} `json:"io.modelcontextprotocol.registry/official"`
		} `json:"_meta"`
	}
	mcpServerJSON struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Version     string `json:"version"`
		WebsiteURL  string `json:"websiteUrl"`
		Repository  struct {
			URL       string `json:"url"`
			Subfolder string `json:"subfolder"`
		} `json:"repository"`
		Packages []mcpPackage `json:"packages"`
		Remotes  []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"remotes"`
	}
	mcpPackage struct {
		RegistryType    string `json:"registryType"`
		RegistryBaseURL string `json:"registryBaseUrl"`
		Identifier      string `json:"identifier"`
		Version         string `json:"version"`
		FileSHA256      string `json:"fileSha256"`
		RuntimeHint     string `json:"runtimeHint"`
		Transport       struct {
			Type string `json:"type"`
		} `json:"transport"`
		RuntimeArguments     []mcpArgument `json:"runtimeArguments"`
		PackageArguments     []mcpArgument `json:"packageArguments"`
		EnvironmentVariables []struct {
			Name string `json:"name"`
			mcpInput
		} `json:"environmentVariables"`
	}
	mcpInput struct {
		Value      *string `json:"value"`
		Default    *string `json:"default"`
		IsRequired bool    `json:"isRequired"`
		IsSecret   bool    `json:"isSecret"`
	}
	mcpArgument struct {
		mcpInput
		Type      string              `json:"type"`
		Name      string              `json:"name"`
		ValueHint string              `json:"valueHint"`
		Variables map[string]mcpInput `json:"variables"`
	}
)

func decodeServerResponse(body []byte) (*RegistryServer, error) {
	var resp mcpServerResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, err
	}
	return resp.decode()
}

func (resp mcpServerResponse) decode() (*RegistryServer, error) {
	if resp.Server == nil {
		return nil, errors.New(`no "server" object`)
	}
	sj := resp.Server
	s := &RegistryServer{
		Name:                sj.Name,
		Version:             sj.Version,
		Description:         sj.Description,
		Title:               sj.Title,
		SchemaURL:           sj.Schema,
		Repository:          sj.Repository.URL,
		RepositorySubfolder: sj.Repository.Subfolder,
		WebsiteURL:          sj.WebsiteURL,
	}
	if o := resp.Meta.Official; o != nil {
		s.Status, s.StatusMessage, s.IsLatest = o.Status, o.StatusMessage, o.IsLatest
		if t, err := time.Parse(time.RFC3339Nano, o.PublishedAt); err == nil {
			t = t.UTC()
			s.PublishedAt = &t
		}
	}
	for _, rm := range sj.Remotes {
		s.Remotes = append(s.Remotes, RegistryRemote{Type: rm.Type, URL: rm.URL})
	}
	for _, p := range sj.Packages {
		s.Packages = append(s.Packages, p.resolve())
	}
	return s, nil
}

func (p mcpPackage) resolve() RegistryPackage {
	out := RegistryPackage{
		RegistryType:    p.RegistryType,
		Identifier:      p.Identifier,
		Version:         p.Version,
		RegistryBaseURL: p.RegistryBaseURL,
		RuntimeHint:     p.RuntimeHint,
		Transport:       p.Transport.Type,
		FileSHA256:      p.FileSHA256,
	}
	out.RuntimeArgs, out.Unfixed = resolveArguments("runtimeArguments", p.RuntimeArguments, out.Unfixed)
	out.PackageArgs, out.Unfixed = resolveArguments("packageArguments", p.PackageArguments, out.Unfixed)
	for _, e := range p.EnvironmentVariables {
		if e.Name == "" {
			continue
		}
		if out.EnvSecret == nil {
			out.EnvSecret, out.EnvRequired = map[string]bool{}, map[string]bool{}
		}
		if _, dup := out.EnvSecret[e.Name]; !dup {
			out.EnvNames = append(out.EnvNames, e.Name)
		}
		out.EnvSecret[e.Name] = out.EnvSecret[e.Name] || e.IsSecret
		out.EnvRequired[e.Name] = out.EnvRequired[e.Name] || e.IsRequired
	}
	return out
}

// resolveArguments turns declared arguments into argv (see
// RegistryPackage), appending to unfixed a description of each argument
// whose value is not fixed.
func resolveArguments(list string, args []mcpArgument, unfixed []string) ([]string, []string) {
	var argv []string
	for i, a := range args {
		label := fmt.Sprintf("%s[%d]", list, i)
		switch a.Type {
		case "positional":
			if a.ValueHint != "" {
				label += fmt.Sprintf(" positional %q", a.ValueHint)
			} else {
				label += " positional"
			}
		case "named":
			if a.Name == "" {
				unfixed = append(unfixed, label+": a named argument without a name")
				continue
			}
			label += fmt.Sprintf(" named %q", a.Name)
		default:
			unfixed = append(unfixed, fmt.Sprintf("%s: type %q is neither positional nor named", label, a.Type))
			continue
		}
		v, why := a.fixedValue()
		switch {
		case why != "":
			unfixed = append(unfixed, label+": "+why)
			continue
		case v == nil:
			continue // optional and without a value: not passed
		}
		if a.Type == "named" {
			argv = append(argv, a.Name+"="+*v)
		} else {
			argv = append(argv, *v)
		}
	}
	return argv, unfixed
}

// mcpVariableRe is an {identifier} in a value, as the schema's URL
// templates name them.
var mcpVariableRe = regexp.MustCompile(`\{([a-zA-Z_][a-zA-Z0-9_]*)\}`)

// fixedValue returns the argument's literal value; nil for an optional
// argument without one; or why the value is not fixed.
func (a mcpArgument) fixedValue() (*string, string) {
	v, why := a.mcpInput.fixed()
	if why != "" || v == nil {
		if why == "" && a.IsRequired {
			why = "required, with no value or default"
		}
		return nil, why
	}
	var missing []string
	s := mcpVariableRe.ReplaceAllStringFunc(*v, func(m string) string {
		name := m[1 : len(m)-1]
		in, ok := a.Variables[name]
		if !ok {
			// The schema: an identifier not in variables "should remain
			// unchanged".
			return m
		}
		val, why := in.fixed()
		if val == nil {
			if why == "" {
				why = "no value or default"
			}
			missing = append(missing, fmt.Sprintf("{%s} (%s)", name, why))
			return m
		}
		return *val
	})
	if len(missing) > 0 {
		return nil, "variable " + strings.Join(missing, ", ") + " not fixed"
	}
	return &s, ""
}

// fixed returns the input's value, else its default; nil when it has
// neither. A secret's default is a placeholder, never a value to use.
func (in mcpInput) fixed() (*string, string) {
	if in.Value != nil && *in.Value != "" {
		return in.Value, ""
	}
	if in.Default != nil && *in.Default != "" {
		if in.IsSecret {
			return nil, "a secret with only a default"
		}
		return in.Default, ""
	}
	return nil, ""
}

// Choose returns the package a scan takes: the first npm package run over
// stdio, else the first PyPI package run over stdio, with notes on what
// else the server declares and was passed over. A server with only
// remotes is ErrRemoteOnly; one whose packages include no npm or PyPI
// package over stdio is ErrNoScannablePackage, naming what it does
// declare.
func (s *RegistryServer) Choose() (RegistryPackage, []string, error) {
	chosen := -1
	for _, eco := range ecosystem.All {
		for i, p := range s.Packages {
			if p.RegistryType == eco.Name() && (p.Transport == "stdio" || p.Transport == "") {
				chosen = i
				break
			}
		}
		if chosen >= 0 {
			break
		}
	}
	var others []string
	for i, p := range s.Packages {
		if i != chosen {
			others = append(others, p.RegistryType+" "+p.describe())
		}
	}
	if chosen < 0 {
		switch {
		case len(s.Packages) == 0 && len(s.Remotes) > 0:
			return RegistryPackage{}, nil, fmt.Errorf("%w: %s %s declares no package, only %s", ErrRemoteOnly, s.Name, s.Version, s.describeRemotes())
		case len(s.Packages) == 0:
			return RegistryPackage{}, nil, fmt.Errorf("%w: %s %s declares no package and no remote", ErrNoScannablePackage, s.Name, s.Version)
		}
		declared := strings.Join(others, "; ")
		if len(s.Remotes) > 0 {
			declared += "; and " + s.describeRemotes()
		}
		return RegistryPackage{}, nil, fmt.Errorf("%w: %s %s declares %s", ErrNoScannablePackage, s.Name, s.Version, declared)
	}
	p := s.Packages[chosen]
	eco := ecosystem.MustOf(p.RegistryType)
	kind := eco.Title()
	var notes []string
	if p.Transport == "" {
		notes = append(notes, "the "+kind+" package declares no transport; taken as stdio")
	}
	if p.Version == "" {
		notes = append(notes, "the "+kind+" package declares no version, so the registry entry does not say which version it describes")
	} else if s.Version != "" && p.Version != s.Version {
		notes = append(notes, fmt.Sprintf("the %s package's version %s differs from the server's version %s", kind, p.Version, s.Version))
	}
	defaultBase, index := eco.Registry()
	if b := strings.TrimRight(p.RegistryBaseURL, "/"); b != "" && b != strings.TrimRight(defaultBase, "/") {
		notes = append(notes, fmt.Sprintf("the %s package names the registry %s; the scan resolves it through the configured %s", kind, p.RegistryBaseURL, index))
	}
	if len(p.Unfixed) > 0 {
		notes = append(notes, fmt.Sprintf("%d argument(s) have no fixed value: %s", len(p.Unfixed), strings.Join(p.Unfixed, "; ")))
	}
	if len(others) > 0 {
		notes = append(notes, "also declares, not scanned: "+strings.Join(others, "; "))
	}
	if len(s.Remotes) > 0 {
		notes = append(notes, "also declares "+s.describeRemotes()+", another track, not scanned")
	}
	if s.Status == "deprecated" {
		msg := "the registry lists this server as deprecated"
		if s.StatusMessage != "" {
			msg += ": " + s.StatusMessage
		}
		notes = append(notes, msg)
	}
	return p, notes, nil
}

// describe names a package: identifier@version, and its transport when
// not stdio.
func (p RegistryPackage) describe() string {
	d := p.Identifier
	if p.Version != "" {
		d += "@" + p.Version
	}
	if p.Transport != "" && p.Transport != "stdio" {
		d += " (" + p.Transport + ")"
	}
	return d
}

func (s *RegistryServer) describeRemotes() string {
	var rs []string
	for _, r := range s.Remotes {
		rs = append(rs, r.Type+" "+thirdparty.RedactURL(r.URL))
	}
	word := "remote"
	if len(rs) > 1 {
		word = "remotes"
	}
	return word + " " + strings.Join(rs, ", ")
}
