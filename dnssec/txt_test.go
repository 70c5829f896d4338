package dnssec_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/verifymcp/verifymcp/dnssec"
	"github.com/verifymcp/verifymcp/dnssec/dnssectest"
)

// mcpKey is a registry key record as publishers write it at their domain's
// apex (the MCP registry's DNS authentication: "v=MCPv1; k=ed25519;
// p=<base64 Ed25519 public key>"); the key is a made-up 32 bytes.
const mcpKey = "v=MCPv1; k=ed25519; p=oYoH6OqAQ4bkmuUTJc8AB39ZVw2cRBEfUx+/h8M3Fvk="

// txtRecords are the TXT records the hierarchy of TestLookupTXT serves: a
// signed apex with the registry key beside an SPF record (the key split
// into two strings, as zone editors split long values), an unsigned zone
// with the key, a zone whose signatures expired, and a signed name a CNAME
// points at.
var txtRecords = map[string]string{
	dnssectest.SecureZone:   "@ TXT \"v=spf1 include:_spf.example.net ~all\"\n@ TXT \"v=MCPv1; k=ed25519; \" \"p=oYoH6OqAQ4bkmuUTJc8AB39ZVw2cRBEfUx+/h8M3Fvk=\"\n",
	dnssectest.UnsignedZone: "@ TXT \"" + mcpKey + "\"\n",
	dnssectest.ExpiredZone:  "@ TXT \"" + mcpKey + "\"\n",
	dnssectest.Ed25519Zone:  "www TXT \"" + mcpKey + "\"\n",
}

func TestLookupTXT(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{Records: txtRecords})
	v := newValidator(t, h, nil)
	tests := []struct {
		name    string
		status  dnssec.Status
		reason  dnssec.BogusReason
		exists  dnssec.Existence
		records []string
		cnames  []string
	}{
		{name: dnssectest.SecureZone, status: secure, exists: dnssec.ExistsYes,
			records: []string{"v=spf1 include:_spf.example.net ~all", mcpKey}},
		// A name with an A record and no TXT: a signed NODATA.
		{name: dnssectest.SecureHost, status: secure, exists: dnssec.ExistsYes, records: []string{}},
		{name: dnssectest.NXDomainNSEC, status: secure, exists: dnssec.ExistsNo, records: []string{}},
		{name: dnssectest.NXDomainNSEC3, status: secure, exists: dnssec.ExistsNo, records: []string{}},
		// Below an unsigned delegation the data is served but not
		// authenticated: kept, and said to be insecure.
		{name: dnssectest.UnsignedZone, status: dnssec.StatusInsecure, exists: dnssec.ExistsYes, records: []string{mcpKey}},
		// Expired signatures: bogus, and the records are not kept.
		{name: dnssectest.ExpiredZone, status: dnssec.StatusBogus, reason: dnssec.BogusSignatureExpired, exists: dnssec.ExistsUnknown, records: []string{}},
		// A CNAME into another signed zone is followed.
		{name: dnssectest.CNAMESecure, status: secure, exists: dnssec.ExistsYes, records: []string{mcpKey}, cnames: []string{"www.ed.vmcp"}},
		// The weakest link: a signed CNAME to a name below an unsigned
		// delegation, which has no TXT.
		{name: dnssectest.CNAMEInsecure, status: dnssec.StatusInsecure, exists: dnssec.ExistsYes, records: []string{}, cnames: []string{"www.unsigned.vmcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := v.LookupTXT(context.Background(), tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.status || r.BogusReason != tt.reason || r.Exists != tt.exists ||
				!slices.Equal(r.Records, tt.records) || !slices.Equal(r.CNAMEs, tt.cnames) {
				t.Errorf("LookupTXT(%s) = %+v\nwant status %s %s, exists %s, records %q, cnames %q", tt.name, r, tt.status, tt.reason, tt.exists, tt.records, tt.cnames)
			}
		})
	}

	// A TXT question does not change what Validate says of the name.
	res, err := v.Validate(context.Background(), domains(dnssectest.SecureZone, dnssectest.NXDomainNSEC))
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Domains[0]; d.Status != secure || d.Exists != dnssec.ExistsYes {
		t.Errorf("Validate(%s) after LookupTXT = %+v", dnssectest.SecureZone, d)
	}
	if d := res.Domains[1]; d.Status != secure || d.Exists != dnssec.ExistsNo {
		t.Errorf("Validate(%s) after LookupTXT = %+v", dnssectest.NXDomainNSEC, d)
	}
}

// TestLookupTXTAnchorUnavailable: a resolver that filters or rewrites
// answers gives nothing to judge, which is an error, not an answer.
func TestLookupTXTAnchorUnavailable(t *testing.T) {
	h := newHierarchy(t, dnssectest.Options{Records: txtRecords})
	h.SetFilter(dnssectest.FilterNXDomain)
	v := newValidator(t, h, nil)
	r, err := v.LookupTXT(context.Background(), dnssectest.SecureZone)
	if !errors.Is(err, dnssec.ErrAnchorUnavailable) {
		t.Fatalf("err = %v, want ErrAnchorUnavailable", err)
	}
	if r.Status != dnssec.StatusIndeterminate || len(r.Records) != 0 {
		t.Errorf("result = %+v", r)
	}
}
