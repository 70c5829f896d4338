package configreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/verifymcp/verifymcp/internal/sariftest"
	"github.com/verifymcp/verifymcp/report"
)

// checkSARIF validates data against the SARIF schema and GitHub code
// scanning's documented limits.
func checkSARIF(t *testing.T, name string, data []byte) {
	t.Helper()
	sariftest.Check(t, filepath.Join("..", "schema", "sarif-2.1.0.json"), name, data)
}

// The config report's SARIF, written by WriteConfig (placed from this
// machine's working directory and home) and by WriteConfigSARIF with a
// file in the repository and one outside it, meets the bars of every SARIF
// output: the SARIF 2.1.0 schema and GitHub code scanning's limits.
func TestConfigSARIFValidates(t *testing.T) {
	checkSARIF(t, "config output", writeConfig(t, report.FormatSARIF, configReport(t)))
	checkSARIF(t, "config output with a root", writeConfigSARIF(t, configReport(t), configSARIFOptions))
	checkSARIF(t, "config output with no root", writeConfigSARIF(t, configReport(t), report.SARIFOptions{}))
	// A file named relative to the working directory stays relative.
	in := configInput()
	for i := range in.Findings {
		in.Findings[i].File = "./.cursor/mcp.json"
	}
	r, err := NewConfigReport(in)
	if err != nil {
		t.Fatal(err)
	}
	data := writeConfigSARIF(t, r, report.SARIFOptions{})
	checkSARIF(t, "config output of a relative file", data)
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					Physical *struct {
						Artifact struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	for i, res := range log.Runs[0].Results {
		if ph := res.Locations[0].Physical; ph == nil || ph.Artifact.URI != ".cursor/mcp.json" {
			t.Errorf("result %d: physical location %+v, want .cursor/mcp.json", i, ph)
		}
	}
	committed, err := os.ReadFile(filepath.Join("testdata", "config.sarif.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, "golden config.sarif.json", committed)
}
