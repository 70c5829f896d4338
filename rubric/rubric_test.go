package rubric

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	r, err := Load("1")
	if err != nil {
		t.Fatalf("Load(1): %v", err)
	}
	data, err := os.ReadFile(filepath.Join("versions", "v1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); r.Hash != want {
		t.Errorf("Hash = %s, want %s (the SHA-256 of the file bytes)", r.Hash, want)
	}
	if r.Version != "1" {
		t.Errorf("Version = %q, want 1", r.Version)
	}

	var total float64
	var ids []string
	for _, d := range r.Dimensions {
		total += d.Weight
		ids = append(ids, d.ID)
	}
	if total != 100 {
		t.Errorf("v1 weights sum to %v, want 100", total)
	}
	wantIDs := []string{"installability", "install_scripts", "session", "protocol_hygiene", "spec_recency", "schema_completeness", "description_coverage", "action_safety"}
	if d := diff(wantIDs, ids); d != "" {
		t.Errorf("dimensions (-want +got):\n%s", d)
	}

	def, ok := r.Code(CodeAnnotationContradiction)
	if !ok || def.Severity != SeverityHigh || def.Kind != KindFinding || def.Dimension != "action_safety" {
		t.Errorf("Code(%s) = %+v, %v", CodeAnnotationContradiction, def, ok)
	}
	if _, ok := r.Code("pkg.nothing.here"); ok {
		t.Error("Code(pkg.nothing.here) found an entry")
	}
	for i := 1; i < len(r.Codes); i++ {
		if r.Codes[i-1].Code >= r.Codes[i].Code {
			t.Errorf("Codes not sorted: %s before %s", r.Codes[i-1].Code, r.Codes[i].Code)
		}
	}

	if v, err := Load("v1"); err != nil || v.Hash != r.Hash {
		t.Errorf(`Load("v1") = %v, %v; want the same rubric as Load("1")`, v, err)
	}
	if _, err := Load("9"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("Load(9) error = %v, want ErrUnknownVersion", err)
	}
	if d := diff([]string{"1"}, Versions()); d != "" {
		t.Errorf("Versions() (-want +got):\n%s", d)
	}
	if Current().Version != CurrentVersion || Current() != Current() {
		t.Errorf("Current() = version %q, want the shared rubric %q", Current().Version, CurrentVersion)
	}
}

// TestCatalogCoversProbes checks, independently of validate, that every
// code a probe can emit is catalogued with the probe's dimension and kind.
func TestCatalogCoversProbes(t *testing.T) {
	r := Current()
	for _, d := range r.Dimensions {
		for code, kind := range scorers[d.ID].emits {
			def, ok := r.Code(code)
			if !ok {
				t.Errorf("%s: %s missing from the catalog", d.ID, code)
				continue
			}
			if def.Dimension != d.ID || def.Kind != kind {
				t.Errorf("%s: catalog has dimension %s kind %s, probe %s kind %s", code, def.Dimension, def.Kind, d.ID, kind)
			}
		}
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"bad_code_pattern.yaml", `"pkg.install.Scripts-present": code does not match`},
		{"bad_zero_weight.yaml", `"session": weight 0 must be greater than 0`},
		{"bad_zero_point_without_reason.yaml", `"installability": zero_point 50 needs a written zero_point_reason`},
		{"bad_missing_code.yaml", `probe emits pkg.contract.tool.destructive, which is not in the catalog`},
		{"bad_unknown_field.yaml", `field min_char not found`},
		{"bad_orphan_code.yaml", `code pkg.install.scripts.network: no probe emits it`},
		{"bad_unknown_dimension.yaml", `"popularity": no probe implements this dimension`},
		{"bad_measurement_severity.yaml", `a measurement has severity info, not "medium"`},
		{"bad_wrong_dimension.yaml", `code pkg.install.failed: catalogued under "session", but emitted by dimension "installability"`},
		{"bad_unknown_signal.yaml", `unknown signal "sandbox.sesion"`},
		{"bad_severity.yaml", `unknown severity "severe"`},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = parse(data)
			if err == nil {
				t.Fatalf("parse(%s) succeeded, want an error containing %q", tt.file, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse(%s) error:\n%v\nwant it to contain %q", tt.file, err, tt.want)
			}
		})
	}
}

func TestParseRejectsEmptyAndMissingParameters(t *testing.T) {
	if _, err := parse(nil); err == nil {
		t.Error("parse(empty) succeeded")
	}
	if _, err := parse([]byte("version: \"1\"\ndimensions: []\ncodes: []\n")); err == nil || !strings.Contains(err.Error(), "parameters: missing") {
		t.Errorf("parse(no parameters) error = %v, want parameters: missing", err)
	}
}

func TestZeroPointWithReason(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "zero_point_with_reason.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parse(data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	b := okBundle()
	b.Signals["sandbox.install"] = sig("unavailable", "sandbox engine unreachable")
	got := dim(Evaluate(b, r), "installability")
	want := DimensionScore{
		ID: "installability", Weight: 15, State: StateZeroPoint, Score: 50,
		Reason: "signal sandbox.install is unavailable: sandbox engine unreachable; zero point 50: a test fixture that gives half credit when install evidence is missing",
	}
	if d := diff(want, got); d != "" {
		t.Errorf("installability (-want +got):\n%s", d)
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"delete_file", []string{"delete", "file"}},
		{"delete-file", []string{"delete", "file"}},
		{"deleteFile", []string{"delete", "file"}},
		{"DeleteFile", []string{"delete", "file"}},
		{"HTTPRequest", []string{"http", "request"}},
		{"runSQLQuery", []string{"run", "sql", "query"}},
		{"s3Upload", []string{"s3", "upload"}},
		{"files.write", []string{"files", "write"}},
		{"Send an Email", []string{"send", "an", "email"}},
		{"runtime_info", []string{"runtime", "info"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if d := diff(tt.want, tokens(tt.in)); d != "" {
				t.Errorf("tokens(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}
