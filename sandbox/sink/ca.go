//go:build linux

package sink

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
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
}

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
