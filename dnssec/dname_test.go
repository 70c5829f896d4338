package dnssec

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestDNAMETarget(t *testing.T) {
	dname := func(owner string, targets ...string) *rrset {
		s := &rrset{name: dns.CanonicalName(owner), rtype: dns.TypeDNAME}
		for _, tg := range targets {
			s.rrs = append(s.rrs, &dns.DNAME{Hdr: dns.RR_Header{Name: s.name, Rrtype: dns.TypeDNAME, Class: dns.ClassINET}, Target: tg})
		}
		return s
	}
	long := strings.Repeat(strings.Repeat("a", 63)+".", 3) + "d.example."
	tests := []struct {
		name    string
		set     *rrset
		q       string
		want    string
		wantErr string
	}{
		{"one_label", dname("d.example.", "Target.example."), "www.d.example.", "www.target.example.", ""},
		{"several_labels", dname("d.example.", "t.example."), "a.b.d.example.", "a.b.t.example.", ""},
		{"at_an_apex", dname("example.", "example.net."), "www.example.", "www.example.net.", ""},
		// An escaped dot is inside a label, not a boundary.
		{"escaped_dot", dname("d.example.", "t.example."), `a\.d.d.example.`, `a\.d.t.example.`, ""},
		{"to_the_root", dname("d.example.", "."), "www.d.example.", "www.", ""},
		{"too_long", dname("d.example.", strings.Repeat("t", 60)+".example."), long, "", "longer than 255 octets"},
		{"two_records", dname("d.example.", "t.example.", "u.example."), "www.d.example.", "", "2 DNAME records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dnameTarget(tt.set, tt.q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("dnameTarget(%s) = %q, %v; want an error with %q", tt.q, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("dnameTarget(%s) = %q, %v; want %q", tt.q, got, err, tt.want)
			}
		})
	}
}
