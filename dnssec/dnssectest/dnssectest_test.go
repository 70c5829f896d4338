package dnssectest

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func ask(t *testing.T, h *Hierarchy, name string, qtype uint16, do bool) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.SetEdns0(1232, do)
	r, _, err := (&dns.Client{Net: "tcp"}).Exchange(m, h.Addr())
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return r
}

func count(rrs []dns.RR, t uint16) int {
	n := 0
	for _, rr := range rrs {
		if rr.Header().Rrtype == t {
			n++
		}
	}
	return n
}

func TestHierarchyAnswers(t *testing.T) {
	h := New(Options{})
	defer h.Close()

	r := ask(t, h, SecureHost, dns.TypeA, true)
	if r.Rcode != dns.RcodeSuccess || count(r.Answer, dns.TypeA) != 1 || count(r.Answer, dns.TypeRRSIG) != 1 {
		t.Errorf("A %s with DO: %v", SecureHost, r)
	}
	if r := ask(t, h, SecureHost, dns.TypeA, false); count(r.Answer, dns.TypeRRSIG) != 0 {
		t.Errorf("A %s without DO carries RRSIGs: %v", SecureHost, r)
	}
	if r := ask(t, h, SecureZone, dns.TypeDS, true); count(r.Answer, dns.TypeDS) != 1 {
		t.Errorf("DS %s is not answered by the parent: %v", SecureZone, r)
	}
	if r := ask(t, h, NXDomainNSEC, dns.TypeA, true); r.Rcode != dns.RcodeNameError || count(r.Ns, dns.TypeNSEC) == 0 {
		t.Errorf("A %s: want NXDOMAIN with NSEC, got %v", NXDomainNSEC, r)
	}
	if r := ask(t, h, NXDomainNSEC3, dns.TypeA, true); r.Rcode != dns.RcodeNameError || count(r.Ns, dns.TypeNSEC3) != 3 {
		t.Errorf("A %s: want NXDOMAIN with three NSEC3, got %v", NXDomainNSEC3, r)
	}
	if r := ask(t, h, UnsignedZone, dns.TypeDS, true); r.Rcode != dns.RcodeSuccess || count(r.Ns, dns.TypeNSEC3) != 2 {
		t.Errorf("DS %s: want NODATA with an opt-out closest encloser proof, got %v", UnsignedZone, r)
	}
	r = ask(t, h, CNAMESecure, dns.TypeA, true)
	if count(r.Answer, dns.TypeCNAME) != 1 || count(r.Answer, dns.TypeA) != 1 {
		t.Errorf("A %s: want the CNAME chased into ed.vmcp, got %v", CNAMESecure, r)
	}
}

func TestHierarchyDNAME(t *testing.T) {
	h := New(Options{})
	defer h.Close()

	// Below the owner: the signed DNAME, the unsigned synthesized CNAME
	// with the DNAME's TTL, then the target's signed A.
	r := ask(t, h, DNAMESecure, dns.TypeA, true)
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 5 {
		t.Fatalf("A %s: want DNAME, its RRSIG, CNAME, A and its RRSIG, got %v", DNAMESecure, r)
	}
	dn, ok := r.Answer[0].(*dns.DNAME)
	if !ok || dn.Hdr.Name != DNAMEOwner+"." || dn.Target != Ed25519Zone+"." {
		t.Errorf("first answer %v, want the DNAME at %s", r.Answer[0], DNAMEOwner)
	}
	if sig, ok := r.Answer[1].(*dns.RRSIG); !ok || sig.TypeCovered != dns.TypeDNAME {
		t.Errorf("second answer %v, want the DNAME's RRSIG", r.Answer[1])
	}
	cn, ok := r.Answer[2].(*dns.CNAME)
	if !ok || cn.Hdr.Name != DNAMESecure+"." || cn.Target != "www."+Ed25519Zone+"." || cn.Hdr.Ttl != dn.Hdr.Ttl {
		t.Errorf("third answer %v, want the CNAME %s -> www.%s with the DNAME's TTL", r.Answer[2], DNAMESecure, Ed25519Zone)
	}
	if count(r.Answer, dns.TypeRRSIG) != 2 || count(r.Answer, dns.TypeA) != 1 {
		t.Errorf("A %s: the synthesized CNAME must be the only unsigned RRset: %v", DNAMESecure, r)
	}

	// The owner itself is not redirected.
	if r := ask(t, h, DNAMEOwner, dns.TypeA, true); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || count(r.Ns, dns.TypeNSEC) == 0 {
		t.Errorf("A %s: want a NODATA with NSEC, got %v", DNAMEOwner, r)
	}
	// A DS question below the owner is redirected too.
	if r := ask(t, h, DNAMESecure, dns.TypeDS, true); count(r.Answer, dns.TypeDNAME) != 1 || count(r.Answer, dns.TypeCNAME) != 1 {
		t.Errorf("DS %s: want the DNAME and the synthesized CNAME, got %v", DNAMESecure, r)
	}
	// At a zone apex.
	if r := ask(t, h, DNAMEApex, dns.TypeA, true); count(r.Answer, dns.TypeDNAME) != 1 || count(r.Answer, dns.TypeA) != 1 {
		t.Errorf("A %s: want the apex DNAME chased into ed.vmcp, got %v", DNAMEApex, r)
	}
	// A synthesized name longer than 255 octets is YXDOMAIN. None of the
	// hierarchy's DNAMEs lengthens a name, so this one is built here.
	z := newZone("x.vmcp.")
	z.addText(soaNS + "d DNAME " + strings.Repeat("c", 60) + ".vmcp.\n")
	long := strings.Repeat(strings.Repeat("a", 63)+".", 2) + strings.Repeat("b", 60) + ".d.x.vmcp."
	if a := z.lookup(long, dns.TypeA); a.rcode != dns.RcodeYXDomain || count(a.answer, dns.TypeDNAME) != 1 || count(a.answer, dns.TypeCNAME) != 0 {
		t.Errorf("A %s: want YXDOMAIN with the DNAME alone, got %s %v", long, dns.RcodeToString[a.rcode], a.answer)
	}
	if a := z.lookup(strings.TrimPrefix(long, strings.Repeat("a", 63)+"."), dns.TypeA); a.rcode != dns.RcodeSuccess || count(a.answer, dns.TypeCNAME) != 1 {
		t.Errorf("a shorter name below d.x.vmcp: want the synthesized CNAME, got %s %v", dns.RcodeToString[a.rcode], a.answer)
	}

	// Without the synthesized CNAME the answer still follows the DNAME.
	h.SetFilter(FilterOmitSynthesizedCNAME)
	if r := ask(t, h, DNAMESecure, dns.TypeA, true); count(r.Answer, dns.TypeDNAME) != 1 || count(r.Answer, dns.TypeCNAME) != 0 || count(r.Answer, dns.TypeA) != 1 {
		t.Errorf("A %s without the synthesized CNAME: %v", DNAMESecure, r)
	}
	if r := ask(t, h, CNAMESecure, dns.TypeA, true); count(r.Answer, dns.TypeCNAME) != 1 {
		t.Errorf("A %s: a CNAME in the zone is no synthesized one and stays: %v", CNAMESecure, r)
	}
	h.SetFilter(FilterNone)

	// A forged synthesized CNAME is followed; the DNAME is untouched.
	h.ForgeSynthesizedCNAME(DNAMESecure, "www."+RSAZone)
	r = ask(t, h, DNAMESecure, dns.TypeA, true)
	if cn, ok := r.Answer[2].(*dns.CNAME); !ok || cn.Target != "www."+RSAZone+"." || r.Answer[0].(*dns.DNAME).Target != Ed25519Zone+"." {
		t.Errorf("forged A %s: %v", DNAMESecure, r)
	}
}
