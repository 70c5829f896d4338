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
			f, err := ParseFormat(string(tc.format))
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
			if _, err := ParseFormat(s); err == nil {
				t.Errorf("ParseFormat(%q) = nil error", s)
			}
		})
	}
	_, err := ParseFormat("xml")
	if got, want := err.Error(), `must be table or json, not "xml"`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if err := Write(&bytes.Buffer{}, Format("xml"), Report{}); err == nil {
		t.Error("Write of an unknown format = nil error")
	}
	// Other commands' formats stay table and json.
	if len(Formats()) != 2 {
		t.Errorf("Formats() = %v", Formats())
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
