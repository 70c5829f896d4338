package dnssec

import (
	"context"
	"fmt"
	"time"

	"github.com/miekg/dns"
)

type delegationKind int

const (
	notACut     delegationKind = iota // cand is a name inside the parent zone
	secureCut                         // signed DS: a signed child zone
	insecureCut                       // proven no DS: an unsigned child
	nonexistent                       // cand (and everything below) does not exist
	redirected                        // a signed DNAME above cand redirects it (and everything below)
	failed                            // bogus or indeterminate
)

// delegation is what the parent zone says about a name below it.
type delegation struct {
	kind    delegationKind
	ds      []*dns.DS
	denial  denial
	status  Status // for failed: bogus or indeterminate
	err     error
	expires time.Time
}

// delegation asks for cand's DS RRset and judges the answer with the
// parent zone's keys.
func (v *Validator) delegation(ctx context.Context, parent *zoneState, cand string) *delegation {
	return v.cache.do("ds|"+cand, v.cfg.Now(), func() (any, time.Duration) {
		d, ttl := v.fetchDelegation(ctx, parent, cand)
		st := d.status
		if st == "" {
			st = StatusSecure
		}
		ttl = v.cacheTTL(st, ttl)
		d.expires = v.cfg.Now().Add(ttl)
		return d, ttl
	}).(*delegation)
}

func (v *Validator) fetchDelegation(ctx context.Context, parent *zoneState, cand string) (*delegation, time.Duration) {
	fail := func(s Status, err error) (*delegation, time.Duration) {
		return &delegation{kind: failed, status: s, err: err}, 0
	}
	msg, err := v.client.query(ctx, cand, dns.TypeDS)
	if err != nil {
		return fail(StatusIndeterminate, err)
	}
	now := v.cfg.Now()
	answers := collect(msg.Answer)
	switch msg.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
	default:
		return fail(StatusIndeterminate, fmt.Errorf("%w: DS %s answered %s", ErrResolver, cand, dns.RcodeToString[msg.Rcode]))
	}
	if set := findSet(answers, cand, dns.TypeDS); set != nil && msg.Rcode == dns.RcodeSuccess {
		_, ttl, err := verify(set, parent.keys, now)
		if err != nil {
			return fail(StatusBogus, err)
		}
		d := &delegation{kind: secureCut}
		for _, rr := range set.rrs {
			d.ds = append(d.ds, rr.(*dns.DS))
		}
		return d, ttl
	}
	// A DNAME above cand in the parent zone redirects cand and every name
	// below it, so there is no zone cut to find there (RFC 6672 section
	// 2.3 forbids data below a DNAME's owner). The answer also holds the
	// unsigned CNAME the DNAME synthesizes; the question for the domain
	// itself judges it against the DNAME.
	if set := dnameFor(answers, parent.keys.zone, cand); set != nil {
		_, ttl, err := v.authenticate(msg, set, parent)
		if err != nil {
			return fail(StatusBogus, err)
		}
		return &delegation{kind: redirected}, ttl
	}
	// A CNAME at cand: an alias inside the parent zone, not a zone cut.
	// The question for the domain itself judges the alias.
	if set := findSet(answers, cand, dns.TypeCNAME); set != nil {
		_, ttl, err := verify(set, parent.keys, now)
		if err != nil {
			return fail(StatusBogus, err)
		}
		return &delegation{kind: notACut}, ttl
	}
	p, ttl, err := v.proofs(msg, parent)
	if err != nil {
		return fail(StatusBogus, err)
	}
	if msg.Rcode == dns.RcodeNameError {
		dn, err := p.proveNXDomain(cand)
		if err != nil {
			return fail(StatusBogus, bogus(BogusMissingDenial, "NXDOMAIN for %s: %v", cand, err))
		}
		return &delegation{kind: nonexistent, denial: dn}, ttl
	}
	dn, err := p.proveNoData(cand, dns.TypeDS)
	if err != nil {
		return fail(StatusBogus, bogus(BogusMissingDenial, "no DS for %s: %v", cand, err))
	}
	if dn.nxname {
		return &delegation{kind: nonexistent, denial: dn}, ttl
	}
	if dn.cut {
		return &delegation{kind: insecureCut, denial: dn}, ttl
	}
	return &delegation{kind: notACut, denial: dn}, ttl
}

// authenticate verifies a positive RRset of the zone zs and, when a
// wildcard synthesized it, the proof in the response's authority section
// that its owner does not exist itself. insecure says that proof was an
// NSEC3 opt-out span, which proves less.
func (v *Validator) authenticate(msg *dns.Msg, set *rrset, zs *zoneState) (insecure bool, ttl time.Duration, err error) {
	sig, ttl, err := verify(set, zs.keys, v.cfg.Now())
	if err != nil {
		return false, 0, err
	}
	if int(sig.Labels) >= dns.CountLabel(set.name) {
		return false, ttl, nil
	}
	p, pttl, err := v.proofs(msg, zs)
	if err != nil {
		return false, 0, err
	}
	dn, err := p.proveWildcard(set.name, ancestor(set.name, int(sig.Labels)))
	if err != nil {
		return false, 0, bogus(BogusMissingDenial, "%v", err)
	}
	return dn.insecure, min(ttl, pttl), nil
}
