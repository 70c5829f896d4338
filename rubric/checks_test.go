package rubric

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract/checks"
	"github.com/verifymcp/verifymcp/evidence"
)

// TestV7PinsTheseChecks: the current rubric pins the contract checks this
// build runs. A change to the checks that moves their digest fails here
// (and in contract/checks' TestVersionPinsDigest) until a new checks version
// and a rubric that adopts it exist.
func TestV7PinsTheseChecks(t *testing.T) {
	r := Current()
	pin, ok := r.ContractChecks()
	if !ok || pin.Version != checks.Version || pin.Digest != checks.Digest() {
		t.Fatalf("rubric v%s pins contract checks %s; this build runs %s (%s)", r.Version, pin, checks.Version, checks.Digest())
	}
	if !r.ChecksRunnable() {
		t.Fatal("ChecksRunnable() = false for the current rubric")
	}
	for _, v := range []string{"5", "6"} {
		old := mustLoad(t, v)
		if pin, _ := old.ContractChecks(); pin.Version != "1" || old.ChecksRunnable() {
			t.Errorf("v%s: ContractChecks() = %s, runnable %v; want checks 1, not runnable", v, pin, old.ChecksRunnable())
		}
	}
}

// storedChecks is what the pipeline stores for b's contract.
func storedChecks(b *evidence.Bundle, version, digest string, fs ...evidence.CheckFinding) {
	if fs == nil {
		fs = []evidence.CheckFinding{}
	}
	b.ContractChecks = &evidence.ContractChecks{Version: version, Digest: digest, Findings: fs}
}

// TestContractChecksPin: where prompt_contract_integrity's findings come
// from, under each pin.
func TestContractChecksPin(t *testing.T) {
	v7 := Current()
	secret := evidence.CheckFinding{Code: checks.CodeInjectionSecret, Severity: "critical", Kind: checks.KindTool, Subject: "echo",
		Field: "description", Evidence: "read ~/.ssh/id_rsa", Message: "The tool \"echo\" description tells the model to read a credential file."}

	t.Run("stored_findings_of_the_pinned_checks_are_scored_as_stored", func(t *testing.T) {
		b := okBundle()
		storedChecks(b, checks.Version, checks.Digest(), secret)
		res := Evaluate(b, v7)
		if got := outcomeOf(res, DimensionPromptIntegrity); got.Score != 0 || len(got.Findings) != 1 || got.Findings[0] != checks.CodeInjectionSecret+" echo" {
			t.Errorf("outcome %+v, want the stored critical finding scored (0)", got)
		}
		if u := res.ContractChecks; u == nil || u.Source != ChecksStored || u.Version != checks.Version {
			t.Errorf("ContractChecks = %+v, want stored checks %s", u, checks.Version)
		}
	})
	t.Run("other_stored_checks_are_recomputed_by_the_pinned_ones", func(t *testing.T) {
		b := okBundle()
		storedChecks(b, "1", "sha256:"+strings.Repeat("0", 64), secret)
		res := Evaluate(b, v7)
		if got := outcomeOf(res, DimensionPromptIntegrity); got.Score != 100 || len(got.Findings) != 0 {
			t.Errorf("outcome %+v, want this build's checks over the clean contract (100)", got)
		}
		if u := res.ContractChecks; u == nil || u.Source != ChecksRecomputed {
			t.Errorf("ContractChecks = %+v, want recomputed", u)
		}
	})
	t.Run("no_stored_findings_are_recomputed", func(t *testing.T) {
		res := Evaluate(okBundle(), v7)
		if u := res.ContractChecks; u == nil || u.Source != ChecksRecomputed || u.Digest != checks.Digest() {
			t.Errorf("ContractChecks = %+v, want recomputed by %s", u, checks.Digest())
		}
	})
	for _, v := range []string{"5", "6"} {
		t.Run("v"+v+"_scored_checks_1_which_this_build_lacks", func(t *testing.T) {
			res := Evaluate(okBundle(), mustLoad(t, v))
			got := dim(res, DimensionPromptIntegrity)
			if got.State != StateZeroPoint || !strings.Contains(got.Reason, "contract checks 1") || !strings.Contains(got.Reason, "rescore under a rubric that adopts checks "+checks.Version) {
				t.Errorf("outcome %+v, want the zero point naming checks 1 and the rubric to use", got)
			}
			if u := res.ContractChecks; u == nil || u.Source != ChecksUnavailable || u.Version != "1" {
				t.Errorf("ContractChecks = %+v, want checks 1 unavailable", u)
			}
		})
	}
	t.Run("a_pattern_changed_without_a_new_version_is_refused", func(t *testing.T) {
		// A rubric whose pin is this version under another digest: what a
		// build gets when the checks changed and the version did not.
		data, err := os.ReadFile(filepath.Join("versions", "v7.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		other := strings.Replace(string(data), checks.Digest(), "sha256:"+strings.Repeat("1", 64), 1)
		r := mustParse(t, []byte(other))
		if r.ChecksRunnable() {
			t.Fatal("runnable under another digest")
		}
		res := Evaluate(okBundle(), r)
		if got := dim(res, DimensionPromptIntegrity); got.State != StateZeroPoint || !strings.Contains(got.Reason, checks.Digest()) {
			t.Errorf("outcome %+v, want the zero point naming this build's digest", got)
		}
	})
	t.Run("a_rubric_from_v7_must_pin_its_checks", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("versions", "v7.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		pin, _ := mustLoad(t, "7").ContractChecks()
		unpinned := strings.Replace(string(data), "    checks_version: \"2\"\n", "", 1)
		unpinned = strings.Replace(unpinned, "    checks_digest: \""+pin.Digest+"\"\n", "", 1)
		if _, err := parse([]byte(unpinned)); err == nil || !strings.Contains(err.Error(), "checks_version and checks_digest: missing") {
			t.Errorf("parse(v7 without a checks pin) = %v, want the pin required", err)
		}
	})
}
