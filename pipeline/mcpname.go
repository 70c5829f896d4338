package pipeline

import (
	"context"
	"fmt"

	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// txtValidator is a DNSSEC validator that also judges TXT answers
// (dnssec.Validator).
type txtValidator interface {
	LookupTXT(ctx context.Context, name string) (dnssec.TXTResult, error)
}

// dnsTXT gives the MCP name check the validator's TXT answers.
type dnsTXT struct{ v txtValidator }

func (d dnsTXT) LookupTXT(ctx context.Context, name string) (supplychain.TXTAnswer, error) {
	r, err := d.v.LookupTXT(ctx, name)
	return supplychain.TXTAnswer{Status: string(r.Status), Exists: string(r.Exists), Records: r.Records, Error: r.Error}, err
}

// skippedTXT stands for DNS when the operator skipped DNSSEC: the key
// record is not looked up.
type skippedTXT struct{}

func (skippedTXT) LookupTXT(context.Context, string) (supplychain.TXTAnswer, error) {
	return supplychain.TXTAnswer{}, fmt.Errorf("%w: DNS not asked (--skip dnssec)", supplychain.ErrNotApplicable)
}

// mcpNameCheck starts asking the MCP registry about the mcpName the
// package declares (from the registry metadata or, for a local tarball,
// its package.json) and, for a reverse-DNS namespace, whether its domain
// publishes the registry's key record (signal mcp_registry). It needs
// nothing from the sandbox, so it runs alongside it.
func (p *Pipeline) mcpNameCheck(ctx context.Context, rt *Resolved, meta *evidence.RegistryMeta) func() (*evidence.MCPNameCheck, evidence.Signal) {
	sp := p.cfg.Supply
	done := func(sig evidence.Signal) func() (*evidence.MCPNameCheck, evidence.Signal) {
		sig.ThirdParty = true
		return func() (*evidence.MCPNameCheck, evidence.Signal) { return nil, sig }
	}
	if sp.Skip[evidence.SignalMCPRegistry] {
		return done(skipped(evidence.SignalMCPRegistry))
	}
	if meta == nil && rt != nil && rt.manifest != nil {
		if m, err := supplychain.ManifestMeta(rt.Name, rt.Version, rt.manifest); err == nil {
			meta = m
		}
	}
	switch {
	case meta == nil:
		return done(evidence.Signal{State: evidence.StateNotAssessed, Reason: "no registry metadata to take an mcpName from"})
	case meta.MCPName == "":
		return done(evidence.Signal{State: evidence.StateNotAssessed, Reason: "the package declares no mcpName: no MCP registry entry to ask about"})
	case p.cfg.MCPRegistry == nil:
		return done(evidence.Signal{State: evidence.StateUnavailable, Reason: "no MCP registry configured"})
	}
	c := &supplychain.MCPNameChecker{Registry: p.cfg.MCPRegistry, HTTP: sp.WellKnown}
	switch v, ok := sp.DNSSEC.(txtValidator); {
	case sp.Skip["dnssec"]:
		c.DNS = skippedTXT{}
	case ok:
		c.DNS = dnsTXT{v}
	}
	name := meta.MCPName
	var res *evidence.MCPNameCheck
	var sig evidence.Signal
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		res, sig = collect(ctx, p.timeout(), true, func(ctx context.Context) (*evidence.MCPNameCheck, supplychain.Fetch, error) {
			return c.Check(ctx, name)
		})
	}()
	return func() (*evidence.MCPNameCheck, evidence.Signal) {
		<-ch
		return res, sig
	}
}
