package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/verifymcp/verifymcp/rubric"
)

// SARIFVersion is the SARIF version every SARIF output is written in.
const SARIFVersion = string(sarif.Version210)

// InformationURI is the driver's informationUri in every SARIF output.
const InformationURI = "https://github.com/verifymcp/verifymcp"

// The bounds SARIF text is kept within. GitHub code scanning documents
// 255 characters for a rule's name and 1,024 for its short and full
// descriptions; a result's message has no documented bound, so it is
// kept to sarifMessageMax with the evidence clipped to sarifEvidenceMax.
const (
	sarifNameMax        = 255
	sarifDescriptionMax = 1024
	sarifMessageMax     = 4096
	sarifEvidenceMax    = 1000
)

// sarifLevel maps a severity to a SARIF level: critical and high are
// errors, medium a warning, low and info notes.
func sarifLevel(s string) string {
	switch rubric.Severity(s) {
	case rubric.SeverityCritical, rubric.SeverityHigh:
		return "error"
	case rubric.SeverityMedium:
		return "warning"
	default:
		return "note"
	}
}

// sarifDriver is the tool component of every SARIF output: the program's
// name (verifymcp when the evidence names none), its version when known,
// and the version again as semanticVersion when it is SemVer 2.0, which
// GitHub code scanning prefers for telling tool changes from code changes.
func sarifDriver(name, version string) *sarif.ToolComponent {
	if name == "" {
		name = "verifymcp"
	}
	d := &sarif.ToolComponent{Name: name, InformationURI: sarifString(InformationURI), Rules: []*sarif.ReportingDescriptor{}}
	if version != "" {
		d.Version = sarifString(version)
		if _, err := semver.StrictNewVersion(version); err == nil {
			d.SemanticVersion = sarifString(version)
		}
	}
	return d
}

// sarifRuleDef is what a rule is made of, from either catalog.
type sarifRuleDef struct {
	Code, Description, Remediation string
	Severity                       rubric.Severity
	// Dimension and Kind are the package catalog's; "" for config codes.
	Dimension string
	Kind      rubric.Kind
	Graded    bool
}

// sarifRule is the reporting descriptor of one reason code: id the code,
// name the code as an identifier, the description short and full, the
// remediation as help (text and Markdown), the default level from the
// catalog's severity, and the catalog's entry as properties. A measurement
// fires whatever its value and is no problem by itself: its default level
// is note (GitHub code scanning takes note, warning and error only) and
// its properties say it is a measurement.
func sarifRule(d sarifRuleDef) *sarif.ReportingDescriptor {
	full := d.Description
	props := sarif.Properties{"severity": string(d.Severity)}
	if d.Dimension != "" {
		props["dimension"] = d.Dimension
		full += fmt.Sprintf("\n\nDimension %s; kind %s; catalog severity %s.", d.Dimension, d.Kind, d.Severity)
	}
	if d.Kind != "" {
		props["kind"] = string(d.Kind)
	}
	if d.Graded {
		props["graded"] = true
		full += " Graded: each finding takes its severity from its evidence, up to the catalog's."
	}
	if d.Kind == rubric.KindMeasurement {
		props["measurement"] = true
		full += " A measurement: it is reported whatever its value, and is not a problem by itself."
	}
	help := d.Remediation
	if help == "" {
		// GitHub code scanning requires help text.
		help = "No remediation is given for this code."
		if d.Kind == rubric.KindMeasurement {
			help = "Nothing to remediate: a measurement reports a value, which its dimension scores."
		}
	}
	rule := &sarif.ReportingDescriptor{
		ID:                   d.Code,
		Name:                 sarifString(clipRunes(ruleName(d.Code), sarifNameMax)),
		ShortDescription:     sarif.NewMultiformatMessageString(clipRunes(d.Description, sarifDescriptionMax)),
		FullDescription:      sarif.NewMultiformatMessageString(clipRunes(full, sarifDescriptionMax)),
		DefaultConfiguration: &sarif.ReportingConfiguration{Level: sarifLevel(string(d.Severity))},
		Help:                 sarif.NewMultiformatMessageString(help).WithMarkdown(markdownText(help)),
		Properties:           props,
	}
	return rule
}

// ruleName is a code as an identifier: pkg.supply.osv.vulnerable is
// SupplyOsvVulnerable, cfg.credential.literal CfgCredentialLiteral.
func ruleName(code string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(strings.TrimPrefix(code, "pkg."), func(r rune) bool { return r == '.' || r == '_' || r == '-' }) {
		r, n := utf8.DecodeRuneInString(part)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(part[n:])
	}
	return b.String()
}

// markdownText escapes the characters Markdown would read as markup, so
// that a catalog's plain text renders as written.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|~#", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clipRunes keeps s within n runes, marking a cut with an ellipsis.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func sarifString(s string) *string { return &s }

// encodeSARIF writes log as indented JSON, characters special in HTML as
// they are.
func encodeSARIF(w io.Writer, log *sarif.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(log); err != nil {
		return fmt.Errorf("report: sarif: %w", err)
	}
	return nil
}
