package supplytest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// WellKnownDoc is what a domain serves at /.well-known/mcp-registry-auth:
// a status (200 when 0) and a body.
type WellKnownDoc struct {
	Status int
	Body   string
}

// WellKnown serves the MCP registry's HTTP key documents of several
// domains over HTTPS on loopback, with a certificate for whatever name a
// client asks for (SNI), issued by a certificate authority made at start.
// Client returns an HTTP client that reaches the fake for any host and
// trusts that authority; a domain it does not serve answers 404, as a web
// server without the document does.
type WellKnown struct {
	srv  *httptest.Server
	docs map[string]WellKnownDoc
	pool *x509.CertPool
	ca   *x509.Certificate
	key  *ecdsa.PrivateKey

	certMu sync.Mutex
	certs  map[string]*tls.Certificate

	mu   sync.Mutex
	seen []string
}

// NewWellKnown starts the fake for docs, keyed by domain.
func NewWellKnown(docs map[string]WellKnownDoc) *WellKnown {
	w := &WellKnown{docs: map[string]WellKnownDoc{}, certs: map[string]*tls.Certificate{}}
	for d, doc := range docs {
		w.docs[strings.ToLower(d)] = doc
	}
	w.ca, w.key = newCA()
	w.pool = x509.NewCertPool()
	w.pool.AddCert(w.ca)
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.TLS = &tls.Config{GetCertificate: w.certificate, MinVersion: tls.VersionTLS12}
	w.srv.StartTLS()
	return w
}

// certificate issues (once per name) a certificate for the name the
// client asked for.
func (w *WellKnown) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := strings.ToLower(hello.ServerName)
	if name == "" {
		name = "localhost"
	}
	w.certMu.Lock()
	defer w.certMu.Unlock()
	if c, ok := w.certs[name]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(w.certs) + 2)),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, w.ca, &key.PublicKey, w.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	w.certs[name] = c
	return c, nil
}

// Client reaches the fake whatever host a URL names, and trusts its
// certificate; timeout bounds each request.
func (w *WellKnown) Client(timeout time.Duration) *http.Client {
	addr := w.srv.Listener.Addr().String()
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: w.pool, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// Close stops the fake.
func (w *WellKnown) Close() { w.srv.Close() }

// Seen lists "host path" of each request received, in order.
func (w *WellKnown) Seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

func (w *WellKnown) serve(rw http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	w.mu.Lock()
	w.seen = append(w.seen, host+" "+r.URL.Path)
	w.mu.Unlock()
	doc, ok := w.docs[host]
	if !ok || r.URL.Path != "/.well-known/mcp-registry-auth" {
		http.NotFound(rw, r)
		return
	}
	status := doc.Status
	if status == 0 {
		status = http.StatusOK
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = rw.Write([]byte(doc.Body))
}

// newCA makes a certificate authority for the fake's certificates.
func newCA() (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "supplytest well-known CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return ca, key
}
