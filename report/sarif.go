package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/verifymcp/verifymcp/rubric"
)

// SARIFVersion is the SARIF version the config report is written in.
const SARIFVersion = string(sarif.Version210)

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

// writeConfigSARIF writes r as SARIF 2.1.0: one run of the verifymcp
// driver, one rule per code of the config catalog the findings come from,
// one result per finding at its file and line. The run's properties name
// the catalog and repeat the report's statement, since a SARIF viewer
// showing no result must not be read as a clean configuration.
func writeConfigSARIF(w io.Writer, r ConfigReport) error {
	cat := rubric.ConfigCatalog()
	if cat.Version != r.Catalog.Version || cat.Hash != r.Catalog.Hash {
		c, err := rubric.LoadConfigCatalog(r.Catalog.Version)
		if err != nil || c.Hash != r.Catalog.Hash {
			return fmt.Errorf("report: sarif: the report's catalog v%s %s is not embedded in this build", r.Catalog.Version, r.Catalog.Hash)
		}
		cat = c
	}
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return fmt.Errorf("report: sarif: %w", err)
	}
	driver := sarif.NewVersionedDriver(r.Tool.Name, r.Tool.Version)
	if driver.Name == "" {
		driver.Name = "verifymcp"
	}
	run := sarif.NewRun(sarif.Tool{Driver: driver})
	index := map[string]int{}
	for i, c := range cat.Codes {
		rule := sarif.NewRule(c.Code).
			WithShortDescription(sarif.NewMultiformatMessageString(c.Description)).
			WithHelp(sarif.NewMultiformatMessageString(c.Remediation)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(string(c.Severity))))
		rule.WithProperties(sarif.Properties{"severity": string(c.Severity)})
		driver.AddRule(rule)
		index[c.Code] = i
	}
	for _, f := range r.Findings {
		text := f.Message
		if f.Evidence != "" {
			if text != "" {
				text += " "
			}
			text += "Evidence: " + f.Evidence
		}
		res := sarif.NewRuleResult(f.Code).WithLevel(sarifLevel(f.Severity)).WithMessage(sarif.NewTextMessage(text))
		if i, ok := index[f.Code]; ok {
			res.WithRuleIndex(i)
		}
		loc := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(filepath.ToSlash(f.File)))
		if f.Line > 0 {
			loc.WithRegion(sarif.NewRegion().WithStartLine(f.Line))
		}
		res.AddLocation(sarif.NewLocationWithPhysicalLocation(loc))
		props := sarif.Properties{"severity": f.Severity, "server": f.Server}
		if f.Key != "" {
			props["key"] = f.Key
		}
		res.PropertyBag.Properties = props
		run.AddResult(res)
	}
	run.PropertyBag.Properties = sarif.Properties{
		"schema_version":  r.SchemaVersion,
		"run_date":        r.Run.Date,
		"catalog_version": r.Catalog.Version,
		"catalog_hash":    r.Catalog.Hash,
		"statement":       r.Summary.Statement,
	}
	log.AddRun(run)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(log); err != nil {
		return fmt.Errorf("report: sarif: %w", err)
	}
	return nil
}
