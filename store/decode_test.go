package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "everything.bundle.json"))
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
	data, err := os.ReadFile(filepath.Join("testdata", "everything.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b evidence.Bundle
	if err := fastUnmarshal(data, &b); err != nil {
		t.Fatalf("fast path declined the fixture: %v", err)
	}
}
