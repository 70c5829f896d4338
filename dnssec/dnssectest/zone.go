package dnssectest

import (
	"crypto"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// key is one DNSKEY with its private half.
type key struct {
	pub  *dns.DNSKEY
	priv crypto.Signer
	tag  uint16
}

// nsec3Params are a zone's NSEC3 parameters; a nil *nsec3Params means NSEC.
type nsec3Params struct {
	iterations uint16
	salt       string // hex, "" for none
	optOut     bool
}

// rrKey names one RRset in a zone.
type rrKey struct {
	name  string
	rtype uint16
}

// zone is one signed (or unsigned) zone, fully built and signed, answering
// authoritative lookups.
type zone struct {
	name   string // canonical FQDN
	signed bool
	ksk    *key // signs the DNSKEY RRset
	zsk    *key // signs everything else; the same as ksk for a single-key zone
	nsec3  *nsec3Params

	rrsets map[rrKey][]dns.RR
	sigs   map[rrKey][]dns.RR
	// owners holds every owner name with data; exists adds the empty
	// non-terminals. cuts holds delegation points (NS below the apex).
	owners map[string]bool
	exists map[string]bool
	cuts   map[string]bool

	// NSEC: nsecOrder is the owner names in canonical order.
	nsecOrder []string
	// NSEC3: hashes in order, each hash's record, keyed by upper-case hash.
	nsec3Order []string
	nsec3ByH   map[string]*dns.NSEC3
}

const (
	ttl        = 3600
	negTTL     = 300
	defaultTTL = ttl
)

func newZone(name string) *zone {
	return &zone{
		name:     dns.CanonicalName(name),
		rrsets:   map[rrKey][]dns.RR{},
		sigs:     map[rrKey][]dns.RR{},
		owners:   map[string]bool{},
		exists:   map[string]bool{},
		cuts:     map[string]bool{},
		nsec3ByH: map[string]*dns.NSEC3{},
	}
}

// addText adds the records of a zone-file fragment whose relative names are
// relative to the zone.
func (z *zone) addText(text string) {
	zp := dns.NewZoneParser(strings.NewReader(text), z.name, "")
	zp.SetDefaultTTL(defaultTTL)
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		z.add(rr)
	}
	if err := zp.Err(); err != nil {
		panic(fmt.Sprintf("dnssectest: zone %s: %v", z.name, err))
	}
}

func (z *zone) add(rr dns.RR) {
	h := rr.Header()
	h.Name = dns.CanonicalName(h.Name)
	if !dns.IsSubDomain(z.name, h.Name) {
		panic(fmt.Sprintf("dnssectest: %s is outside zone %s", h.Name, z.name))
	}
	k := rrKey{h.Name, h.Rrtype}
	z.rrsets[k] = append(z.rrsets[k], rr)
	z.owners[h.Name] = true
	if h.Rrtype == dns.TypeNS && h.Name != z.name {
		z.cuts[h.Name] = true
	}
}

// typesAt lists the types present at an owner name, sorted.
func (z *zone) typesAt(name string) []uint16 {
	var ts []uint16
	for k := range z.rrsets {
		if k.name == name {
			ts = append(ts, k.rtype)
		}
	}
	slices.Sort(ts)
	return ts
}

// computeExists fills exists with the owners and every empty non-terminal
// between them and the apex.
func (z *zone) computeExists() {
	for o := range z.owners {
		for n := o; ; n = parent(n) {
			z.exists[n] = true
			if n == z.name {
				break
			}
		}
	}
}

// chain builds the NSEC or NSEC3 chain; call it after all data is added and
// before signing.
func (z *zone) chain() {
	z.computeExists()
	if z.nsec3 == nil {
		z.nsecChain()
		return
	}
	z.nsec3Chain()
}

func (z *zone) nsecChain() {
	names := make([]string, 0, len(z.owners))
	for o := range z.owners {
		names = append(names, o)
	}
	sort.Slice(names, func(i, j int) bool { return canonicalLess(names[i], names[j]) })
	z.nsecOrder = names
	for i, n := range names {
		next := names[(i+1)%len(names)]
		types := append(z.typesAt(n), dns.TypeNSEC, dns.TypeRRSIG)
		slices.Sort(types)
		z.add(&dns.NSEC{
			Hdr:        dns.RR_Header{Name: n, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: negTTL},
			NextDomain: next,
			TypeBitMap: slices.Compact(types),
		})
	}
}

func (z *zone) nsec3Chain() {
	p := z.nsec3
	z.add(&dns.NSEC3PARAM{
		Hdr:        dns.RR_Header{Name: z.name, Rrtype: dns.TypeNSEC3PARAM, Class: dns.ClassINET, Ttl: 0},
		Hash:       dns.SHA1,
		Iterations: p.iterations,
		SaltLength: uint8(len(p.salt) / 2),
		Salt:       p.salt,
	})
	// With opt-out, insecure delegations (NS without DS) get no NSEC3 of
	// their own, and neither do empty non-terminals that only lead to them.
	optedOut := func(n string) bool {
		return p.optOut && z.cuts[n] && len(z.rrsets[rrKey{n, dns.TypeDS}]) == 0
	}
	included := map[string]bool{}
	for o := range z.owners {
		if optedOut(o) {
			continue
		}
		for n := o; ; n = parent(n) {
			included[n] = true
			if n == z.name {
				break
			}
		}
	}
	type entry struct {
		hash, name string
	}
	var entries []entry
	for n := range included {
		entries = append(entries, entry{dns.HashName(n, dns.SHA1, p.iterations, p.salt), n})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].hash < entries[j].hash })
	var flags uint8
	if p.optOut {
		flags = 1
	}
	for i, e := range entries {
		var types []uint16
		if z.owners[e.name] {
			types = z.typesAt(e.name)
			// Everything authoritative is signed; an insecure delegation's
			// NS is not, so it gets no RRSIG bit.
			if !(z.cuts[e.name] && len(z.rrsets[rrKey{e.name, dns.TypeDS}]) == 0) {
				types = append(types, dns.TypeRRSIG)
			}
			slices.Sort(types)
		}
		rec := &dns.NSEC3{
			Hdr:        dns.RR_Header{Name: strings.ToLower(e.hash) + "." + z.name, Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: negTTL},
			Hash:       dns.SHA1,
			Flags:      flags,
			Iterations: p.iterations,
			SaltLength: uint8(len(p.salt) / 2),
			Salt:       p.salt,
			HashLength: 20,
			NextDomain: entries[(i+1)%len(entries)].hash,
			TypeBitMap: types,
		}
		z.nsec3Order = append(z.nsec3Order, e.hash)
		z.nsec3ByH[e.hash] = rec
		// NSEC3 records are kept out of owners/exists: they are not names
		// a client can ask for data at.
		k := rrKey{rec.Hdr.Name, dns.TypeNSEC3}
		z.rrsets[k] = append(z.rrsets[k], rec)
	}
}

// sign signs every authoritative RRset with a validity window.
func (z *zone) sign(inception, expiration time.Time) {
	if !z.signed {
		return
	}
	for k, rrs := range z.rrsets {
		// The NS RRset at a delegation point belongs to the child.
		if k.rtype == dns.TypeNS && z.cuts[k.name] {
			continue
		}
		signer := z.zsk
		if k.rtype == dns.TypeDNSKEY {
			signer = z.ksk
		}
		z.sigs[k] = []dns.RR{signRRset(rrs, signer, z.name, inception, expiration)}
	}
}

func signRRset(rrs []dns.RR, k *key, signerName string, inception, expiration time.Time) *dns.RRSIG {
	sig := &dns.RRSIG{
		Hdr:        dns.RR_Header{Ttl: rrs[0].Header().Ttl},
		Algorithm:  k.pub.Algorithm,
		Expiration: uint32(expiration.Unix()),
		Inception:  uint32(inception.Unix()),
		KeyTag:     k.tag,
		SignerName: signerName,
	}
	if err := sig.Sign(k.priv, rrs); err != nil {
		panic(fmt.Sprintf("dnssectest: sign %s: %v", rrs[0].Header().Name, err))
	}
	return sig
}

// answer is what a zone says about one question.
type answer struct {
	rcode  int
	answer []dns.RR
	auth   []dns.RR
	// cname is the target to chase when the answer is a CNAME for
	// another type.
	cname string
	// synthesized is the CNAME a DNAME synthesized (it is in answer), so
	// that a forging resolver can rewrite it.
	synthesized *dns.CNAME
}

func (z *zone) set(name string, t uint16) []dns.RR {
	k := rrKey{name, t}
	out := append([]dns.RR(nil), z.rrsets[k]...)
	return append(out, z.sigs[k]...)
}

// lookup answers a question authoritatively from this zone.
func (z *zone) lookup(q string, t uint16) answer {
	if owner, dn := z.dnameAbove(q); dn != nil {
		return z.synthesize(q, owner, dn)
	}
	if z.owners[q] {
		if rrs := z.set(q, t); len(z.rrsets[rrKey{q, t}]) > 0 {
			return answer{rcode: dns.RcodeSuccess, answer: rrs}
		}
		if cn := z.rrsets[rrKey{q, dns.TypeCNAME}]; len(cn) > 0 {
			return answer{rcode: dns.RcodeSuccess, answer: z.set(q, dns.TypeCNAME), cname: cn[0].(*dns.CNAME).Target}
		}
		return answer{rcode: dns.RcodeSuccess, auth: append(z.soa(), z.noDataProof(q)...)}
	}
	if z.exists[q] { // empty non-terminal
		return answer{rcode: dns.RcodeSuccess, auth: append(z.soa(), z.noDataProof(q)...)}
	}
	ce := z.closestEncloser(q)
	wc := "*." + ce
	if ce == "." {
		wc = "*."
	}
	if z.owners[wc] {
		if len(z.rrsets[rrKey{wc, t}]) > 0 || len(z.rrsets[rrKey{wc, dns.TypeCNAME}]) > 0 {
			rt := t
			if len(z.rrsets[rrKey{wc, t}]) == 0 {
				rt = dns.TypeCNAME
			}
			var ans []dns.RR
			var target string
			for _, rr := range z.rrsets[rrKey{wc, rt}] {
				c := dns.Copy(rr)
				c.Header().Name = q
				ans = append(ans, c)
				if cn, ok := c.(*dns.CNAME); ok {
					target = cn.Target
				}
			}
			for _, s := range z.sigs[rrKey{wc, rt}] {
				c := dns.Copy(s)
				c.Header().Name = q
				ans = append(ans, c)
			}
			return answer{rcode: dns.RcodeSuccess, answer: ans, auth: z.wildcardProof(q, ce), cname: target}
		}
		auth := append(z.soa(), z.wildcardProof(q, ce)...)
		auth = append(auth, z.noDataProof(wc)...)
		return answer{rcode: dns.RcodeSuccess, auth: dedupe(auth)}
	}
	auth := append(z.soa(), z.nxProof(q, ce)...)
	return answer{rcode: dns.RcodeNameError, auth: dedupe(auth)}
}

// dnameAbove finds the DNAME that redirects q: one owned by a proper
// ancestor of q in this zone (the zone apex included). RFC 6672 section 2.3
// forbids data below a DNAME owner, so the closest one is the only one.
func (z *zone) dnameAbove(q string) (string, *dns.DNAME) {
	if q == z.name {
		return "", nil
	}
	for n := parent(q); ; n = parent(n) {
		if rrs := z.rrsets[rrKey{n, dns.TypeDNAME}]; len(rrs) > 0 {
			return n, rrs[0].(*dns.DNAME)
		}
		if n == z.name || n == "." {
			return "", nil
		}
	}
}

// synthesize answers a question for a name below a DNAME owner as RFC
// 6672 section 3.1 says an authoritative server does: the signed DNAME
// RRset, then an unsigned CNAME from the name to the name with the owner
// suffix replaced by the DNAME target, with the DNAME's TTL. A synthesized
// name longer than 255 octets is YXDOMAIN, with the DNAME alone.
func (z *zone) synthesize(q, owner string, dn *dns.DNAME) answer {
	ans := z.set(owner, dns.TypeDNAME)
	target := dnameTarget(q, owner, dn.Target)
	if !fits(target) {
		return answer{rcode: dns.RcodeYXDomain, answer: ans}
	}
	cn := &dns.CNAME{
		Hdr:    dns.RR_Header{Name: q, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: dn.Hdr.Ttl},
		Target: target,
	}
	return answer{rcode: dns.RcodeSuccess, answer: append(ans, cn), cname: target, synthesized: cn}
}

// fits reports whether a name fits the 255 octets of the wire format
// (dns.IsDomainName lets one more through).
func fits(n string) bool {
	buf := make([]byte, 512)
	off, err := dns.PackDomainName(n, buf, 0, nil, false)
	return err == nil && off <= 255
}

// dnameTarget replaces the owner suffix of q by target. Label boundaries
// come from dns.Split, so an escaped dot inside a label is not one.
func dnameTarget(q, owner, target string) string {
	target = dns.CanonicalName(target)
	prefix := q
	if owner != "." {
		idx := dns.Split(q)
		prefix = q[:idx[len(idx)-dns.CountLabel(owner)]]
	}
	if target == "." {
		return prefix
	}
	return prefix + target
}

func (z *zone) soa() []dns.RR { return z.set(z.name, dns.TypeSOA) }

// closestEncloser is the longest existing ancestor of q in the zone.
func (z *zone) closestEncloser(q string) string {
	for n := parent(q); ; n = parent(n) {
		if z.exists[n] || n == z.name || n == "." {
			return n
		}
	}
}

// noDataProof proves that q has no data of the asked type: its own NSEC or
// NSEC3, or for an empty non-terminal the NSEC that covers it; for an
// opted-out insecure delegation the closest encloser proof.
func (z *zone) noDataProof(q string) []dns.RR {
	if !z.signed {
		return nil
	}
	if z.nsec3 == nil {
		if z.owners[q] {
			return z.set(q, dns.TypeNSEC)
		}
		return z.nsecCovering(q)
	}
	if rec := z.nsec3Match(q); rec != nil {
		return rec
	}
	ce := z.closestEncloser(q)
	return dedupe(append(z.nsec3Match(ce), z.nsec3Covering(nextCloser(q, ce))...))
}

// wildcardProof proves that q itself does not exist (so the wildcard
// applies).
func (z *zone) wildcardProof(q, ce string) []dns.RR {
	if !z.signed {
		return nil
	}
	if z.nsec3 == nil {
		return z.nsecCovering(q)
	}
	return dedupe(append(z.nsec3Match(ce), z.nsec3Covering(nextCloser(q, ce))...))
}

// nxProof proves that q does not exist and that no wildcard at its closest
// encloser does.
func (z *zone) nxProof(q, ce string) []dns.RR {
	if !z.signed {
		return nil
	}
	wc := "*." + ce
	if ce == "." {
		wc = "*."
	}
	if z.nsec3 == nil {
		return dedupe(append(z.nsecCovering(q), z.nsecCovering(wc)...))
	}
	out := append(z.nsec3Match(ce), z.nsec3Covering(nextCloser(q, ce))...)
	return dedupe(append(out, z.nsec3Covering(wc)...))
}

// nsecCovering returns the NSEC (with its RRSIG) whose interval holds q.
func (z *zone) nsecCovering(q string) []dns.RR {
	i := sort.Search(len(z.nsecOrder), func(i int) bool { return !canonicalLess(z.nsecOrder[i], q) })
	// nsecOrder[i] >= q; the covering record is the one before it.
	prev := z.nsecOrder[(i-1+len(z.nsecOrder))%len(z.nsecOrder)]
	return z.set(prev, dns.TypeNSEC)
}

func (z *zone) nsec3Match(n string) []dns.RR {
	p := z.nsec3
	h := dns.HashName(n, dns.SHA1, p.iterations, p.salt)
	rec := z.nsec3ByH[h]
	if rec == nil {
		return nil
	}
	return z.set(rec.Hdr.Name, dns.TypeNSEC3)
}

func (z *zone) nsec3Covering(n string) []dns.RR {
	p := z.nsec3
	h := dns.HashName(n, dns.SHA1, p.iterations, p.salt)
	i := sort.SearchStrings(z.nsec3Order, h)
	prev := z.nsec3Order[(i-1+len(z.nsec3Order))%len(z.nsec3Order)]
	return z.set(z.nsec3ByH[prev].Hdr.Name, dns.TypeNSEC3)
}

func dedupe(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	seen := map[string]bool{}
	for _, rr := range rrs {
		s := rr.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, rr)
	}
	return out
}

// parent returns the name one label up; the root's parent is the root.
func parent(n string) string {
	idx := dns.Split(n)
	if len(idx) <= 1 {
		return "."
	}
	return n[idx[1]:]
}

// nextCloser is the ancestor of q one label longer than ce.
func nextCloser(q, ce string) string {
	n := q
	for parent(n) != ce && n != "." {
		n = parent(n)
	}
	return n
}

// canonicalLess orders names as RFC 4034 section 6.1 does: label by label
// from the right, each label compared as lower-cased bytes.
func canonicalLess(a, b string) bool {
	la, lb := labels(a), labels(b)
	for i := 0; i < len(la) && i < len(lb); i++ {
		x, y := la[len(la)-1-i], lb[len(lb)-1-i]
		if c := strings.Compare(x, y); c != 0 {
			return c < 0
		}
	}
	return len(la) < len(lb)
}

// labels returns a name's labels in wire form (escapes resolved), lower
// case.
func labels(n string) []string {
	buf := make([]byte, 256)
	off, err := dns.PackDomainName(dns.CanonicalName(n), buf, 0, nil, false)
	if err != nil {
		panic(fmt.Sprintf("dnssectest: bad name %q: %v", n, err))
	}
	var out []string
	for i := 0; i < off && buf[i] != 0; {
		l := int(buf[i])
		out = append(out, asciiLower(buf[i+1:i+1+l]))
		i += 1 + l
	}
	return out
}

func asciiLower(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}
