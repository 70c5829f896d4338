package dnssectest

import (
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
