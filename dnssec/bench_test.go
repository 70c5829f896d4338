package dnssec_test

import (
	"context"
	"testing"
	"time"

	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
)

// BenchmarkValidate20Warm validates 20 domains of the loopback hierarchy
// with a warm cache; one op is one Validate of all 20. Target: under 50 ms
// per op.
func BenchmarkValidate20Warm(b *testing.B) {
	h := newHierarchy(b, dnssectest.Options{})
	v := newValidator(b, h, nil)
	ctx := context.Background()
	in := domains(twenty...)
	if _, err := v.Validate(ctx, in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := v.Validate(ctx, in)
		if err != nil || res.Status != dnssec.RunObserved {
			b.Fatalf("status %q, err %v", res.Status, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/20domains")
}

// BenchmarkValidate20Cold is the same with an empty cache each time: every
// query goes to the loopback resolver and every signature is verified.
func BenchmarkValidate20Cold(b *testing.B) {
	h := newHierarchy(b, dnssectest.Options{})
	a := testAnchor(b, h)
	ctx := context.Background()
	in := domains(twenty...)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v, err := dnssec.New(dnssec.Config{Resolver: h.Addr(), Anchor: a, Timeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		res, err := v.Validate(ctx, in)
		if err != nil || res.Status != dnssec.RunObserved {
			b.Fatalf("status %q, err %v", res.Status, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/20domains")
}
