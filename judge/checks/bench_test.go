package checks

import "testing"

// BenchmarkCheck measures the deterministic checks over the largest real
// surface in testdata (server-github, 26 tools).
func BenchmarkCheck(b *testing.B) {
	c := loadSurface(b, "github")
	b.ReportAllocs()
	for b.Loop() {
		Check(c)
	}
}
