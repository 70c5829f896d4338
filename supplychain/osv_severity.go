package supplychain

import (
	"strings"

	osvpb "github.com/ossf/osv-schema/bindings/go/osvschema"
	gocvss20 "github.com/pandatix/go-cvss/20"
	gocvss30 "github.com/pandatix/go-cvss/30"
	gocvss31 "github.com/pandatix/go-cvss/31"
	gocvss40 "github.com/pandatix/go-cvss/40"
)

// osvHighestScore returns the highest CVSS base score among severities and
// the vector it came from; 0 and "" when none can be scored. It scores the
// way osv-scanner does (its internal/utility/severity, on the same CVSS
// library): a vector that does not parse is skipped rather than failing
// the whole advisory, because one bad vector must not hide the others.
func osvHighestScore(severities []*osvpb.Severity) (float64, string) {
	best, vector := 0.0, ""
	for _, s := range severities {
		score, ok := osvCVSSScore(s)
		if ok && score > best {
			best, vector = score, s.GetScore()
		}
	}
	return best, vector
}

func osvCVSSScore(s *osvpb.Severity) (float64, bool) {
	v := strings.TrimSpace(s.GetScore())
	switch s.GetType() {
	case osvpb.Severity_CVSS_V2:
		if c, err := gocvss20.ParseVector(v); err == nil {
			return c.BaseScore(), true
		}
	case osvpb.Severity_CVSS_V3:
		switch {
		case strings.HasPrefix(v, "CVSS:3.0/"):
			if c, err := gocvss30.ParseVector(v); err == nil {
				return c.BaseScore(), true
			}
		case strings.HasPrefix(v, "CVSS:3.1/"):
			if c, err := gocvss31.ParseVector(v); err == nil {
				return c.BaseScore(), true
			}
		}
	case osvpb.Severity_CVSS_V4:
		if c, err := gocvss40.ParseVector(v); err == nil {
			return c.Score(), true
		}
	}
	return 0, false
}
