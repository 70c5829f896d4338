package rubric

import "github.com/verifymcp/verifymcp/internal/testdiff"

// diff and lineDiff are the tests' shared diff (internal/testdiff).
func diff(want, got any) string { return testdiff.JSON(want, got) }

func lineDiff(want, got []string) string { return testdiff.Lines(want, got) }
