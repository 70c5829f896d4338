package dnssec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
)

func TestRootAnchor(t *testing.T) {
	a := dnssec.RootAnchor()
	type ds struct {
		Tag         uint16
		Alg, Digest uint8
		Hex         string
	}
	var got []ds
	for _, d := range a.DS {
		got = append(got, ds{d.KeyTag, d.Algorithm, d.DigestType, strings.ToUpper(d.Digest)})
	}
	// https://data.iana.org/root-anchors/root-anchors.xml
	want := []ds{
		{20326, 8, 2, "E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"},
		{38696, 8, 2, "683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("root DS records (-want +got):\n%s", diff)
	}
	if a.Zone != "." || a.Source != dnssec.RootSource {
		t.Errorf("zone %q, source %q", a.Zone, a.Source)
	}
}

func TestParseAnchor(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	wantDS := h.AnchorDS()[0]

	t.Run("ds", func(t *testing.T) {
		a, err := dnssec.ParseAnchor(strings.NewReader(h.Anchors()), "x")
		if err != nil {
			t.Fatal(err)
		}
		if a.Zone != "." || len(a.DS) != 1 || a.DS[0].String() != wantDS.String() {
			t.Errorf("got zone %q, DS %v; want %v", a.Zone, a.DS, wantDS)
		}
	})
	t.Run("dnskey_becomes_sha256_ds", func(t *testing.T) {
		a, err := dnssec.ParseAnchor(strings.NewReader(h.AnchorKeys()), "x")
		if err != nil {
			t.Fatal(err)
		}
		if len(a.DS) != 1 || !strings.EqualFold(a.DS[0].Digest, wantDS.Digest) || a.DS[0].KeyTag != wantDS.KeyTag {
			t.Errorf("DS from DNSKEY = %v, want %v", a.DS, wantDS)
		}
	})
	t.Run("other_zone", func(t *testing.T) {
		text := "; comment\nvmcp. 3600 IN DS 1234 13 2 " + strings.Repeat("ab", 32) + "\n"
		a, err := dnssec.ParseAnchor(strings.NewReader(text), "x")
		if err != nil {
			t.Fatal(err)
		}
		if a.Zone != "vmcp." {
			t.Errorf("zone = %q, want vmcp.", a.Zone)
		}
	})

	bad := map[string]string{
		"empty":          "; nothing here\n",
		"two_zones":      h.Anchors() + "vmcp. IN DS 1234 13 2 " + strings.Repeat("ab", 32) + "\n",
		"wrong_type":     ". IN A 192.0.2.1\n",
		"not_a_zone_key": ". IN DNSKEY 0 3 13 " + strings.Fields(h.AnchorKeys())[7] + "\n",
		"garbage":        ". IN DS what is this\n",
	}
	for name, text := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := dnssec.ParseAnchor(strings.NewReader(text), "x"); !errors.Is(err, dnssec.ErrBadAnchor) {
				t.Errorf("err = %v, want ErrBadAnchor", err)
			}
		})
	}
}

func TestLoadAnchorDNSKEYFileValidates(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{})
	path := filepath.Join(t.TempDir(), "root.key")
	if err := os.WriteFile(path, []byte(h.AnchorKeys()), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := dnssec.LoadAnchor(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dnssec.New(dnssec.Config{Resolver: h.Addr(), Anchor: a})
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Validate(context.Background(), domains(dnssectest.SecureHost))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != dnssec.RunObserved || res.Domains[0].Status != dnssec.StatusSecure || res.Anchor.Source != path {
		t.Errorf("status %q, %s %s, anchor source %q", res.Status, res.Domains[0].Name, res.Domains[0].Status, res.Anchor.Source)
	}
	if _, err := dnssec.LoadAnchor(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("LoadAnchor of a missing file succeeded")
	}
}
