//go:build linux

package sink

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// clientHelloBody returns the ClientHello handshake body crypto/tls sends
// for cfg, read from the other end of a pipe.
func clientHelloBody(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		defer client.Close()
		_ = tls.Client(client, cfg).Handshake()
	}()
	_ = server.SetDeadline(time.Now().Add(5 * time.Second))
	var hs []byte
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(server, hdr[:]); err != nil {
			t.Fatalf("read record header: %v", err)
		}
		rec := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
		if _, err := io.ReadFull(server, rec); err != nil {
			t.Fatalf("read record: %v", err)
		}
		hs = append(hs, rec...)
		if len(hs) >= 4 {
			if n := int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3]); len(hs) >= 4+n {
				return hs[4 : 4+n]
			}
		}
	}
}

func TestParseClientHello(t *testing.T) {
	tests := []struct {
		name string
		cfg  *tls.Config
		want string
	}{
		{name: "tls13_default", cfg: &tls.Config{ServerName: "api.example.org"}, want: "api.example.org"},
		{name: "tls12_only", cfg: &tls.Config{ServerName: "old.example.net", MaxVersion: tls.VersionTLS12}, want: "old.example.net"},
		{name: "with_alpn_and_long_name", cfg: &tls.Config{ServerName: "a-very-long-label-that-carries-a-canary-0123456789.exfil.example", NextProtos: []string{"h2", "http/1.1"}}, want: "a-very-long-label-that-carries-a-canary-0123456789.exfil.example"},
		{name: "ip_address_sends_no_sni", cfg: &tls.Config{ServerName: "192.0.2.1"}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := clientHelloBody(t, tc.cfg)
			got, err := parseClientHello(body)
			if err != nil || got != tc.want {
				t.Errorf("parseClientHello = %q, %v; want %q, nil", got, err, tc.want)
			}
			// Every truncation is either an error or a hello without the
			// extensions block; none may panic or invent a name.
			for n := 0; n < len(body); n++ {
				got, err := parseClientHello(body[:n])
				if err == nil && got != "" {
					t.Fatalf("truncated to %d bytes: got name %q without error", n, got)
				}
			}
		})
	}
}

func FuzzParseClientHello(f *testing.F) {
	f.Add(clientHelloBody(f, &tls.Config{ServerName: "api.example.org"}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseClientHello(b)
	})
}
