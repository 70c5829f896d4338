package report

import (
	"bytes"
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
}
