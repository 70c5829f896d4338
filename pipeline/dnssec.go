package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// DomainValidator validates the chain of trust of domains.
type DomainValidator interface {
	Validate(ctx context.Context, domains []dnssec.Domain) (dnssec.Result, error)
}

// dnssecDomains starts the DNSSEC validation of the domains the package
// leans on, taken from the registry metadata or, for a local tarball, from
// its package.json. It needs nothing from the sandbox, so it runs
// alongside it.
func (p *Pipeline) dnssecDomains(ctx context.Context, rt *Resolved, meta *evidence.RegistryMeta) func() (*evidence.DNSSECResult, evidence.Signal) {
	sp := p.cfg.Supply
	done := func(sig evidence.Signal) func() (*evidence.DNSSECResult, evidence.Signal) {
		sig.ThirdParty = true
		return func() (*evidence.DNSSECResult, evidence.Signal) { return nil, sig }
	}
	switch {
	case sp.Skip["dnssec"]:
		return done(skipped("dnssec"))
	case sp.DNSSEC == nil:
		return done(evidence.Signal{State: evidence.StateUnavailable, Reason: "no DNS resolver configured (--dnssec-resolver)"})
	}
	source := "the registry metadata"
	if meta == nil && rt.manifest != nil {
		m, err := supplychain.ManifestMeta(rt.Name, rt.Version, rt.manifest)
		if err != nil {
			return done(evidence.Signal{State: evidence.StateError, Reason: err.Error()})
		}
		meta, source = m, "the package's package.json"
	}
	if meta == nil {
		return done(evidence.Signal{State: evidence.StateNotAssessed, Reason: "no registry metadata to take domains from"})
	}
	domains := dnssec.Domains(domainInputs(meta))
	if len(domains) == 0 {
		return done(evidence.Signal{State: evidence.StateNotAssessed, Reason: "no domain to check: " + source + " names none off the well-known forges and registries"})
	}
	var res *evidence.DNSSECResult
	var sig evidence.Signal
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		res, sig = p.validateDomains(ctx, domains)
	}()
	return func() (*evidence.DNSSECResult, evidence.Signal) {
		<-ch
		return res, sig
	}
}

func (p *Pipeline) validateDomains(ctx context.Context, domains []dnssec.Domain) (*evidence.DNSSECResult, evidence.Signal) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	start := time.Now()
	r, err := p.cfg.Supply.DNSSEC.Validate(ctx, domains)
	sig := evidence.Signal{ThirdParty: true, DurationMS: time.Since(start).Milliseconds(), Endpoint: "dns://" + p.cfg.Supply.DNSSECResolver}
	if !r.CheckedAt.IsZero() {
		at := r.CheckedAt.UTC()
		sig.FetchedAt = &at
	}
	switch {
	case err != nil:
		sig.State, sig.Reason = evidence.StateUnavailable, "dnssec: "+err.Error()
		return nil, sig
	case r.Status != dnssec.RunObserved:
		sig.State, sig.Reason = evidence.StateUnavailable, r.Reason
		return nil, sig
	}
	// The evidence mirrors the validator's result field for field (same
	// JSON names), so a round trip converts it.
	raw, err := json.Marshal(r)
	var out evidence.DNSSECResult
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		sig.State, sig.Reason = evidence.StateError, fmt.Sprintf("dnssec result: %v", err)
		return nil, sig
	}
	sig.State = evidence.StateObserved
	return &out, sig
}

// domainInputs are the places in the metadata a domain can come from.
func domainInputs(m *evidence.RegistryMeta) dnssec.Inputs {
	in := dnssec.Inputs{Homepage: m.Homepage, Repository: m.RepositoryURL, AuthorURL: m.AuthorURL, MCPName: m.MCPName}
	for _, mt := range m.Maintainers {
		if mt.EmailDomain != "" {
			in.MaintainerEmails = append(in.MaintainerEmails, "maintainer@"+mt.EmailDomain)
		}
	}
	return in
}
