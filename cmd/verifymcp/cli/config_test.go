package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/rubric"
	"github.com/verifymcp/verifymcp/supplychain"
)

func writeConfig(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigPrecedence: flags win over the environment, which wins over
// the file, which wins over the public defaults.
func TestConfigPrecedence(t *testing.T) {
	for _, k := range []string{"VERIFYMCP_CONFIG", "VERIFYMCP_OSV_ENDPOINT", "VERIFYMCP_OSV_OFFLINE_DB", "VERIFYMCP_SOCKET_ENDPOINT",
		"SOCKET_API_KEY", "SOCKET_SECURITY_API_KEY", "VERIFYMCP_GITHUB_ENDPOINT", "GITHUB_TOKEN", "VERIFYMCP_CACHE_TTL"} {
		t.Setenv(k, "")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	p := writeConfig(t, `
osv: {endpoint: "http://file-osv"}
socket: {endpoint: "http://file-socket", api_key: "file-key"}
github: {endpoint: "http://file-gh/api/v3/", token: "file-token"}
cache_ttl: 2h
`, 0o600)
	cfg, _, err := loadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := resolveSupply(&scanFlags{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sc.osvEndpoint != "http://file-osv" || sc.socketKey != "file-key" || sc.githubTkn != "file-token" || sc.cacheTTL != 2*time.Hour {
		t.Errorf("file values not used: %+v", sc)
	}
	t.Setenv("VERIFYMCP_OSV_ENDPOINT", "http://env-osv")
	t.Setenv("SOCKET_API_KEY", "env-key")
	t.Setenv("VERIFYMCP_CACHE_TTL", "1h")
	sc, _ = resolveSupply(&scanFlags{}, cfg)
	if sc.osvEndpoint != "http://env-osv" || sc.socketKey != "env-key" || sc.cacheTTL != time.Hour {
		t.Errorf("environment does not win over the file: %+v", sc)
	}
	sc, _ = resolveSupply(&scanFlags{osvEndpoint: "http://flag-osv", cacheTTL: "5m"}, cfg)
	if sc.osvEndpoint != "http://flag-osv" || sc.cacheTTL != 5*time.Minute {
		t.Errorf("flags do not win: %+v", sc)
	}
	empty, _, err := loadConfig("")
	if err != nil {
		t.Fatalf("a missing default file is an empty configuration: %v", err)
	}
	t.Setenv("VERIFYMCP_OSV_ENDPOINT", "")
	t.Setenv("SOCKET_API_KEY", "")
	sc, _ = resolveSupply(&scanFlags{}, empty)
	if sc.osvEndpoint != "https://api.osv.dev" || sc.socketEndpoint != "https://api.socket.dev" || sc.githubEndpoint != "https://api.github.com/" || sc.socketKey != "" {
		t.Errorf("defaults: %+v", sc)
	}
}

func TestConfigRejects(t *testing.T) {
	t.Setenv("VERIFYMCP_CACHE_TTL", "")
	cases := []struct {
		name, body string
		mode       os.FileMode
		want       string
	}{
		{"credentials readable by others", "socket: {api_key: k}\n", 0o644, "chmod 600"},
		{"unknown key", "osv: {endpiont: x}\n", 0o600, "endpiont"},
		{"not yaml", "osv: [\n", 0o600, "config file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := loadConfig(writeConfig(t, c.body, c.mode))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
	if _, _, err := loadConfig(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
		t.Error("a config file named explicitly but missing must be an error")
	}
	if _, err := resolveSupply(&scanFlags{skip: []string{"osv,sockett"}}, &fileConfig{}); err == nil || !strings.Contains(err.Error(), "sockett") {
		t.Errorf("--skip typo: %v", err)
	}
	if _, err := resolveSupply(&scanFlags{cacheTTL: "forever"}, &fileConfig{}); err == nil {
		t.Error("a bad cache TTL must be refused")
	}
	sc, err := resolveSupply(&scanFlags{skip: []string{"osv", "github"}}, &fileConfig{})
	if err != nil || !sc.skip["osv"] || !sc.skip["github"] || sc.skip["socket"] {
		t.Errorf("--skip osv --skip github: %+v %v", sc, err)
	}
}

// TestIndexURL: --index-url wins over VERIFYMCP_INDEX_URL, which wins over
// the file's index_url, which wins over PyPI; the pipeline's PyPI client
// asks it, and a URL that is not an index's base is bad input.
func TestIndexURL(t *testing.T) {
	t.Setenv("VERIFYMCP_INDEX_URL", "")
	t.Setenv("VERIFYMCP_CA_BUNDLE", "")
	p := writeConfig(t, "index_url: https://file.example.com/root/pypi/\n", 0o600)
	index := func(f *scanFlags, config string) (string, error) {
		t.Helper()
		g := &globals{config: config}
		sc, err := g.newResolving(f, rubric.Current())
		if err != nil {
			return "", err
		}
		if sc.p.PyPI() == nil {
			t.Fatal("the pipeline has no PyPI client")
		}
		return sc.p.PyPI().Index(), nil
	}
	empty := writeConfig(t, "", 0o600)
	if got, err := index(&scanFlags{}, empty); err != nil || got != supplychain.DefaultPyPIIndex {
		t.Errorf("default: %q, %v", got, err)
	}
	if got, _ := index(&scanFlags{}, p); got != "https://file.example.com/root/pypi" {
		t.Errorf("file: %q", got)
	}
	t.Setenv("VERIFYMCP_INDEX_URL", "http://127.0.0.1:3141/root/pypi")
	if got, _ := index(&scanFlags{}, p); got != "http://127.0.0.1:3141/root/pypi" {
		t.Errorf("environment does not win over the file: %q", got)
	}
	if got, _ := index(&scanFlags{indexURL: "https://flag.example.com"}, p); got != "https://flag.example.com" {
		t.Errorf("the flag does not win: %q", got)
	}
	for _, bad := range []struct{ in, want string }{
		{"ftp://mirror.example.com", "http or https"},
		{"mirror.example.com", "http or https"},
		{"https://", "no host"},
		{"https://pypi.org/simple", "simple API"},
		{"https://devpi.example.com/root/pypi/+simple/", "simple API"},
		{"https://pypi.org/?x=1", "query"},
		{"https://user:hunter2@mirror.example.com/simple/", "simple API"},
		{"http://[::1", "not a URL"},
	} {
		_, err := index(&scanFlags{indexURL: bad.in}, empty)
		if code := exitCode(err); code != ExitUsage || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "--index-url") {
			t.Errorf("--index-url %s: exit %d, %v; want exit 2 mentioning %q", bad.in, code, err, bad.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error echoes a password: %v", err)
		}
	}
}
