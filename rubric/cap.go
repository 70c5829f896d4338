package rubric

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// capSince is the first rubric version with a critical cap.
const capSince = "9"

// CompositeParams parameterise the composite score (rubric v9 on).
type CompositeParams struct {
	// CriticalCap is the most the composite can be when any finding of
	// kind finding has severity critical. A pointer, so that a block that
	// leaves it out is an error, not a cap of 0.
	CriticalCap *float64 `yaml:"critical_cap"`
	// CriticalCapReason says why the cap is what it is; required, as a
	// non-zero zero point needs its written reason.
	CriticalCapReason string `yaml:"critical_cap_reason"`
}

// Cap is the critical cap as it applied to one result: the composite was
// above Value and a critical finding was raised, so the composite is
// Value. The dimensions are scored as without the cap.
type Cap struct {
	// Value is the rubric's critical_cap, now the composite.
	Value float64 `json:"value"`
	// Reason is the rubric's written critical_cap_reason.
	Reason string `json:"reason"`
	// Codes are the codes of the critical findings, sorted, each once.
	Codes []string `json:"codes"`
	// Uncapped is the composite before the cap.
	Uncapped float64 `json:"uncapped"`
}

// hasCap reports whether rubric version v has a critical cap.
func hasCap(v string) bool { return compareVersions(v, capSince) >= 0 }

// validateCap checks parameters.composite: present exactly from rubric v9
// on, with a cap in 0..100 and a written reason.
func (r *Rubric) validateCap() []error {
	p := r.Params.Composite
	has := hasCap(r.Version)
	switch {
	case has && p == nil:
		return []error{fmt.Errorf("parameters.composite: missing, and rubric v%s has a critical cap (from v%s on)", r.Version, capSince)}
	case !has && p != nil:
		return []error{fmt.Errorf("parameters.composite: present, but rubric v%s is older than v%s, the first with a critical cap", r.Version, capSince)}
	case !has:
		return nil
	}
	var errs []error
	switch c := p.CriticalCap; {
	case c == nil:
		errs = append(errs, errors.New("parameters.composite.critical_cap: missing"))
	case *c < 0 || *c > 100 || math.IsNaN(*c):
		errs = append(errs, fmt.Errorf("parameters.composite.critical_cap: %v outside 0..100", *c))
	}
	if strings.TrimSpace(p.CriticalCapReason) == "" {
		errs = append(errs, errors.New("parameters.composite.critical_cap_reason: missing; a cap needs a written reason"))
	}
	return errs
}

// criticalCap returns the cap that applies to a composite score over the
// given findings under parameters p: nil when p has no cap, no finding of
// kind finding is critical, or the composite is already at or below the
// cap. It is pure, like Evaluate.
func criticalCap(p *CompositeParams, findings []Finding, score float64) *Cap {
	if p == nil || p.CriticalCap == nil || !(score > *p.CriticalCap) {
		return nil
	}
	var codes []string
	for i := range findings {
		f := &findings[i]
		if f.Kind == KindFinding && f.Severity == SeverityCritical {
			codes = append(codes, f.Code)
		}
	}
	if len(codes) == 0 {
		return nil
	}
	slices.Sort(codes)
	return &Cap{
		Value:    *p.CriticalCap,
		Reason:   strings.TrimSpace(p.CriticalCapReason),
		Codes:    slices.Compact(codes),
		Uncapped: score,
	}
}
