package dnssec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// dnameFor finds the DNAME RRset in a response that redirects name: one
// owned by a proper ancestor of name inside zone, the closest if there
// are several.
func dnameFor(sets []*rrset, zone, name string) *rrset {
	var best *rrset
	for _, s := range sets {
		if s.rtype != dns.TypeDNAME || s.name == name || !dns.IsSubDomain(s.name, name) || !dns.IsSubDomain(zone, s.name) {
			continue
		}
		if best == nil || dns.CountLabel(s.name) > dns.CountLabel(best.name) {
			best = s
		}
	}
	return best
}

// dnameTarget is the name a DNAME RRset redirects name to (RFC 6672
// section 2.2): name with the DNAME's owner suffix replaced by its target.
func dnameTarget(set *rrset, name string) (string, error) {
	if len(set.rrs) != 1 {
		return "", fmt.Errorf("%d DNAME records at %s, where RFC 6672 section 2.4 allows one", len(set.rrs), set.name)
	}
	target := dns.CanonicalName(set.rrs[0].(*dns.DNAME).Target)
	// Label offsets from dns.Split, so that an escaped dot is no boundary.
	prefix := name
	if set.name != "." {
		idx := dns.Split(name)
		prefix = name[:idx[len(idx)-dns.CountLabel(set.name)]]
	}
	out := prefix + target
	if target == "." {
		out = prefix
	}
	buf := make([]byte, 2*dns.DefaultMsgSize)
	if n, err := dns.PackDomainName(out, buf, 0, nil, false); err != nil || n > 255 {
		return "", fmt.Errorf("DNAME %s -> %s makes %s longer than 255 octets", set.name, target, name)
	}
	return out, nil
}

// proofs validates the NSEC and NSEC3 RRsets of a zone in a response's
// authority section.
func (v *Validator) proofs(msg *dns.Msg, zs *zoneState) (*proofs, time.Duration, error) {
	p := &proofs{zone: zs.keys.zone}
	ttl := v.cfg.MaxCacheTTL
	now := v.cfg.Now()
	for _, s := range collect(msg.Ns) {
		switch s.rtype {
		case dns.TypeNSEC:
			if !dns.IsSubDomain(p.zone, s.name) {
				continue
			}
		case dns.TypeNSEC3:
			if parentName(s.name) != p.zone {
				continue
			}
		default:
			continue
		}
		_, t, err := verify(s, zs.keys, now)
		if err != nil {
			return nil, 0, err
		}
		ttl = min(ttl, t)
		for _, rr := range s.rrs {
			switch rr := rr.(type) {
			case *dns.NSEC:
				p.nsec = append(p.nsec, rr)
			case *dns.NSEC3:
				p.nsec3 = append(p.nsec3, rr)
			}
		}
	}
	return p, ttl, nil
}

// nameAnswer is the judgement on one name, without following its CNAME.
type nameAnswer struct {
	chain  []ZoneStep
	status Status
	reason BogusReason
	err    string
	exists Existence
	proof  Proof
	cname  string // the CNAME target, when the name is an alias
	// rrs is the RRset of the type asked for when the name has one
	// (authenticated, or below an unsigned delegation); judge asks for A,
	// judgeType for any type.
	rrs []dns.RR
}

func (a *nameAnswer) fail(s Status, err error) {
	a.status, a.err, a.exists = s, err.Error(), ExistsUnknown
	var be *bogusError
	if errors.As(err, &be) {
		a.reason = be.reason
	}
}

// answer judges one name: it walks the chain of trust down to the zone
// holding it, then asks for its A RRset to learn whether it exists.
func (v *Validator) answer(ctx context.Context, anchor *zoneState, name string) *nameAnswer {
	return v.cache.do("name|"+name, v.cfg.Now(), func() (any, time.Duration) {
		a, ttl := v.judge(ctx, anchor, name)
		return a, v.cacheTTL(a.status, ttl)
	}).(*nameAnswer)
}

func (v *Validator) judge(ctx context.Context, anchor *zoneState, name string) (*nameAnswer, time.Duration) {
	return v.judgeType(ctx, anchor, name, dns.TypeA)
}

// judgeType judges one name as judge does, asking for its qtype RRset.
func (v *Validator) judgeType(ctx context.Context, anchor *zoneState, name string, qtype uint16) (*nameAnswer, time.Duration) {
	a := &nameAnswer{chain: []ZoneStep{anchor.step}, exists: ExistsUnknown}
	now := v.cfg.Now()
	ttl := anchor.expires.Sub(now)
	if !dns.IsSubDomain(anchor.keys.zone, name) {
		a.fail(StatusIndeterminate, fmt.Errorf("%s is outside the trust anchor's zone %s", name, anchor.keys.zone))
		return a, 0
	}

	// Walk down one label at a time, asking the current zone for each
	// name's DS, until the name itself or an unsigned delegation.
	cur := anchor
	insecure, redirect := false, false
	insecureZone := "" // the unsigned delegation, when insecure
	for i := dns.CountLabel(anchor.keys.zone) + 1; i <= dns.CountLabel(name) && !insecure && !redirect; i++ {
		cand := ancestor(name, i)
		d := v.delegation(ctx, cur, cand)
		ttl = min(ttl, d.expires.Sub(now))
		switch d.kind {
		case notACut:
		case redirected:
			redirect = true
		case failed:
			if d.status == StatusBogus {
				a.chain = append(a.chain, bogusStep(cand, d.err))
			}
			a.fail(d.status, d.err)
			return a, ttl
		case nonexistent:
			a.status, a.exists, a.proof = StatusSecure, ExistsNo, d.denial.proof
			if d.denial.insecure {
				a.status = StatusInsecure
			}
			return a, ttl
		case insecureCut:
			a.chain = append(a.chain, ZoneStep{Zone: cand, Status: StatusInsecure, Denial: d.denial.proof})
			insecure, insecureZone = true, cand
		case secureCut:
			zs := v.zoneKeys(ctx, cand, d.ds)
			ttl = min(ttl, zs.expires.Sub(now))
			a.chain = append(a.chain, zs.step)
			switch zs.step.Status {
			case StatusSecure:
				cur = zs
			case StatusInsecure:
				insecure, insecureZone = true, cand
			default:
				a.fail(zs.step.Status, zs.err)
				return a, ttl
			}
		}
	}

	msg, err := v.client.query(ctx, name, qtype)
	if err != nil {
		a.fail(StatusIndeterminate, err)
		return a, 0
	}
	if msg.Rcode != dns.RcodeSuccess && msg.Rcode != dns.RcodeNameError {
		a.fail(StatusIndeterminate, fmt.Errorf("%w: %s %s answered %s", ErrResolver, dns.TypeToString[qtype], name, dns.RcodeToString[msg.Rcode]))
		return a, 0
	}
	answers := collect(msg.Answer)
	zone := cur.keys.zone
	if insecure {
		zone = insecureZone
	}
	if dn := dnameFor(answers, zone, name); dn != nil {
		return v.judgeDNAME(msg, answers, dn, cur, insecure, a, name, ttl)
	}
	set := findSet(answers, name, qtype)
	if cn := findSet(answers, name, dns.TypeCNAME); set == nil && cn != nil {
		set = cn
		a.cname = dns.CanonicalName(cn.rrs[0].(*dns.CNAME).Target)
	}

	if insecure {
		a.status = StatusInsecure
		if set != nil && a.cname == "" {
			a.rrs = set.rrs
		}
		switch {
		case set != nil || msg.Rcode == dns.RcodeSuccess:
			a.exists = ExistsYes
		default:
			a.exists, a.proof = ExistsNo, ProofNone
		}
		return a, ttl
	}

	if set != nil {
		// A wildcard answer needs the proof that the name itself does not
		// exist; authenticate asks for it.
		ins, sttl, err := v.authenticate(msg, set, cur)
		if err != nil {
			a.cname = ""
			a.fail(StatusBogus, err)
			return a, ttl
		}
		ttl = min(ttl, sttl)
		a.status, a.exists = StatusSecure, ExistsYes
		if ins {
			a.status = StatusInsecure
		}
		if a.cname == "" {
			a.rrs = set.rrs
		}
		return a, ttl
	}

	return v.judgeDenial(msg, cur, a, name, qtype, ttl)
}

// bogusStep is the chain's step for a zone whose delegation is bogus, with
// the reason when err carries one.
func bogusStep(zone string, err error) ZoneStep {
	step := ZoneStep{Zone: zone, Status: StatusBogus, Error: err.Error()}
	var be *bogusError
	if errors.As(err, &be) {
		step.BogusReason = be.reason
	}
	return step
}

// judgeDenial judges a response of the signed zone cur that holds no RRset
// for name: the NXDOMAIN proof when the response says the name does not
// exist, else the proof that it has no qtype RRset (which, as a compact
// denial, can show that it does not exist).
func (v *Validator) judgeDenial(msg *dns.Msg, cur *zoneState, a *nameAnswer, name string, qtype uint16, ttl time.Duration) (*nameAnswer, time.Duration) {
	p, pttl, err := v.proofs(msg, cur)
	if err != nil {
		a.fail(StatusBogus, err)
		return a, ttl
	}
	ttl = min(ttl, pttl)
	if msg.Rcode == dns.RcodeNameError {
		dn, err := p.proveNXDomain(name)
		if err != nil {
			a.fail(StatusBogus, bogus(BogusMissingDenial, "NXDOMAIN for %s: %v", name, err))
			return a, ttl
		}
		a.status, a.exists, a.proof = StatusSecure, ExistsNo, dn.proof
		if dn.insecure {
			a.status = StatusInsecure
		}
		return a, ttl
	}
	dn, err := p.proveNoData(name, qtype)
	if err != nil {
		a.fail(StatusBogus, bogus(BogusMissingDenial, "no %s for %s: %v", dns.TypeToString[qtype], name, err))
		return a, ttl
	}
	a.status, a.exists = StatusSecure, ExistsYes
	if dn.nxname {
		a.exists, a.proof = ExistsNo, dn.proof
	}
	if dn.insecure {
		a.status = StatusInsecure
	}
	return a, ttl
}

// judgeDNAME judges a name below a DNAME (RFC 6672 section 5.3.1): the
// DNAME RRset is validated like any other, the CNAME synthesized from it
// is unsigned and accepted only when it is exactly the one the DNAME
// synthesizes (owner the name, target the name with the DNAME's owner
// suffix replaced by its target), and the target is then followed as a
// CNAME's is. An answer that carries the DNAME without the CNAME is
// followed the same way. Below an unsigned delegation nothing can be
// authenticated, so the DNAME's target is followed and the name is
// insecure.
func (v *Validator) judgeDNAME(msg *dns.Msg, answers []*rrset, dn *rrset, cur *zoneState, insecure bool, a *nameAnswer, name string, ttl time.Duration) (*nameAnswer, time.Duration) {
	a.status = StatusSecure
	if insecure {
		a.status = StatusInsecure
	} else {
		ins, dttl, err := v.authenticate(msg, dn, cur)
		if err != nil {
			a.fail(StatusBogus, err)
			return a, ttl
		}
		ttl = min(ttl, dttl)
		if ins {
			a.status = StatusInsecure
		}
	}
	target, err := dnameTarget(dn, name)
	if err != nil {
		if insecure {
			a.fail(StatusIndeterminate, err)
		} else {
			a.fail(StatusBogus, bogus(BogusDNAMESynthesis, "%v", err))
		}
		return a, ttl
	}
	if cn := findSet(answers, name, dns.TypeCNAME); cn != nil && !insecure {
		for _, rr := range cn.rrs {
			if got := dns.CanonicalName(rr.(*dns.CNAME).Target); len(cn.rrs) != 1 || got != target {
				a.fail(StatusBogus, bogus(BogusDNAMESynthesis, "the CNAME %s -> %s is not the one DNAME %s -> %s synthesizes (%s -> %s)",
					strings.TrimSuffix(name, "."), strings.TrimSuffix(got, "."), strings.TrimSuffix(dn.name, "."),
					strings.TrimSuffix(dns.CanonicalName(dn.rrs[0].(*dns.DNAME).Target), "."),
					strings.TrimSuffix(name, "."), strings.TrimSuffix(target, ".")))
				return a, ttl
			}
		}
	}
	a.exists, a.cname = ExistsYes, target
	return a, ttl
}
