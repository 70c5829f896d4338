package dnssec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// bogusError is a validation failure: the data should be signed and is
// not, or not correctly.
type bogusError struct {
	reason BogusReason
	detail string
}

func (e *bogusError) Error() string { return string(e.reason) + ": " + e.detail }

func bogus(reason BogusReason, format string, args ...any) *bogusError {
	return &bogusError{reason: reason, detail: fmt.Sprintf(format, args...)}
}

// supportedAlgorithm reports whether signatures of a DNSSEC algorithm can be
// verified (RFC 8624 section 3.1: every algorithm a validator must or
// should support, except Ed448, which miekg/dns cannot verify).
func supportedAlgorithm(alg uint8) bool {
	switch alg {
	case dns.RSASHA1, dns.RSASHA1NSEC3SHA1, dns.RSASHA256, dns.RSASHA512,
		dns.ECDSAP256SHA256, dns.ECDSAP384SHA384, dns.ED25519:
		return true
	}
	return false
}

// supportedDigest reports whether a DS digest type can be checked.
func supportedDigest(t uint8) bool {
	return t == dns.SHA1 || t == dns.SHA256 || t == dns.SHA384
}

// rrset is the records of one name and type in a message section, with the
// RRSIGs that cover them. Owner names are canonical (lower case).
type rrset struct {
	name  string
	rtype uint16
	rrs   []dns.RR
	sigs  []*dns.RRSIG
}

func (s *rrset) String() string {
	return strings.TrimSuffix(s.name, ".") + "/" + dns.TypeToString[s.rtype]
}

// collect groups a message section into RRsets, in order of appearance.
func collect(section []dns.RR) []*rrset {
	var out []*rrset
	find := func(name string, t uint16) *rrset {
		for _, s := range out {
			if s.name == name && s.rtype == t {
				return s
			}
		}
		s := &rrset{name: name, rtype: t}
		out = append(out, s)
		return s
	}
	for _, rr := range section {
		h := rr.Header()
		if h.Class != dns.ClassINET || h.Rrtype == dns.TypeOPT {
			continue
		}
		name := dns.CanonicalName(h.Name)
		if name != h.Name {
			// miekg's RRSIG.Verify wants identical owner names in a set.
			rr = dns.Copy(rr)
			rr.Header().Name = name
		}
		if sig, ok := rr.(*dns.RRSIG); ok {
			s := find(name, sig.TypeCovered)
			s.sigs = append(s.sigs, sig)
			continue
		}
		s := find(name, h.Rrtype)
		s.rrs = append(s.rrs, rr)
	}
	// An RRSIG for a type that is not present is useless; drop such sets.
	return slices.DeleteFunc(out, func(s *rrset) bool { return len(s.rrs) == 0 })
}

func findSet(sets []*rrset, name string, t uint16) *rrset {
	for _, s := range sets {
		if s.name == name && s.rtype == t {
			return s
		}
	}
	return nil
}

// keySet is the DNSKEYs a zone's data may be signed with.
type keySet struct {
	zone string
	keys []*dns.DNSKEY
	tags []uint16
}

func newKeySet(zone string, keys []*dns.DNSKEY) keySet {
	ks := keySet{zone: zone}
	for _, k := range keys {
		ks.keys = append(ks.keys, k)
		ks.tags = append(ks.tags, k.KeyTag())
	}
	return ks
}

// verify checks that an RRset is signed by the zone: some RRSIG by a key of
// the zone, inside its validity period at now, verifies. It returns how long
// the result may be cached: the smallest of the records' TTLs, the
// signature's original TTL and the time left until it expires; and the
// signature that verified.
func verify(s *rrset, ks keySet, now time.Time) (*dns.RRSIG, time.Duration, error) {
	if len(s.sigs) == 0 {
		return nil, 0, bogus(BogusMissingRRSIG, "no RRSIG over %s", s)
	}
	var sigErr, timeErr error
	for _, sig := range s.sigs {
		if dns.CanonicalName(sig.SignerName) != ks.zone || !supportedAlgorithm(sig.Algorithm) {
			continue
		}
		for i, k := range ks.keys {
			if ks.tags[i] != sig.KeyTag || k.Algorithm != sig.Algorithm {
				continue
			}
			if !sig.ValidityPeriod(now) {
				// RFC 1982 serial arithmetic, as ValidityPeriod uses.
				if int32(sig.Inception-uint32(now.Unix())) > 0 {
					timeErr = bogus(BogusSignatureNotYetValid, "RRSIG %d over %s is valid from %s", sig.KeyTag, s, dns.TimeToString(sig.Inception))
				} else {
					timeErr = bogus(BogusSignatureExpired, "RRSIG %d over %s expired %s", sig.KeyTag, s, dns.TimeToString(sig.Expiration))
				}
				continue
			}
			if err := sig.Verify(k, s.rrs); err != nil {
				sigErr = bogus(BogusBadSignature, "RRSIG %d over %s does not verify: %v", sig.KeyTag, s, err)
				continue
			}
			ttl := time.Duration(sig.OrigTtl) * time.Second
			for _, rr := range s.rrs {
				ttl = min(ttl, time.Duration(rr.Header().Ttl)*time.Second)
			}
			left := time.Duration(int32(sig.Expiration-uint32(now.Unix()))) * time.Second
			return sig, min(ttl, left), nil
		}
	}
	switch {
	case sigErr != nil:
		return nil, 0, sigErr
	case timeErr != nil:
		return nil, 0, timeErr
	}
	return nil, 0, bogus(BogusMissingRRSIG, "no RRSIG over %s by a key of %s (key tags %v)", s, ks.zone, ks.tags)
}
