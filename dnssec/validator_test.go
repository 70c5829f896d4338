package dnssec_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
)

func newHierarchy(t testing.TB, opts dnssectest.Options) *dnssectest.Hierarchy {
	t.Helper()
	h := dnssectest.New(opts)
	t.Cleanup(h.Close)
	return h
}

func testAnchor(t testing.TB, h *dnssectest.Hierarchy) dnssec.Anchor {
	t.Helper()
	a, err := dnssec.ParseAnchor(strings.NewReader(h.Anchors()), "dnssectest")
	if err != nil {
		t.Fatalf("ParseAnchor: %v", err)
	}
	return a
}

func newValidator(t testing.TB, h *dnssectest.Hierarchy, edit func(*dnssec.Config)) *dnssec.Validator {
	t.Helper()
	cfg := dnssec.Config{Resolver: h.Addr(), Anchor: testAnchor(t, h), Timeout: time.Second}
	if edit != nil {
		edit(&cfg)
	}
	v, err := dnssec.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

func domains(names ...string) []dnssec.Domain {
	out := make([]dnssec.Domain, len(names))
	for i, n := range names {
		out[i] = dnssec.Domain{Name: n, Sources: []dnssec.Source{dnssec.SourceHomepage}}
	}
	return out
}

// outcome is the part of a DomainResult the table compares.
type outcome struct {
	Status   dnssec.Status
	Reason   dnssec.BogusReason
	Exists   dnssec.Existence
	Proof    dnssec.Proof
	CNAMEs   []string
	Dangling bool
	// Chain is "zone status" per step.
	Chain []string
}

func outcomeOf(d dnssec.DomainResult) outcome {
	o := outcome{
		Status: d.Status, Reason: d.BogusReason, Exists: d.Exists, Proof: d.NXDomainProof,
		CNAMEs: d.CNAMEs, Dangling: d.DanglingCNAME,
	}
	for _, s := range d.Chain {
		o.Chain = append(o.Chain, s.Zone+" "+string(s.Status))
	}
	return o
}

const (
	secure        = dnssec.StatusSecure
	insecure      = dnssec.StatusInsecure
	bogus         = dnssec.StatusBogus
	indeterminate = dnssec.StatusIndeterminate
	yes           = dnssec.ExistsYes
	no            = dnssec.ExistsNo
	unknown       = dnssec.ExistsUnknown
)

// chain builds the expected chain: the root and vmcp are secure, then the
// given "zone status" steps.
func chain(steps ...string) []string {
	return append([]string{". secure", "vmcp. secure"}, steps...)
}

func TestValidate(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)

	tests := []struct {
		name string
		want outcome
	}{
		{dnssectest.SecureZone, outcome{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.SecureHost, outcome{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.RSAZone, outcome{Status: secure, Exists: yes, Chain: chain("rsa.vmcp. secure")}},
		{"www." + dnssectest.RSAZone, outcome{Status: secure, Exists: yes, Chain: chain("rsa.vmcp. secure")}},
		{"www." + dnssectest.Ed25519Zone, outcome{Status: secure, Exists: yes, Chain: chain("ed.vmcp. secure")}},
		{dnssectest.MailOnly, outcome{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.EmptyNonTerminal, outcome{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.Wildcard, outcome{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.WildcardNSEC3, outcome{Status: secure, Exists: yes, Chain: chain("rsa.vmcp. secure")}},
		{dnssectest.UnsignedZone, outcome{Status: insecure, Exists: yes, Chain: chain("unsigned.vmcp. insecure")}},
		{dnssectest.UnsignedHost, outcome{Status: insecure, Exists: yes, Chain: chain("unsigned.vmcp. insecure")}},
		{dnssectest.NXDomainUnsigned, outcome{Status: insecure, Exists: no, Proof: dnssec.ProofNone, Chain: chain("unsigned.vmcp. insecure")}},
		{"www." + dnssectest.TamperedZone, outcome{Status: bogus, Reason: dnssec.BogusBadSignature, Exists: unknown, Chain: chain("tampered.vmcp. secure")}},
		{dnssectest.ExpiredZone, outcome{Status: bogus, Reason: dnssec.BogusSignatureExpired, Exists: unknown, Chain: chain("expired.vmcp. bogus")}},
		{"www." + dnssectest.FutureZone, outcome{Status: bogus, Reason: dnssec.BogusSignatureNotYetValid, Exists: unknown, Chain: chain("future.vmcp. bogus")}},
		{dnssectest.WrongKeyZone, outcome{Status: bogus, Reason: dnssec.BogusNoMatchingDNSKEY, Exists: unknown, Chain: chain("wrongkey.vmcp. bogus")}},
		{"www." + dnssectest.NoSigZone, outcome{Status: bogus, Reason: dnssec.BogusMissingRRSIG, Exists: unknown, Chain: chain("nosig.vmcp. secure")}},
		{dnssectest.NXDomainNSEC, outcome{Status: secure, Exists: no, Proof: dnssec.ProofNSEC, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.NXDomainNSEC3, outcome{Status: secure, Exists: no, Proof: dnssec.ProofNSEC3, Chain: chain("rsa.vmcp. secure")}},
		{dnssectest.NXDomainOptOut, outcome{Status: insecure, Exists: no, Proof: dnssec.ProofNSEC3OptOut, Chain: chain()}},
		{"deeper." + dnssectest.NXDomainNSEC, outcome{Status: secure, Exists: no, Proof: dnssec.ProofNSEC, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.NXDomainRoot, outcome{Status: secure, Exists: no, Proof: dnssec.ProofNSEC, Chain: []string{". secure"}}},
		{dnssectest.CNAMESecure, outcome{
			Status: secure, Exists: yes, CNAMEs: []string{"www.ed.vmcp"},
			Chain: chain("secure.vmcp. secure", "ed.vmcp. secure"),
		}},
		{dnssectest.CNAMEBogus, outcome{
			Status: bogus, Reason: dnssec.BogusBadSignature, Exists: yes, CNAMEs: []string{"www.tampered.vmcp"},
			Chain: chain("secure.vmcp. secure", "tampered.vmcp. secure"),
		}},
		{dnssectest.CNAMEInsecure, outcome{
			Status: insecure, Exists: yes, CNAMEs: []string{"www.unsigned.vmcp"},
			Chain: chain("secure.vmcp. secure", "unsigned.vmcp. insecure"),
		}},
		{dnssectest.CNAMEDangling, outcome{
			Status: secure, Exists: yes, Proof: dnssec.ProofNSEC3, CNAMEs: []string{"gone.rsa.vmcp"}, Dangling: true,
			Chain: chain("secure.vmcp. secure", "rsa.vmcp. secure"),
		}},
		{dnssectest.CNAMELoop, outcome{
			Status: indeterminate, Exists: yes, CNAMEs: []string{"loop2.secure.vmcp", "loop1.secure.vmcp"},
			Chain: chain("secure.vmcp. secure"),
		}},
		// RFC 6672: a name below a DNAME is judged by the signed DNAME and
		// the CNAME it synthesizes, then by the target; the DNAME's owner
		// itself is not redirected.
		{dnssectest.DNAMEOwner, outcome{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")}},
		{dnssectest.DNAMESecure, outcome{
			Status: secure, Exists: yes, CNAMEs: []string{"www.ed.vmcp"},
			Chain: chain("secure.vmcp. secure", "ed.vmcp. secure"),
		}},
		{dnssectest.DNAMEDangling, outcome{
			Status: secure, Exists: yes, Proof: dnssec.ProofNSEC, CNAMEs: []string{"gone.ed.vmcp"}, Dangling: true,
			Chain: chain("secure.vmcp. secure", "ed.vmcp. secure"),
		}},
		{dnssectest.DNAMENSEC3, outcome{
			Status: secure, Exists: yes, CNAMEs: []string{"www.secure.vmcp"},
			Chain: chain("rsa.vmcp. secure", "secure.vmcp. secure"),
		}},
		{dnssectest.DNAMEApex, outcome{
			Status: secure, Exists: yes, CNAMEs: []string{"www.ed.vmcp"},
			Chain: chain("moved.vmcp. secure", "ed.vmcp. secure"),
		}},
		{dnssectest.DNAMEInsecure, outcome{
			Status: insecure, Exists: yes, CNAMEs: []string{"www.secure.vmcp"},
			Chain: chain("unsigned.vmcp. insecure", "secure.vmcp. secure"),
		}},
		{dnssectest.DNAMEBogus, outcome{
			Status: bogus, Reason: dnssec.BogusBadSignature, Exists: unknown,
			Chain: chain("tampered.vmcp. secure", "www.dn.tampered.vmcp. bogus"),
		}},
		// RFC 5011: a DS that points only at a revoked KSK, whether its
		// digest is of the key before or after the REVOKE bit was set.
		{dnssectest.RevokedZone, outcome{Status: bogus, Reason: dnssec.BogusRevokedDNSKEY, Exists: unknown, Chain: chain("revoked.vmcp. bogus")}},
		{"www." + dnssectest.RevokedDSZone, outcome{Status: bogus, Reason: dnssec.BogusRevokedDNSKEY, Exists: unknown, Chain: chain("revokedds.vmcp. bogus")}},
	}
	names := make([]string, len(tests))
	for i, tt := range tests {
		names[i] = tt.name
	}
	res, err := v.Validate(context.Background(), domains(names...))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if res.Status != dnssec.RunObserved || res.Reason != "" {
		t.Fatalf("run status = %q (%s), want observed", res.Status, res.Reason)
	}
	if len(res.Domains) != len(tests) {
		t.Fatalf("got %d domain results, want %d", len(res.Domains), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := res.Domains[i]
			if got.Name != tt.name {
				t.Fatalf("result %d is for %q, want %q", i, got.Name, tt.name)
			}
			if diff := cmp.Diff(tt.want, outcomeOf(got)); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s\nerror: %s", diff, got.Error)
			}
			if (got.Status == secure || got.Status == insecure) != (got.Error == "") {
				t.Errorf("status %s with error %q: bogus and indeterminate results, and only those, explain themselves", got.Status, got.Error)
			}
		})
	}
}

func TestValidateChainDetails(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)
	res, err := v.Validate(context.Background(), domains(
		dnssectest.SecureZone, dnssectest.RSAZone, dnssectest.Ed25519Zone, dnssectest.UnsignedZone))
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		Zone       string
		Algorithms []int
		Keys       int
		Denial     dnssec.Proof
	}
	last := func(d dnssec.DomainResult) step {
		s := d.Chain[len(d.Chain)-1]
		return step{Zone: s.Zone, Algorithms: s.Algorithms, Keys: len(s.KeyTags), Denial: s.Denial}
	}
	want := []step{
		{Zone: "secure.vmcp.", Algorithms: []int{13}, Keys: 2},
		{Zone: "rsa.vmcp.", Algorithms: []int{8}, Keys: 1},
		{Zone: "ed.vmcp.", Algorithms: []int{15}, Keys: 2},
		{Zone: "unsigned.vmcp.", Denial: dnssec.ProofNSEC3OptOut},
	}
	var got []step
	for _, d := range res.Domains {
		got = append(got, last(d))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("last chain steps (-want +got):\n%s", diff)
	}
	// The root step's DS key tags are the anchor's, and the key they
	// vouch for is among the root's DNSKEYs (a KSK and a ZSK).
	root := res.Domains[0].Chain[0]
	anchor := testAnchor(t, h)
	if diff := cmp.Diff([]uint16{anchor.DS[0].KeyTag}, root.DSKeyTags); diff != "" {
		t.Errorf("root DS key tags (-want +got):\n%s", diff)
	}
	if len(root.KeyTags) != 2 || !slices.Contains(root.KeyTags, anchor.DS[0].KeyTag) {
		t.Errorf("root DNSKEY tags %v, want two including the anchor's %d", root.KeyTags, anchor.DS[0].KeyTag)
	}
}

func TestValidateUnavailable(t *testing.T) {
	tests := []struct {
		name   string
		filter dnssectest.Filter
		down   bool
		edit   func(*dnssec.Config, *dnssectest.Hierarchy)
		reason string // a substring of Result.Reason
	}{
		{name: "resolver_down", down: true, reason: "no usable answer"},
		{name: "nxdomain_for_everything", filter: dnssectest.FilterNXDomain, reason: string(dnssec.BogusMissingDNSKEY)},
		{name: "dnssec_stripped", filter: dnssectest.FilterStripDNSSEC, reason: string(dnssec.BogusMissingRRSIG)},
		{name: "servfail_for_everything", filter: dnssectest.FilterServFail, reason: "SERVFAIL"},
		{name: "no_answer", filter: dnssectest.FilterDrop, reason: "timeout", edit: func(c *dnssec.Config, _ *dnssectest.Hierarchy) {
			c.Timeout, c.Attempts = 100*time.Millisecond, 1
		}},
		{name: "wrong_anchor", reason: string(dnssec.BogusNoMatchingDNSKEY), edit: func(c *dnssec.Config, _ *dnssectest.Hierarchy) {
			c.Anchor = dnssec.RootAnchor() // the real root's keys, not the fake root's
		}},
		{name: "clock_before_signatures", reason: string(dnssec.BogusSignatureNotYetValid), edit: func(c *dnssec.Config, _ *dnssectest.Hierarchy) {
			c.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
		}},
		{name: "clock_after_signatures", reason: string(dnssec.BogusSignatureExpired), edit: func(c *dnssec.Config, _ *dnssectest.Hierarchy) {
			c.Now = func() time.Time { return time.Now().Add(31 * 24 * time.Hour) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHierarchy(t, dnssectest.Options{})
			v := newValidator(t, h, func(c *dnssec.Config) {
				if tt.edit != nil {
					tt.edit(c, h)
				}
			})
			h.SetFilter(tt.filter)
			if tt.down {
				h.Close()
			}
			res, err := v.Validate(context.Background(), domains(dnssectest.SecureHost, dnssectest.NXDomainNSEC, dnssectest.UnsignedHost))
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if res.Status != dnssec.RunUnavailable {
				t.Fatalf("run status = %q, want unavailable", res.Status)
			}
			if !strings.Contains(res.Reason, tt.reason) {
				t.Errorf("reason %q does not mention %q", res.Reason, tt.reason)
			}
			for _, d := range res.Domains {
				if d.Status != indeterminate || d.Exists != unknown || d.BogusReason != "" {
					t.Errorf("%s: status %s, exists %s, reason %q; want indeterminate and unknown: an unavailable run judges no domain", d.Name, d.Status, d.Exists, d.BogusReason)
				}
			}
		})
	}
}

func TestValidateResolverComesBack(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)
	h.SetFilter(dnssectest.FilterNXDomain)
	res, err := v.Validate(context.Background(), domains(dnssectest.SecureHost))
	if err != nil || res.Status != dnssec.RunUnavailable {
		t.Fatalf("filtered: status %q, err %v; want unavailable", res.Status, err)
	}
	h.SetFilter(dnssectest.FilterNone)
	res, err = v.Validate(context.Background(), domains(dnssectest.SecureHost))
	if err != nil || res.Status != dnssec.RunObserved || res.Domains[0].Status != secure {
		t.Fatalf("after the filter: status %q, domain %q, err %v; want observed and secure (an anchor failure must not be cached)", res.Status, res.Domains[0].Status, err)
	}
}

func TestValidateServFailIsIndeterminate(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	h.ServFail(dnssectest.RSAZone)
	v := newValidator(t, h, nil)
	res, err := v.Validate(context.Background(), domains("www."+dnssectest.RSAZone, dnssectest.SecureHost))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != dnssec.RunObserved {
		t.Fatalf("run status = %q, want observed", res.Status)
	}
	got := []outcome{outcomeOf(res.Domains[0]), outcomeOf(res.Domains[1])}
	want := []outcome{
		{Status: indeterminate, Exists: unknown, Chain: chain()},
		{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(res.Domains[0].Error, "SERVFAIL") {
		t.Errorf("error %q does not say SERVFAIL", res.Domains[0].Error)
	}
}

func TestValidateTruncationRetriesOverTCP(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{TruncateUDP: true})
	v := newValidator(t, h, nil)
	res, err := v.Validate(context.Background(), domains(dnssectest.SecureHost, dnssectest.NXDomainNSEC3))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != dnssec.RunObserved || res.Domains[0].Status != secure || res.Domains[1].Exists != no {
		t.Fatalf("status %q, %s: %s, %s: exists %s; want observed, secure, nonexistent",
			res.Status, res.Domains[0].Name, res.Domains[0].Status, res.Domains[1].Name, res.Domains[1].Exists)
	}
	q := h.Queries()
	if q.UDP == 0 || q.TCP != q.UDP {
		t.Errorf("queries %+v: every truncated UDP answer should have been asked again over TCP", q)
	}
}

// twenty is a mix of names across every zone of the hierarchy.
var twenty = []string{
	dnssectest.SecureZone, dnssectest.SecureHost, dnssectest.MailOnly, dnssectest.EmptyNonTerminal,
	dnssectest.Wildcard, dnssectest.WildcardNSEC3, dnssectest.RSAZone, "www." + dnssectest.RSAZone,
	dnssectest.Ed25519Zone, dnssectest.UnsignedHost, dnssectest.NXDomainUnsigned, "www." + dnssectest.TamperedZone,
	dnssectest.ExpiredZone, dnssectest.WrongKeyZone, dnssectest.NXDomainNSEC, dnssectest.NXDomainNSEC3,
	dnssectest.NXDomainOptOut, dnssectest.CNAMESecure, dnssectest.CNAMEDangling, dnssectest.CNAMEInsecure,
}

func TestValidateWarmCacheAsksNothing(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)
	ctx := context.Background()

	start := time.Now()
	cold, err := v.Validate(ctx, domains(twenty...))
	coldTime := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	asked := h.Queries()

	start = time.Now()
	warm, err := v.Validate(ctx, domains(twenty...))
	warmTime := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 domains: cold %v (%d queries), warm %v", coldTime, asked.UDP+asked.TCP, warmTime)
	if got := h.Queries(); got != asked {
		t.Errorf("warm run asked the resolver: queries %+v after the cold run, %+v after the warm one", asked, got)
	}
	warm.CheckedAt = cold.CheckedAt
	if diff := cmp.Diff(cold, warm); diff != "" {
		t.Errorf("warm results differ from cold ones (-cold +warm):\n%s", diff)
	}
}

func TestValidateSmallCacheStaysCorrect(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	big := newValidator(t, h, nil)
	small := newValidator(t, h, func(c *dnssec.Config) { c.CacheEntries = 3; c.Concurrency = 2 })
	ctx := context.Background()
	want, err := big.Validate(ctx, domains(twenty...))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := small.Validate(ctx, domains(twenty...))
		if err != nil {
			t.Fatal(err)
		}
		got.CheckedAt = want.CheckedAt
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("with a 3-entry cache (-want +got):\n%s", diff)
		}
	}
}

func TestValidateConcurrentCallers(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)
	ctx := context.Background()
	results := make([]dnssec.Result, 6)
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = v.Validate(ctx, domains(twenty...))
		}()
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		results[i].CheckedAt = results[0].CheckedAt
		if diff := cmp.Diff(results[0], results[i]); diff != "" {
			t.Errorf("caller %d differs from caller 0 (-0 +%d):\n%s", i, i, diff)
		}
	}
}

func TestValidateCanceled(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := v.Validate(ctx, domains(dnssectest.SecureHost))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Domains[0].Status == secure {
		t.Errorf("a canceled run judged %s secure", res.Domains[0].Name)
	}
}

func TestValidateResultEnvelope(t *testing.T) {
	// The hierarchy is signed around a fixed date and the validator's clock
	// is set to it: signatures are judged by the configured clock.
	clock := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	h2 := newHierarchy(t, dnssectest.Options{Now: clock})
	v := newValidator(t, h2, func(c *dnssec.Config) { c.Now = func() time.Time { return clock } })
	in := []dnssec.Domain{
		{Name: dnssectest.SecureHost, Sources: []dnssec.Source{dnssec.SourceHomepage, dnssec.SourceAuthorURL}},
		{Name: "not a name!"},
	}
	res, err := v.Validate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	anchor := testAnchor(t, h2)
	if res.Resolver != h2.Addr() || !res.CheckedAt.Equal(clock) ||
		res.Anchor.Zone != "." || res.Anchor.Source != "dnssectest" ||
		!cmp.Equal(res.Anchor.KeyTags, []uint16{anchor.DS[0].KeyTag}) {
		t.Errorf("envelope = %+v, %v, %v", res.Resolver, res.CheckedAt, res.Anchor)
	}
	if diff := cmp.Diff(in[0].Sources, res.Domains[0].Sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if d := res.Domains[0]; d.Status != secure {
		t.Errorf("%s under a fixed clock: %s (%s), want secure", d.Name, d.Status, d.Error)
	}
	if d := res.Domains[1]; d.Status != indeterminate || !strings.Contains(d.Error, "not a host name") || d.Sources == nil || d.Chain == nil {
		t.Errorf("bad name: %+v; want indeterminate with an error and non-nil lists", d)
	}
}

func TestNew(t *testing.T) {
	if _, err := dnssec.New(dnssec.Config{}); err == nil {
		t.Error("New without a resolver succeeded; the system resolver must never be used by surprise")
	}
	bad := dnssec.Anchor{Zone: "example.", DS: dnssec.RootAnchor().DS}
	if _, err := dnssec.New(dnssec.Config{Resolver: "127.0.0.1:53", Anchor: bad}); !errors.Is(err, dnssec.ErrBadAnchor) {
		t.Errorf("New with DS records owned by another zone: err = %v, want ErrBadAnchor", err)
	}
	if _, err := dnssec.New(dnssec.Config{Resolver: "127.0.0.1:53"}); err != nil {
		t.Errorf("New with the default (root) anchor: %v", err)
	}
}

func ExampleDomains() {
	for _, d := range dnssec.Domains(dnssec.Inputs{
		Homepage:         "https://docs.example.com/mcp",
		Repository:       "git+https://github.com/example/mcp-server.git",
		MaintainerEmails: []string{"Jo <jo@Example.com>", "ops@example.org"},
		MCPName:          "com.example/weather",
	}) {
		fmt.Println(d.Name, d.Sources)
	}
	// Output:
	// docs.example.com [homepage]
	// example.com [maintainer_email mcp_name]
	// example.org [maintainer_email]
}

func TestValidateDenialWithoutProofIsBogus(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	h.SetFilter(dnssectest.FilterStripDenial)
	v := newValidator(t, h, nil)
	res, err := v.Validate(context.Background(), domains(dnssectest.SecureZone, dnssectest.SecureHost, dnssectest.NXDomainNSEC, dnssectest.NXDomainNSEC3))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != dnssec.RunObserved {
		t.Fatalf("run status = %q (%s), want observed: the anchor's keys still validate", res.Status, res.Reason)
	}
	var got []outcome
	for _, d := range res.Domains {
		got = append(got, outcomeOf(d))
	}
	missing := dnssec.BogusMissingDenial
	want := []outcome{
		// Positive answers all the way down need no denial.
		{Status: secure, Exists: yes, Chain: chain("secure.vmcp. secure")},
		// "www" is no zone cut, which only an NSEC can prove.
		{Status: bogus, Reason: missing, Exists: unknown, Chain: chain("secure.vmcp. secure", "www.secure.vmcp. bogus")},
		{Status: bogus, Reason: missing, Exists: unknown, Chain: chain("secure.vmcp. secure", "nope.secure.vmcp. bogus")},
		{Status: bogus, Reason: missing, Exists: unknown, Chain: chain("rsa.vmcp. secure", "nope.rsa.vmcp. bogus")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateCacheRespectsTTL(t *testing.T) {
	start := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	h := newHierarchy(t, dnssectest.Options{Now: start})
	var mu sync.Mutex
	now := start
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	v := newValidator(t, h, func(c *dnssec.Config) {
		c.Now = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		}
	})
	ctx := context.Background()
	total := func() int64 { q := h.Queries(); return q.UDP + q.TCP }
	run := func() {
		t.Helper()
		if _, err := v.Validate(ctx, domains(twenty...)); err != nil {
			t.Fatal(err)
		}
	}

	run()
	cold := total()
	run()
	if got := total(); got != cold {
		t.Fatalf("second run at the same time asked %d queries, want 0", got-cold)
	}
	// Denials (NSEC TTL 300s) and bogus outcomes (kept a minute) expire;
	// keys and positive answers (TTL 3600s) do not.
	advance(301 * time.Second)
	run()
	partial := total() - cold
	if partial == 0 || partial >= cold {
		t.Errorf("after 301s the run asked %d queries, want some but fewer than the cold run's %d", partial, cold)
	}
	// Everything has expired an hour later.
	before := total()
	advance(time.Hour)
	run()
	if got := total() - before; got != cold {
		t.Errorf("after an hour the run asked %d queries, want the cold run's %d", got, cold)
	}
}

// A synthesized CNAME is unsigned: when it is not the one the validated
// DNAME synthesizes, the answer is bogus, wherever it points (here into
// another signed zone, which would otherwise read secure). When the CNAME
// is missing the validator synthesizes it from the DNAME.
func TestValidateDNAMESynthesis(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	h.ForgeSynthesizedCNAME(dnssectest.DNAMESecure, "www."+dnssectest.RSAZone)
	h.ForgeSynthesizedCNAME("other."+dnssectest.DNAMEOwner, dnssectest.UnsignedHost)
	v := newValidator(t, h, nil)
	res, err := v.Validate(context.Background(), domains(dnssectest.DNAMESecure, "other."+dnssectest.DNAMEOwner, dnssectest.DNAMEApex))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Domains[:2] {
		if d.Status != bogus || d.BogusReason != dnssec.BogusDNAMESynthesis || len(d.CNAMEs) != 0 {
			t.Errorf("%s with a forged synthesized CNAME: status %s, reason %q, cnames %v (%s); want bogus, %s, none followed",
				d.Name, d.Status, d.BogusReason, d.CNAMEs, d.Error, dnssec.BogusDNAMESynthesis)
		}
	}
	if e := res.Domains[0].Error; !strings.Contains(e, "www.rsa.vmcp") || !strings.Contains(e, "www.ed.vmcp") {
		t.Errorf("error %q: want the forged target and the one the DNAME synthesizes", e)
	}
	if d := res.Domains[2]; d.Status != secure || !slices.Equal(d.CNAMEs, []string{"www.ed.vmcp"}) {
		t.Errorf("%s, not forged: status %s, cnames %v (%s); want secure via www.ed.vmcp", d.Name, d.Status, d.CNAMEs, d.Error)
	}

	h2 := newHierarchy(t, dnssectest.Options{})
	h2.SetFilter(dnssectest.FilterOmitSynthesizedCNAME)
	v2 := newValidator(t, h2, nil)
	res, err = v2.Validate(context.Background(), domains(dnssectest.DNAMESecure, dnssectest.DNAMEInsecure))
	if err != nil {
		t.Fatal(err)
	}
	want := []outcome{
		{Status: secure, Exists: yes, CNAMEs: []string{"www.ed.vmcp"}, Chain: chain("secure.vmcp. secure", "ed.vmcp. secure")},
		{Status: insecure, Exists: yes, CNAMEs: []string{"www.secure.vmcp"}, Chain: chain("unsigned.vmcp. insecure", "secure.vmcp. secure")},
	}
	var got []outcome
	for _, d := range res.Domains {
		got = append(got, outcomeOf(d))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DNAME without its CNAME (-want +got):\n%s", diff)
	}
}

// The reason for a DS that points only at a revoked key names the key:
// the DS's key tag and the tag the key has with the REVOKE bit set.
func TestValidateRevokedKeyReason(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	v := newValidator(t, h, nil)
	res, err := v.Validate(context.Background(), domains(dnssectest.RevokedZone, dnssectest.RevokedDSZone))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Domains {
		zone := dns.Fqdn(d.Name)
		revoked := revokedTag(t, h, zone)
		step := d.Chain[len(d.Chain)-1]
		if step.Zone != zone || step.BogusReason != dnssec.BogusRevokedDNSKEY || len(step.DSKeyTags) != 1 {
			t.Fatalf("%s: last step %+v, want %s bogus with %s and one DS", d.Name, step, zone, dnssec.BogusRevokedDNSKEY)
		}
		for _, want := range []string{"revoked", "REVOKE", fmt.Sprint(step.DSKeyTags[0]), fmt.Sprint(revoked)} {
			if !strings.Contains(d.Error, want) || !strings.Contains(step.Error, want) {
				t.Errorf("%s: error %q (step %q) does not say %q", d.Name, d.Error, step.Error, want)
			}
		}
		if strings.Contains(d.Error, "match none") {
			t.Errorf("%s: error %q says no key matches, but the revoked key is there", d.Name, d.Error)
		}
	}
}

// revokedTag asks the hierarchy for a zone's DNSKEYs and returns the key
// tag of the one with the REVOKE bit.
func revokedTag(t *testing.T, h *dnssectest.Hierarchy, zone string) uint16 {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeDNSKEY)
	m.SetEdns0(1232, true)
	r, _, err := (&dns.Client{Net: "tcp"}).Exchange(m, h.Addr())
	if err != nil {
		t.Fatalf("DNSKEY %s: %v", zone, err)
	}
	for _, rr := range r.Answer {
		if k, ok := rr.(*dns.DNSKEY); ok && k.Flags&dns.REVOKE != 0 {
			return k.KeyTag()
		}
	}
	t.Fatalf("DNSKEY %s: no revoked key in %v", zone, r)
	return 0
}
