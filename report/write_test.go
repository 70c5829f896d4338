package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	rep := build(t, loadBundle(t, fixtures[0]))
	for _, tc := range []struct {
		format Format
		write  func(*bytes.Buffer) error
	}{
		{FormatJSON, func(b *bytes.Buffer) error { return WriteJSON(b, rep) }},
		{FormatTable, func(b *bytes.Buffer) error { return WriteTable(b, rep) }},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			f, err := ParseFormat(OutputOther, string(tc.format))
			if err != nil {
				t.Fatal(err)
			}
			var got, want bytes.Buffer
			if err := Write(&got, f, rep); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(&want); err != nil {
				t.Fatal(err)
			}
			if d := textEqual(want.Bytes(), got.Bytes()); d != "" {
				t.Errorf("Write(%s) (-want +got):\n%s", tc.format, d)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"", "yaml", "JSON", "sarif"} {
		t.Run("rejects_"+s, func(t *testing.T) {
			if _, err := ParseFormat(OutputOther, s); err == nil {
				t.Errorf("ParseFormat(%q) = nil error", s)
			}
		})
	}
	_, err := ParseFormat(OutputOther, "xml")
	if got, want := err.Error(), `must be table or json, not "xml"`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	// Each output accepts its own formats and names them in its error as
	// it always has.
	for _, tc := range []struct {
		o       Output
		formats string
		err     string
	}{
		{OutputOther, "table json", `must be table or json, not "xml"`},
		{OutputPackageReport, "table json markdown html sarif", `must be table, json, markdown, html, sarif, not "xml"`},
		{OutputConfigReport, "table json sarif", `must be table, json or sarif, not "xml"`},
	} {
		for _, name := range strings.Fields(tc.formats) {
			if f, err := ParseFormat(tc.o, name); err != nil || string(f) != name {
				t.Errorf("ParseFormat(%d, %q) = %q, %v", tc.o, name, f, err)
			}
		}
		var names []string
		for _, f := range formatsOf(tc.o) {
			names = append(names, string(f))
		}
		if got := strings.Join(names, " "); got != tc.formats {
			t.Errorf("formatsOf(%d) = %s, want %s", tc.o, got, tc.formats)
		}
		if _, err := ParseFormat(tc.o, "xml"); err == nil || err.Error() != tc.err {
			t.Errorf("ParseFormat(%d, xml) = %v, want %s", tc.o, err, tc.err)
		}
	}
	if err := Write(&bytes.Buffer{}, Format("xml"), Report{}); err == nil {
		t.Error("Write of an unknown format = nil error")
	}
	// Other commands' formats stay table and json.
	if fs := formatsOf(OutputOther); len(fs) != 2 {
		t.Errorf("formatsOf(OutputOther) = %v", fs)
	}
	// An output with no SARIF form says so. (The package report has one:
	// see TestWriteSARIFFormat.)
	for name, err := range map[string]error{
		"pin": WritePin(&bytes.Buffer{}, FormatSARIF, PinView{}),
	} {
		if err == nil || !strings.Contains(err.Error(), "sarif is only for config findings") {
			t.Errorf("%s in sarif: %v", name, err)
		}
	}
}
