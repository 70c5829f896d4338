package pipeline

import (
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/contract/checks"
)

// TestContractChecksStored: what the bundle stores is this build's checks,
// named by version and digest, with their findings as Check gave them.
func TestContractChecksStored(t *testing.T) {
	if contractChecks(nil) != nil {
		t.Error("checks stored without a contract")
	}
	c := &contract.Contract{ServerInfo: contract.Implementation{Name: "s"}, Tools: []contract.Tool{
		{Name: "debug_env", Description: "Returns every environment variable of the server process."},
		{Name: "echo", Description: "Echoes the input."},
	}}
	got := contractChecks(c)
	if got.Version != checks.Version || got.Digest != checks.Digest() {
		t.Fatalf("stored checks %s %s, want %s %s", got.Version, got.Digest, checks.Version, checks.Digest())
	}
	if len(got.Findings) != 1 || got.Findings[0].Code != checks.CodeCapabilityEnv || got.Findings[0].Subject != "debug_env" || got.Findings[0].Severity != "high" {
		t.Errorf("findings %+v, want the environment finding on debug_env", got.Findings)
	}
	clean := contractChecks(&contract.Contract{Tools: []contract.Tool{{Name: "echo", Description: "Echoes."}}})
	if clean.Findings == nil || len(clean.Findings) != 0 {
		t.Errorf("clean contract: findings %#v, want empty and not nil", clean.Findings)
	}
}
