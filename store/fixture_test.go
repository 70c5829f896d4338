package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
)

func loadFixture(t testing.TB, name string) *evidence.Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
