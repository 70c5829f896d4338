package supplychain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/verifymcp/verifymcp/ecosystem/pypi"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/pkgspec"

	"github.com/Masterminds/semver/v3"
	cpb "github.com/google/osv-scalibr/binary/proto/config_go_proto"
	"github.com/google/osv-scalibr/enricher"
	scalibrosvdev "github.com/google/osv-scalibr/enricher/vulnmatch/osvdev"
	"github.com/google/osv-scalibr/enricher/vulnmatch/osvlocal"
	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/extractor/filesystem"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagelockjson"
	"github.com/google/osv-scalibr/inventory"
	scalibrconfig "github.com/google/osv-scalibr/plugin/config"
	"github.com/google/osv-scalibr/purl"
	osvpb "github.com/ossf/osv-schema/bindings/go/osvschema"
	"osv.dev/bindings/go/osvdev"

	"github.com/verifymcp/verifymcp/evidence"
)

// DefaultOSVEndpoint is the public OSV API.
const DefaultOSVEndpoint = "https://api.osv.dev"

// osvCacheVersion names the shape of a cached OSV answer; it is the first
// part of the cache key, so changing the shape orphans old entries instead
// of misreading them.
const osvCacheVersion = "osv/1"

// OSVOptions configures an OSV client. The zero value asks the public API
// with no cache.
type OSVOptions struct {
	// Endpoint is the OSV API base URL (DefaultOSVEndpoint when empty); a
	// mirror must serve /v1/querybatch and /v1/vulns/{id} below it.
	Endpoint string
	// OfflineDB, when set, is the directory of osv-scanner's local
	// database (what osv-scanner's --local-db-path names, holding one
	// osv-scalibr/<ecosystem>/all.zip per ecosystem: npm/all.zip for a
	// package-lock.json, PyPI/all.zip for a pylock.toml): the scan then
	// matches locally and makes no network request at all. Endpoint,
	// Cache and Retry are not used.
	OfflineDB string
	// Cache stores answers for TTL; nil or a TTL of zero stores nothing.
	Cache thirdparty.Cache
	TTL   time.Duration
	// Refresh skips cache reads (answers are still stored).
	Refresh bool
	// HTTPClient makes each single request (a 30 s timeout when nil); the
	// client retries around it.
	HTTPClient *http.Client
	// Retry says how failed requests are retried; the zero value is
	// thirdparty.DefaultRetry.
	Retry thirdparty.Retry
}

// OSV asks OSV which advisories affect the packages of an installed npm
// or Python tree. It uses osv-scanner's own building blocks (osv-scalibr's
// package-lock.json extractor and its vulnmatch enrichers, osv.dev's Go
// client), so it sees the tree and matches versions as osv-scanner does;
// a pylock.toml is read as osv-scalibr's pylock extractor reads it (see
// extractPylockPackages).
type OSV struct {
	opts     OSVOptions
	endpoint string
	client   *osvdev.OSVClient
}

// NewOSV returns an OSV client configured by opts.
func NewOSV(opts OSVOptions) *OSV {
	if opts.Endpoint == "" {
		opts.Endpoint = DefaultOSVEndpoint
	}
	if opts.Retry.Attempts == 0 {
		opts.Retry = thirdparty.DefaultRetry
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	o := &OSV{opts: opts}
	if opts.OfflineDB != "" {
		o.endpoint = "offline-db:" + opts.OfflineDB
		return o
	}
	o.endpoint = strings.TrimRight(opts.Endpoint, "/")
	cfg := osvdev.DefaultConfig()
	cfg.UserAgent = "verifymcp"
	// The osv.dev client's own retry sleeps without watching the context
	// and ignores Retry-After; ours (thirdparty.Retry.Do, in the transport below)
	// does both, so the osv.dev client makes a single attempt.
	cfg.MaxRetryAttempts = 1
	cfg.JitterMultiplier = 0
	cfg.BackoffDurationMultiplier = 0
	o.client = &osvdev.OSVClient{
		HTTPClient:  &http.Client{Transport: osvRetryTransport{hc: hc, retry: opts.Retry}},
		Config:      cfg,
		BaseHostURL: o.endpoint,
	}
	return o
}

// Endpoint is where answers come from: the API base URL, or
// "offline-db:<directory>".
func (o *OSV) Endpoint() string { return o.endpoint }

// Scan queries OSV for every package of lockfile, which is one of:
//
//   - an npm package-lock.json (lockfileVersion 1, 2 or 3) in which the
//     scanned package target is installed at node_modules/<target>, or
//     linked from there (a workspace): its packages are asked about in the
//     npm ecosystem, and Direct marks the target and the dependencies it
//     resolves to;
//   - a PEP 751 pylock.toml (lock-version 1, as `uv pip compile -o
//     pylock.toml` writes it) that lists target (any spelling of the
//     project name; compared in PEP 503 form): its packages are asked
//     about in the PyPI ecosystem. Such a lock has no dependency graph, so
//     the roles are only target and tree: the target is Target and
//     Direct, every other package has Direct false, meaning "in the tree"
//     (direct or transitive), not "transitive".
//
// Which one it is is told by content (a JSON object, or TOML with
// lock-version).
// A failed query is thirdparty.ErrUnavailable, never an empty answer; a lockfile
// without packages, or one that holds the target without a version, is
// ErrNotApplicable; anything else is our own failure.
//
// In offline-database mode, Fetch.FetchedAt is when the database file was
// last written, so the report shows how old the answer is.
func (o *OSV) Scan(ctx context.Context, lockfile []byte, target string) (*evidence.OSVResult, Fetch, error) {
	fetch := Fetch{Endpoint: o.endpoint}
	if len(bytes.TrimSpace(lockfile)) == 0 {
		return nil, fetch, fmt.Errorf("osv: empty lockfile: %w", ErrNotApplicable)
	}
	var (
		inv   *inventory.Inventory
		roles osvRoles
		eco   string
	)
	switch detectLockfile(lockfile) {
	case lockNPM:
		tree, err := parseOSVLockfile(lockfile)
		if err != nil {
			return nil, fetch, err
		}
		if inv, err = extractOSVPackages(ctx, lockfile); err != nil {
			return nil, fetch, err
		}
		if len(inv.Packages) == 0 {
			return nil, fetch, fmt.Errorf("osv: lockfile lists no installed package: %w", ErrNotApplicable)
		}
		if roles, err = tree.roles(target); err != nil {
			return nil, fetch, err
		}
		eco = osvEcosystemNPM
	case lockPylock:
		l, err := pypi.ParsePylock(lockfile)
		if err != nil {
			return nil, fetch, fmt.Errorf("osv: %w", err)
		}
		inv = extractPylockPackages(l)
		if roles, err = pylockRoles(l, target); err != nil {
			if len(inv.Packages) == 0 && !errors.Is(err, ErrNotApplicable) {
				return nil, fetch, fmt.Errorf("osv: pylock.toml lists no installed package: %w", ErrNotApplicable)
			}
			return nil, fetch, err
		}
		eco = osvEcosystemPyPI
	default:
		return nil, fetch, errors.New("osv: the lockfile is neither an npm package-lock.json (JSON) nor a pylock.toml (TOML with lock-version)")
	}
	keys := make([]string, 0, len(inv.Packages))
	for _, p := range inv.Packages {
		keys = append(keys, p.Name+"@"+p.Version)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)

	var ans *osvAnswer
	var err error
	source := "api"
	if o.opts.OfflineDB != "" {
		source = "offline-db"
		ans, err = o.matchOffline(ctx, inv, eco)
	} else {
		ans, fetch.Cached, err = o.matchAPI(ctx, inv, eco, keys)
	}
	if err != nil {
		return nil, fetch, err
	}
	fetch.FetchedAt = ans.FetchedAt
	res := &evidence.OSVResult{Source: source, Packages: len(keys), Vulnerabilities: make([]evidence.Vulnerability, 0, len(ans.Vulns))}
	for _, v := range ans.Vulns {
		key := v.Package + "@" + v.Version
		v.Target = key == roles.target || roles.targets[key]
		v.Direct = v.Target || roles.direct[key]
		res.Vulnerabilities = append(res.Vulnerabilities, v)
	}
	return res, fetch, nil
}

// The OSV ecosystems a lockfile's packages belong to, as OSV spells them
// (and as osv-scanner names the folders of its offline database).
const (
	osvEcosystemNPM  = "npm"
	osvEcosystemPyPI = "PyPI"
)

// osvAnswer is what OSV said about a set of packages, before the roles of
// the packages in one tree are known; it is the cached value.
type osvAnswer struct {
	FetchedAt time.Time                `json:"fetched_at"`
	Vulns     []evidence.Vulnerability `json:"vulns"`
}

func (o *OSV) matchAPI(ctx context.Context, inv *inventory.Inventory, eco string, keys []string) (*osvAnswer, bool, error) {
	parts := []string{osvCacheVersion, o.endpoint}
	if eco != osvEcosystemNPM {
		// npm's keys stay as they were; another ecosystem's packages of
		// the same name@version are another question.
		parts = append(parts, "ecosystem:"+eco)
	}
	cacheKey := thirdparty.CacheKey(append(parts, keys...)...)
	if o.opts.Cache != nil && !o.opts.Refresh {
		if ans, ok := o.cached(ctx, cacheKey); ok {
			return ans, true, nil
		}
	}
	fetchedAt := time.Now().UTC()
	// An initial-query timeout of zero leaves the deadline to ctx: the
	// enricher would otherwise return a partial answer on its own timeout.
	enr := scalibrosvdev.NewWithClient(o.client, 0)
	if err := enr.Enrich(ctx, &enricher.ScanInput{}, inv); err != nil {
		return nil, false, osvUnavailable(o.endpoint, err)
	}
	vulns, err := osvVulnerabilities(inv.PackageVulns)
	if err != nil {
		// A record we cannot read is a useless answer, not "no advisories".
		return nil, false, osvUnavailable(o.endpoint, err)
	}
	ans := &osvAnswer{FetchedAt: fetchedAt, Vulns: vulns}
	if o.opts.Cache != nil && o.opts.TTL > 0 {
		if b, err := json.Marshal(ans); err == nil {
			if err := o.opts.Cache.Put(ctx, "osv", cacheKey, b, o.opts.TTL); err != nil {
				slog.Warn("osv: cache put failed", "err", err)
			}
		}
	}
	return ans, false, nil
}

// osvUnavailable marks a failed query (network, timeout, 429 or 5xx after
// retries, a body that is not OSV JSON) as the third party's failure: its
// answer is unusable, which must never read as "no advisories".
func osvUnavailable(endpoint string, err error) error {
	if errors.Is(err, thirdparty.ErrUnavailable) {
		return fmt.Errorf("osv query %s: %w", endpoint, err)
	}
	return fmt.Errorf("osv query %s: %w: %w", endpoint, thirdparty.ErrUnavailable, err)
}

// cached returns a stored answer. A cache that fails or holds an unreadable
// value is a miss: the answer is then asked for again.
func (o *OSV) cached(ctx context.Context, key string) (*osvAnswer, bool) {
	b, storedAt, ok, err := o.opts.Cache.Get(ctx, "osv", key)
	if err != nil {
		slog.Warn("osv: cache get failed", "err", err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	var ans osvAnswer
	if err := json.Unmarshal(b, &ans); err != nil {
		slog.Warn("osv: unreadable cache entry", "err", err)
		return nil, false
	}
	if ans.FetchedAt.IsZero() {
		ans.FetchedAt = storedAt
	}
	return &ans, true
}

// osvOfflineZip is where osv-scanner v2 keeps an ecosystem's database
// below its local database directory: one folder per OSV ecosystem name
// (npm/all.zip, PyPI/all.zip), as osv.dev exports them (osv-scalibr's
// osvlocal enricher adds the "osv-scalibr" folder; osv-scanner's older
// documentation says "osv-scanner").
func osvOfflineZip(dir, eco string) string {
	return filepath.Join(dir, "osv-scalibr", eco, "all.zip")
}

func (o *OSV) matchOffline(ctx context.Context, inv *inventory.Inventory, eco string) (*osvAnswer, error) {
	zip := osvOfflineZip(o.opts.OfflineDB, eco)
	st, err := os.Stat(zip)
	if err != nil {
		return nil, fmt.Errorf("osv offline db: %w (osv-scanner's layout is <dir>/osv-scalibr/%s/all.zip, as `osv-scanner --offline-vulnerabilities --download-offline-databases --local-db-path <dir>` writes it)", err, eco)
	}
	cfg := &scalibrconfig.PluginConfig{
		ProtoConfig: &cpb.PluginConfig{PluginSpecific: []*cpb.PluginSpecificConfig{{
			Config: &cpb.PluginSpecificConfig_Osvlocal{Osvlocal: &cpb.OSVLocalConfig{LocalPath: o.opts.OfflineDB, Download: false}},
		}}},
		ClientFactories: osvOfflineClients{scalibrconfig.NewDefaultClientFactories("verifymcp")},
	}
	enr, err := osvlocal.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("osv offline db: %w", err)
	}
	if err := enr.Enrich(ctx, &enricher.ScanInput{}, inv); err != nil {
		return nil, fmt.Errorf("osv offline db %s: %w", zip, err)
	}
	vulns, err := osvVulnerabilities(inv.PackageVulns)
	if err != nil {
		return nil, fmt.Errorf("osv offline db %s: %w", zip, err)
	}
	return &osvAnswer{FetchedAt: st.ModTime().UTC(), Vulns: vulns}, nil
}

// osvOfflineClients gives the offline matcher an HTTP client that refuses
// every request, so offline mode provably stays off the network.
type osvOfflineClients struct {
	*scalibrconfig.DefaultClientFactories
}

func (osvOfflineClients) HTTPClient() *http.Client {
	return &http.Client{Transport: osvNoNetwork{}}
}

type osvNoNetwork struct{}

func (osvNoNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, fmt.Errorf("osv offline db: network request to %s refused", thirdparty.RedactURL(req.URL.String()))
}

// osvRetryTransport runs every request of the osv.dev client through
// thirdparty.Retry.Do, which retries network errors, 429 and 5xx with backoff and
// honours Retry-After and the request's context.
type osvRetryTransport struct {
	hc    *http.Client
	retry thirdparty.Retry
}

func (t osvRetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		// Each attempt reads a fresh copy from GetBody; the original is
		// ours to close.
		defer req.Body.Close()
	}
	return t.retry.Do(req.Context(), t.hc, func(ctx context.Context) (*http.Request, error) {
		r := req.Clone(ctx)
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, errors.New("osv: request body cannot be replayed")
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		return r, nil
	})
}

// extractOSVPackages lists the packages of the tree with osv-scalibr's
// package-lock.json extractor, the one osv-scanner uses, so the query
// covers what osv-scanner would query: every name@version of the tree
// once, aliases resolved to the real package name.
func extractOSVPackages(ctx context.Context, lockfile []byte) (*inventory.Inventory, error) {
	const name = "package-lock.json"
	fsys := fstest.MapFS{name: &fstest.MapFile{Data: lockfile, Mode: 0o444}}
	info, err := fsys.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("osv: lockfile: %w", err)
	}
	inv, err := packagelockjson.Extractor{}.Extract(ctx, &filesystem.ScanInput{
		FS: fsys, Path: name, Root: "/", Info: info, Reader: bytes.NewReader(lockfile),
	})
	if err != nil {
		return nil, fmt.Errorf("osv: extract packages from lockfile: %w", err)
	}
	// A package without a version (a linked folder, a file: dependency)
	// cannot be asked about; osv-scanner skips it the same way.
	inv.Packages = slices.DeleteFunc(inv.Packages, func(p *extractor.Package) bool { return p.Name == "" || p.Version == "" })
	slices.SortFunc(inv.Packages, func(a, b *extractor.Package) int {
		return strings.Compare(a.Name+"@"+a.Version, b.Name+"@"+b.Version)
	})
	return &inv, nil
}

// osvLockfile is the part of package-lock.json that says where each
// package sits in the tree, which is what tells direct from transitive.
// osv-scalibr's extractor lists the packages of every lockfile version but
// not where each one sits (its graph readers are internal to osv-scalibr),
// so the tree is read here.
//
// lockfileVersion 1 (npm 5 and 6) has no "packages" map, only a nested
// "dependencies" tree; osv-scanner reads it, and so does this: each entry
// is put at the location npm 7 would write for it
// ("node_modules/a/node_modules/b"), so one resolver serves every version.
type osvLockfile struct {
	LockfileVersion int                       `json:"lockfileVersion"`
	Packages        map[string]osvLockPackage `json:"packages"`
	Dependencies    json.RawMessage           `json:"dependencies"`
}

type osvLockPackage struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Resolved             string            `json:"resolved"`
	Link                 bool              `json:"link"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	// Spec is what a lockfileVersion 1 entry gives instead of a version
	// (file:x.tgz, a git URL, a tarball URL); Version is then empty.
	Spec string `json:"-"`
}

// osvLockV1Dependency is an entry of lockfileVersion 1's "dependencies"
// tree. "requires" lists what the package depends on (regular and
// optional; npm 6 does not install peers), by range; "dependencies" holds
// the copies installed in its own node_modules. "dev" and "optional" only
// say why it is installed, which osv-scalibr's extractor records.
type osvLockV1Dependency struct {
	Version      string                         `json:"version"`
	Requires     map[string]string              `json:"requires"`
	Dependencies map[string]osvLockV1Dependency `json:"dependencies"`
}

func parseOSVLockfile(b []byte) (*osvLockfile, error) {
	var l osvLockfile
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("osv: parse lockfile: %w", err)
	}
	// npm 7 and later write both shapes into lockfileVersion 2; the
	// packages map is then the authoritative one, as for osv-scanner.
	if l.Packages == nil && len(l.Dependencies) > 0 && !bytes.Equal(l.Dependencies, []byte("null")) {
		var deps map[string]osvLockV1Dependency
		if err := json.Unmarshal(l.Dependencies, &deps); err != nil {
			return nil, fmt.Errorf("osv: parse lockfile version %d dependencies: %w", l.LockfileVersion, err)
		}
		l.Packages = map[string]osvLockPackage{}
		l.addV1("", deps)
	}
	return &l, nil
}

// addV1 puts each entry of a lockfileVersion 1 "dependencies" tree at its
// location below parent, and the entries nested in it below that.
func (l *osvLockfile) addV1(parent string, deps map[string]osvLockV1Dependency) {
	for name, d := range deps {
		loc := path.Join(parent, "node_modules", name)
		p := osvLockPackage{Version: d.Version, Dependencies: d.Requires}
		// An alias is written "npm:<real name>@<version>".
		if rest, ok := strings.CutPrefix(d.Version, "npm:"); ok {
			if i := strings.LastIndex(rest, "@"); i > 0 {
				p.Name, p.Version = rest[:i], rest[i+1:]
			}
		}
		// A version has no ':', '/' or '#'; anything else is where the
		// package came from (file:, git, a tarball URL), not its version.
		if strings.ContainsAny(p.Version, ":/#") {
			p.Spec, p.Version = d.Version, ""
		}
		l.Packages[loc] = p
		l.addV1(loc, d.Dependencies)
	}
}

// osvRoles names the scanned package and its direct dependencies as
// name@version.
type osvRoles struct {
	target string
	direct map[string]bool
	// targets holds every version of the target when a lock may hold
	// more than one (pylock.toml); nil for npm, whose target is one entry.
	targets map[string]bool
}

// roles finds the target at node_modules/<target> and resolves each of its
// dependencies (regular, optional and peer: npm installs all three) the way
// Node does, from the folder the target is installed in (a workspace's or
// a file: link's own folder, not node_modules/<target>) up to the root's.
// A dependency is direct only at the version the target resolves to; the
// same name elsewhere in the tree at another version is transitive.
//
// A target the lockfile holds without a version (lockfileVersion 1 records
// a local tarball by its file: spec) cannot be matched against OSV, so the
// signal does not apply: ErrNotApplicable, with what the lockfile says.
func (l *osvLockfile) roles(target string) (osvRoles, error) {
	at := "node_modules/" + target
	dir, t, ok := l.entry(at)
	if !ok {
		return osvRoles{}, fmt.Errorf("osv: scanned package %q is not in the lockfile at %s", target, at)
	}
	if t.Version == "" {
		if t.Spec != "" {
			return osvRoles{}, fmt.Errorf("osv: lockfileVersion %d records the scanned package %q as %q, not by its version, so OSV cannot match it (npm 7 or later records the version): %w", l.LockfileVersion, target, t.Spec, ErrNotApplicable)
		}
		return osvRoles{}, fmt.Errorf("osv: the lockfile gives the scanned package %q at %s no version, so OSV cannot match it: %w", target, dir, ErrNotApplicable)
	}
	r := osvRoles{target: cmpOr(t.Name, target) + "@" + t.Version, direct: map[string]bool{}}
	for _, deps := range []map[string]string{t.Dependencies, t.OptionalDependencies, t.PeerDependencies} {
		for name := range deps {
			if d, ok := l.resolve(dir, name); ok && d.Version != "" {
				r.direct[cmpOr(d.Name, name)+"@"+d.Version] = true
			}
		}
	}
	return r, nil
}

// entry returns the package at a tree location and the folder it is
// installed in. A link (a workspace, a file: folder) is followed to its
// folder, as Node follows the symlink: the package's entry and the place
// its own dependencies resolve from are there.
func (l *osvLockfile) entry(loc string) (string, osvLockPackage, bool) {
	e, ok := l.Packages[loc]
	if ok && e.Link {
		loc = e.Resolved
		e, ok = l.Packages[loc]
	}
	return loc, e, ok
}

// resolve finds the package name as Node's require does from the folder
// dir: dir/node_modules/name, then node_modules/name in each ancestor of
// dir that is not itself a node_modules folder, up to the root's. The root
// is not an ancestor of a folder outside it (a file: link to "../x"), and
// the lockfile's locations are relative to the root, so the walk over such
// a folder ends at the outermost ancestor its location names.
func (l *osvLockfile) resolve(dir, name string) (osvLockPackage, bool) {
	var segs []string
	if dir = path.Clean(dir); dir != "." {
		segs = strings.Split(dir, "/")
	}
	// The first `up` segments lead out of the root ("..", or "" for an
	// absolute path): shorter prefixes are not ancestors of dir.
	up := 0
	for up < len(segs) && (segs[up] == ".." || (up == 0 && segs[0] == "")) {
		up++
	}
	for i := len(segs); i >= up; i-- {
		if i > 0 && segs[i-1] == "node_modules" {
			continue
		}
		loc := path.Join(strings.Join(segs[:i], "/"), "node_modules", name)
		if i == 1 && segs[0] == "" {
			loc = path.Join("/node_modules", name)
		}
		if _, e, ok := l.entry(loc); ok {
			return e, true
		}
	}
	return osvLockPackage{}, false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// osvVulnerabilities turns the matches into evidence, one entry per
// advisory and package version, sorted by package, version and id.
func osvVulnerabilities(pvs []*inventory.PackageVuln) ([]evidence.Vulnerability, error) {
	out := make([]evidence.Vulnerability, 0, len(pvs))
	seen := map[string]bool{}
	for _, pv := range pvs {
		if pv == nil || pv.Package == nil || pv.Vulnerability == nil {
			continue
		}
		v := pv.Vulnerability
		if v.GetId() == "" {
			return nil, fmt.Errorf("advisory without an id for %s@%s", pv.Package.Name, pv.Package.Version)
		}
		k := pv.Package.Name + "@" + pv.Package.Version + " " + v.GetId()
		if seen[k] {
			continue
		}
		seen[k] = true
		// An OS package's advisories name the package OSV knows it by
		// (its source package); the evidence names the installed one.
		vuln := osvVulnerability(v, osvPackageEcosystem(pv.Package), osvMatchName(pv.Package), pv.Package.Version)
		vuln.Package = pv.Package.Name
		out = append(out, vuln)
	}
	slices.SortFunc(out, func(a, b evidence.Vulnerability) int {
		if c := strings.Compare(a.Package, b.Package); c != 0 {
			return c
		}
		if c := strings.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func osvVulnerability(v *osvpb.Vulnerability, eco, name, version string) evidence.Vulnerability {
	out := evidence.Vulnerability{
		ID:      v.GetId(),
		Aliases: append([]string{}, v.GetAliases()...),
		Summary: v.GetSummary(),
		Package: name,
		Version: version,
		Fixed:   []string{},
	}
	slices.Sort(out.Aliases)
	out.Malware = strings.HasPrefix(out.ID, "MAL-") || slices.ContainsFunc(out.Aliases, func(a string) bool { return strings.HasPrefix(a, "MAL-") })

	severities := slices.Clone(v.GetSeverity())
	for _, a := range v.GetAffected() {
		if !osvAffects(a, eco, name) {
			continue
		}
		severities = append(severities, a.GetSeverity()...)
		for _, r := range a.GetRanges() {
			// A GIT range's events are commits (PYSEC records carry one
			// next to the ECOSYSTEM range), not versions to upgrade to.
			if r.GetType() == osvpb.Range_GIT {
				continue
			}
			for _, e := range r.GetEvents() {
				if f := e.GetFixed(); f != "" && !slices.Contains(out.Fixed, f) {
					out.Fixed = append(out.Fixed, f)
				}
			}
		}
	}
	if eco == osvEcosystemPyPI {
		slices.SortFunc(out.Fixed, comparePEP440)
	} else {
		slices.SortFunc(out.Fixed, compareVersions)
	}
	out.Score, out.Severity = osvHighestScore(severities)
	if out.Score == 0 {
		out.Severity = osvDatabaseRating(v)
	}
	return out
}

// osvAffects reports whether an affected entry names the package: same
// ecosystem, and the same name (PyPI names compared in PEP 503 form, as
// OSV matches them).
func osvAffects(a *osvpb.Affected, eco, name string) bool {
	if !strings.EqualFold(a.GetPackage().GetEcosystem(), eco) {
		return false
	}
	if eco == osvEcosystemPyPI {
		return pkgspec.NormalizePyPIName(a.GetPackage().GetName()) == pkgspec.NormalizePyPIName(name)
	}
	return a.GetPackage().GetName() == name
}

// osvPackageEcosystem is the OSV ecosystem of an extracted package: an OS
// package's is osv-scalibr's (Debian:12), as ScanPackages asks.
func osvPackageEcosystem(p *extractor.Package) string {
	if p.PURLType == purl.TypePyPi {
		return osvEcosystemPyPI
	}
	if p.PURLType != purl.TypeNPM {
		if eco := p.Ecosystem().String(); eco != "" {
			return eco
		}
	}
	return osvEcosystemNPM
}

// comparePEP440 orders PEP 440 versions by precedence, and anything else
// after them as text.
func comparePEP440(a, b string) int {
	va, errA := parsePEP440(a)
	vb, errB := parsePEP440(b)
	switch {
	case errA == nil && errB == nil:
		if c := va.compare(vb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	default:
		return strings.Compare(a, b)
	}
}

// osvDatabaseRating is the rating the source database gives (GitHub's
// database_specific.severity), used when no CVSS vector can be scored.
func osvDatabaseRating(v *osvpb.Vulnerability) string {
	if ds := v.GetDatabaseSpecific(); ds != nil {
		if s, ok := ds.GetFields()["severity"]; ok {
			return strings.ToUpper(s.GetStringValue())
		}
	}
	return ""
}

// compareVersions orders semantic versions by precedence, and anything
// else after them as text.
func compareVersions(a, b string) int {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	switch {
	case errA == nil && errB == nil:
		if c := va.Compare(vb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	default:
		return strings.Compare(a, b)
	}
}
