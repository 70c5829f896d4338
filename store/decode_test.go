package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

// BenchmarkDecode decodes the server-everything fixture (no behaviour
// evidence, like most stored bundles) and, as BenchmarkDecodeBehavior,
// the fixture with rich behaviour evidence, both ways.
func BenchmarkDecode(b *testing.B) { benchmarkDecode(b, "everything.bundle.json") }

// BenchmarkDecodeBehavior decodes a bundle with rich behaviour evidence.
func BenchmarkDecodeBehavior(b *testing.B) { benchmarkDecode(b, "behavior.bundle.json") }

// BenchmarkDecodeSupply decodes a bundle with supply-chain evidence of
// every kind and, as BenchmarkDecodeDNSSEC, the same with DNSSEC evidence
// for five domains, as bundles written since rubric v4 carry.
func BenchmarkDecodeSupply(b *testing.B) { benchmarkDecode(b, "supply.bundle.json") }

// BenchmarkDecodeDNSSEC decodes a bundle with DNSSEC evidence.
func BenchmarkDecodeDNSSEC(b *testing.B) { benchmarkDecode(b, "dnssec.bundle.json") }

// BenchmarkDecodeJudge decodes a bundle with the LLM judge's verdicts, as
// bundles written since rubric v5 carry.
func BenchmarkDecodeJudge(b *testing.B) { benchmarkDecode(b, "judge.bundle.json") }

func benchmarkDecode(b *testing.B, fixture string) {
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		b.Fatal(err)
	}
	compact := buf.Bytes()
	for _, bc := range []struct {
		name   string
		decode func([]byte) (*evidence.Bundle, error)
	}{
		{"decoder=store", DecodeBundle},
		{"decoder=evidence", evidence.Decode},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(compact)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.decode(compact); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestFastPathTakenForFixture(t *testing.T) {
	for _, name := range []string{"everything.bundle.json", "behavior.bundle.json", "supply.bundle.json", "dnssec.bundle.json", "judge.bundle.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var b evidence.Bundle
		if err := fastUnmarshal(data, &b); err != nil {
			t.Fatalf("fast path declined %s: %v", name, err)
		}
	}
}

func TestPlainRun(t *testing.T) {
	// Every byte value at every position of a run of plain bytes, with
	// text around it, must stop the run exactly where the byte is, or
	// not at all.
	for n := range 20 {
		for pos := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte("x"), n)
				b[pos] = byte(c)
				want := n
				if !plainByte[c] {
					want = pos
				}
				if got := plainRun(b, 0); got != want {
					t.Fatalf("plainRun(%q, 0) = %d, want %d", b, got, want)
				}
			}
		}
	}
}
