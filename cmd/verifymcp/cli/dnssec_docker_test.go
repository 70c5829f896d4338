//go:build docker

package cli_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
)

// writeDomainsFixture writes a local npm tarball whose package.json names
// domains in the dnssectest hierarchy, one DNSSEC situation each. The
// server itself exits at once: DNSSEC needs nothing from the sandbox.
func writeDomainsFixture(t *testing.T, path string) {
	t.Helper()
	pj := map[string]any{
		"name": "verifymcp-fixture-domains", "version": "1.0.0",
		"bin":        map[string]string{"fixture-domains": "server.js"},
		"homepage":   "https://" + dnssectest.SecureHost + "/docs",
		"repository": map[string]string{"type": "git", "url": "git+https://" + dnssectest.UnsignedHost + "/acme/fixture-domains.git"},
		"author":     "Acme (https://www." + dnssectest.TamperedZone + "/about)",
		"maintainers": []map[string]string{
			{"name": "ops", "email": "ops@" + dnssectest.NXDomainNSEC},
			{"name": "dev", "email": "dev@" + dnssectest.RSAZone},
			{"name": "old", "email": "old@" + dnssectest.CNAMEDangling},
		},
		"mcpName": "vmcp.ed/fixture-domains",
	}
	body, _ := json.Marshal(pj)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, fl := range []struct {
		name, body string
		mode       int64
	}{
		{"package/package.json", string(body), 0o644},
		{"package/server.js", "#!/usr/bin/env node\nprocess.exit(0);\n", 0o755},
	} {
		tw.WriteHeader(&tar.Header{Name: fl.name, Mode: fl.mode, Size: int64(len(fl.body)), ModTime: time.Unix(1e9, 0)})
		tw.Write([]byte(fl.body))
	}
	tw.Close()
	gz.Close()
}

// TestScanDNSSEC scans a fixture whose metadata names domains in a signed
// hierarchy served on loopback (its own root, anchored through a file):
// each domain gets the state its zone was built for, with the codes that
// follow; a resolver that filters everything leaves every domain unjudged
// and the signal unavailable, not a list of findings.
func TestScanDNSSEC(t *testing.T) {
	h := dnssectest.New(dnssectest.Options{})
	defer h.Close()
	dir := t.TempDir()
	anchor := filepath.Join(dir, "anchor.zone")
	if err := os.WriteFile(anchor, []byte(h.Anchors()), 0o644); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(dir, "fixture-domains-1.0.0.tgz")
	writeDomainsFixture(t, tgz)
	env := []string{"VERIFYMCP_CONFIG=", "SOCKET_API_KEY=", "SOCKET_SECURITY_API_KEY="}
	scan := func(t *testing.T) (map[string]any, []string, string) {
		t.Helper()
		res := verifymcp(t, env, "scan", "--format", "json", "--no-behavior", "--handshake-timeout", "5s",
			"--dnssec-resolver", h.Addr(), "--dnssec-anchor", anchor, "--data-dir", filepath.Join(dir, "data"), tgz)
		if res.code != 0 {
			t.Fatalf("scan: exit %d\n%s", res.code, res.stderr)
		}
		var r struct {
			Signals  map[string]struct{ State, Reason, Endpoint string } `json:"signals"`
			Supply   map[string]json.RawMessage                          `json:"supply"`
			Findings []struct{ Code, Subject, Severity string }          `json:"findings"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, f := range r.Findings {
			if strings.HasPrefix(f.Code, "pkg.dnssec.") {
				codes = append(codes, f.Code+" "+f.Subject+" "+f.Severity)
			}
		}
		var d struct {
			Result *struct {
				Domains []struct {
					Name, Status, Exists string
					BogusReason          string `json:"bogus_reason"`
					NXDomainProof        string `json:"nxdomain_proof"`
					DanglingCNAME        bool   `json:"dangling_cname"`
					Sources              []string
				} `json:"domains"`
			} `json:"result"`
		}
		states := map[string]any{"signal": r.Signals["dnssec"].State, "reason": r.Signals["dnssec"].Reason, "endpoint": r.Signals["dnssec"].Endpoint}
		if raw, ok := r.Supply["dnssec"]; ok && json.Unmarshal(raw, &d) == nil && d.Result != nil {
			for _, dm := range d.Result.Domains {
				s := dm.Status + "/" + dm.Exists
				if dm.BogusReason != "" {
					s += "/" + dm.BogusReason
				}
				if dm.NXDomainProof != "" {
					s += "/" + dm.NXDomainProof
				}
				if dm.DanglingCNAME {
					s += "/dangling"
				}
				states[dm.Name] = s + " " + strings.Join(dm.Sources, ",")
			}
		}
		return states, codes, res.stdout
	}

	t.Run("signed hierarchy", func(t *testing.T) {
		got, codes, _ := scan(t)
		want := map[string]any{
			"signal":                         "observed",
			"reason":                         "",
			"endpoint":                       "dns://" + h.Addr(),
			dnssectest.SecureHost:            "secure/yes homepage",
			dnssectest.UnsignedHost:          "insecure/yes repository",
			dnssectest.NXDomainNSEC:          "secure/no/nsec maintainer_email",
			dnssectest.RSAZone:               "secure/yes maintainer_email",
			dnssectest.CNAMEDangling:         "secure/yes/nsec3/dangling maintainer_email",
			"www." + dnssectest.TamperedZone: "bogus/unknown/bad_signature author_url",
			dnssectest.Ed25519Zone:           "secure/yes mcp_name",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: got %v, want %v", k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("domains checked: %v", got)
		}
		joined := strings.Join(codes, "\n")
		for _, c := range []string{
			"pkg.dnssec.nxdomain " + dnssectest.NXDomainNSEC + " high",
			"pkg.dnssec.bogus www." + dnssectest.TamperedZone + " high",
			"pkg.dnssec.dangling_cname " + dnssectest.CNAMEDangling,
			"pkg.dnssec.unsigned " + dnssectest.UnsignedHost,
		} {
			if !strings.Contains(joined, c) {
				t.Errorf("missing %q in:\n%s", c, joined)
			}
		}
		for _, secure := range []string{dnssectest.SecureHost, dnssectest.RSAZone, dnssectest.Ed25519Zone} {
			for _, c := range codes {
				if strings.Fields(c)[1] == secure {
					t.Errorf("a finding names the secure domain %s: %s", secure, c)
				}
			}
		}
	})

	t.Run("filtering resolver", func(t *testing.T) {
		h.SetFilter(dnssectest.FilterNXDomain)
		defer h.SetFilter(dnssectest.FilterNone)
		got, codes, _ := scan(t)
		if got["signal"] != "unavailable" || got["reason"] == "" {
			t.Errorf("dnssec signal: %v", got)
		}
		if len(got) != 3 {
			t.Errorf("domains judged through a filtering resolver: %v", got)
		}
		// The signal is unavailable, which is a signal state, never a
		// finding (rubric v11): no pkg.dnssec. code at all.
		if len(codes) != 0 {
			t.Errorf("codes through a filtering resolver: %v, want none (the signal is unavailable)", codes)
		}
	})
}
