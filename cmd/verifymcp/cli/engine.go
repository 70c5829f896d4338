package cli

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"os"
	"time"
)

// caBundle is the CA bundle an operator configured, if any.
type caBundle struct {
	Path   string
	Data   []byte
	SHA256 string
	Certs  int
}

// loadCABundle reads the bundle named by the flag or VERIFYMCP_CA_BUNDLE.
// An empty path means no bundle (the default).
func loadCABundle(path string) (*caBundle, error) {
	if path == "" {
		path = os.Getenv("VERIFYMCP_CA_BUNDLE")
	}
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("CA bundle: %v", err)
	}
	n := 0
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(block.Bytes); err == nil {
				n++
			}
		}
	}
	if n == 0 {
		return nil, usagef("CA bundle %s holds no PEM certificate", path)
	}
	sum := sha256.Sum256(data)
	return &caBundle{Path: path, Data: data, SHA256: hex.EncodeToString(sum[:]), Certs: n}, nil
}

// httpClient returns the host-side HTTP client for the registry: the
// system roots plus the operator's CA bundle, if any. A zero timeout leaves
// the bound to the caller (image downloads bound each request themselves).
func httpClient(ca *caBundle, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if ca != nil {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(ca.Data)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}
