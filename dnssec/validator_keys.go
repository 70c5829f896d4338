package dnssec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// anchorKeys validates the anchor zone's DNSKEY RRset against the anchor.
// Only a success is cached, so a resolver that comes back is used at once.
func (v *Validator) anchorKeys(ctx context.Context) *zoneState {
	return v.cache.do("anchor|"+v.anchor.Zone, v.cfg.Now(), func() (any, time.Duration) {
		zs, ttl := v.fetchKeys(ctx, v.anchor.Zone, v.anchor.DS)
		if zs.step.Status != StatusSecure {
			ttl = 0
		}
		zs.expires = v.cfg.Now().Add(min(ttl, v.cfg.MaxCacheTTL))
		return zs, min(ttl, v.cfg.MaxCacheTTL)
	}).(*zoneState)
}

// zoneKeys validates a zone's DNSKEY RRset against the DS records its
// parent published.
func (v *Validator) zoneKeys(ctx context.Context, zone string, ds []*dns.DS) *zoneState {
	key := "keys|" + zone
	for _, d := range ds {
		key += fmt.Sprintf("|%d/%d/%d/%s", d.KeyTag, d.Algorithm, d.DigestType, strings.ToLower(d.Digest))
	}
	return v.cache.do(key, v.cfg.Now(), func() (any, time.Duration) {
		zs, ttl := v.fetchKeys(ctx, zone, ds)
		ttl = v.cacheTTL(zs.step.Status, ttl)
		zs.expires = v.cfg.Now().Add(ttl)
		return zs, ttl
	}).(*zoneState)
}

func (v *Validator) fetchKeys(ctx context.Context, zone string, ds []*dns.DS) (*zoneState, time.Duration) {
	zs := &zoneState{step: ZoneStep{Zone: zone}}
	fail := func(s Status, err error) (*zoneState, time.Duration) {
		zs.step.Status, zs.err, zs.step.Error = s, err, err.Error()
		var be *bogusError
		if errors.As(err, &be) {
			zs.step.BogusReason = be.reason
		}
		return zs, 0
	}
	// RFC 4509 section 3: when a SHA-256 (or stronger) digest is there, a
	// SHA-1 one must not be what lets a key in.
	strong := slices.ContainsFunc(ds, func(d *dns.DS) bool {
		return supportedAlgorithm(d.Algorithm) && (d.DigestType == dns.SHA256 || d.DigestType == dns.SHA384)
	})
	var usable []*dns.DS
	for _, d := range ds {
		zs.step.DSKeyTags = append(zs.step.DSKeyTags, d.KeyTag)
		if supportedAlgorithm(d.Algorithm) && supportedDigest(d.DigestType) && !(strong && d.DigestType == dns.SHA1) {
			usable = append(usable, d)
		}
	}
	if len(usable) == 0 {
		// RFC 4035 section 5.2: no supported algorithm means no
		// authentication path, which is treated as insecure.
		zs.step.Status = StatusInsecure
		zs.step.Error = "no DS record with a supported algorithm and digest type"
		return zs, v.cfg.MaxCacheTTL
	}

	msg, err := v.client.query(ctx, zone, dns.TypeDNSKEY)
	if err != nil {
		return fail(StatusIndeterminate, err)
	}
	switch msg.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return fail(StatusBogus, bogus(BogusMissingDNSKEY, "DNSKEY %s answered NXDOMAIN, but the parent has a DS", zone))
	default:
		return fail(StatusIndeterminate, fmt.Errorf("%w: DNSKEY %s answered %s", ErrResolver, zone, dns.RcodeToString[msg.Rcode]))
	}
	set := findSet(collect(msg.Answer), zone, dns.TypeDNSKEY)
	if set == nil {
		return fail(StatusBogus, bogus(BogusMissingDNSKEY, "no DNSKEY RRset for %s, but the parent has a DS", zone))
	}
	var keys, matched []*dns.DNSKEY
	for _, rr := range set.rrs {
		k := rr.(*dns.DNSKEY)
		zs.step.KeyTags = append(zs.step.KeyTags, k.KeyTag())
		if !slices.Contains(zs.step.Algorithms, int(k.Algorithm)) {
			zs.step.Algorithms = append(zs.step.Algorithms, int(k.Algorithm))
		}
		if k.Protocol != 3 || k.Flags&dns.ZONE == 0 || k.Flags&dns.REVOKE != 0 {
			continue
		}
		keys = append(keys, k)
		tag := k.KeyTag()
		for _, d := range usable {
			if d.KeyTag != tag || d.Algorithm != k.Algorithm {
				continue
			}
			if kd := k.ToDS(d.DigestType); kd != nil && strings.EqualFold(kd.Digest, d.Digest) {
				matched = append(matched, k)
				break
			}
		}
	}
	if len(matched) == 0 {
		if why := revokedMatches(zone, set, usable); why != "" {
			return fail(StatusBogus, bogus(BogusRevokedDNSKEY, "%s; no DS matches a key that is not revoked, and a revoked key authenticates nothing (RFC 5011 section 2.1)", why))
		}
		return fail(StatusBogus, bogus(BogusNoMatchingDNSKEY, "DS key tags %v match none of the DNSKEYs of %s (key tags %v)", zs.step.DSKeyTags, zone, zs.step.KeyTags))
	}
	_, ttl, err := verify(set, newKeySet(zone, matched), v.cfg.Now())
	if err != nil {
		return fail(StatusBogus, err)
	}
	zs.step.Status = StatusSecure
	zs.keys = newKeySet(zone, keys)
	return zs, ttl
}

// revokedMatches says which of the DS records point at a key of the
// DNSKEY RRset that has the REVOKE bit set, either as published or as it was
// before the bit was set (setting it changes the key tag and the digest, so
// a parent that has not caught up with a key roll still has the old DS).
// It returns "" when none does.
func revokedMatches(zone string, set *rrset, ds []*dns.DS) string {
	var out []string
	for _, rr := range set.rrs {
		k := rr.(*dns.DNSKEY)
		if k.Protocol != 3 || k.Flags&dns.ZONE == 0 || k.Flags&dns.REVOKE == 0 {
			continue
		}
		was := dns.Copy(k).(*dns.DNSKEY)
		was.Flags &^= dns.REVOKE
		for _, d := range ds {
			switch {
			case dsMatches(d, k):
				out = append(out, fmt.Sprintf("the DS %d for %s points at DNSKEY %d, which is revoked (its REVOKE bit is set)", d.KeyTag, zone, k.KeyTag()))
			case dsMatches(d, was):
				out = append(out, fmt.Sprintf("the DS %d for %s points at a key the zone has revoked: DNSKEY %d is that key with its REVOKE bit set", d.KeyTag, zone, k.KeyTag()))
			}
		}
	}
	return strings.Join(out, "; ")
}

// dsMatches reports whether a DS record is the digest of a DNSKEY.
func dsMatches(d *dns.DS, k *dns.DNSKEY) bool {
	if d.KeyTag != k.KeyTag() || d.Algorithm != k.Algorithm {
		return false
	}
	kd := k.ToDS(d.DigestType)
	return kd != nil && strings.EqualFold(kd.Digest, d.Digest)
}
