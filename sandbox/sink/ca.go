//go:build linux

package sink

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// runCA is the certificate authority of one Serve call. Its key and the
// leaves' key exist only in this process's memory: they are never
// written to a file, an event or a log, and die with the Serve call.
type runCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM string
	// leafKey is the key of every leaf this CA signs.
	leafKey *ecdsa.PrivateKey

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// maxLeafCache bounds the leaves kept for reuse; past it the cache
// starts over, so that a client sending endless distinct names costs
// signatures, not memory.
const maxLeafCache = 1024

// caValidity is how long a run's CA and leaves are valid from now; they
// are valid from an hour ago, for clocks a little off.
const caValidity = 24 * time.Hour

// newRunCA makes a fresh CA and leaf key.
func newRunCA() (*runCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sink ca: generate key: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sink ca: generate leaf key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "verifymcp sandbox run CA", Organization: []string{"verifymcp sandbox"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sink ca: create certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("sink ca: parse certificate: %w", err)
	}
	return &runCA{
		cert:    cert,
		key:     key,
		certPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		leafKey: leafKey,
		leaves:  map[string]*tls.Certificate{},
	}, nil
}

// randomSerial returns a positive random 128-bit serial number.
func randomSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("sink ca: serial number: %w", err)
	}
	return serial.Add(serial, big.NewInt(1)), nil
}

// leaf returns a certificate for name (a DNS name, or an IP address
// when it parses as one) and ip (when valid), signed by the CA, minting
// it the first time.
func (ca *runCA) leaf(name string, ip netip.Addr) (*tls.Certificate, error) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	key := name + "|" + ip.String()
	ca.mu.Lock()
	if c, ok := ca.leaves[key]; ok {
		ca.mu.Unlock()
		return c, nil
	}
	ca.mu.Unlock()

	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    ca.cert.NotBefore,
		NotAfter:     ca.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if a, err := netip.ParseAddr(name); err == nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
	} else if name != "" {
		tmpl.DNSNames = []string{name}
		tmpl.Subject.CommonName = name[:min(len(name), 64)]
	}
	if ip.IsValid() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
	}
	if len(tmpl.DNSNames) == 0 && len(tmpl.IPAddresses) == 0 {
		return nil, fmt.Errorf("sink ca: no name or address to issue a certificate for")
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, ca.leafKey.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("sink ca: certificate for %q: %w", name, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: ca.leafKey}

	ca.mu.Lock()
	defer ca.mu.Unlock()
	if len(ca.leaves) >= maxLeafCache {
		clear(ca.leaves)
	}
	ca.leaves[key] = c
	return c, nil
}
