package report

import "github.com/verifymcp/verifymcp/internal/testdiff"

// diff is the tests' shared diff (internal/testdiff).
func diff(want, got any) string { return testdiff.JSON(want, got) }
