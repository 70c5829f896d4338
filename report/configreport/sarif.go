package configreport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/verifymcp/verifymcp/report"
	"github.com/verifymcp/verifymcp/rubric"
)

// WriteConfigSARIF writes r as SARIF 2.1.0: one run of the verifymcp
// driver, one rule per code of the config catalog the findings come from,
// one result per finding at its file and line. The file stands by its path
// relative to o.Root when it is in the repository, else (~/.cursor/mcp.json
// is in none) at a stand-in path, .verifymcp/config/home/.cursor/mcp.json
// (see report.SARIFConfigLocation), with its real path in the result's properties:
// GitHub code scanning takes no absolute path. The run's properties name
// the catalog and repeat the report's statement, since a SARIF viewer
// showing no result must not be read as a clean configuration.
func WriteConfigSARIF(w io.Writer, r ConfigReport, o report.SARIFOptions) error {
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
	driver := report.SARIFDriver(r.Tool.Name, r.Tool.Version)
	run := sarif.NewRun(sarif.Tool{Driver: driver})
	index, seen := map[string]int{}, map[string]int{}
	for i, c := range cat.Codes {
		driver.Rules = append(driver.Rules, report.SARIFConfigRule(c))
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
		res := sarif.NewRuleResult(f.Code).WithLevel(report.SARIFLevel(f.Severity)).WithMessage(sarif.NewTextMessage(text))
		if i, ok := index[f.Code]; ok {
			res.WithRuleIndex(i)
		}
		res.AddLocation(report.SARIFConfigLocation(o, f.File, f.Line))
		// A config finding is the same finding while its code, file,
		// server and key are, whatever line it moved to.
		sum := sha256.Sum256([]byte(f.Code + "\x00" + f.File + "\x00" + f.Server + "\x00" + f.Key))
		key := hex.EncodeToString(sum[:])
		seen[key]++
		n := strconv.Itoa(seen[key])
		res.PartialFingerprints = map[string]any{report.FingerprintKey: key + ":" + n, report.FingerprintKeyGitHub: key[:16] + ":" + n}
		if f.Ignored != nil {
			res.Suppressions = []*sarif.Suppression{report.SARIFSuppression(f.Ignored, key, o.Root)}
		}
		props := sarif.Properties{"severity": f.Severity, "server": f.Server, "file": report.Clean(f.File)}
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
	return report.EncodeSARIF(w, log)
}
