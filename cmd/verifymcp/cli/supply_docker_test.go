//go:build docker

package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// supplyReport is the part of the JSON report the supply-chain test reads.
type supplyReport struct {
	Signals map[string]struct {
		State         string `json:"state"`
		Reason        string `json:"reason"`
		Endpoint      string `json:"endpoint"`
		Authenticated bool   `json:"authenticated"`
		FetchedAt     string `json:"fetched_at"`
		Cached        bool   `json:"cached"`
	} `json:"signals"`
	Dimensions []struct {
		ID, State, Reason string
		Score             *float64
	} `json:"dimensions"`
	Findings []struct {
		Code string `json:"code"`
	} `json:"findings"`
	Supply struct {
		OSV struct {
			Result *struct {
				Packages int `json:"packages"`
			} `json:"result"`
		} `json:"osv"`
		GitHub struct {
			Result *struct {
				FullName string `json:"full_name"`
				Exists   bool   `json:"exists"`
			} `json:"result"`
		} `json:"github"`
	} `json:"supply"`
	Score *float64 `json:"score"`
}

var supplyDims = []string{"vulnerability_exposure", "malware_signal", "provenance", "maintenance_signal"}

// TestScanSupplyChain scans a real pinned package with every third party
// played by a local server that speaks its API: all signals observed,
// answers cached and refreshed on request; then with the servers gone,
// every signal unavailable, the supply-chain dimensions at their zero
// point and nothing reading as clean; and with no Socket key, no request
// to Socket at all.
func TestScanSupplyChain(t *testing.T) {
	const key = "sktsec_e2eK3yN0tR3al_api"
	const ghToken = "ghp_e2eT0kenN0tR3al000000000000000000"
	osv := supplytest.NewOSV()
	socket := supplytest.NewSocket(key)
	gh := supplytest.NewGitHub("/api/v3/")
	// server-everything declares the mcpName
	// io.github.modelcontextprotocol/server-everything, whose registry
	// entry lists it.
	reg := supplytest.NewMCPRegistry(supplytest.MCPEntry{File: "server-everything-2.0.0.server.json", Latest: true})
	defer reg.Close()
	defer osv.Close()
	defer socket.Close()
	defer gh.Close()
	data := t.TempDir()
	target := "npm:@modelcontextprotocol/server-everything@2026.8.31"
	env := func(withKey bool) []string {
		e := []string{
			"VERIFYMCP_OSV_ENDPOINT=" + osv.URL(),
			"VERIFYMCP_OSV_OFFLINE_DB=",
			"VERIFYMCP_SOCKET_ENDPOINT=" + socket.URL(),
			"VERIFYMCP_GITHUB_ENDPOINT=" + gh.URL(),
			"VERIFYMCP_GITHUB_HOST=github.com",
			"VERIFYMCP_MCP_REGISTRY=" + reg.URL(),
			"GITHUB_TOKEN=" + ghToken,
			"SOCKET_SECURITY_API_KEY=",
			"VERIFYMCP_CONFIG=",
		}
		if withKey {
			return append(e, "SOCKET_API_KEY="+key)
		}
		return append(e, "SOCKET_API_KEY=")
	}
	scan := func(t *testing.T, withKey bool, extra ...string) (supplyReport, result) {
		t.Helper()
		// DNSSEC has its own end-to-end test against a signed loopback
		// hierarchy; the real domains of this package cannot be validated
		// here (no public DNS), so it is left out of this one.
		args := append([]string{"scan", "--format", "json", "--no-behavior", "--skip", "dnssec", "--data-dir", data}, extra...)
		res := verifymcp(t, env(withKey), append(args, target)...)
		if res.code != 0 {
			t.Fatalf("scan: exit %d\n%s", res.code, res.stderr)
		}
		for _, secret := range []string{key, ghToken} {
			if strings.Contains(res.stdout, secret) || strings.Contains(res.stderr, secret) {
				t.Fatalf("a credential appears in the output")
			}
		}
		var r supplyReport
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatalf("report: %v", err)
		}
		return r, res
	}
	dim := func(r supplyReport, id string) (string, float64) {
		for _, d := range r.Dimensions {
			if d.ID == id {
				if d.Score == nil {
					return d.State, -1
				}
				return d.State, *d.Score
			}
		}
		t.Fatalf("no dimension %s", id)
		return "", 0
	}
	has := func(r supplyReport, code string) bool {
		for _, f := range r.Findings {
			if f.Code == code {
				return true
			}
		}
		return false
	}

	var first supplyReport
	t.Run("all observed", func(t *testing.T) {
		r, _ := scan(t, true)
		first = r
		for name, endpoint := range map[string]string{"osv": osv.URL(), "socket": socket.URL(), "github": gh.URL()} {
			s := r.Signals[name]
			if s.State != "observed" || s.Cached || s.FetchedAt == "" || strings.TrimSuffix(s.Endpoint, "/") != strings.TrimSuffix(endpoint, "/") {
				t.Errorf("%s: %+v, want observed at %s, fetched now", name, s, endpoint)
			}
		}
		if s := r.Signals["registry.metadata"]; s.State != "observed" {
			t.Errorf("registry.metadata: %+v", s)
		}
		if s := r.Signals["mcp_registry"]; s.State != "observed" || reg.Requests() == 0 {
			t.Errorf("mcp_registry: %+v after %d requests to the registry", s, reg.Requests())
		}
		if !r.Signals["socket"].Authenticated || !r.Signals["github"].Authenticated {
			t.Errorf("the key and the token were used but the report says otherwise: %+v", r.Signals)
		}
		for _, id := range supplyDims {
			if st, _ := dim(r, id); st != "scored" {
				t.Errorf("%s: %s, want scored", id, st)
			}
		}
		if o := r.Supply.OSV.Result; o == nil || o.Packages < 50 {
			t.Errorf("OSV was asked about %+v packages; the installed tree has about a hundred", o)
		}
		if g := r.Supply.GitHub.Result; g == nil || !g.Exists || g.FullName != "modelcontextprotocol/servers" {
			t.Errorf("github: %+v", g)
		}
		if has(r, "pkg.supply.socket.unverified") || has(r, "pkg.supply.osv.unverified") {
			t.Error("unverified findings with every signal observed")
		}
		for _, q := range socket.Seen() {
			if q.User != key {
				t.Errorf("Socket request without the key: %+v", q)
			}
		}
		bundles, _ := filepath.Glob(filepath.Join(data, "bundles", "*.json"))
		for _, b := range bundles {
			raw, _ := os.ReadFile(b)
			if strings.Contains(string(raw), key) || strings.Contains(string(raw), ghToken) {
				t.Errorf("a credential is stored in %s", b)
			}
		}
	})

	t.Run("cached then refreshed", func(t *testing.T) {
		before := [3]int{osv.Requests(), socket.Requests(), gh.Requests()}
		r, _ := scan(t, true)
		if after := [3]int{osv.Requests(), socket.Requests(), gh.Requests()}; after != before {
			t.Errorf("a second scan asked the third parties again: requests %v -> %v", before, after)
		}
		for _, name := range []string{"osv", "socket", "github"} {
			// The cached answer keeps the time it was fetched (stored, a
			// few milliseconds after the request went out).
			s := r.Signals[name]
			at, err1 := time.Parse(time.RFC3339Nano, s.FetchedAt)
			was, err2 := time.Parse(time.RFC3339Nano, first.Signals[name].FetchedAt)
			if s.State != "observed" || !s.Cached || err1 != nil || err2 != nil || at.Sub(was).Abs() > 2*time.Second {
				t.Errorf("%s: %+v, want observed from the cache with the first fetch time %s", name, s, first.Signals[name].FetchedAt)
			}
		}
		r, _ = scan(t, true, "--refresh")
		after := [3]int{osv.Requests(), socket.Requests(), gh.Requests()}
		for i, name := range []string{"osv", "socket", "github"} {
			if after[i] <= before[i] {
				t.Errorf("--refresh did not ask %s again", name)
			}
			if s := r.Signals[name]; s.State != "observed" || s.Cached {
				t.Errorf("%s after --refresh: %+v", name, s)
			}
		}
	})

	t.Run("no Socket key", func(t *testing.T) {
		before := socket.Requests()
		r, res := scan(t, false, "--refresh")
		if socket.Requests() != before {
			t.Errorf("Socket was asked without a key")
		}
		if s := r.Signals["socket"]; s.State != "unavailable" || !strings.Contains(s.Reason, "SOCKET_API_KEY") {
			t.Errorf("socket: %+v, want unavailable naming SOCKET_API_KEY", s)
		}
		if st, score := dim(r, "malware_signal"); st != "zero_point" || score != 0 {
			t.Errorf("malware_signal: %s %v, want the zero point", st, score)
		}
		// Not consulted is a signal state, never a finding (rubric v11).
		if has(r, "pkg.supply.socket.unverified") {
			t.Error("pkg.supply.socket.unverified listed among the findings")
		}
		_ = res
	})

	t.Run("all unavailable", func(t *testing.T) {
		osv.Close()
		socket.Close()
		gh.Close()
		reg.Close()
		r, _ := scan(t, true, "--refresh")
		for _, name := range []string{"osv", "socket", "github"} {
			if s := r.Signals[name]; s.State != "unavailable" || s.Reason == "" {
				t.Errorf("%s: %+v, want unavailable with a reason", name, s)
			}
		}
		for _, id := range supplyDims {
			if st, score := dim(r, id); st != "zero_point" || score != 0 {
				t.Errorf("%s: %s %v, want the zero point 0", id, st, score)
			}
		}
		for _, c := range []string{"pkg.supply.osv.unverified", "pkg.supply.socket.unverified"} {
			if has(r, c) {
				t.Errorf("%s listed among the findings; a signal that did not answer is a signal state", c)
			}
		}
		if r.Score == nil || first.Score == nil || *r.Score >= *first.Score {
			t.Errorf("score with every third party down (%v) is not below the score with them up (%v)", r.Score, first.Score)
		}
		// The full table (-v) has the supply-chain section; the default
		// one names what was not observed in its header.
		res := verifymcp(t, env(true), "scan", "-v", "--no-behavior", "--refresh", "--data-dir", data, target)
		if res.code != 0 || strings.Count(res.stdout, "UNVERIFIED") < 3 || !strings.Contains(res.stdout, "unknown, not clean") {
			t.Errorf("the full table does not say the three signals are unverified:\n%s", res.stdout)
		}
		res = verifymcp(t, env(true), "scan", "--no-behavior", "--refresh", "--data-dir", data, target)
		words := strings.Join(strings.Fields(res.stdout), " ") // the table wraps
		if res.code != 0 || !strings.Contains(words, "not observed") || !strings.Contains(words, "osv (unavailable)") ||
			!strings.Contains(words, "socket (unavailable)") || !strings.Contains(words, "unknown, not clean") {
			t.Errorf("the table does not name the signals not observed:\n%s", res.stdout)
		}
	})
}

// TestScanVulnerableVersion scans a real version of server-filesystem that
// OSV's recorded advisories (its 2025 path-traversal fixes) affect: the
// advisories reach the report through the installed tree's lockfile.
func TestScanVulnerableVersion(t *testing.T) {
	osv := supplytest.NewOSV()
	defer osv.Close()
	env := []string{"VERIFYMCP_OSV_ENDPOINT=" + osv.URL(), "VERIFYMCP_OSV_OFFLINE_DB=", "VERIFYMCP_CONFIG=", "SOCKET_API_KEY=", "SOCKET_SECURITY_API_KEY="}
	res := verifymcp(t, env, "scan", "--format", "json", "--no-behavior", "--skip", "socket,github", "--data-dir", t.TempDir(),
		"--arg", "/tmp", "npm:@modelcontextprotocol/server-filesystem@2025.3.28")
	if res.code != 0 {
		t.Fatalf("scan: exit %d\n%s", res.code, res.stderr)
	}
	var r struct {
		Signals  map[string]struct{ State string } `json:"signals"`
		Findings []struct {
			Code, Subject, Evidence string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Signals["osv"].State != "observed" || r.Signals["socket"].State != "not_assessed" || r.Signals["github"].State != "not_assessed" {
		t.Errorf("signals: %+v", r.Signals)
	}
	var found []string
	for _, f := range r.Findings {
		if f.Code == "pkg.supply.osv.vulnerable" {
			found = append(found, f.Subject+" "+f.Evidence)
		}
	}
	joined := strings.Join(found, "\n")
	for _, want := range []string{"@modelcontextprotocol/server-filesystem@2025.3.28", "GHSA-hc55-p739-j48w", "GHSA-q66q-fx2p-7w4m"} {
		if !strings.Contains(joined, want) {
			t.Errorf("pkg.supply.osv.vulnerable findings lack %q:\n%s", want, joined)
		}
	}
}
