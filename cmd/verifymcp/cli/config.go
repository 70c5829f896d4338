package cli

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/miekg/dns"
	"go.yaml.in/yaml/v3"

	"github.com/verifymcp/verifymcp/cache"
	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/judge"
	"github.com/verifymcp/verifymcp/pipeline"
	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/sandbox"
	"github.com/verifymcp/verifymcp/supplychain"
)

// fileConfig is the optional configuration file (--config, else
// $VERIFYMCP_CONFIG, else $XDG_CONFIG_HOME/verifymcp/config.yaml or
// ~/.config/verifymcp/config.yaml). Flags win over the environment, which
// wins over the file. Credentials may live here; the file must then not be
// readable by others.
type fileConfig struct {
	Registry string `yaml:"registry"`
	// MCPRegistry is the MCP registry API for targets named by their
	// registry name.
	MCPRegistry string `yaml:"mcp_registry"`
	// IndexURL is the Python package index of pypi targets (its base URL,
	// where /pypi/NAME/json is served).
	IndexURL string `yaml:"index_url"`
	CABundle string `yaml:"ca_bundle"`
	OSV      struct {
		Endpoint  string `yaml:"endpoint"`
		OfflineDB string `yaml:"offline_db"`
	} `yaml:"osv"`
	Socket struct {
		Endpoint string `yaml:"endpoint"`
		APIKey   string `yaml:"api_key"`
	} `yaml:"socket"`
	GitHub struct {
		Endpoint string `yaml:"endpoint"`
		Host     string `yaml:"host"`
		Token    string `yaml:"token"`
	} `yaml:"github"`
	Judge struct {
		Endpoint    string   `yaml:"endpoint"`
		Model       string   `yaml:"model"`
		APIKey      string   `yaml:"api_key"`
		Temperature *float32 `yaml:"temperature"`
		Seed        *int     `yaml:"seed"`
	} `yaml:"judge"`
	DNSSEC struct {
		Resolver string `yaml:"resolver"`
		Anchor   string `yaml:"anchor"`
	} `yaml:"dnssec"`
	CacheTTL string `yaml:"cache_ttl"`
	// CacheDSN is a Postgres DSN for a cache shared by many machines.
	CacheDSN string `yaml:"cache_dsn"`
	// DatabaseURL is the Postgres DSN of a fleet's shared database: run
	// store, cache and job queue.
	DatabaseURL string `yaml:"database_url"`
	// FailOn is the default of --fail-on, IgnoreFile of --ignore-file.
	FailOn     string `yaml:"fail_on"`
	IgnoreFile string `yaml:"ignore_file"`
}

func configPath(flag string) string {
	if flag != "" {
		return flag
	}
	if p := os.Getenv("VERIFYMCP_CONFIG"); p != "" {
		return p
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "verifymcp", "config.yaml")
}

// loadConfig reads the configuration file; a missing default file is an
// empty configuration, a missing file named explicitly is an error.
func loadConfig(flag string) (*fileConfig, string, error) {
	path := configPath(flag)
	cfg := &fileConfig{}
	if path == "" {
		return cfg, "", nil
	}
	data, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err) && flag == "" && os.Getenv("VERIFYMCP_CONFIG") == "":
		return cfg, "", nil
	case err != nil:
		return nil, path, usagef("config file: %v", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && err.Error() != "EOF" {
		return nil, path, usagef("config file %s: %v", path, err)
	}
	if cfg.Socket.APIKey != "" || cfg.GitHub.Token != "" || cfg.Judge.APIKey != "" || dsnHasSecret(cfg.CacheDSN) || dsnHasSecret(cfg.DatabaseURL) {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			return nil, path, usagef("config file %s holds credentials but is readable by others (mode %v); chmod 600 it", path, st.Mode().Perm())
		}
	}
	return cfg, path, nil
}

// dsnHasSecret reports whether a DSN may hold a password.
func dsnHasSecret(dsn string) bool {
	return strings.Contains(dsn, "@") || strings.Contains(dsn, "password")
}

// checkIndexURL checks the Python package index URL (from --index-url,
// VERIFYMCP_INDEX_URL or the config file's index_url) and returns it
// without a trailing slash.
func checkIndexURL(s string) (string, error) {
	bad := func(why string) (string, error) {
		return "", usagef("--index-url %q: %s (e.g. %s, or a mirror's base such as https://devpi.example.com/root/pypi)", redactUserinfo(s), why, supplychain.DefaultPyPIIndex)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return bad("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("want an http or https URL")
	case u.Host == "":
		return bad("no host")
	case u.RawQuery != "" || u.Fragment != "":
		return bad("a query or fragment is not part of an index's base URL")
	}
	trimmed := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(trimmed, "/simple") || strings.HasSuffix(trimmed, "/+simple") {
		return bad("this is the simple API; give the index's base URL, where /pypi/NAME/json is served (pypi.org/simple is https://pypi.org)")
	}
	return strings.TrimRight(s, "/"), nil
}

// redactUserinfo hides a URL's password, for error messages.
func redactUserinfo(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return s
}

// resolvConf is where the default DNSSEC resolver comes from.
var resolvConf = "/etc/resolv.conf"

// pick returns the first non-empty value.
func pick(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// supplyConfig is the resolved third-party configuration of a scan.
type supplyConfig struct {
	osvEndpoint, osvOfflineDB string
	socketEndpoint, socketKey string
	githubEndpoint, githubTkn string
	githubHost                string
	dnsResolver, dnsAnchor    string
	dnsResolverFrom           string
	judgeEndpoint, judgeModel string
	judgeKey                  string
	judgeTemperature          float32
	judgeSeed                 int
	cacheTTL                  time.Duration
	refresh                   bool
	skip                      map[string]bool
}

// skippable are the signals --skip may turn off.
var skippable = []string{"osv", "socket", "github", "dnssec", "judge", "mcp_registry"}

// secrets are the operator's third-party credentials, for the sandbox to
// mask wherever a package repeats them (they never enter a container).
func (sc *supplyConfig) secrets() []sandbox.Secret {
	var out []sandbox.Secret
	for name, v := range map[string]string{"key:socket": sc.socketKey, "key:github": sc.githubTkn, "key:judge": sc.judgeKey} {
		if v != "" {
			out = append(out, sandbox.Secret{Name: name, Value: v})
		}
	}
	return out
}

func resolveSupply(f *scanFlags, cfg *fileConfig) (*supplyConfig, error) {
	sc := &supplyConfig{
		osvEndpoint:    pick(f.osvEndpoint, os.Getenv("VERIFYMCP_OSV_ENDPOINT"), cfg.OSV.Endpoint, "https://api.osv.dev"),
		osvOfflineDB:   pick(f.osvOfflineDB, os.Getenv("VERIFYMCP_OSV_OFFLINE_DB"), cfg.OSV.OfflineDB),
		socketEndpoint: pick(f.socketEndpoint, os.Getenv("VERIFYMCP_SOCKET_ENDPOINT"), cfg.Socket.Endpoint, "https://api.socket.dev"),
		socketKey:      pick(os.Getenv("SOCKET_API_KEY"), os.Getenv("SOCKET_SECURITY_API_KEY"), cfg.Socket.APIKey),
		githubEndpoint: pick(f.githubEndpoint, os.Getenv("VERIFYMCP_GITHUB_ENDPOINT"), cfg.GitHub.Endpoint, "https://api.github.com/"),
		githubTkn:      pick(os.Getenv("GITHUB_TOKEN"), cfg.GitHub.Token),
		githubHost:     strings.ToLower(pick(f.githubHost, os.Getenv("VERIFYMCP_GITHUB_HOST"), cfg.GitHub.Host)),
		dnsResolver:    pick(f.dnsResolver, os.Getenv("VERIFYMCP_DNSSEC_RESOLVER"), cfg.DNSSEC.Resolver),
		dnsAnchor:      pick(f.dnsAnchor, os.Getenv("VERIFYMCP_DNSSEC_ANCHOR"), cfg.DNSSEC.Anchor),
		judgeEndpoint:  pick(f.judgeEndpoint, os.Getenv("VERIFYMCP_JUDGE_ENDPOINT"), cfg.Judge.Endpoint),
		judgeModel:     pick(f.judgeModel, os.Getenv("VERIFYMCP_JUDGE_MODEL"), cfg.Judge.Model),
		judgeKey:       pick(os.Getenv("VERIFYMCP_JUDGE_API_KEY"), cfg.Judge.APIKey),
		refresh:        f.refresh,
		skip:           map[string]bool{},
	}
	ttl := pick(f.cacheTTL, os.Getenv("VERIFYMCP_CACHE_TTL"), cfg.CacheTTL, "24h")
	d, err := time.ParseDuration(ttl)
	if err != nil || d < 0 {
		return nil, usagef("cache TTL %q: want a duration like 24h", ttl)
	}
	sc.cacheTTL = d
	if cfg.Judge.Temperature != nil {
		sc.judgeTemperature = *cfg.Judge.Temperature
	}
	if cfg.Judge.Seed != nil {
		sc.judgeSeed = *cfg.Judge.Seed
	}
	if sc.dnsResolver == "" {
		// The default is the system's resolver, said so in the report: the
		// validator trusts none of its answers, only the chain it checks.
		if conf, err := dns.ClientConfigFromFile(resolvConf); err == nil && len(conf.Servers) > 0 {
			sc.dnsResolver = net.JoinHostPort(conf.Servers[0], conf.Port)
			sc.dnsResolverFrom = resolvConf
		}
	} else if _, _, err := net.SplitHostPort(sc.dnsResolver); err != nil {
		sc.dnsResolver = net.JoinHostPort(sc.dnsResolver, "53")
	}
	for _, s := range f.skip {
		for _, name := range strings.Split(s, ",") {
			name = strings.TrimSpace(name)
			ok := false
			for _, k := range skippable {
				ok = ok || k == name
			}
			if !ok {
				return nil, usagef("--skip %q: want one of %s", name, strings.Join(skippable, ", "))
			}
			sc.skip[name] = true
		}
	}
	return sc, nil
}

// supplyClients builds the third-party clients of a scan. Credentials come
// from the environment or the configuration file only, never from flags
// (flags show in process lists) and never into logs.
func (g *globals) supplyClients(sc *supplyConfig, answers *cache.Cache, ca *caBundle) (pipeline.Supply, error) {
	hc := httpClient(ca, 30*time.Second)
	if answers != nil && !sc.refresh {
		// Endpoints found unreachable are remembered for the other
		// processes that share the cache (batch and fleet workers).
		thirdparty.Unreachable.UseCache(answers)
	}
	sp := pipeline.Supply{Skip: sc.skip, GitHubHost: sc.githubEndpoint}
	// The HTTPS key document of an mcpName's domain, read as the MCP
	// registry reads it (10 seconds, no redirect, no credential).
	sp.WellKnown = supplychain.NewWellKnown(supplychain.WellKnownOptions{HTTPClient: httpClient(ca, 10*time.Second)})
	sp.OSV = supplychain.NewOSV(supplychain.OSVOptions{
		Endpoint: sc.osvEndpoint, OfflineDB: sc.osvOfflineDB,
		Cache: answers, TTL: sc.cacheTTL, Refresh: sc.refresh, HTTPClient: hc,
	})
	sp.Socket = supplychain.NewSocket(supplychain.SocketOptions{
		Endpoint: sc.socketEndpoint, APIKey: sc.socketKey,
		Cache: answers, TTL: sc.cacheTTL, Refresh: sc.refresh, HTTPClient: hc,
	})
	gh, err := supplychain.NewGitHub(supplychain.GitHubOptions{
		BaseURL: sc.githubEndpoint, Token: sc.githubTkn,
		Cache: answers, TTL: sc.cacheTTL, Refresh: sc.refresh, HTTPClient: hc,
	})
	if err != nil {
		return sp, usagef("GitHub endpoint %q: %v", sc.githubEndpoint, err)
	}
	sp.GitHub = gh
	if sc.dnsResolver != "" {
		cfg := dnssec.Config{Resolver: sc.dnsResolver}
		if sc.dnsAnchor != "" {
			a, err := dnssec.LoadAnchor(sc.dnsAnchor)
			if err != nil {
				return sp, usagef("DNSSEC trust anchor: %v", err)
			}
			cfg.Anchor = a
		}
		v, err := dnssec.New(cfg)
		if err != nil {
			return sp, usagef("DNSSEC: %v", err)
		}
		sp.DNSSEC, sp.DNSSECResolver = v, sc.dnsResolver
	}
	switch u, err := url.Parse(sc.githubEndpoint); {
	case sc.githubHost != "":
		// An endpoint that answers for another host: a proxy or mirror of
		// api.github.com, or GitHub Enterprise behind another name.
		sp.GitHubHost = sc.githubHost
	case err == nil && u.Host == "api.github.com":
		sp.GitHubHost = "github.com"
	case err == nil && u.Host != "":
		sp.GitHubHost = u.Hostname()
	}
	return sp, nil
}

// judgeClient builds the LLM judge. Without a key it still answers from
// the cache (verdicts fetched earlier, with their date); a miss is then
// unavailable. The judge spec is the one the rubric in force pins.
func judgeClient(sc *supplyConfig, answers *cache.Cache, ca *caBundle) (pipeline.Judger, error) {
	spec := judge.SpecV1
	if v, digest, ok := rubric.Current().JudgeSpec(); ok && (v != spec.Version || digest != spec.Digest) {
		return nil, fmt.Errorf("rubric v%s pins judge spec %s (%s) but this build carries %s (%s)", rubric.CurrentVersion, v, digest, spec.Version, spec.Digest)
	}
	j, err := judge.New(judge.Options{
		BaseURL: sc.judgeEndpoint, APIKey: sc.judgeKey, Model: sc.judgeModel,
		Temperature: sc.judgeTemperature, Seed: sc.judgeSeed,
		Cache: answers, CacheTTL: 0, HTTPClient: httpClient(ca, 0), Spec: spec,
	})
	if err != nil {
		return nil, usagef("judge endpoint %q: %v", sc.judgeEndpoint, err)
	}
	return j, nil
}
