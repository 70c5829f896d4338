package rubric

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// wantConfigCodes are the codes of config catalog v1 and their severities.
var wantConfigCodes = map[string]Severity{
	"cfg.credential.literal":   SeverityHigh,
	"cfg.credential.reference": SeverityInfo,
	"cfg.launch.unpinned":      SeverityMedium,
	"cfg.launch.pinned":        SeverityInfo,
	"cfg.reach.local_process":  SeverityInfo,
	"cfg.reach.loopback":       SeverityInfo,
	"cfg.reach.remote":         SeverityLow,
	"cfg.filesystem.broad":     SeverityMedium,
	"cfg.transport.plaintext":  SeverityHigh,
}

func TestConfigCatalogLoads(t *testing.T) {
	c := ConfigCatalog()
	if c.Version != "1" || ConfigCatalogVersion != "1" {
		t.Errorf("version = %q, want 1", c.Version)
	}
	data, err := os.ReadFile(filepath.Join("config", "v1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); c.Hash != want {
		t.Errorf("hash = %s, want the file's %s", c.Hash, want)
	}
	if c.Description == "" {
		t.Error("no description")
	}
	if len(c.Codes) != len(wantConfigCodes) {
		t.Errorf("%d codes, want %d", len(c.Codes), len(wantConfigCodes))
	}
	if !slices.IsSortedFunc(c.Codes, func(a, b ConfigCode) int { return strings.Compare(a.Code, b.Code) }) {
		t.Error("codes are not sorted")
	}
	for code, sev := range wantConfigCodes {
		d, ok := c.Code(code)
		if !ok {
			t.Errorf("%s: not in the catalog", code)
			continue
		}
		if d.Severity != sev {
			t.Errorf("%s: severity %s, want %s", code, d.Severity, sev)
		}
		if d.Description == "" || d.Remediation == "" {
			t.Errorf("%s: description or remediation empty", code)
		}
	}
	if _, ok := c.Code("pkg.supply.osv.vulnerable"); ok {
		t.Error("a package code is in the config catalog")
	}
	if ConfigCatalog() != c {
		t.Error("ConfigCatalog() is not shared")
	}
	if got := ConfigCatalogVersions(); !slices.Equal(got, []string{"1"}) {
		t.Errorf("versions = %v", got)
	}
	// The header says what a config finding proves and that it scores nothing.
	head := string(data[:strings.Index(string(data), "\nversion:")])
	for _, want := range []string{"one-sided", "absence proves nothing", "no score"} {
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(head, "#", " ")), " "), want) {
			t.Errorf("header comment lacks %q", want)
		}
	}
}

func TestLoadConfigCatalogVersions(t *testing.T) {
	c, err := LoadConfigCatalog("v1")
	if err != nil {
		t.Fatal(err)
	}
	if c == ConfigCatalog() || c.Hash != ConfigCatalog().Hash {
		t.Error("LoadConfigCatalog must return a new catalog of the same file")
	}
	if _, err := LoadConfigCatalog("99"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("LoadConfigCatalog(99) = %v, want ErrUnknownVersion", err)
	}
}

var safeWordConfig = regexp.MustCompile(`(?i)\bsafe\b`)

func TestConfigCatalogNeverSaysSafe(t *testing.T) {
	c := ConfigCatalog()
	texts := []string{c.Description}
	for _, d := range c.Codes {
		texts = append(texts, d.Description, d.Remediation)
	}
	for _, s := range texts {
		if safeWordConfig.MatchString(s) {
			t.Errorf("says safe: %q", s)
		}
	}
}

func TestParseConfigCatalogRejects(t *testing.T) {
	const good = `version: "1"
description: what a file proves
codes:
  - code: cfg.credential.literal
    severity: high
    description: a literal credential
    remediation: move it
  - code: cfg.reach.remote
    severity: low
    description: remote
    remediation: know the host
`
	if _, err := ParseConfigCatalog([]byte(good)); err != nil {
		t.Fatalf("the good file is rejected: %v", err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"unknown_field", "    remediation: move it\n", "    remediation: move it\n    weight: 3\n", "field weight not found"},
		{"unknown_top_field", "description: what", "score: 10\ndescription: what", "field score not found"},
		{"pkg_code", "cfg.credential.literal", "pkg.credential.literal", "does not match"},
		{"upper_case_code", "cfg.credential.literal", "cfg.Credential.literal", "does not match"},
		{"undotted_code", "cfg.credential.literal", "cfg.credential", "does not match"},
		{"missing_remediation", "    remediation: move it\n", "", "remediation missing"},
		{"blank_remediation", "remediation: move it", "remediation: \"  \"", "remediation missing"},
		{"missing_description", "    description: remote\n", "", "description missing"},
		{"bad_severity", "severity: low", "severity: none", "unknown severity"},
		{"duplicate", "cfg.reach.remote", "cfg.credential.literal", "duplicate code"},
		{"no_version", "version: \"1\"\n", "", "version: missing"},
		{"no_codes", good[strings.Index(good, "codes:"):], "codes: []\n", "codes: none"},
		{"second_document", "know the host\n", "know the host\n---\nversion: \"2\"\n", "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := strings.Replace(good, tt.old, tt.new, 1)
			if bad == good {
				t.Fatalf("the mutation %q did not apply", tt.old)
			}
			_, err := ParseConfigCatalog([]byte(bad))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
	if _, err := ParseConfigCatalog(nil); err == nil {
		t.Error("an empty file is accepted")
	}
}
