// Package dnssectest serves a small signed DNS hierarchy on loopback for
// tests of DNSSEC validation: a fake root, a fake TLD "vmcp" and zones below
// it, each with its own keys and a DS at its parent, built and signed when
// the hierarchy is created. One miekg/dns server (UDP and TCP on the same
// 127.0.0.1 port) plays a recursive resolver that knows every zone: it
// answers any question from the zone that holds the name (a DS question
// from the parent), synthesizes a CNAME below a DNAME as an authoritative
// server does (RFC 6672 section 3.1), chases CNAMEs, adds RRSIGs and NSEC or NSEC3 denial
// proofs when the query has the DO bit, and never validates (it behaves as
// a resolver asked with CD set). Nothing real is touched: "vmcp" is not a
// top-level domain, and the hierarchy is trusted only through Anchors.
//
// The zones (names without the trailing dot) and what each demonstrates:
//
//	.               root; ECDSA P-256 KSK+ZSK; NSEC (so "x.nope" is an NXDOMAIN proven by NSEC)
//	vmcp            TLD; ECDSA P-256 KSK+ZSK; NSEC3 with opt-out, like com
//	secure.vmcp     ECDSA P-256 (13) KSK+ZSK; NSEC; wildcard, empty non-terminal, CNAMEs, a DNAME
//	rsa.vmcp        RSA/SHA-256 (8), one 2048-bit key; NSEC3 without opt-out (1 iteration, salt); a DNAME
//	ed.vmcp         Ed25519 (15) KSK+ZSK; NSEC
//	moved.vmcp      ECDSA P-256; a DNAME at the apex to ed.vmcp (a renamed zone)
//	unsigned.vmcp   insecure: delegated without DS, proven by vmcp's NSEC3 opt-out; a DNAME
//	tampered.vmcp   A records and a DNAME target changed after signing: bad signature
//	expired.vmcp    every signature expired 30 days ago
//	future.vmcp     every signature starts 30 days from now
//	wrongkey.vmcp   the DS at vmcp matches none of the zone's DNSKEYs
//	nosig.vmcp      A RRsets served without their RRSIG
//	revoked.vmcp    the DS at vmcp is for the KSK as it was before its REVOKE bit was set
//	                (RFC 5011); the DNSKEY RRset has it revoked, and signed by it
//	revokedds.vmcp  the same revoked KSK, but the DS at vmcp is for it as published, REVOKE bit included
//
// The names listed as constants below hold the interesting data; every
// signed zone also has an A record at its apex and at "www".
//
// A constructor panics when it cannot build or listen, as
// httptest.NewServer does: that is a broken test setup, not an outcome.
package dnssectest

import (
	"crypto"
	"fmt"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Zone names, without the trailing dot.
const (
	Root         = "."
	TLD          = "vmcp"
	SecureZone   = "secure.vmcp"
	RSAZone      = "rsa.vmcp"
	Ed25519Zone  = "ed.vmcp"
	UnsignedZone = "unsigned.vmcp"
	TamperedZone = "tampered.vmcp"
	ExpiredZone  = "expired.vmcp"
	FutureZone   = "future.vmcp"
	WrongKeyZone = "wrongkey.vmcp"
	NoSigZone    = "nosig.vmcp"
	MovedZone    = "moved.vmcp"
	RevokedZone  = "revoked.vmcp"
	// RevokedDSZone's DS digest covers the revoked DNSKEY itself.
	RevokedDSZone = "revokedds.vmcp"
)

// Names with particular data, without the trailing dot.
const (
	// SecureHost has an A record in secure.vmcp.
	SecureHost = "www.secure.vmcp"
	// MailOnly has an MX record and no A record: an A question gets a
	// signed NODATA, so the name exists.
	MailOnly = "mail.secure.vmcp"
	// EmptyNonTerminal has no records of its own but "a.b.secure.vmcp"
	// does: it exists.
	EmptyNonTerminal = "b.secure.vmcp"
	// Wildcard is answered by "*.wild.secure.vmcp" (NSEC) and
	// WildcardNSEC3 by "*.wild.rsa.vmcp" (NSEC3).
	Wildcard      = "anything.wild.secure.vmcp"
	WildcardNSEC3 = "anything.wild.rsa.vmcp"
	// CNAMESecure is a CNAME in secure.vmcp to "www.ed.vmcp", another
	// signed zone.
	CNAMESecure = "alias.secure.vmcp"
	// CNAMEBogus is a CNAME in secure.vmcp to "www.tampered.vmcp".
	CNAMEBogus = "bad.secure.vmcp"
	// CNAMEInsecure is a CNAME in secure.vmcp to "www.unsigned.vmcp".
	CNAMEInsecure = "ext.secure.vmcp"
	// CNAMEDangling is a CNAME in secure.vmcp to "gone.rsa.vmcp", which
	// does not exist.
	CNAMEDangling = "dangling.secure.vmcp"
	// CNAMELoop points to "loop2.secure.vmcp", which points back.
	CNAMELoop = "loop1.secure.vmcp"
	// NXDomainNSEC, NXDomainNSEC3, NXDomainOptOut and NXDomainRoot do not
	// exist; their denials are NSEC (secure.vmcp), NSEC3 (rsa.vmcp), NSEC3
	// with opt-out (vmcp, so the denial is insecure) and NSEC (the root).
	NXDomainNSEC   = "nope.secure.vmcp"
	NXDomainNSEC3  = "nope.rsa.vmcp"
	NXDomainOptOut = "nope.vmcp"
	NXDomainRoot   = "x.nope"
	// UnsignedHost has an A record in the unsigned zone; NXDomainUnsigned
	// does not exist there (an unsigned NXDOMAIN).
	UnsignedHost     = "www.unsigned.vmcp"
	NXDomainUnsigned = "nope.unsigned.vmcp"
	// DNAMEOwner holds "DNAME ed.vmcp.": every name below it is
	// redirected, so DNAMESecure is answered with the signed DNAME, an
	// unsigned CNAME synthesized to "www.ed.vmcp" and that name's A, and
	// DNAMEDangling with a CNAME to "gone.ed.vmcp", which does not exist.
	// The owner itself is not redirected: it has no A (a signed NODATA).
	DNAMEOwner    = "dn.secure.vmcp"
	DNAMESecure   = "www.dn.secure.vmcp"
	DNAMEDangling = "gone.dn.secure.vmcp"
	// DNAMENSEC3 is below "dn.rsa.vmcp DNAME secure.vmcp." (so it goes to
	// "www.secure.vmcp") in the NSEC3 zone.
	DNAMENSEC3 = "www.dn.rsa.vmcp"
	// DNAMEApex is below the DNAME at the apex of moved.vmcp, to
	// "www.ed.vmcp".
	DNAMEApex = "www.moved.vmcp"
	// DNAMEInsecure is below "dn.unsigned.vmcp DNAME secure.vmcp." in the
	// unsigned zone (to "www.secure.vmcp").
	DNAMEInsecure = "www.dn.unsigned.vmcp"
	// DNAMEBogus is below "dn.tampered.vmcp", a DNAME to ed.vmcp whose
	// target was changed to rsa.vmcp after signing: the server synthesizes
	// "www.rsa.vmcp" from the altered DNAME, whose signature fails.
	DNAMEBogus = "www.dn.tampered.vmcp"
)

// Options change how a hierarchy is built and served. The zero value is a
// normal hierarchy signed around the current time.
type Options struct {
	// Now is the time the signatures are made around (valid from an hour
	// before to 30 days after); zero means time.Now().
	Now time.Time
	// TruncateUDP answers every UDP query with an empty, truncated
	// response, so clients must retry over TCP.
	TruncateUDP bool
	// Records adds zone-file text to zones before they are signed, keyed
	// by zone name without the trailing dot ("secure.vmcp"); relative
	// names are relative to the zone. A TXT record at an apex, for
	// example. A zone not in the hierarchy panics.
	Records map[string]string
}

// Filter makes the resolver misbehave for every question, as a filtering
// or rewriting resolver, or one that is down, does.
type Filter int

const (
	// FilterNone answers normally.
	FilterNone Filter = iota
	// FilterNXDomain answers NXDOMAIN, without records, to everything.
	FilterNXDomain
	// FilterStripDNSSEC answers with the DNSSEC records (RRSIG, NSEC,
	// NSEC3) removed, as a resolver that does not pass them on.
	FilterStripDNSSEC
	// FilterStripDenial removes only the NSEC and NSEC3 records (and
	// their RRSIGs): signed data passes, denials of existence come
	// without proof.
	FilterStripDenial
	// FilterServFail answers SERVFAIL to everything.
	FilterServFail
	// FilterDrop never answers.
	FilterDrop
	// FilterOmitSynthesizedCNAME answers below a DNAME with the DNAME
	// alone, leaving the client to synthesize the CNAME from it.
	FilterOmitSynthesizedCNAME
)

// Queries counts the questions a hierarchy was asked, by transport.
type Queries struct {
	UDP, TCP int64
}

// Hierarchy is a running signed hierarchy. It is safe for concurrent use.
type Hierarchy struct {
	zones      []*zone // deepest first
	anchorDS   []*dns.DS
	anchorKeys []*dns.DNSKEY
	truncate   bool

	udp, tcp *dns.Server
	addr     string

	mu       sync.Mutex
	filter   Filter
	servFail []string
	forged   map[string]string

	nUDP, nTCP atomic.Int64
}

// New builds, signs and serves the hierarchy on 127.0.0.1 (UDP and TCP on
// one random port). Close it when done.
func New(opts Options) *Hierarchy {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	h := &Hierarchy{truncate: opts.TruncateUDP}
	h.build(now, opts.Records)
	h.listen()
	return h
}

// Addr is the resolver's "127.0.0.1:port".
func (h *Hierarchy) Addr() string { return h.addr }

// Anchors is the trust anchor of the fake root as zone-file text: DS
// records (SHA-256) for the root's key-signing key, one per line.
func (h *Hierarchy) Anchors() string {
	var b strings.Builder
	for _, ds := range h.anchorDS {
		b.WriteString(ds.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// AnchorKeys is the same trust anchor as DNSKEY records: the root's
// key-signing key as zone-file text.
func (h *Hierarchy) AnchorKeys() string {
	var b strings.Builder
	for _, k := range h.anchorKeys {
		b.WriteString(k.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// AnchorDS returns copies of the root's DS records.
func (h *Hierarchy) AnchorDS() []*dns.DS {
	out := make([]*dns.DS, len(h.anchorDS))
	for i, ds := range h.anchorDS {
		out[i] = dns.Copy(ds).(*dns.DS)
	}
	return out
}

// SetFilter changes how every later question is answered.
func (h *Hierarchy) SetFilter(f Filter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.filter = f
}

// ServFail makes questions for name and every name below it answer
// SERVFAIL, as a resolver that cannot reach those servers does.
func (h *Hierarchy) ServFail(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servFail = append(h.servFail, dns.CanonicalName(name))
}

// ForgeSynthesizedCNAME makes the CNAME synthesized from a DNAME for name
// point at target instead, and the answer follow target, as an on-path
// attacker can: a synthesized CNAME is never signed (RFC 6672 section
// 5.3.1), while the DNAME beside it stays intact and signed.
func (h *Hierarchy) ForgeSynthesizedCNAME(name, target string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.forged == nil {
		h.forged = map[string]string{}
	}
	h.forged[dns.CanonicalName(name)] = dns.CanonicalName(target)
}

// Queries returns how many questions were asked so far.
func (h *Hierarchy) Queries() Queries {
	return Queries{UDP: h.nUDP.Load(), TCP: h.nTCP.Load()}
}

// Close stops the server; its address then refuses queries.
func (h *Hierarchy) Close() {
	_ = h.udp.Shutdown()
	_ = h.tcp.Shutdown()
}

// keys are generated once per process and reused by every hierarchy, so
// that tests creating several hierarchies stay fast.
var (
	keyMu    sync.Mutex
	keyCache = map[string]*key{}
)

func getKey(id string, alg uint8, flags uint16) *key {
	keyMu.Lock()
	defer keyMu.Unlock()
	if k, ok := keyCache[id]; ok {
		return k
	}
	bits := 256
	if alg == dns.RSASHA256 {
		bits = 2048
	}
	pub := &dns.DNSKEY{
		Hdr:       dns.RR_Header{Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: ttl},
		Flags:     flags,
		Protocol:  3,
		Algorithm: alg,
	}
	priv, err := pub.Generate(bits)
	if err != nil {
		panic(fmt.Sprintf("dnssectest: generate key %s: %v", id, err))
	}
	k := &key{pub: pub, priv: priv.(crypto.Signer), tag: pub.KeyTag()}
	keyCache[id] = k
	return k
}

// revoke returns a copy of k with the REVOKE bit set in its DNSKEY, and
// the key tag that changes with it.
func revoke(k *key) *key {
	pub := dns.Copy(k.pub).(*dns.DNSKEY)
	pub.Flags |= dns.REVOKE
	return &key{pub: pub, priv: k.priv, tag: pub.KeyTag()}
}

// zoneKeys gives a zone its keys: a KSK and a ZSK when split, otherwise one
// key (flags 257) that signs everything.
func zoneKeys(z *zone, alg uint8, split bool) {
	z.signed = true
	z.ksk = withOwner(getKey(z.name+"/ksk", alg, 257), z.name)
	z.zsk = z.ksk
	if split {
		z.zsk = withOwner(getKey(z.name+"/zsk", alg, 256), z.name)
	}
	seen := map[*key]bool{}
	for _, k := range []*key{z.ksk, z.zsk} {
		if !seen[k] {
			seen[k] = true
			z.add(dns.Copy(k.pub))
		}
	}
}

// withOwner returns a copy of a cached key whose DNSKEY is owned by name.
func withOwner(k *key, name string) *key {
	pub := dns.Copy(k.pub).(*dns.DNSKEY)
	pub.Hdr.Name = name
	return &key{pub: pub, priv: k.priv, tag: pub.KeyTag()}
}

// soaNS is the SOA and NS records every zone has at its apex.
var soaNS = fmt.Sprintf("@ SOA ns1.vmcp. hostmaster.vmcp. 1 7200 3600 1209600 %d\n@ NS ns1.vmcp.\n", negTTL)

// build creates every zone, children before parents so that each parent
// can publish its children's DS records.
func (h *Hierarchy) build(now time.Time, records map[string]string) {
	normalFrom, normalTo := now.Add(-time.Hour), now.Add(30*24*time.Hour)
	type child struct {
		z  *zone
		ds string // "normal", "none" or "wrong"
	}
	leaf := func(name string, alg uint8, split bool, nsec3 *nsec3Params, data string) *zone {
		z := newZone(name)
		zoneKeys(z, alg, split)
		z.nsec3 = nsec3
		z.addText(soaNS + data)
		return z
	}
	basic := "@ A 192.0.2.1\nwww A 192.0.2.2\n"

	secure := leaf("secure.vmcp.", dns.ECDSAP256SHA256, true, nil, `
@ A 192.0.2.10
@ MX 10 mx.secure.vmcp.
www A 192.0.2.11
mail MX 10 mx.secure.vmcp.
a.b A 192.0.2.12
*.wild A 192.0.2.13
alias CNAME www.ed.vmcp.
bad CNAME www.tampered.vmcp.
ext CNAME www.unsigned.vmcp.
dangling CNAME gone.rsa.vmcp.
loop1 CNAME loop2.secure.vmcp.
loop2 CNAME loop1.secure.vmcp.
dn DNAME ed.vmcp.
`)
	rsa := leaf("rsa.vmcp.", dns.RSASHA256, false, &nsec3Params{iterations: 1, salt: "a1b2c3"}, `
@ A 192.0.2.20
www A 192.0.2.21
*.wild A 192.0.2.22
dn DNAME secure.vmcp.
`)
	ed := leaf("ed.vmcp.", dns.ED25519, true, nil, basic)
	moved := leaf("moved.vmcp.", dns.ECDSAP256SHA256, true, nil, "@ DNAME ed.vmcp.\n")
	tampered := leaf("tampered.vmcp.", dns.ECDSAP256SHA256, false, nil, basic+"dn DNAME ed.vmcp.\n")
	expired := leaf("expired.vmcp.", dns.ECDSAP256SHA256, false, nil, basic)
	future := leaf("future.vmcp.", dns.ECDSAP256SHA256, false, nil, basic)
	wrongkey := leaf("wrongkey.vmcp.", dns.ECDSAP256SHA256, false, nil, basic)
	nosig := leaf("nosig.vmcp.", dns.ECDSAP256SHA256, false, nil, basic)
	unsigned := newZone("unsigned.vmcp.")
	unsigned.addText(soaNS + basic + "dn DNAME secure.vmcp.\n")
	revoked, revokedWas := revokedLeaf("revoked.vmcp.", basic)
	revokedDS, _ := revokedLeaf("revokedds.vmcp.", basic)
	addRecords(records, []*zone{secure, rsa, ed, moved, tampered, expired, future, wrongkey, nosig, unsigned, revoked, revokedDS})

	for _, z := range []*zone{secure, rsa, ed, moved, tampered, wrongkey, nosig, unsigned, revoked, revokedDS} {
		z.chain()
		z.sign(normalFrom, normalTo)
	}
	expired.chain()
	expired.sign(now.Add(-60*24*time.Hour), now.Add(-30*24*time.Hour))
	future.chain()
	future.sign(now.Add(30*24*time.Hour), now.Add(60*24*time.Hour))

	// Tampering happens after signing: the RRSIGs no longer match.
	for _, n := range []string{"tampered.vmcp.", "www.tampered.vmcp."} {
		for _, rr := range tampered.rrsets[rrKey{n, dns.TypeA}] {
			rr.(*dns.A).A = net.IPv4(198, 51, 100, 66)
		}
	}
	for _, rr := range tampered.rrsets[rrKey{"dn.tampered.vmcp.", dns.TypeDNAME}] {
		rr.(*dns.DNAME).Target = "rsa.vmcp."
	}
	for _, n := range []string{"nosig.vmcp.", "www.nosig.vmcp."} {
		delete(nosig.sigs, rrKey{n, dns.TypeA})
	}

	tld := newZone("vmcp.")
	zoneKeys(tld, dns.ECDSAP256SHA256, true)
	tld.nsec3 = &nsec3Params{optOut: true}
	tld.addText(soaNS + "ns1 A 192.0.2.53\n")
	children := []child{
		{secure, "normal"}, {rsa, "normal"}, {ed, "normal"}, {moved, "normal"}, {tampered, "normal"},
		{expired, "normal"}, {future, "normal"}, {wrongkey, "wrong"}, {nosig, "normal"},
		{unsigned, "none"}, {revoked, "pre-revoke"}, {revokedDS, "normal"},
	}
	for _, c := range children {
		tld.addText(fmt.Sprintf("%s NS ns1.vmcp.\n", c.z.name))
		switch c.ds {
		case "normal":
			tld.add(c.z.ksk.pub.ToDS(dns.SHA256))
		case "wrong":
			other := withOwner(getKey("wrongkey.vmcp./other", dns.ECDSAP256SHA256, 257), c.z.name)
			tld.add(other.pub.ToDS(dns.SHA256))
		case "pre-revoke":
			tld.add(revokedWas.pub.ToDS(dns.SHA256))
		}
	}
	tld.chain()
	tld.sign(normalFrom, normalTo)

	root := newZone(".")
	zoneKeys(root, dns.ECDSAP256SHA256, true)
	root.addText(soaNS + "vmcp. NS ns1.vmcp.\n")
	root.add(tld.ksk.pub.ToDS(dns.SHA256))
	root.chain()
	root.sign(normalFrom, normalTo)

	h.anchorDS = []*dns.DS{root.ksk.pub.ToDS(dns.SHA256)}
	h.anchorKeys = []*dns.DNSKEY{dns.Copy(root.ksk.pub).(*dns.DNSKEY)}
	// Deepest first, so zoneFor finds the closest enclosing zone.
	h.zones = append([]*zone{}, secure, rsa, ed, moved, tampered, expired, future, wrongkey, nosig, unsigned, revoked, revokedDS, tld, root)
}

// revokedLeaf creates a leaf zone holding data whose KSK is published with
// the REVOKE bit (RFC 5011 section 2.1), which changes its key tag, and
// still signs the DNSKEY RRset, as a zone in the middle of a key roll
// does. preRevoke is the same key before the bit was set.
func revokedLeaf(name, data string) (z *zone, preRevoke *key) {
	z = newZone(name)
	zoneKeys(z, dns.ECDSAP256SHA256, true)
	preRevoke = z.ksk
	delete(z.rrsets, rrKey{z.name, dns.TypeDNSKEY})
	z.ksk = revoke(preRevoke)
	z.add(dns.Copy(z.ksk.pub))
	z.add(dns.Copy(z.zsk.pub))
	z.addText(soaNS + data)
	return z, preRevoke
}

// addRecords adds the extra records of Records (zone name to zone-file
// text) to the leaf zones of that name. It panics on a name that is no
// leaf zone.
func addRecords(records map[string]string, leaves []*zone) {
	for name, text := range records {
		found := false
		for _, z := range leaves {
			if z.name == dns.CanonicalName(name) {
				z.addText(text)
				found = true
			}
		}
		if !found {
			panic(fmt.Sprintf("dnssectest: Records: no leaf zone %q", name))
		}
	}
}

// zoneFor is the zone that answers a question: the deepest zone holding
// the name, except that a DS question at a zone apex goes to the parent.
func (h *Hierarchy) zoneFor(q string, t uint16) *zone {
	for _, z := range h.zones {
		if !dns.IsSubDomain(z.name, q) {
			continue
		}
		if t == dns.TypeDS && z.name == q && q != "." {
			continue
		}
		return z
	}
	return nil
}

// resolve answers a question as a recursive resolver would: from the zone
// that holds the name, chasing CNAMEs (those a DNAME synthesized too) into
// other zones. forged rewrites synthesized CNAMEs by owner name; omitSynth
// leaves them out.
func (h *Hierarchy) resolve(q string, t uint16, forged map[string]string, omitSynth bool) answer {
	var out answer
	for depth := 0; depth < 8; depth++ {
		a := h.zoneFor(q, t).lookup(q, t)
		if to, ok := forged[q]; ok && a.synthesized != nil {
			a.synthesized.Target, a.cname = to, to
		}
		for _, rr := range a.answer {
			if omitSynth && rr == dns.RR(a.synthesized) {
				continue
			}
			out.answer = append(out.answer, rr)
		}
		out.rcode, out.auth = a.rcode, a.auth
		if a.cname == "" || t == dns.TypeCNAME {
			return out
		}
		// A looping chain ends up answering with what it has so far.
		for _, rr := range out.answer {
			if rr.Header().Rrtype == dns.TypeCNAME && rr.Header().Name == a.cname {
				return out
			}
		}
		q = a.cname
	}
	return out
}

func (h *Hierarchy) listen() {
	for attempt := 0; ; attempt++ {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			panic(fmt.Sprintf("dnssectest: listen udp: %v", err))
		}
		addr := pc.LocalAddr().String()
		l, err := net.Listen("tcp", addr)
		if err != nil {
			pc.Close()
			if attempt < 20 {
				continue
			}
			panic(fmt.Sprintf("dnssectest: listen tcp %s: %v", addr, err))
		}
		h.addr = addr
		var wg sync.WaitGroup
		wg.Add(2)
		h.udp = &dns.Server{PacketConn: pc, Handler: h, NotifyStartedFunc: wg.Done}
		h.tcp = &dns.Server{Listener: l, Handler: h, NotifyStartedFunc: wg.Done}
		go func() { _ = h.udp.ActivateAndServe() }()
		go func() { _ = h.tcp.ActivateAndServe() }()
		wg.Wait()
		return
	}
}

func isDNSSECType(t uint16) bool {
	switch t {
	case dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3:
		return true
	}
	return false
}

func strip(rrs []dns.RR, keep uint16) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if t := rr.Header().Rrtype; isDNSSECType(t) && t != keep {
			continue
		}
		out = append(out, rr)
	}
	return out
}

func stripDenial(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		switch rr := rr.(type) {
		case *dns.NSEC, *dns.NSEC3:
			continue
		case *dns.RRSIG:
			if rr.TypeCovered == dns.TypeNSEC || rr.TypeCovered == dns.TypeNSEC3 {
				continue
			}
		}
		out = append(out, rr)
	}
	return out
}

// ServeDNS answers one question. It implements dns.Handler.
func (h *Hierarchy) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	udp := w.LocalAddr().Network() == "udp"
	if udp {
		h.nUDP.Add(1)
	} else {
		h.nTCP.Add(1)
	}
	h.mu.Lock()
	filter := h.filter
	servFail := append([]string(nil), h.servFail...)
	forged := maps.Clone(h.forged)
	h.mu.Unlock()

	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	name := dns.CanonicalName(q.Name)
	opt := r.IsEdns0()
	do := opt != nil && opt.Do()
	size := dns.MinMsgSize
	if opt != nil && int(opt.UDPSize()) > size {
		size = int(opt.UDPSize())
	}
	if opt != nil {
		m.SetEdns0(uint16(size), do)
	}

	if udp && h.truncate {
		m.Truncated = true
		_ = w.WriteMsg(m)
		return
	}
	switch filter {
	case FilterDrop:
		return
	case FilterNXDomain:
		m.Rcode = dns.RcodeNameError
		_ = w.WriteMsg(m)
		return
	case FilterServFail:
		m.Rcode = dns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	for _, sf := range servFail {
		if dns.IsSubDomain(sf, name) {
			m.Rcode = dns.RcodeServerFailure
			_ = w.WriteMsg(m)
			return
		}
	}

	a := h.resolve(name, q.Qtype, forged, filter == FilterOmitSynthesizedCNAME)
	m.Rcode = a.rcode
	m.Answer, m.Ns = a.answer, a.auth
	switch {
	case !do:
		m.Answer, m.Ns = strip(m.Answer, q.Qtype), strip(m.Ns, q.Qtype)
	case filter == FilterStripDNSSEC:
		m.Answer, m.Ns = strip(m.Answer, 0), strip(m.Ns, 0)
	case filter == FilterStripDenial:
		m.Ns = stripDenial(m.Ns)
	}
	if udp {
		m.Truncate(size)
	}
	_ = w.WriteMsg(m)
}
