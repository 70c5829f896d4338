//go:build linux

package sink

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestRunCAPerServe(t *testing.T) {
	type run struct {
		cert           *x509.Certificate
		caKey, leafKey *ecdsa.PrivateKey
		ready          Event
	}
	var runs [2]run
	for i := range runs {
		r := &runs[i]
		h := startSink(t, Config{onCA: func(cert *x509.Certificate, caKey, leafKey *ecdsa.PrivateKey) {
			r.cert, r.caKey, r.leafKey = cert, caKey, leafKey
		}})
		r.ready = h.ready
		if err := h.stop(); err != nil {
			t.Fatal(err)
		}
	}
	a, b := runs[0], runs[1]
	if a.ready.CACert == b.ready.CACert || a.cert.SerialNumber.Cmp(b.cert.SerialNumber) == 0 || a.caKey.Equal(b.caKey) || a.leafKey.Equal(b.leafKey) || a.caKey.Equal(a.leafKey) {
		t.Error("two Serve runs share a CA certificate, serial or key, or the CA signs with the leaves' key")
	}
	for i, r := range runs {
		block, _ := pem.Decode([]byte(r.ready.CACert))
		if block == nil || block.Type != "CERTIFICATE" {
			t.Fatalf("run %d: ready ca_cert = %q, want a PEM certificate", i, r.ready.CACert)
		}
		published, err := x509.ParseCertificate(block.Bytes)
		if err != nil || !published.Equal(r.cert) {
			t.Errorf("run %d: the published CA is not the run's CA (%v)", i, err)
		}
		c := r.cert
		if !c.IsCA || !c.BasicConstraintsValid || c.MaxPathLen != 0 || !c.MaxPathLenZero || c.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Errorf("run %d: CA IsCA %v MaxPathLen %d zero %v usage %v, want a path-length-0 signing CA", i, c.IsCA, c.MaxPathLen, c.MaxPathLenZero, c.KeyUsage)
		}
		if c.PublicKeyAlgorithm != x509.ECDSA || c.Subject.CommonName != "verifymcp sandbox run CA" {
			t.Errorf("run %d: CA key %v subject %q", i, c.PublicKeyAlgorithm, c.Subject)
		}
		if now := time.Now(); c.NotBefore.After(now) || c.NotAfter.Before(now.Add(23*time.Hour)) || c.NotAfter.Sub(c.NotBefore) > 26*time.Hour {
			t.Errorf("run %d: CA valid %v to %v, want from before now for about a day", i, c.NotBefore, c.NotAfter)
		}
		j, _ := json.Marshal(r.ready)
		if strings.Contains(string(j), "PRIVATE KEY") {
			t.Errorf("run %d: the ready event carries a PEM private key", i)
		}
		for _, k := range []*ecdsa.PrivateKey{r.caKey, r.leafKey} {
			for _, m := range keyMaterial(k) {
				if strings.Contains(string(j), m) {
					t.Errorf("run %d: the ready event carries private key bytes", i)
				}
			}
		}
	}
}

// keyMaterial is how a private key could show up in an event.
func keyMaterial(k *ecdsa.PrivateKey) []string {
	d, err := k.Bytes()
	if err != nil {
		panic(err)
	}
	return []string{string(d), hex.EncodeToString(d), base64.StdEncoding.EncodeToString(d), base64.RawStdEncoding.EncodeToString(d)}
}

func TestLeaf(t *testing.T) {
	ca, err := newRunCA()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	verify := func(c *tls.Certificate, name string) error {
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			return err
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
	named, err := ca.leaf("API.Example.org.", netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(named, "api.example.org"); err != nil {
		t.Errorf("leaf for a name: %v", err)
	}
	if err := verify(named, "other.example.org"); err == nil {
		t.Error("leaf for api.example.org verifies for another name")
	}
	if again, _ := ca.leaf("api.example.org", netip.Addr{}); again != named {
		t.Error("the same name minted a second leaf instead of the cached one")
	}
	both, err := ca.leaf("named.example", netip.MustParseAddr("198.18.0.5"))
	if err != nil || verify(both, "named.example") != nil || verify(both, "198.18.0.5") != nil {
		t.Errorf("leaf for a looked-up name and its address: %v", err)
	}
	ipOnly, err := ca.leaf("", netip.MustParseAddr("127.0.0.1"))
	if err != nil || verify(ipOnly, "127.0.0.1") != nil {
		t.Errorf("leaf for an address only: %v", err)
	}
	if _, err := ca.leaf("", netip.Addr{}); err == nil {
		t.Error("leaf for no name and no address succeeded")
	}
	if _, err := ca.leaf("bäd.example", netip.Addr{}); err == nil {
		t.Error("leaf for a name that is not IA5 text succeeded")
	}
	for i := range maxLeafCache + 10 {
		if _, err := ca.leaf(fmt.Sprintf("n%d.example", i), netip.Addr{}); err != nil {
			t.Fatal(err)
		}
	}
	ca.mu.Lock()
	n := len(ca.leaves)
	ca.mu.Unlock()
	if n > maxLeafCache {
		t.Errorf("leaf cache holds %d, want at most %d", n, maxLeafCache)
	}
}
