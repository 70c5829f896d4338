package dnssec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// ErrAnchorUnavailable is returned by LookupTXT when the trust anchor
// zone's keys could not be fetched and validated (no resolver answered, or
// it filters or strips DNSSEC data): nothing below can be judged, as for a
// Validate run that is RunUnavailable.
var ErrAnchorUnavailable = errors.New("trust anchor unavailable")

// TXTResult is the judgement on one name's TXT RRset.
type TXTResult struct {
	Name string `json:"name"`
	// Status is the answer's DNSSEC state, the weakest link of the name's
	// CNAME chain as for a domain (secure, insecure, bogus with
	// BogusReason, indeterminate).
	Status      Status      `json:"status"`
	BogusReason BogusReason `json:"bogus_reason,omitempty"`
	Exists      Existence   `json:"exists"`
	// Records are the TXT records of the name (of the end of its CNAME
	// chain), each record's strings joined without separator as
	// net.Resolver.LookupTXT joins them, in the order served. They are set
	// only when Status is secure or insecure: a bogus or indeterminate
	// answer's data is not evidence of anything. Empty when the name has
	// no TXT RRset (a NODATA, proven when secure) or does not exist.
	Records []string `json:"records"`
	// CNAMEs are the targets followed from Name, in order.
	CNAMEs []string `json:"cnames,omitempty"`
	// Chain lists the zones from the anchor down, as DomainResult.Chain.
	Chain []ZoneStep `json:"chain"`
	Error string     `json:"error,omitempty"`
}

// LookupTXT asks for name's TXT RRset and judges it the way Validate
// judges a domain's address: the chain of trust from the anchor down, the
// RRset's signatures or the proof that there is none, CNAMEs followed (up
// to the same bound). It never trusts the resolver's AD bit. The error is
// ErrAnchorUnavailable, with the reason, when the anchor zone's keys
// cannot be validated, and the context's error when ctx ended first;
// otherwise the result is a judgement, which may itself be indeterminate
// (the resolver failed for that name).
//
// Answers are cached like Validate's, under their own key, so a TXT
// question never changes what Validate says of a name.
func (v *Validator) LookupTXT(ctx context.Context, name string) (TXTResult, error) {
	r := TXTResult{Name: name, Exists: ExistsUnknown, Records: []string{}, Chain: []ZoneStep{}}
	anchor := v.anchorKeys(ctx)
	if anchor.step.Status != StatusSecure {
		r.Status, r.Error = StatusIndeterminate, "trust anchor unavailable"
		r.Chain = append(r.Chain, anchor.step)
		if err := ctx.Err(); err != nil {
			return r, fmt.Errorf("dnssec txt: %w", err)
		}
		return r, fmt.Errorf("%w: %s: %v", ErrAnchorUnavailable, v.anchor.Zone, anchor.err)
	}
	host, _, ok := hostName(name)
	if !ok {
		r.Status, r.Error = StatusIndeterminate, fmt.Sprintf("%q is not a host name", name)
		return r, nil
	}
	w := follow(host, func(q string) *nameAnswer {
		return v.cache.do("txt|"+q, v.cfg.Now(), func() (any, time.Duration) {
			a, ttl := v.judgeType(ctx, anchor, q, dns.TypeTXT)
			return a, v.cacheTTL(a.status, ttl)
		}).(*nameAnswer)
	})
	r.Status, r.BogusReason, r.Error, r.Exists, r.CNAMEs, r.Chain = w.status, w.bogusReason, w.err, w.exists, w.cnames, append(r.Chain, w.chain...)
	var rrs []dns.RR
	if w.last != nil {
		rrs = w.last.rrs
	}
	if r.Status == StatusSecure || r.Status == StatusInsecure {
		for _, rr := range rrs {
			if t, ok := rr.(*dns.TXT); ok {
				r.Records = append(r.Records, strings.Join(t.Txt, ""))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return r, fmt.Errorf("dnssec txt: %w", err)
	}
	return r, nil
}
