package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
	"github.com/verifymcp/verifymcp/evidence"
)

// TestDNSSECSignal checks how the pipeline turns the validator's outcome
// and the metadata into the dnssec signal.
func TestDNSSECSignal(t *testing.T) {
	h := dnssectest.New(dnssectest.Options{})
	defer h.Close()
	anchor, err := dnssec.ParseAnchor(strings.NewReader(h.Anchors()), "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := dnssec.New(dnssec.Config{Resolver: h.Addr(), Anchor: anchor})
	if err != nil {
		t.Fatal(err)
	}
	signed := &evidence.RegistryMeta{Homepage: "https://" + dnssectest.SecureHost + "/", Maintainers: []evidence.Maintainer{{Name: "a", EmailDomain: dnssectest.NXDomainNSEC}}}
	forgeOnly := &evidence.RegistryMeta{Homepage: "https://github.com/acme/x#readme", RepositoryURL: "git+https://github.com/acme/x.git", MCPName: "io.github.acme/x"}
	tests := []struct {
		name      string
		supply    Supply
		meta      *evidence.RegistryMeta
		manifest  []byte
		state     evidence.State
		reason    string
		domains   int
		filtering bool
	}{
		{name: "observed", supply: Supply{DNSSEC: v, DNSSECResolver: h.Addr()}, meta: signed, state: evidence.StateObserved, domains: 2},
		{name: "local tarball manifest", supply: Supply{DNSSEC: v, DNSSECResolver: h.Addr()},
			manifest: []byte(`{"name":"x","version":"1.0.0","homepage":"https://` + dnssectest.SecureHost + `"}`), state: evidence.StateObserved, domains: 1},
		{name: "forge hosts only", supply: Supply{DNSSEC: v}, meta: forgeOnly, state: evidence.StateNotAssessed, reason: "no domain to check"},
		{name: "skipped", supply: Supply{DNSSEC: v, Skip: map[string]bool{"dnssec": true}}, meta: signed, state: evidence.StateNotAssessed, reason: "--skip dnssec"},
		{name: "no resolver", supply: Supply{}, meta: signed, state: evidence.StateUnavailable, reason: "no DNS resolver"},
		{name: "filtering resolver", supply: Supply{DNSSEC: v, DNSSECResolver: h.Addr()}, meta: signed, state: evidence.StateUnavailable, reason: "DNSKEY", filtering: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.filtering {
				h.SetFilter(dnssectest.FilterNXDomain)
				defer h.SetFilter(dnssectest.FilterNone)
			}
			if tt.supply.DNSSEC != nil {
				// A validator of its own: a warm cache would hide the filter.
				fresh, err := dnssec.New(dnssec.Config{Resolver: h.Addr(), Anchor: anchor})
				if err != nil {
					t.Fatal(err)
				}
				tt.supply.DNSSEC = fresh
			}
			p := testPipeline(Config{Supply: tt.supply})
			rt := &Resolved{Name: "x", Version: "1.0.0", manifest: tt.manifest}
			res, sig := p.dnssecDomains(context.Background(), rt, tt.meta)()
			if sig.State != tt.state || !strings.Contains(sig.Reason, tt.reason) || !sig.ThirdParty {
				t.Fatalf("signal = %+v, want %s with %q", sig, tt.state, tt.reason)
			}
			if tt.state != evidence.StateObserved {
				if res != nil {
					t.Errorf("evidence kept for a %s signal: %+v", sig.State, res)
				}
				return
			}
			if res == nil || len(res.Domains) != tt.domains || sig.Endpoint != "dns://"+h.Addr() || sig.FetchedAt == nil {
				t.Fatalf("result %+v signal %+v", res, sig)
			}
			for _, d := range res.Domains {
				if d.Name == dnssectest.SecureHost && (d.Status != evidence.DNSSecure || d.Exists != "yes") {
					t.Errorf("%s: %+v", d.Name, d)
				}
				if d.Name == dnssectest.NXDomainNSEC && (d.Exists != "no" || d.NXDomainProof != "nsec" || !d.HasSource("maintainer_email")) {
					t.Errorf("%s: %+v", d.Name, d)
				}
			}
		})
	}
}
