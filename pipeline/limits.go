package pipeline

import "github.com/verifymcp/verifymcp/evidence"

// applyLimits records in b's signal states what the sandbox could not do.
// When the evidence of a failed install or session shows a limit of the
// sandbox (evidence.ScannerLimit: an interpreter or platform it lacks, a
// tree its fetch step cannot get, configuration, network or memory it does
// not give), the signal it stopped, and each later one it kept from being
// collected, is not_assessed with the limit's reason, never a failure of
// the package; evidence that was collected (behaviour watched before the
// limit) stays observed. Rubric v11 reads the same limit from the stored
// evidence of any bundle, so a bundle recorded before this existed scores
// the same.
func applyLimits(b *evidence.Bundle) {
	lim, ok := evidence.ScannerLimit(b)
	if !ok {
		return
	}
	for name, s := range b.Signals {
		if ns, stopped := lim.Apply(name, s, true); stopped {
			b.Signals[name] = ns
		}
	}
}
