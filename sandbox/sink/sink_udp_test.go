//go:build linux

package sink

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

func TestDNSOverUDP(t *testing.T) {
	type lookup struct {
		local, remote netip.AddrPort
	}
	tests := []struct {
		name      string
		qtype     uint16
		origDst   func(local, remote netip.AddrPort) (netip.AddrPort, error)
		wantA     []string
		wantDstIP string
		wantPort  int
		wantLit   bool
		wantErr   string
	}{
		{
			name:      "A_answered_with_advertise_via_embedded_resolver",
			qtype:     dns.TypeA,
			origDst:   fixedDst("127.0.0.11:53"),
			wantA:     []string{"192.0.2.53"},
			wantDstIP: "127.0.0.11", wantPort: 53,
		},
		{
			name:      "AAAA_is_empty_noerror",
			qtype:     dns.TypeAAAA,
			origDst:   fixedDst("127.0.0.11:53"),
			wantDstIP: "127.0.0.11", wantPort: 53,
		},
		{
			name:      "TXT_to_public_resolver_is_literal",
			qtype:     dns.TypeTXT,
			origDst:   fixedDst("8.8.8.8:53"),
			wantDstIP: "8.8.8.8", wantPort: 53, wantLit: true,
		},
		{
			name:  "conntrack_failing_leaves_dst_empty",
			qtype: dns.TypeA,
			origDst: func(netip.AddrPort, netip.AddrPort) (netip.AddrPort, error) {
				return netip.AddrPort{}, errors.New("no such flow")
			},
			wantA:   []string{"192.0.2.53"},
			wantErr: "original destination: no such flow",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var lookups []lookup
			cfg := Config{origDst: func(local, remote netip.AddrPort) (netip.AddrPort, error) {
				mu.Lock()
				lookups = append(lookups, lookup{local, remote})
				mu.Unlock()
				return tc.origDst(local, remote)
			}}
			h := startSink(t, cfg)

			conn, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: h.cfg.UDPPort})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			q := new(dns.Msg).SetQuestion("Secret-Canary.exfil.example.", tc.qtype)
			c := &dns.Client{Net: "udp", Timeout: 3 * time.Second}
			resp, _, err := c.ExchangeWithConn(q, &dns.Conn{Conn: conn})
			if err != nil {
				t.Fatalf("dns exchange: %v", err)
			}
			if resp.Rcode != dns.RcodeSuccess {
				t.Errorf("rcode = %s, want NOERROR", dns.RcodeToString[resp.Rcode])
			}
			var gotA []string
			for _, rr := range resp.Answer {
				a, ok := rr.(*dns.A)
				if !ok {
					t.Errorf("unexpected answer %v", rr)
					continue
				}
				gotA = append(gotA, a.A.String())
				if a.Hdr.Ttl != 1 {
					t.Errorf("TTL = %d, want 1", a.Hdr.Ttl)
				}
			}
			if diff := cmp.Diff(tc.wantA, gotA); diff != "" {
				t.Errorf("A answers (-want +got):\n%s", diff)
			}

			port := localPort(conn)
			ev := h.wait(bySrcPort(TypeDNS, port), 3*time.Second)
			want := Event{
				Type: TypeDNS, Proto: "udp", SrcPort: port,
				DstIP: tc.wantDstIP, DstPort: tc.wantPort, LiteralIP: tc.wantLit,
				DNSName: "Secret-Canary.exfil.example", DNSType: dns.TypeToString[tc.qtype],
				Bytes: ev.Bytes, Error: tc.wantErr,
			}
			got := ev
			got.Time = time.Time{}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("dns event (-want +got):\n%s", diff)
			}
			packed, _ := q.Pack()
			if ev.Bytes != int64(len(packed)) {
				t.Errorf("bytes = %d, want %d", ev.Bytes, len(packed))
			}
			mu.Lock()
			defer mu.Unlock()
			wantLookup := lookup{
				local:  netip.MustParseAddrPort("127.0.0.1:" + strconv.Itoa(h.cfg.UDPPort)),
				remote: netip.MustParseAddrPort("127.0.0.1:" + strconv.Itoa(port)),
			}
			if len(lookups) != 1 || lookups[0] != wantLookup {
				t.Errorf("conntrack lookups = %v, want [%v]", lookups, wantLookup)
			}
		})
	}
}

func fixedDst(s string) func(netip.AddrPort, netip.AddrPort) (netip.AddrPort, error) {
	ap := netip.MustParseAddrPort(s)
	return func(netip.AddrPort, netip.AddrPort) (netip.AddrPort, error) { return ap, nil }
}

func TestUDPDatagram(t *testing.T) {
	dnsResponse := mustPack(new(dns.Msg).SetReply(new(dns.Msg).SetQuestion("a.example.", dns.TypeA)))
	tests := []struct {
		name      string
		payload   []byte
		capture   int
		wantData  []byte
		wantTrunc bool
	}{
		{name: "kept_whole", payload: []byte("hello-udp\x00\xff"), wantData: []byte("hello-udp\x00\xff")},
		{name: "cut_at_capture", payload: bytes.Repeat([]byte("x"), 3000), capture: 1000, wantData: bytes.Repeat([]byte("x"), 1000), wantTrunc: true},
		// A DNS response, not a query: recorded as data, not answered.
		{name: "dns_response_is_data", payload: dnsResponse, wantData: dnsResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{MaxCapture: tc.capture, origDst: fixedDst("198.51.100.9:9999")})
			conn, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: h.cfg.UDPPort})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			port := localPort(conn)
			ev := h.wait(bySrcPort(TypeUDP, port), 3*time.Second)
			got := ev
			got.Time = time.Time{}
			want := Event{Type: TypeUDP, SrcPort: port, DstIP: "198.51.100.9", DstPort: 9999, LiteralIP: true,
				Data: tc.wantData, Bytes: int64(len(tc.payload)), Truncated: tc.wantTrunc}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("udp event (-want +got):\n%s", diff)
			}
		})
	}
}

func mustPack(m *dns.Msg) []byte {
	b, err := m.Pack()
	if err != nil {
		panic(err)
	}
	return b
}
