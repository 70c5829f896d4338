package evidence

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func validBundle() Bundle {
	return Bundle{
		SchemaVersion: SchemaVersion,
		Run:           Run{ID: "r1", Date: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC), Tool: Tool{Name: "verifymcp", Version: "test"}},
		Target:        Target{Ecosystem: "npm", Name: "x", Version: "1.0.0"},
		Signals:       map[string]Signal{SignalInstall: {State: StateObserved}},
	}
}

func TestStateValid(t *testing.T) {
	for _, s := range []State{StateObserved, StateUnavailable, StateError, StateNotAssessed} {
		if !s.Valid() {
			t.Errorf("%q not valid", s)
		}
	}
	for _, s := range []State{"", "ok", "clean", "safe"} {
		if s.Valid() {
			t.Errorf("%q valid", s)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(b *Bundle)
		wantErr string
	}{
		{"valid", func(b *Bundle) {}, ""},
		{"wrong schema version", func(b *Bundle) { b.SchemaVersion = "v0" }, "schema version"},
		{"no run id", func(b *Bundle) { b.Run.ID = "" }, "run id"},
		{"no date", func(b *Bundle) { b.Run.Date = time.Time{} }, "run id and date"},
		{"no exact version", func(b *Bundle) { b.Target.Version = "" }, "exact version"},
		{"invalid signal state", func(b *Bundle) { b.Signals["osv"] = Signal{State: "clean"} }, "invalid state"},
		{"contract checks without a version", func(b *Bundle) {
			b.ContractChecks = &ContractChecks{Digest: "sha256:" + strings.Repeat("0", 64), Findings: []CheckFinding{}}
		}, "contract checks need"},
		{"contract checks without findings", func(b *Bundle) {
			b.ContractChecks = &ContractChecks{Version: "2", Digest: "sha256:" + strings.Repeat("0", 64)}
		}, "contract checks need"},
		{"contract checks without a contract", func(b *Bundle) {
			b.Contract = nil
			b.ContractChecks = &ContractChecks{Version: "2", Digest: "sha256:" + strings.Repeat("0", 64), Findings: []CheckFinding{}}
		}, "without a contract"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := validBundle()
			tc.mutate(&b)
			err := b.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSignalMissingIsNotObserved(t *testing.T) {
	b := validBundle()
	if got := b.Signal(SignalInstall).State; got != StateObserved {
		t.Errorf("recorded signal: %s", got)
	}
	if got := b.Signal(SignalOSV).State; got == StateObserved || got == StateNotAssessed {
		t.Errorf("a missing signal reads as %s; it must never read as observed or deliberately skipped", got)
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	b := validBundle()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(got)
	if string(again) != string(data) {
		t.Errorf("round trip changed the bundle:\n- %s\n+ %s", data, again)
	}
	if _, err := Decode([]byte(`{"schema_version":`)); err == nil {
		t.Error("Decode accepted truncated JSON")
	}
	if _, err := Decode([]byte(`{"schema_version":"verifymcp.evidence/v1"}`)); err == nil {
		t.Error("Decode accepted a bundle without run and target")
	}
}
