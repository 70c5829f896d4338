//go:build linux

package sink

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// caPool returns a pool holding the CA the sink published.
func caPool(t *testing.T, h *harness) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(h.ready.CACert)) {
		t.Fatalf("ready event carries no usable CA certificate: %q", h.ready.CACert)
	}
	return pool
}

// tlsClient is an HTTPS client that dials the sink whatever the URL's
// host, and remembers the local port of its last connection.
type tlsClient struct {
	*http.Client
	mu   sync.Mutex
	port int
}

func (c *tlsClient) lastPort() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.port
}

// newTLSClient returns a client for h speaking HTTP/2 when h2 is set and
// HTTP/1.1 otherwise, trusting pool (the system roots when nil).
func newTLSClient(pool *x509.CertPool, h2 bool) *tlsClient {
	c := &tlsClient{}
	tr := &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			if _, err := netip.ParseAddr(host); err != nil {
				host = "127.0.0.1" // a name: the sink answers for all
			}
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp4", net.JoinHostPort(host, port))
			if err == nil {
				c.mu.Lock()
				c.port = localPort(conn)
				c.mu.Unlock()
			}
			return conn, err
		},
	}
	tr.Protocols = new(http.Protocols)
	if h2 {
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetHTTP1(true)
		tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	c.Client = &http.Client{Timeout: 5 * time.Second, Transport: tr}
	return c
}

func sinkURL(h *harness, host, path string) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(h.cfg.TCPPort)) + path
}

func TestTLSRequests(t *testing.T) {
	jsonBody := `{"token":"CANARY-JSON-1","nested":{"k":[1,2,3]}}`
	b64Body := base64.StdEncoding.EncodeToString([]byte("\x00\x01CANARY-B64\xff\xfe"))
	tests := []struct {
		name, body, ctype string
		h2                bool
	}{
		{name: "http1_json", body: jsonBody, ctype: "application/json"},
		{name: "http1_base64", body: b64Body, ctype: "text/plain"},
		{name: "h2_json", body: jsonBody, ctype: "application/json", h2: true},
		{name: "h2_base64", body: b64Body, ctype: "text/plain", h2: true},
	}
	h := startSink(t, Config{})
	pool := caPool(t, h)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTLSClient(pool, tc.h2)
			req, err := http.NewRequest(http.MethodPost, sinkURL(h, "api.example.org", "/v1/collect?id="+tc.name), strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.ctype)
			req.Header.Set("X-Canary", "CANARY-HDR-"+tc.name)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("https request to the sink with its CA trusted: %v", err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(got) != "{}" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("response = %d %q %q, want 200 {} application/json", resp.StatusCode, resp.Header.Get("Content-Type"), got)
			}
			wantALPN := "http/1.1"
			if tc.h2 {
				wantALPN = "h2"
			}
			if resp.TLS == nil || resp.TLS.NegotiatedProtocol != wantALPN {
				t.Errorf("negotiated %v, want %s", resp.TLS, wantALPN)
			}
			ev := h.wait(bySrcPort(TypeTCP, c.lastPort()), 3*time.Second)
			host := "api.example.org:" + strconv.Itoa(h.cfg.TCPPort)
			if ev.HTTPMethod != http.MethodPost || ev.HTTPTarget != "/v1/collect?id="+tc.name || ev.HTTPHost != host {
				t.Errorf("request = %s %s host %s, want POST /v1/collect?id=%s host %s", ev.HTTPMethod, ev.HTTPTarget, ev.HTTPHost, tc.name, host)
			}
			if string(ev.Body) != tc.body || ev.Truncated {
				t.Errorf("body = %q truncated %v, want %q", ev.Body, ev.Truncated, tc.body)
			}
			if hv := ev.HTTPHeaders["X-Canary"]; len(hv) != 1 || hv[0] != "CANARY-HDR-"+tc.name {
				t.Errorf("X-Canary = %v, want CANARY-HDR-%s (headers %v)", hv, tc.name, ev.HTTPHeaders)
			}
			if hv := ev.HTTPHeaders["Content-Type"]; len(hv) != 1 || hv[0] != tc.ctype {
				t.Errorf("Content-Type = %v, want %s", hv, tc.ctype)
			}
			if !ev.TLS || ev.SNI != "api.example.org" || ev.ALPN != wantALPN || ev.TLSRefused || ev.Error != "" {
				t.Errorf("tls = %v sni = %q alpn = %q refused = %v error = %q; want true, api.example.org, %s, false, none",
					ev.TLS, ev.SNI, ev.ALPN, ev.TLSRefused, ev.Error, wantALPN)
			}
			if len(ev.Data) != 0 || ev.Bytes <= int64(len(tc.body)) {
				t.Errorf("data = %d bytes, bytes = %d; want no data and the wire bytes counted", len(ev.Data), ev.Bytes)
			}
			if ev.DstIP != "127.0.0.1" || ev.DstPort != h.cfg.TCPPort || ev.Type != TypeTCP {
				t.Errorf("event %s to %s:%d, want tcp to 127.0.0.1:%d", ev.Type, ev.DstIP, ev.DstPort, h.cfg.TCPPort)
			}
		})
	}
}

func TestTLSH2SeveralRequests(t *testing.T) {
	h := startSink(t, Config{})
	pool := caPool(t, h)
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp4", "127.0.0.1:"+strconv.Itoa(h.cfg.TCPPort))
		},
	}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP2(true)
	client := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	for i := range 3 {
		resp, err := client.Post(sinkURL(h, "multi.example.org", "/r/"+strconv.Itoa(i)), "text/plain", strings.NewReader("body-"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	tr.CloseIdleConnections()
	srcPorts := map[int]bool{}
	for i := range 3 {
		ev := h.wait(func(ev Event) bool { return ev.HTTPTarget == "/r/"+strconv.Itoa(i) }, 3*time.Second)
		if string(ev.Body) != "body-"+strconv.Itoa(i) || ev.SNI != "multi.example.org" || ev.ALPN != "h2" || ev.DstPort != h.cfg.TCPPort {
			t.Errorf("request %d event = %+v, want its body, the SNI, h2 and the destination", i, ev)
		}
		srcPorts[ev.SrcPort] = true
	}
	if len(srcPorts) != 1 {
		t.Errorf("three requests over one h2 connection came from source ports %v, want one", srcPorts)
	}
	// The connection gives no event of its own once it carried requests.
	time.Sleep(200 * time.Millisecond)
	for _, ev := range h.events() {
		if ev.Type == TypeTCP && ev.HTTPMethod == "" {
			t.Errorf("connection event besides the request events: %+v", ev)
		}
	}
}

func TestTLSRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  *tls.Config
		want string
	}{
		{name: "tls13_default", cfg: &tls.Config{ServerName: "api.example.org"}, want: "api.example.org"},
		{name: "tls12_only", cfg: &tls.Config{ServerName: "old.example.net", MaxVersion: tls.VersionTLS12}, want: "old.example.net"},
		{name: "alpn_and_long_name", cfg: &tls.Config{ServerName: "a-very-long-label-that-carries-a-canary-0123456789.exfil.example", NextProtos: []string{"h2", "http/1.1"}}, want: "a-very-long-label-that-carries-a-canary-0123456789.exfil.example"},
	}
	h := startSink(t, Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := dialTCP(t, h)
			c := tls.Client(raw, tc.cfg)
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			err := c.Handshake()
			var verr *tls.CertificateVerificationError
			if !errors.As(err, &verr) {
				t.Fatalf("handshake without the run's CA = %v, want a certificate verification error", err)
			}
			raw.Close()
			ev := h.wait(bySrcPort(TypeTCP, localPort(raw)), 3*time.Second)
			if !ev.TLSRefused || ev.SNI != tc.want || !ev.TLS {
				t.Errorf("refused = %v sni = %q tls = %v, want true %q true", ev.TLSRefused, ev.SNI, ev.TLS, tc.want)
			}
			if !strings.HasPrefix(ev.Error, "tls: client refused the sink's certificate: ") || !strings.Contains(ev.Error, "bad certificate") {
				t.Errorf("error = %q, want the refusal with the client's alert", ev.Error)
			}
			if ev.HTTPMethod != "" || ev.Bytes == 0 || len(ev.Data) != 0 {
				t.Errorf("method = %q bytes = %d data = %d, want none, the ClientHello counted, no data", ev.HTTPMethod, ev.Bytes, len(ev.Data))
			}
		})
	}
	t.Run("closed_after_certificate", func(t *testing.T) {
		raw := dialTCP(t, h)
		c := tls.Client(raw, &tls.Config{
			ServerName: "closer.example.org", MaxVersion: tls.VersionTLS12,
			// Close at once on seeing the certificate, without an alert.
			InsecureSkipVerify: true,
			VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
				raw.Close()
				return errors.New("closed")
			},
		})
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_ = c.Handshake()
		ev := h.wait(bySrcPort(TypeTCP, localPort(raw)), 3*time.Second)
		if !ev.TLSRefused || ev.SNI != "closer.example.org" || !strings.Contains(ev.Error, "closed after the certificate") {
			t.Errorf("event = refused %v sni %q error %q, want refused, the SNI and the close", ev.TLSRefused, ev.SNI, ev.Error)
		}
	})
	t.Run("no_tls_client_error_is_not_refusal", func(t *testing.T) {
		raw := dialTCP(t, h)
		// A ClientHello offering only a version the sink does not speak.
		c := tls.Client(raw, &tls.Config{ServerName: "old.example.org", MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10})
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := c.Handshake(); err == nil {
			t.Fatal("TLS 1.0 handshake succeeded")
		}
		raw.Close()
		ev := h.wait(bySrcPort(TypeTCP, localPort(raw)), 3*time.Second)
		if ev.TLSRefused || !strings.HasPrefix(ev.Error, "tls handshake: ") {
			t.Errorf("event = refused %v error %q, want a handshake error that is not a refusal", ev.TLSRefused, ev.Error)
		}
	})
}

func TestTLSWithoutSNI(t *testing.T) {
	t.Run("ip_san", func(t *testing.T) {
		h := startSink(t, Config{Advertise: net.IPv4(127, 0, 0, 1)})
		c := newTLSClient(caPool(t, h), false)
		resp, err := c.Post(sinkURL(h, "127.0.0.1", "/by-ip"), "application/json", strings.NewReader(`{"a":1}`))
		if err != nil {
			t.Fatalf("https to an IP address with the CA trusted: %v", err)
		}
		resp.Body.Close()
		ev := h.wait(bySrcPort(TypeTCP, c.lastPort()), 3*time.Second)
		if ev.SNI != "" || !ev.TLS || ev.HTTPTarget != "/by-ip" || string(ev.Body) != `{"a":1}` || ev.LiteralIP {
			t.Errorf("event = %+v, want no SNI, tls, the request, not literal", ev)
		}
	})
	t.Run("looked_up_name", func(t *testing.T) {
		// Loopback routes all of 127/8 here, so the pool's addresses reach
		// the sink as they do in an isolated namespace.
		h := startSink(t, Config{NamePool: netip.MustParsePrefix("127.0.0.0/8")})
		q := new(dns.Msg).SetQuestion("named.example.", dns.TypeA)
		resp, _, err := (&dns.Client{Net: "udp", Timeout: 3 * time.Second}).Exchange(q, "127.0.0.1:"+strconv.Itoa(h.cfg.UDPPort))
		if err != nil || len(resp.Answer) != 1 {
			t.Fatalf("lookup: %v %v", resp, err)
		}
		addr := resp.Answer[0].(*dns.A).A.String()
		pool := caPool(t, h)
		raw, err := net.Dial("tcp4", net.JoinHostPort(addr, strconv.Itoa(h.cfg.TCPPort)))
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		// No SNI (ServerName empty), but verify the leaf for the name.
		c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: "named.example"})
			if err != nil {
				return err
			}
			_, err = cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: addr})
			return err
		}})
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := c.Handshake(); err != nil {
			t.Fatalf("handshake without SNI to a pool address: %v", err)
		}
		_, _ = io.WriteString(c, "GET /named HTTP/1.1\r\nHost: named.example\r\n\r\n")
		got, _ := io.ReadAll(c)
		if !bytes.HasPrefix(got, []byte("HTTP/1.1 200 OK\r\n")) {
			t.Errorf("response = %q, want 200", got)
		}
		ev := h.wait(bySrcPort(TypeTCP, localPort(raw)), 3*time.Second)
		if ev.SNI != "" || ev.LookedUp != "named.example" || ev.HTTPTarget != "/named" || ev.DstIP != addr {
			t.Errorf("event = %+v, want no SNI, looked up named.example, the request, to %s", ev, addr)
		}
	})
}

func TestTLSBodyTruncated(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) {
			h := startSink(t, Config{MaxCapture: 1000})
			c := newTLSClient(caPool(t, h), h2)
			body := strings.Repeat("B", 5000)
			resp, err := c.Post(sinkURL(h, "big.example.org", "/big"), "text/plain", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ev := h.wait(bySrcPort(TypeTCP, c.lastPort()), 3*time.Second)
			// Over HTTP/1.1 the request line and headers count against
			// the capture too, as in plaintext.
			if len(ev.Body) < 500 || len(ev.Body) > 1000 || !strings.HasPrefix(body, string(ev.Body)) || !ev.Truncated || ev.Error != "" {
				t.Errorf("body = %d bytes, truncated %v, error %q; want at most the first 1000 bytes, truncated, no error", len(ev.Body), ev.Truncated, ev.Error)
			}
			if h2 && len(ev.Body) != 1000 {
				t.Errorf("h2 body = %d bytes, want the 1000-byte capture", len(ev.Body))
			}
			if ev.Bytes < 5000 {
				t.Errorf("bytes = %d, want every wire byte counted", ev.Bytes)
			}
		})
	}
}

func TestTLSResponseStatus(t *testing.T) {
	h := startSink(t, Config{TLSResponseStatus: http.StatusForbidden})
	for _, h2 := range []bool{false, true} {
		c := newTLSClient(caPool(t, h), h2)
		resp, err := c.Get(sinkURL(h, "status.example.org", "/s"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || string(got) != "{}" || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("h2=%v: response = %d %q %q, want 403 {} application/json", h2, resp.StatusCode, resp.Header.Get("Content-Type"), got)
		}
	}
	// Plaintext HTTP keeps its empty 200.
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(h.cfg.TCPPort) + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != 0 {
		t.Errorf("plaintext response = %d with %d bytes, want 200 with none", resp.StatusCode, resp.ContentLength)
	}
	for _, bad := range []int{99, 600, -1} {
		err := Serve(context.Background(), Config{TLSResponseStatus: bad, Advertise: testAdvertise}, strings.NewReader(""), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "TLS response status") {
			t.Errorf("Serve with TLSResponseStatus %d = %v, want a config error", bad, err)
		}
	}
}

func TestTLSHandshakeBounded(t *testing.T) {
	tests := []struct {
		name    string
		send    func(c *net.TCPConn)
		wantErr string
	}{
		{
			name: "slow_clienthello",
			send: func(c *net.TCPConn) {
				// A record promising 16 KiB, a byte at a time.
				_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00, 0x3f, 0xfc})
				go func() {
					for range 1000 {
						time.Sleep(20 * time.Millisecond)
						if _, err := c.Write([]byte{0}); err != nil {
							return
						}
					}
				}()
			},
			wantErr: "tls handshake: read deadline reached",
		},
		{
			name: "endless_clienthello",
			send: func(c *net.TCPConn) {
				// A ClientHello claiming 16 MiB, in full records, as fast
				// as the sink takes them.
				rec := append([]byte{0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0xff, 0xff, 0xff}, make([]byte, 1<<14-4)...)
				go func() {
					if _, err := c.Write(rec); err != nil {
						return
					}
					more := append([]byte{0x16, 0x03, 0x01, 0x40, 0x00}, make([]byte, 1<<14)...)
					for range 1024 {
						if _, err := c.Write(more); err != nil {
							return
						}
					}
				}()
			},
			wantErr: "exceeds maximum",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{ReadTimeout: 300 * time.Millisecond})
			c := dialTCP(t, h)
			start := time.Now()
			tc.send(c)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.Copy(io.Discard, c)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open after 10s; ReadTimeout is 300ms")
			}
			ev := h.wait(bySrcPort(TypeTCP, localPort(c)), 3*time.Second)
			if !strings.Contains(ev.Error, tc.wantErr) || !ev.TLS || ev.TLSRefused {
				t.Errorf("error = %q tls %v refused %v, want %q, tls, not refused", ev.Error, ev.TLS, ev.TLSRefused, tc.wantErr)
			}
			if ev.Bytes > maxHandshakeBytes+(1<<16) || time.Since(start) > 5*time.Second {
				t.Errorf("read %d bytes over %v before giving up", ev.Bytes, time.Since(start))
			}
		})
	}
}

func TestTLSRunCA(t *testing.T) {
	type run struct {
		cert             *x509.Certificate
		caKey, leafKey   *ecdsa.PrivateKey
		h                *harness
		readyCA, allJSON string
	}
	var runs []*run
	for range 2 {
		r := &run{}
		r.h = startSink(t, Config{onCA: func(cert *x509.Certificate, caKey, leafKey *ecdsa.PrivateKey) {
			r.cert, r.caKey, r.leafKey = cert, caKey, leafKey
		}})
		r.readyCA = r.h.ready.CACert
		// Traffic of every kind: HTTP/1.1 and h2 inside TLS, a refusal,
		// plaintext.
		pool := caPool(t, r.h)
		for _, h2 := range []bool{false, true} {
			resp, err := newTLSClient(pool, h2).Post(sinkURL(r.h, "keys.example.org", "/k"), "text/plain", strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if _, err := newTLSClient(nil, false).Get(sinkURL(r.h, "refuse.example.org", "/")); err == nil {
			t.Fatal("request without the CA trusted succeeded")
		}
		r.h.wait(func(ev Event) bool { return ev.TLSRefused }, 3*time.Second)
		r.h.wait(func(ev Event) bool { return ev.ALPN == "h2" }, 3*time.Second)
		r.h.control("mark done")
		r.h.wait(func(ev Event) bool { return ev.Type == TypeMark }, 3*time.Second)
		if err := r.h.stop(); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ev := range r.h.events() {
			j, _ := json.Marshal(ev)
			b.Write(j)
			b.WriteString(string(ev.Data) + string(ev.Body) + ev.Error + "\n")
		}
		r.allJSON = b.String()
		runs = append(runs, r)
	}
	a, b := runs[0], runs[1]
	if a.readyCA == b.readyCA || a.cert.SerialNumber.Cmp(b.cert.SerialNumber) == 0 || a.caKey.Equal(b.caKey) || a.leafKey.Equal(b.leafKey) {
		t.Error("two Serve runs share a CA certificate, serial or key")
	}
	for i, r := range runs {
		if !r.cert.IsCA || !r.cert.MaxPathLenZero || r.cert.KeyUsage&x509.KeyUsageCertSign == 0 || r.cert.NotAfter.Sub(r.cert.NotBefore) > 26*time.Hour {
			t.Errorf("run %d: CA = IsCA %v MaxPathLenZero %v usage %v valid %v-%v, want a short-lived path-length-0 signing CA", i, r.cert.IsCA, r.cert.MaxPathLenZero, r.cert.KeyUsage, r.cert.NotBefore, r.cert.NotAfter)
		}
		if !strings.Contains(r.readyCA, "BEGIN CERTIFICATE") {
			t.Errorf("run %d: ready ca_cert = %q", i, r.readyCA)
		}
		if strings.Contains(r.allJSON, "PRIVATE KEY") {
			t.Errorf("run %d: an event carries a PEM private key", i)
		}
		for _, k := range []*ecdsa.PrivateKey{a.caKey, a.leafKey, b.caKey, b.leafKey} {
			for _, m := range keyMaterial(k) {
				if strings.Contains(r.allJSON, m) {
					t.Errorf("run %d: an event carries private key bytes", i)
				}
			}
		}
	}
}

// writeCA writes the sink's CA certificate to a temporary file.
func writeCA(t *testing.T, h *harness) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sink-ca.pem")
	if err := os.WriteFile(p, []byte(h.ready.CACert), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTLSNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	h := startSink(t, Config{})
	script := `
const https = require('https');
const req = https.request({host: '127.0.0.1', port: +process.argv[1], servername: 'node.example.org', method: 'POST', path: '/from-node',
  headers: {'Content-Type': 'application/json', 'X-Canary': 'CANARY-NODE'}}, res => {
  let body = '';
  res.on('data', d => body += d);
  res.on('end', () => { console.log(res.statusCode + ' ' + body); });
});
req.on('error', e => { console.error(e.message); process.exit(1); });
req.end(JSON.stringify({token: 'CANARY-NODE-BODY'}));
`
	cmd := exec.Command(node, "-e", script, strconv.Itoa(h.cfg.TCPPort))
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+writeCA(t, h))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "200 {}" {
		t.Fatalf("node https POST = %v, output %q; want 200 {}", err, out)
	}
	ev := h.wait(func(ev Event) bool { return ev.HTTPTarget == "/from-node" }, 3*time.Second)
	if ev.SNI != "node.example.org" || !ev.TLS || string(ev.Body) != `{"token":"CANARY-NODE-BODY"}` || ev.HTTPHeaders["X-Canary"][0] != "CANARY-NODE" {
		t.Errorf("event = %+v, want node's SNI, body and header", ev)
	}

	// Without the CA, node refuses the certificate and the sink says so.
	cmd = exec.Command(node, "-e", strings.Replace(script, "/from-node", "/refused", 1), strconv.Itoa(h.cfg.TCPPort))
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("node without the CA succeeded: %s", out)
	}
	ev = h.wait(func(ev Event) bool { return ev.TLSRefused && ev.SNI == "node.example.org" }, 3*time.Second)
	if !strings.HasPrefix(ev.Error, "tls: client refused the sink's certificate") {
		t.Errorf("refusal error = %q", ev.Error)
	}
}

func TestTLSPythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	h := startSink(t, Config{Advertise: net.IPv4(127, 0, 0, 1)})
	script := `
import sys, urllib.request
req = urllib.request.Request('https://127.0.0.1:%s/from-python' % sys.argv[1], data=b'token=CANARY-PY', method='POST',
    headers={'X-Canary': 'CANARY-PY-HDR'})
with urllib.request.urlopen(req, timeout=5) as r:
    print(r.status, r.read().decode())
`
	cmd := exec.Command(python, "-c", script, strconv.Itoa(h.cfg.TCPPort))
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+writeCA(t, h))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "200 {}" {
		t.Fatalf("python urllib POST = %v, output %q; want 200 {}", err, out)
	}
	ev := h.wait(func(ev Event) bool { return ev.HTTPTarget == "/from-python" }, 3*time.Second)
	if ev.SNI != "" || !ev.TLS || string(ev.Body) != "token=CANARY-PY" || ev.HTTPHeaders["X-Canary"][0] != "CANARY-PY-HDR" {
		t.Errorf("event = %+v, want no SNI (an IP address), python's body and header", ev)
	}
}

func TestTLSH2RequestCap(t *testing.T) {
	h := startSink(t, Config{})
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: caPool(t, h)},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp4", "127.0.0.1:"+strconv.Itoa(h.cfg.TCPPort))
		},
	}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP2(true)
	client := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	const extra = 3
	for i := range maxH2Requests + extra {
		resp, err := client.Get(sinkURL(h, "cap.example.org", "/n/"+strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200 past the cap too", i, resp.StatusCode)
		}
	}
	tr.CloseIdleConnections()
	want := fmt.Sprintf("http2: %d requests past the %d-request cap were answered but not recorded", extra, maxH2Requests)
	ev := h.wait(func(ev Event) bool { return ev.Type == TypeTCP && ev.HTTPMethod == "" }, 3*time.Second)
	if ev.Error != want || ev.SNI != "cap.example.org" || ev.ALPN != "h2" || ev.Bytes == 0 {
		t.Errorf("connection event = %+v, want error %q with the SNI and the bytes", ev, want)
	}
	n := 0
	for _, ev := range h.events() {
		if ev.HTTPMethod == http.MethodGet {
			n++
		}
	}
	if n != maxH2Requests {
		t.Errorf("%d request events, want the cap of %d", n, maxH2Requests)
	}
}
