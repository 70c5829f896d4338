package pipeline

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/internal/thirdparty"
	"github.com/verifymcp/verifymcp/supplychain"
	"github.com/verifymcp/verifymcp/supplychain/supplytest"
)

// The registry key a domain publishes (a made-up Ed25519 key).
const registryKey = "v=MCPv1; k=ed25519; p=oYoH6OqAQ4bkmuUTJc8AB39ZVw2cRBEfUx+/h8M3Fvk="

// TestMCPRegistrySignal checks how the pipeline turns the mcpName of the
// metadata and the answers of the MCP registry, the DNSSEC validator and
// the domain's web server into the mcp_registry signal.
func TestMCPRegistrySignal(t *testing.T) {
	reg := supplytest.NewMCPRegistry(supplytest.MCPAzure...)
	defer reg.Close()
	// secure.vmcp publishes the registry key at its apex, signed.
	h := dnssectest.New(dnssectest.Options{Records: map[string]string{dnssectest.SecureZone: `@ TXT "` + registryKey + `"` + "\n"}})
	defer h.Close()
	anchor, err := dnssec.ParseAnchor(strings.NewReader(h.Anchors()), "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := dnssec.New(dnssec.Config{Resolver: h.Addr(), Anchor: anchor})
	if err != nil {
		t.Fatal(err)
	}
	web := supplytest.NewWellKnown(nil)
	defer web.Close()
	wk := supplychain.NewWellKnown(supplychain.WellKnownOptions{HTTPClient: web.Client(5 * time.Second), AllowPrivate: true})
	client := supplychain.NewMCPRegistry(nil, reg.URL()).WithRetry(thirdparty.Retry{Attempts: 1})

	azure := &evidence.RegistryMeta{Name: "@azure/mcp", Version: "2.0.5", MCPName: "com.microsoft/azure"}
	vmcp := &evidence.RegistryMeta{Name: "notes", Version: "1.0.0", MCPName: "vmcp.secure/notes"}
	tests := []struct {
		name     string
		p        *Pipeline
		meta     *evidence.RegistryMeta
		manifest []byte
		state    evidence.State
		reason   string
		check    func(t *testing.T, r *evidence.MCPNameCheck)
	}{
		{name: "listed", p: testPipeline(Config{MCPRegistry: client, Supply: Supply{DNSSEC: v, WellKnown: wk}}), meta: azure, state: evidence.StateObserved,
			check: func(t *testing.T, r *evidence.MCPNameCheck) {
				if !r.Found || !r.AllVersions || len(r.Packages) != 2 || r.Packages[1].Identifier != "@azure/mcp" || r.Domain != "microsoft.com" {
					t.Errorf("check %+v", r)
				}
			}},
		{
			// The key record is read through the validator: signed, at
			// the namespace's domain.
			name: "key record through the validator", p: testPipeline(Config{MCPRegistry: client, Supply: Supply{DNSSEC: v, WellKnown: wk}}), meta: vmcp, state: evidence.StateObserved,
			check: func(t *testing.T, r *evidence.MCPNameCheck) {
				if r.Found || r.Domain != "secure.vmcp" || len(r.KeyRecords) != 2 {
					t.Fatalf("check %+v", r)
				}
				dns, web := r.KeyRecords[0], r.KeyRecords[1]
				if !dns.Found() || dns.DNSSEC != "secure" || !slices.Equal(dns.Keys, []string{registryKey}) {
					t.Errorf("DNS key record %+v", dns)
				}
				if web.Found() || web.State != evidence.StateObserved || web.HTTPStatus != 404 {
					t.Errorf("HTTP key record %+v", web)
				}
			}},
		{
			// A local tarball's package.json names the mcpName.
			name: "local tarball", p: testPipeline(Config{MCPRegistry: client}), manifest: []byte(`{"name":"@azure/mcp","version":"2.0.5","mcpName":"com.microsoft/azure"}`),
			state: evidence.StateObserved,
			check: func(t *testing.T, r *evidence.MCPNameCheck) {
				if !r.Found || r.KeyRecords[0].State != evidence.StateUnavailable || r.KeyRecords[1].State != evidence.StateUnavailable {
					t.Errorf("check %+v: without a resolver or a web client the key records are unavailable", r)
				}
			}},
		{name: "no mcpName", p: testPipeline(Config{MCPRegistry: client}), meta: &evidence.RegistryMeta{Name: "x", Version: "1.0.0"}, state: evidence.StateNotAssessed, reason: "declares no mcpName"},
		{name: "not a registry name", p: testPipeline(Config{MCPRegistry: client}), meta: &evidence.RegistryMeta{MCPName: "my server"}, state: evidence.StateNotAssessed, reason: "invalid MCP registry server name"},
		{name: "no metadata", p: testPipeline(Config{MCPRegistry: client}), state: evidence.StateNotAssessed, reason: "no registry metadata"},
		{name: "skipped", p: testPipeline(Config{MCPRegistry: client, Supply: Supply{Skip: map[string]bool{evidence.SignalMCPRegistry: true}}}), meta: azure, state: evidence.StateNotAssessed, reason: "--skip mcp_registry"},
		{name: "no registry configured", p: testPipeline(Config{}), meta: azure, state: evidence.StateUnavailable, reason: "no MCP registry configured"},
		{name: "registry unreachable", p: testPipeline(Config{MCPRegistry: supplychain.NewMCPRegistry(nil, "http://127.0.0.1:1").WithRetry(thirdparty.Retry{Attempts: 1, Memo: thirdparty.NewReachability(time.Minute)})}),
			meta: azure, state: evidence.StateUnavailable, reason: "127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &Resolved{Name: "x", Version: "1.0.0", manifest: tt.manifest}
			res, sig := tt.p.mcpNameCheck(context.Background(), rt, tt.meta)()
			if sig.State != tt.state || !strings.Contains(sig.Reason, tt.reason) || !sig.ThirdParty {
				t.Fatalf("signal = %+v, want %s with %q", sig, tt.state, tt.reason)
			}
			if tt.state != evidence.StateObserved {
				if res != nil {
					t.Errorf("evidence kept for a %s signal: %+v", sig.State, res)
				}
				return
			}
			if res == nil || sig.Endpoint != reg.URL() || sig.FetchedAt == nil {
				t.Fatalf("result %+v signal %+v", res, sig)
			}
			tt.check(t, res)
		})
	}
}

// TestGitHubAsksAboutTheFoundRepository: a package whose repository field
// is empty but whose homepage is its GitHub repository gets that
// repository looked up.
func TestGitHubAsksAboutTheFoundRepository(t *testing.T) {
	var asked atomic.Value
	gh := repoFunc(func(owner, name string) { asked.Store(owner + "/" + name) })
	p := testPipeline(Config{Supply: Supply{GitHub: gh}})
	meta := &evidence.RegistryMeta{LinksRead: true, Homepage: "https://github.com/neondatabase/mcp-server-neon/", Links: []evidence.RegistryLink{
		{Field: "homepage", URL: "https://github.com/neondatabase/mcp-server-neon/"},
		{Field: "bugs.url", URL: "https://github.com/neondatabase/mcp-server-neon/issues"},
	}}
	res, sig := p.githubRepo(context.Background(), meta)()
	if sig.State != evidence.StateObserved || res == nil || asked.Load() != "neondatabase/mcp-server-neon" {
		t.Fatalf("signal %+v, result %+v, asked %v", sig, res, asked.Load())
	}
	// Nothing found anywhere: not assessed, as before.
	_, sig = p.githubRepo(context.Background(), &evidence.RegistryMeta{LinksRead: true, Homepage: "https://neon.tech"})()
	if sig.State != evidence.StateNotAssessed {
		t.Errorf("signal %+v", sig)
	}
}

type repoFunc func(owner, name string)

func (f repoFunc) Repo(_ context.Context, owner, name string) (*evidence.GitHubResult, supplychain.Fetch, error) {
	f(owner, name)
	return &evidence.GitHubResult{Requested: owner + "/" + name, Exists: true, FullName: owner + "/" + name}, supplychain.Fetch{Endpoint: "http://127.0.0.1:1/fake"}, nil
}

// TestRecollectMCPRegistry: a run recorded before the MCP registry was
// asked gets the signal from its stored mcpName, and nothing else changes.
func TestRecollectMCPRegistry(t *testing.T) {
	reg := supplytest.NewMCPRegistry(supplytest.MCPAzure...)
	defer reg.Close()
	p := testPipeline(Config{ToolVersion: "0.9.0", MCPRegistry: supplychain.NewMCPRegistry(nil, reg.URL())})
	old := storedRun(t)
	old.Supply.Registry.MCPName = "com.microsoft/azure"
	got, err := p.Recollect(context.Background(), old, []string{evidence.SignalMCPRegistry}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b := got.Bundle
	if sig := b.Signal(evidence.SignalMCPRegistry); sig.State != evidence.StateObserved || b.Supply.MCPRegistry == nil || !b.Supply.MCPRegistry.Found {
		t.Fatalf("mcp_registry %+v, %+v", sig, b.Supply.MCPRegistry)
	}
	if b.Supply.Registry == nil || b.Signal(evidence.SignalOSV) != old.Signals[evidence.SignalOSV] || b.Run.Recollected == nil {
		t.Error("the carried-over evidence changed")
	}
}
