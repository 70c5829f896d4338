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
	if _, err := Load("16"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("Load(16) error = %v, want ErrUnknownVersion", err)
	}
	if d := diff([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"}, Versions()); d != "" {
		t.Errorf("Versions() (-want +got):\n%s", d)
	}
	if first, again := Current(), Current(); first.Version != CurrentVersion || first != again {
		t.Errorf("Current() = version %q, want the shared rubric %q", Current().Version, CurrentVersion)
	}
	if CurrentVersion != "15" {
		t.Errorf("CurrentVersion = %q, want 15", CurrentVersion)
	}
}

// v1Hash is the SHA-256 of rubric v1 as released. Stored results carry it,
// so the file's bytes must never change.
const v1Hash = "sha256:e9e1908c3ca14b8c3dc380aa8f020026d85de96e9f8830c1965158db76ad3b63"

func TestV1Unchanged(t *testing.T) {
	if got := mustLoad(t, "1").Hash; got != v1Hash {
		t.Errorf("rubric v1 hash = %s, want %s: v1.yaml was edited; make a new version instead", got, v1Hash)
	}
}

// v2Hash is the SHA-256 of rubric v2 as released.
const v2Hash = "sha256:b4118fe0f01a9eeb5fc2b54ff525789f6a730b5ec42e7e039c10fbe16ed6294d"

func TestV2Unchanged(t *testing.T) {
	if got := mustLoad(t, "2").Hash; got != v2Hash {
		t.Errorf("rubric v2 hash = %s, want %s: v2.yaml was edited; make a new version instead", got, v2Hash)
	}
}

func TestLoadV2(t *testing.T) {
	v1, v2 := mustLoad(t, "1"), mustLoad(t, "2")
	data, err := os.ReadFile(filepath.Join("versions", "v2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); v2.Hash != want {
		t.Errorf("Hash = %s, want %s", v2.Hash, want)
	}
	weights := map[string]float64{}
	var total float64
	var ids []string
	for _, d := range v2.Dimensions {
		weights[d.ID] = d.Weight
		total += d.Weight
		ids = append(ids, d.ID)
		if d.ZeroPoint != 0 {
			t.Errorf("%s: zero point %v, want 0", d.ID, d.ZeroPoint)
		}
	}
	if total != 100 {
		t.Errorf("v2 weights sum to %v, want 100", total)
	}
	wantIDs := []string{
		"installability", "install_scripts", "session", "protocol_hygiene", "spec_recency", "schema_completeness",
		"description_coverage", "action_safety", "egress_resilience", "exfiltration_resilience", "secret_handling", "execution_safety",
	}
	if d := diff(wantIDs, ids); d != "" {
		t.Errorf("dimensions (-want +got):\n%s", d)
	}
	// The v1 dimensions keep their proportions, scaled to 60.
	for _, d := range v1.Dimensions {
		if got, want := weights[d.ID], d.Weight*0.6; got != want {
			t.Errorf("%s: v2 weight %v, want %v (v1 %v scaled to 60)", d.ID, got, want, d.Weight)
		}
	}
	for id, want := range map[string]float64{"egress_resilience": 10, "exfiltration_resilience": 15, "secret_handling": 8, "execution_safety": 7} {
		d, _ := v2.Dimension(id)
		if d.Weight != want || len(d.Signals) != 1 || d.Signals[0] != "sandbox.behavior" {
			t.Errorf("%s: weight %v signals %v, want %v [sandbox.behavior]", id, d.Weight, d.Signals, want)
		}
	}
	// Every v1 code stays in v2 with the same meaning.
	for _, c := range v1.Codes {
		c2, ok := v2.Code(c.Code)
		if !ok || c2.Kind != c.Kind || c2.Severity != c.Severity || c2.Dimension != c.Dimension {
			t.Errorf("%s: v2 has %+v, %v; want it as in v1", c.Code, c2, ok)
		}
	}
	if v1.Params.Behavior != nil {
		t.Error("v1 has behaviour parameters")
	}
	if p := v2.Params.Behavior; p == nil || p.Egress.DNSOnlyScore != 80 || p.Egress.AttemptScore != 40 ||
		p.ExecutionSafety.SpawnPenalty != 30 || p.ExecutionSafety.FileWritePenalty != 10 {
		t.Errorf("v2 behaviour parameters = %+v", p)
	}
}

// TestBehaviorCatalog checks the severities and dimensions the behaviour
// codes were specified with.
func TestBehaviorCatalog(t *testing.T) {
	want := map[string][2]string{
		CodeDNSLookup:             {"low", "egress_resilience"},
		CodeEgressAttempt:         {"medium", "egress_resilience"},
		CodeEgressLiteralIP:       {"high", "egress_resilience"},
		CodeBeacon:                {"high", "egress_resilience"},
		CodeCanaryExfiltration:    {"critical", "exfiltration_resilience"},
		CodeFileSensitiveWrite:    {"high", "secret_handling"},
		CodeFileWrite:             {"low", "execution_safety"},
		CodeProcessSpawn:          {"medium", "execution_safety"},
		CodeProcessShell:          {"high", "execution_safety"},
		CodeProcessNetworkTool:    {"high", "execution_safety"},
		CodeProcessPackageManager: {"medium", "execution_safety"},
		CodeObserverIncomplete:    {"medium", "execution_safety"},
	}
	r := mustLoad(t, "2")
	n := 0
	for _, c := range r.Codes {
		if strings.HasPrefix(c.Code, "pkg.behavior.") {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("v2 has %d pkg.behavior codes, want %d", n, len(want))
	}
	for code, sd := range want {
		def, ok := r.Code(code)
		if !ok {
			t.Errorf("%s missing", code)
			continue
		}
		if string(def.Severity) != sd[0] || def.Dimension != sd[1] || def.Kind != KindFinding {
			t.Errorf("%s: %s %s %s, want finding %s %s", code, def.Kind, def.Severity, def.Dimension, sd[0], sd[1])
		}
		if strings.TrimSpace(def.Description) == "" || strings.TrimSpace(def.Remediation) == "" {
			t.Errorf("%s: description or remediation missing", code)
		}
	}
}

// TestLoadRejectsBadV2 mutates the embedded v2 file and checks that
// validation catches each mutation.
func TestLoadRejectsBadV2(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("versions", "v2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// cut removes the lines from the one containing from to the line
	// before the one containing to.
	cut := func(s, from, to string) string {
		i := strings.Index(s, from)
		j := strings.Index(s[i:], to)
		if i < 0 || j < 0 {
			t.Fatalf("cut %q..%q: not found", from, to)
		}
		i = strings.LastIndex(s[:i], "\n") + 1
		j = i + strings.LastIndex(s[i:i+j], "\n") + 1
		return s[:i] + s[j:]
	}
	b := string(base)
	tests := []struct {
		name, data, want string
	}{
		{"behavior_parameters_missing", cut(b, "  behavior:\n", "\ndimensions:"), "parameters.behavior: missing"},
		{"empty_shell_list", strings.Replace(b, "shells: [sh, bash, dash, zsh, ash]", "shells: []", 1), "execution_safety.shells: empty"},
		{"path_in_program_list", strings.Replace(b, "network_tools: [curl,", "network_tools: [/usr/bin/curl,", 1), `"/usr/bin/curl" is not a program's base name`},
		{"score_above_100", strings.Replace(b, "dns_only_score: 80", "dns_only_score: 180", 1), "egress.dns_only_score: 180 outside 0..100"},
		{"negative_penalty", strings.Replace(b, "spawn_penalty: 30", "spawn_penalty: -30", 1), "spawn_penalty: -30 must be 0 or more"},
		{"misspelt_parameter", strings.Replace(b, "beacon_burst_gap_ms:", "beacon_gap_ms:", 1), "field beacon_gap_ms not found"},
		{"behaviour_code_missing", cut(b, "- code: pkg.behavior.beacon", "# exfiltration_resilience"), "probe emits pkg.behavior.beacon, which is not in the catalog"},
		{"behaviour_code_wrong_dimension", strings.Replace(b, "dimension: exfiltration_resilience", "dimension: secret_handling", 1),
			"code pkg.behavior.canary_exfiltration: catalogued under \"secret_handling\", but emitted by dimension \"exfiltration_resilience\""},
		{"behaviour_code_without_remediation", strings.Replace(b, `    remediation: >-
      Do not install this version until the address is explained; block it
      and review the code that connects to it.
`, "", 1), `"pkg.behavior.egress.literal_ip": a finding needs a remediation`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == b {
				t.Fatal("the mutation changed nothing")
			}
			_, err := parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse error:\n%v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestCatalogCoversProbes checks, independently of validate, that every
// code a probe can emit under each rubric version is catalogued with the
// probe's dimension and kind, and that the catalog holds nothing else.
func TestCatalogCoversProbes(t *testing.T) {
	for _, v := range Versions() {
		r := mustLoad(t, v)
		emitted := map[string]bool{}
		for _, d := range r.Dimensions {
			for code, kind := range scorers[d.ID].emitsFor(d, r.Version) {
				emitted[code] = true
				def, ok := r.Code(code)
				if !ok {
					t.Errorf("v%s %s: %s missing from the catalog", v, d.ID, code)
					continue
				}
				if def.Dimension != d.ID || def.Kind != kind || def.Graded != scorers[d.ID].graded[code] {
					t.Errorf("v%s %s: catalog has dimension %s kind %s graded %v, probe %s kind %s graded %v", v, code, def.Dimension, def.Kind, def.Graded,
						d.ID, kind, scorers[d.ID].graded[code])
				}
			}
		}
		for _, c := range r.Codes {
			if !emitted[c.Code] {
				t.Errorf("v%s: %s is catalogued but no probe emits it", v, c.Code)
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
