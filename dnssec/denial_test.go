package dnssec

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

func TestCanonicalOrder(t *testing.T) {
	// RFC 4034 section 6.1.
	want := []string{
		"example.", "a.example.", "yljkjljk.a.example.", "Z.a.example.",
		"zABC.a.EXAMPLE.", "z.example.", `\001.z.example.`, "*.z.example.", `\200.z.example.`,
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	sort.SliceStable(got, func(i, j int) bool { return canonicalCompare(got[i], got[j]) < 0 })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("canonical order (-want +got):\n%s", diff)
	}
}

func nsec(owner, next string, types ...uint16) *dns.NSEC {
	return &dns.NSEC{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeNSEC, Class: dns.ClassINET}, NextDomain: next, TypeBitMap: types}
}

func TestNSECProofs(t *testing.T) {
	// Zone z. holds z., a.z., c.d.z. (so d.z. is an empty non-terminal) and
	// *.w.z.
	chain := []*dns.NSEC{
		nsec("z.", "a.z.", dns.TypeSOA, dns.TypeNS),
		nsec("a.z.", "c.d.z.", dns.TypeA),
		nsec("c.d.z.", "*.w.z.", dns.TypeA),
		nsec("*.w.z.", "z.", dns.TypeTXT),
	}
	p := func(ns ...*dns.NSEC) *proofs { return &proofs{zone: "z.", nsec: ns} }
	tests := []struct {
		name string
		run  func() (denial, error)
		ok   bool
	}{
		{"nxdomain", func() (denial, error) { return p(chain...).proveNXDomain("b.z.") }, true},
		{"nxdomain_needs_wildcard_proof", func() (denial, error) { return p(chain[1]).proveNXDomain("b.z.") }, false},
		{"nxdomain_of_existing_name", func() (denial, error) { return p(chain...).proveNXDomain("a.z.") }, false},
		{"nxdomain_of_empty_non_terminal", func() (denial, error) { return p(chain...).proveNXDomain("d.z.") }, false},
		{"nxdomain_under_wildcard", func() (denial, error) { return p(chain...).proveNXDomain("x.w.z.") }, false},
		{"nodata", func() (denial, error) { return p(chain...).proveNoData("a.z.", dns.TypeMX) }, true},
		{"nodata_for_listed_type", func() (denial, error) { return p(chain...).proveNoData("a.z.", dns.TypeA) }, false},
		{"nodata_empty_non_terminal", func() (denial, error) { return p(chain...).proveNoData("d.z.", dns.TypeA) }, true},
		{"nodata_wildcard", func() (denial, error) { return p(chain...).proveNoData("x.w.z.", dns.TypeA) }, true},
		{"nodata_wildcard_has_type", func() (denial, error) { return p(chain...).proveNoData("x.w.z.", dns.TypeTXT) }, false},
		{"nodata_nonexistent_name", func() (denial, error) { return p(chain...).proveNoData("b.z.", dns.TypeA) }, false},
		{"no_records", func() (denial, error) { return p().proveNXDomain("b.z.") }, false},
	}
	t.Run("compact_denial_nxname_means_nonexistent", func(t *testing.T) {
		d, err := p(nsec("b.z.", "\\000.b.z.", dns.TypeRRSIG, dns.TypeNSEC, typeNXNAME)).proveNoData("b.z.", dns.TypeA)
		if err != nil || !d.nxname {
			t.Errorf("denial %+v, err %v; want nxname", d, err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.run()
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && d.proof != ProofNSEC {
				t.Errorf("proof = %q, want nsec", d.proof)
			}
		})
	}

	t.Run("ds_at_unsigned_delegation_is_a_cut", func(t *testing.T) {
		d, err := p(nsec("u.z.", "z.", dns.TypeNS, dns.TypeNSEC, dns.TypeRRSIG)).proveNoData("u.z.", dns.TypeDS)
		if err != nil || !d.cut {
			t.Errorf("denial %+v, err %v; want a cut", d, err)
		}
		if _, err := p(nsec("u.z.", "z.", dns.TypeNS)).proveNoData("u.z.", dns.TypeA); err == nil {
			t.Error("a parent-side NSEC proved NODATA for data in the child")
		}
	})
}

// nsec3Zone builds a complete NSEC3 chain for the names of zone z.
func nsec3Zone(names map[string][]uint16, optOut bool, iterations uint16) []*dns.NSEC3 {
	type e struct {
		h     string
		types []uint16
	}
	var es []e
	for n, ts := range names {
		es = append(es, e{dns.HashName(n, dns.SHA1, iterations, ""), ts})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].h < es[j].h })
	var flags uint8
	if optOut {
		flags = 1
	}
	var out []*dns.NSEC3
	for i, x := range es {
		out = append(out, &dns.NSEC3{
			Hdr:  dns.RR_Header{Name: strings.ToLower(x.h) + ".z.", Rrtype: dns.TypeNSEC3, Class: dns.ClassINET},
			Hash: dns.SHA1, Flags: flags, Iterations: iterations, HashLength: 20,
			NextDomain: es[(i+1)%len(es)].h, TypeBitMap: x.types,
		})
	}
	return out
}

func TestNSEC3Proofs(t *testing.T) {
	names := map[string][]uint16{
		"z.":   {dns.TypeSOA, dns.TypeNS, dns.TypeRRSIG},
		"a.z.": {dns.TypeA, dns.TypeRRSIG},
		"c.z.": {dns.TypeA, dns.TypeRRSIG},
		"s.z.": {dns.TypeNS, dns.TypeDS, dns.TypeRRSIG},
	}
	full := nsec3Zone(names, false, 0)
	apex := dns.HashName("z.", dns.SHA1, 0, "")
	var noApex []*dns.NSEC3
	for _, r := range full {
		if nsec3OwnerHash(r) != apex {
			noApex = append(noApex, r)
		}
	}
	mixed := append(slices.Clone(full), nsec3Zone(names, false, 1)[0])
	p := func(recs []*dns.NSEC3) *proofs { return &proofs{zone: "z.", nsec3: recs} }
	nx := func(recs []*dns.NSEC3, name string) func() (denial, error) {
		return func() (denial, error) { return p(recs).proveNXDomain(name) }
	}
	nodata := func(recs []*dns.NSEC3, name string, t uint16) func() (denial, error) {
		return func() (denial, error) { return p(recs).proveNoData(name, t) }
	}
	tests := []struct {
		name string
		run  func() (denial, error)
		want *denial // nil: must fail
	}{
		{"nxdomain", nx(full, "b.z."), &denial{proof: ProofNSEC3}},
		{"nxdomain_deeper", nx(full, "x.b.z."), &denial{proof: ProofNSEC3}},
		{"nxdomain_of_existing_name", nx(full, "a.z."), nil},
		{"nxdomain_without_closest_encloser", nx(noApex, "b.z."), nil},
		{"nxdomain_opt_out_is_insecure", nx(nsec3Zone(names, true, 0), "b.z."), &denial{proof: ProofNSEC3OptOut, insecure: true}},
		{"nxdomain_too_many_iterations_is_insecure", nx(nsec3Zone(names, false, 200), "b.z."), &denial{proof: ProofNSEC3, insecure: true}},
		{"nxdomain_mixed_parameters", nx(mixed, "b.z."), nil},
		{"nodata", nodata(full, "a.z.", dns.TypeMX), &denial{proof: ProofNSEC3}},
		{"nodata_for_listed_type", nodata(full, "a.z.", dns.TypeA), nil},
		{"nodata_ds_at_signed_delegation", nodata(full, "s.z.", dns.TypeDS), nil},
		{"no_ds_in_opt_out_span_is_an_insecure_cut", nodata(nsec3Zone(names, true, 0), "u.z.", dns.TypeDS), &denial{proof: ProofNSEC3OptOut, insecure: true, cut: true}},
		{"no_ds_without_opt_out_needs_a_match", nodata(full, "u.z.", dns.TypeDS), nil},
		{"opt_out_proves_nothing_but_ds", nodata(nsec3Zone(names, true, 0), "u.z.", dns.TypeA), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.run()
			if tt.want == nil {
				if err == nil {
					t.Fatalf("proved %+v, want an error", d)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(*tt.want, d, cmp.AllowUnexported(denial{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
