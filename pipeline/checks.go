package pipeline

import (
	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
)

// contractChecks runs the deterministic contract checks over the captured
// (masked) contract, for the bundle: a rubric that pins these checks
// scores the stored findings, so that a later change to the checks moves
// no score under it. Nil without a contract.
func contractChecks(c *contract.Contract) *evidence.ContractChecks {
	if c == nil {
		return nil
	}
	fs := checks.Check(c)
	out := &evidence.ContractChecks{Version: checks.Version, Digest: checks.Digest(), Findings: make([]evidence.CheckFinding, 0, len(fs))}
	for _, f := range fs {
		out.Findings = append(out.Findings, evidence.CheckFinding{Code: f.Code, Severity: string(f.Severity), Kind: f.Kind,
			Subject: f.Subject, Field: f.Field, Evidence: f.Evidence, Decoded: f.Decoded, Message: f.Message})
	}
	return out
}
