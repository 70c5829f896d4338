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

// BenchmarkCheckEverything measures the checks over a typical surface:
// server-everything, 13 tools, 4 prompts, 7 resources, 2 templates and
// server instructions; the rubric's BenchmarkEvaluate scores the same
// server.
func BenchmarkCheckEverything(b *testing.B) {
	c := loadSurface(b, "everything")
	b.ReportAllocs()
	for b.Loop() {
		Check(c)
	}
}

// BenchmarkCheckReference measures the implementation Check replaced
// (reference_test.go) over the same surfaces, for comparison on the same
// machine and load.
func BenchmarkCheckReference(b *testing.B) {
	for _, name := range []string{"github", "everything"} {
		c := loadSurface(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				refCheck(c)
			}
		})
	}
}
