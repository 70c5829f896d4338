package rubric

import (
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

// limitsSince is the first rubric version that reads the sandbox's limits
// from the evidence (evidence.ScannerLimit): what the sandbox could not do
// (an interpreter or platform it lacks, a tree its fetch step cannot get,
// configuration, network or memory it does not give) is not assessed,
// never the package's failure. Older versions read every failed install
// or session as the package's, so that rescoring under them is unchanged.
const limitsSince = "11"

// scannerLimit returns the limit b's evidence shows, when r reads limits;
// nil otherwise. It reads the stored evidence, so a bundle recorded before
// the pipeline recorded limits in its signal states is read the same way.
func scannerLimit(b *evidence.Bundle, r *Rubric) *evidence.Limit {
	if compareVersions(r.Version, limitsSince) < 0 {
		return nil
	}
	lim, ok := evidence.ScannerLimit(b)
	if !ok {
		return nil
	}
	return &lim
}

// limitGate is the gate of a dimension whose signals a scanner limit
// stopped: the limit's own signal (sandbox.install or sandbox.session, even
// when the bundle recorded it as observed) and the signals it kept from
// being collected are not assessed, so the dimension is dropped from the
// composite with the limit's reason (ARCHITECTURE rule 4), its probe does
// not run and it raises no finding. A signal of the dimension the limit did
// not stop keeps its own state: unavailable or error still gives the zero
// point. g is the ordinary gate's verdict, returned when the limit stopped
// none of the dimension's signals.
func limitGate(b *evidence.Bundle, lim *evidence.Limit, signals []string, g verdict) verdict {
	if lim == nil {
		return g
	}
	stopped := false
	for _, name := range signals {
		s, ok := b.Signals[name]
		if _, st := lim.Apply(name, s, ok); st {
			stopped = true
			continue
		}
		if !ok {
			return g
		}
		switch s.State {
		case evidence.StateObserved, evidence.StateNotAssessed:
		case evidence.StateUnavailable, evidence.StateError:
			return g
		default:
			return g
		}
	}
	if !stopped {
		return g
	}
	return verdict{state: StateDropped, reason: "not assessed, a limit of the sandbox (" + lim.Kind + "): " + lim.Reason, limited: true}
}

// limitVerdict keeps a dimension the limit dropped dropped: a probe that
// runs whatever the gate said (contract drift gives a failed session no
// credit) would otherwise score what was never collected.
func limitVerdict(gate, v verdict) verdict {
	if gate.limited && v.state == StateZeroPoint {
		return gate
	}
	return v
}

// exitText says how a crashed server exited: " with status 1", or "".
func exitText(s *evidence.Session) string {
	if s.ExitCode == nil {
		return ""
	}
	return " with status " + strconv.Itoa(*s.ExitCode)
}

// cpusText names the run phase's CPU share: "1 CPU", "0.5 CPUs".
func cpusText(nano int64) string {
	if nano <= 0 {
		return "the sandbox's CPU share"
	}
	n := float64(nano) / 1e9
	if n == 1 {
		return "1 CPU"
	}
	return formatScore(round1(n)) + " CPUs"
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
