package configreport

import (
	"bytes"
	"testing"

	"github.com/verifymcp/verifymcp/report"
)

// TestConfigTableWrapped: the config table at 80 columns is the table
// WriteConfig writes, wrapped: the same text, no finding line wider.
func TestConfigTableWrapped(t *testing.T) {
	r := configReport(t)
	var full, wrapped bytes.Buffer
	if err := WriteConfig(&full, report.FormatTable, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteConfigFor(&wrapped, report.FormatTable, r, report.TableOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	golden(t, "config_80.table.txt", wrapped.Bytes(), textEqual)
	if noSpace(full.String()) != noSpace(wrapped.String()) {
		t.Error("the config table at 80 columns is not WriteConfig's table wrapped")
	}
	out := wrapped.String()
	findings := out[bytes.Index(wrapped.Bytes(), []byte("\nFINDINGS")):bytes.Index(wrapped.Bytes(), []byte("\nTARGETS"))]
	checkWrapped(t, findings, 80)
	var js bytes.Buffer
	if err := WriteConfigFor(&js, report.FormatJSON, r, report.TableOptions{Width: 80}); err != nil || !bytes.Equal(js.Bytes(), writeConfig(t, report.FormatJSON, r)) {
		t.Errorf("JSON through WriteConfigFor differs from WriteConfig's (%v)", err)
	}
}
