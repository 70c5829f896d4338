//go:build linux

package sink

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

// harness runs Serve on free loopback ports and collects its events.
type harness struct {
	t     *testing.T
	cfg   Config
	ready Event
	ctl   *io.PipeWriter
	done  chan error
	// decoded is closed when every event Serve wrote has been decoded.
	decoded chan struct{}

	mu      sync.Mutex
	evs     []Event
	changed chan struct{}
	stopped bool
}

var testAdvertise = net.IPv4(192, 0, 2, 53)

// startSink starts Serve with cfg, filling in free ports and a test
// advertise address, and waits for the ready event.
func startSink(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.TCPPort == 0 {
		cfg.TCPPort = freePort(t, "tcp")
	}
	if cfg.UDPPort == 0 {
		cfg.UDPPort = freePort(t, "udp")
	}
	if cfg.Advertise == nil {
		cfg.Advertise = testAdvertise
	}
	cr, cw := io.Pipe()
	er, ew := io.Pipe()
	h := &harness{t: t, cfg: cfg, ctl: cw, done: make(chan error, 1), decoded: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		err := Serve(context.Background(), cfg, cr, ew)
		ew.Close()
		h.done <- err
	}()
	go func() {
		defer close(h.decoded)
		dec := json.NewDecoder(er)
		for {
			var ev Event
			if err := dec.Decode(&ev); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("decode event: %v", err)
				}
				return
			}
			h.mu.Lock()
			h.evs = append(h.evs, ev)
			close(h.changed)
			h.changed = make(chan struct{})
			h.mu.Unlock()
		}
	}()
	h.ready = h.wait(func(ev Event) bool { return ev.Type == TypeReady }, 5*time.Second)
	t.Cleanup(func() { h.stop() })
	return h
}

func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "tcp" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find free tcp port: %v", err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find free udp port: %v", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// wait returns the first event matching match, failing the test after
// timeout.
func (h *harness) wait(match func(Event) bool, timeout time.Duration) Event {
	h.t.Helper()
	deadline := time.After(timeout)
	for {
		h.mu.Lock()
		for _, ev := range h.evs {
			if match(ev) {
				h.mu.Unlock()
				return ev
			}
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			h.t.Fatalf("no matching event within %v; events so far:\n%s", timeout, h.dump())
			return Event{}
		}
	}
}

func (h *harness) dump() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, ev := range h.evs {
		ev.Data, ev.Body = nil, nil
		j, _ := json.Marshal(ev)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func (h *harness) events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.evs...)
}

func (h *harness) control(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.ctl, line+"\n"); err != nil {
		h.t.Fatalf("write control line: %v", err)
	}
}

// stop closes control and returns Serve's result once every event is
// decoded.
func (h *harness) stop() error {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil
	}
	h.stopped = true
	h.mu.Unlock()
	h.ctl.Close()
	select {
	case err := <-h.done:
		<-h.decoded
		return err
	case <-time.After(10 * time.Second):
		h.t.Errorf("Serve did not return within 10s of control EOF")
		return nil
	}
}

func bySrcPort(typ string, port int) func(Event) bool {
	return func(ev Event) bool { return ev.Type == typ && ev.SrcPort == port }
}

func dialTCP(t *testing.T, h *harness) *net.TCPConn {
	t.Helper()
	c, err := net.DialTCP("tcp4", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: h.cfg.TCPPort})
	if err != nil {
		t.Fatalf("dial sink: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func localPort(c net.Conn) int {
	_, p, _ := net.SplitHostPort(c.LocalAddr().String())
	n, _ := strconv.Atoi(p)
	return n
}

func TestReady(t *testing.T) {
	h := startSink(t, Config{})
	want := Event{Type: TypeReady, Advertise: "192.0.2.53", TCPPort: h.cfg.TCPPort, UDPPort: h.cfg.UDPPort}
	got := h.ready
	got.Time = time.Time{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ready event (-want +got):\n%s", diff)
	}
	if h.ready.Time.IsZero() || h.ready.Time.Location() != time.UTC {
		t.Errorf("ready time = %v, want a UTC time", h.ready.Time)
	}
}

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

func TestTLSServerName(t *testing.T) {
	tests := []struct {
		name       string
		serverName string
		advertise  net.IP
		wantSNI    string
		wantLit    bool
	}{
		{name: "sni_recorded", serverName: "api.example.org", wantSNI: "api.example.org", wantLit: true},
		// Go sends no server_name extension for an IP address.
		{name: "ip_target_has_no_sni", serverName: "127.0.0.1", wantSNI: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// With 127.0.0.1 advertised, a connection to it is what our
			// DNS would have led to: not literal.
			adv := testAdvertise
			if !tc.wantLit {
				adv = net.IPv4(127, 0, 0, 1)
			}
			h := startSink(t, Config{Advertise: adv})
			raw := dialTCP(t, h)
			tc2 := tls.Client(raw, &tls.Config{ServerName: tc.serverName, NextProtos: []string{"h2", "http/1.1"}})
			_ = tc2.SetDeadline(time.Now().Add(5 * time.Second))
			err := tc2.Handshake()
			if err == nil {
				t.Fatal("handshake succeeded against a sink that must fail it")
			}
			// crypto/tls exposes received alerts only through the message.
			if !strings.Contains(err.Error(), "remote error: tls: handshake failure") {
				t.Errorf("handshake error = %v, want the handshake_failure alert", err)
			}
			port := localPort(raw)
			ev := h.wait(bySrcPort(TypeTCP, port), 3*time.Second)
			if ev.SNI != tc.wantSNI {
				t.Errorf("sni = %q, want %q", ev.SNI, tc.wantSNI)
			}
			if ev.Error != "" {
				t.Errorf("error = %q, want none", ev.Error)
			}
			if len(ev.Data) < 6 || ev.Data[0] != 0x16 || ev.Data[5] != 1 {
				t.Errorf("data does not start with a ClientHello record: % x", ev.Data[:min(len(ev.Data), 8)])
			}
			if ev.Bytes != int64(len(ev.Data)) {
				t.Errorf("bytes = %d, data = %d bytes; want equal", ev.Bytes, len(ev.Data))
			}
			if ev.DstIP != "127.0.0.1" || ev.DstPort != h.cfg.TCPPort || ev.LiteralIP != tc.wantLit {
				t.Errorf("dst = %s:%d literal=%v, want 127.0.0.1:%d literal=%v", ev.DstIP, ev.DstPort, ev.LiteralIP, h.cfg.TCPPort, tc.wantLit)
			}
		})
	}
}

func TestHTTPRequest(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		target      string
		body        func() io.Reader // nil: no body
		header      http.Header
		capture     int
		wantBody    string // with wantTrunc, a prefix of the body
		wantTrunc   bool
		wantHeaders map[string][]string
	}{
		{
			name:   "post_with_body_and_header",
			method: http.MethodPost, target: "/collect?id=1",
			body:        func() io.Reader { return strings.NewReader("token=CANARY-123") },
			header:      http.Header{"X-Exfil": {"CANARY-HDR"}, "Content-Type": {"application/x-www-form-urlencoded"}},
			wantBody:    "token=CANARY-123",
			wantHeaders: map[string][]string{"X-Exfil": {"CANARY-HDR"}, "Content-Type": {"application/x-www-form-urlencoded"}, "Content-Length": {"16"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "chunked_body_is_decoded",
			method: http.MethodPut, target: "/up",
			// An io.Reader of unknown length makes the client chunk it.
			body:        func() io.Reader { return io.MultiReader(strings.NewReader("part1-"), strings.NewReader("part2")) },
			wantBody:    "part1-part2",
			wantHeaders: map[string][]string{"Transfer-Encoding": {"chunked"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "expect_continue_gets_the_body",
			method: http.MethodPost, target: "/c",
			body:        func() io.Reader { return strings.NewReader("after-100") },
			header:      http.Header{"Expect": {"100-continue"}},
			wantBody:    "after-100",
			wantHeaders: map[string][]string{"Expect": {"100-continue"}, "Content-Length": {"9"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "large_body_cut_at_capture",
			method: http.MethodPost, target: "/big",
			body:        func() io.Reader { return strings.NewReader(strings.Repeat("B", 5000)) },
			capture:     1000,
			wantBody:    "BBBB",
			wantTrunc:   true,
			wantHeaders: map[string][]string{"Content-Length": {"5000"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
		{
			name:   "get_without_body",
			method: http.MethodGet, target: "/x",
			wantHeaders: map[string][]string{"Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Connection": {"close"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{MaxCapture: tc.capture})
			var port int
			client := &http.Client{
				Timeout: 5 * time.Second,
				Transport: &http.Transport{
					DisableKeepAlives:     true,
					ExpectContinueTimeout: 5 * time.Second,
					DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
						c, err := (&net.Dialer{}).DialContext(ctx, "tcp4", addr)
						if err == nil {
							port = localPort(c)
						}
						return c, err
					},
				},
			}
			var body io.Reader
			if tc.body != nil {
				body = tc.body()
			}
			url := fmt.Sprintf("http://127.0.0.1:%d%s", h.cfg.TCPPort, tc.target)
			req, err := http.NewRequest(tc.method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("request to sink: %v", err)
			}
			respBody, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || len(respBody) != 0 {
				t.Errorf("response = %d with %d body bytes, want 200 with none", resp.StatusCode, len(respBody))
			}

			ev := h.wait(bySrcPort(TypeTCP, port), 3*time.Second)
			host := "127.0.0.1:" + strconv.Itoa(h.cfg.TCPPort)
			if ev.HTTPMethod != tc.method || ev.HTTPTarget != tc.target || ev.HTTPHost != host {
				t.Errorf("request line = %s %s host %s, want %s %s host %s", ev.HTTPMethod, ev.HTTPTarget, ev.HTTPHost, tc.method, tc.target, host)
			}
			if diff := cmp.Diff(tc.wantHeaders, ev.HTTPHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if tc.wantTrunc {
				if !strings.HasPrefix(string(ev.Body), tc.wantBody) || !ev.Truncated || len(ev.Data) != tc.capture {
					t.Errorf("body = %d bytes %q..., truncated = %v, data = %d bytes; want a cut body, truncated, data at the %d-byte capture",
						len(ev.Body), ev.Body[:min(len(ev.Body), 8)], ev.Truncated, len(ev.Data), tc.capture)
				}
				if !bytes.HasSuffix(ev.Data, ev.Body) {
					t.Errorf("body is not the end of the captured data")
				}
			} else if string(ev.Body) != tc.wantBody || ev.Truncated {
				t.Errorf("body = %q truncated = %v, want %q and not truncated", ev.Body, ev.Truncated, tc.wantBody)
			}
			wantStart := tc.method + " " + tc.target + " HTTP/1.1\r\n"
			if !bytes.HasPrefix(ev.Data, []byte(wantStart)) {
				t.Errorf("data starts %q, want %q", ev.Data[:min(len(ev.Data), 40)], wantStart)
			}
			if ev.Error != "" {
				t.Errorf("error = %q, want none", ev.Error)
			}
		})
	}
}

func TestRawTCP(t *testing.T) {
	tests := []struct {
		name      string
		payload   []byte
		capture   int
		wantData  []byte
		wantTrunc bool
	}{
		{name: "binary_kept_exactly", payload: []byte("\x00\x01\x02hello\xff\r\n"), wantData: []byte("\x00\x01\x02hello\xff\r\n")},
		{name: "lowercase_text_is_not_http", payload: []byte("get / http/1.1\r\n\r\n"), wantData: []byte("get / http/1.1\r\n\r\n")},
		{name: "cut_at_capture_but_counted", payload: bytes.Repeat([]byte{0xAB}, 5000), capture: 1024, wantData: bytes.Repeat([]byte{0xAB}, 1024), wantTrunc: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{MaxCapture: tc.capture})
			c := dialTCP(t, h)
			if _, err := c.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			_ = c.CloseWrite()
			ev := h.wait(bySrcPort(TypeTCP, localPort(c)), 3*time.Second)
			if !bytes.Equal(ev.Data, tc.wantData) {
				t.Errorf("data = %q, want %q", ev.Data[:min(len(ev.Data), 64)], tc.wantData[:min(len(tc.wantData), 64)])
			}
			if ev.Bytes != int64(len(tc.payload)) || ev.Truncated != tc.wantTrunc {
				t.Errorf("bytes = %d truncated = %v, want %d %v", ev.Bytes, ev.Truncated, len(tc.payload), tc.wantTrunc)
			}
			if ev.HTTPMethod != "" || ev.SNI != "" || ev.Error != "" {
				t.Errorf("raw stream parsed as something: %+v", ev)
			}
		})
	}
}

func TestControlPhaseAndMark(t *testing.T) {
	h := startSink(t, Config{origDst: fixedDst("198.51.100.1:7")})
	send := func(payload string) {
		t.Helper()
		c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: h.cfg.UDPPort})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(payload)); err != nil {
			t.Fatal(err)
		}
		h.wait(bySrcPort(TypeUDP, localPort(c)), 3*time.Second)
	}
	send("before")
	h.control("phase install")
	// Control is applied asynchronously; a mark is the barrier.
	h.control("mark m1")
	h.wait(func(ev Event) bool { return ev.Type == TypeMark && ev.Label == "m1" }, 3*time.Second)
	send("during-install")
	h.control("phase run")
	h.control("mark handshake_done")
	h.wait(func(ev Event) bool { return ev.Type == TypeMark && ev.Label == "handshake_done" }, 3*time.Second)
	send("during-run")
	h.control("bogus line")
	h.control(strings.Repeat("x", 2*maxControlLine))
	h.control("mark after-junk")
	h.wait(func(ev Event) bool { return ev.Type == TypeMark && ev.Label == "after-junk" }, 3*time.Second)
	if err := h.stop(); err != nil {
		t.Fatalf("Serve after control EOF = %v, want nil", err)
	}

	type row struct{ Type, Phase, Label, Data, Error string }
	var got []row
	for _, ev := range h.events() {
		if ev.Type == TypeReady {
			continue
		}
		got = append(got, row{ev.Type, ev.Phase, ev.Label, string(ev.Data), ev.Error})
	}
	want := []row{
		{Type: TypeUDP, Data: "before"},
		{Type: TypeMark, Phase: "install", Label: "m1"},
		{Type: TypeUDP, Phase: "install", Data: "during-install"},
		{Type: TypeMark, Phase: "run", Label: "handshake_done"},
		{Type: TypeUDP, Phase: "run", Data: "during-run"},
		{Type: TypeError, Phase: "run", Error: `unknown control line "bogus line"`},
		{Type: TypeError, Phase: "run", Error: "control line longer than 4096 bytes ignored"},
		{Type: TypeMark, Phase: "run", Label: "after-junk"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestConnectionCap(t *testing.T) {
	h := startSink(t, Config{MaxConns: 2, ReadTimeout: 30 * time.Second})
	held := []*net.TCPConn{dialTCP(t, h), dialTCP(t, h)}
	// Make sure both are accepted and being read before the third.
	for _, c := range held {
		if _, err := c.Write([]byte("held")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)

	over := dialTCP(t, h)
	_ = over.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := over.Read(make([]byte, 1))
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read on a connection over the cap = %v, want it closed by the sink", err)
	}
	ev := h.wait(bySrcPort(TypeTCP, localPort(over)), 3*time.Second)
	if !strings.Contains(ev.Error, "connection limit (2) reached") || ev.DstPort != h.cfg.TCPPort {
		t.Errorf("over-cap event = %+v, want the limit error and the destination", ev)
	}

	// Closing a held connection frees a slot.
	held[0].Close()
	h.wait(bySrcPort(TypeTCP, localPort(held[0])), 3*time.Second)
	// The close event can come before the slot is released: try again
	// for a moment while the sink still says the limit is reached.
	for try := 0; ; try++ {
		next := dialTCP(t, h)
		if _, err := next.Write([]byte("fits")); err != nil {
			t.Fatal(err)
		}
		_ = next.CloseWrite()
		ev = h.wait(bySrcPort(TypeTCP, localPort(next)), 3*time.Second)
		if !strings.Contains(ev.Error, "connection limit") || try == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if string(ev.Data) != "fits" || ev.Error != "" {
		t.Errorf("connection after a slot freed = %+v, want its data and no error", ev)
	}
}

func TestSlowClientClosedAtReadTimeout(t *testing.T) {
	tests := []struct {
		name     string
		send     func(c *net.TCPConn)
		wantErr  string
		wantData string
	}{
		{name: "never_sends", send: func(*net.TCPConn) {}, wantErr: "read: read deadline reached"},
		{
			name: "slowloris_headers",
			send: func(c *net.TCPConn) {
				_, _ = c.Write([]byte("GET / HTTP/1.1\r\n"))
				go func() {
					for i := 0; i < 100; i++ {
						time.Sleep(50 * time.Millisecond)
						if _, err := c.Write([]byte("X-A: b\r\n")); err != nil {
							return
						}
					}
				}()
			},
			wantErr:  "http request: read deadline reached",
			wantData: "GET / HTTP/1.1\r\nX-A: b\r\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startSink(t, Config{ReadTimeout: 300 * time.Millisecond})
			c := dialTCP(t, h)
			tc.send(c)
			// The sink must close the connection long before this deadline.
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.ReadAll(c)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open after 10s; ReadTimeout is 300ms")
			}
			ev := h.wait(bySrcPort(TypeTCP, localPort(c)), 3*time.Second)
			if ev.Error != tc.wantErr {
				t.Errorf("error = %q, want %q", ev.Error, tc.wantErr)
			}
			if !strings.HasPrefix(string(ev.Data), tc.wantData) {
				t.Errorf("data = %q, want prefix %q", ev.Data, tc.wantData)
			}
		})
	}
}

func TestHostileInputs(t *testing.T) {
	bigRecord := []byte{0x16, 0x03, 0x01, 0xff, 0xff}
	tests := []struct {
		name    string
		payload []byte
		wantErr string
	}{
		{name: "tls_record_too_big", payload: bigRecord, wantErr: "tls: ClientHello larger than the 65536-byte capture"},
		{name: "tls_not_clienthello", payload: []byte{0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00}, wantErr: "tls: first handshake message has type 2, not ClientHello"},
		{name: "tls_truncated_hello", payload: []byte{0x16, 0x03, 0x01, 0x00, 0x08, 0x01, 0x00, 0x00, 0x04, 0x03, 0x03, 0x00, 0x00}, wantErr: "tls: ClientHello truncated"},
		{name: "tls_cut_mid_record", payload: []byte{0x16, 0x03, 0x01, 0x00, 0x40, 0x01}, wantErr: "tls record: unexpected EOF"},
		{name: "http_header_flood", payload: append([]byte("GET / HTTP/1.1\r\nX: "), bytes.Repeat([]byte("a"), 200<<10)...), wantErr: "http request: request line and headers exceed the capture limit"},
		{name: "nul_in_method_is_raw", payload: []byte("GET\x00 / HTTP/1.1\r\n\r\n"), wantErr: ""},
		{name: "http_bad_content_length", payload: []byte("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n"), wantErr: `http request: bad Content-Length "-5"`},
	}
	h := startSink(t, Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := dialTCP(t, h)
			if _, err := c.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			_ = c.CloseWrite()
			ev := h.wait(bySrcPort(TypeTCP, localPort(c)), 3*time.Second)
			if ev.Error != tc.wantErr {
				t.Errorf("error = %q, want %q", ev.Error, tc.wantErr)
			}
			if ev.Bytes != int64(len(tc.payload)) && tc.name != "http_header_flood" {
				t.Errorf("bytes = %d, want %d", ev.Bytes, len(tc.payload))
			}
			if len(ev.Data) > DefaultMaxCapture {
				t.Errorf("kept %d bytes, more than the capture", len(ev.Data))
			}
		})
	}

	// Malformed DNS: a compression pointer loop, a header claiming 65535
	// questions, and a query with more questions than maxQuestions.
	loop := []byte{0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01}
	claims := []byte{0x12, 0x34, 0x01, 0x00, 0xff, 0xff, 0, 0, 0, 0, 0, 0}
	many := new(dns.Msg).SetQuestion("q0.example.", dns.TypeA)
	for i := 1; i < 40; i++ {
		many.Question = append(many.Question, dns.Question{Name: fmt.Sprintf("q%d.example.", i), Qtype: dns.TypeA, Qclass: dns.ClassINET})
	}
	udp := []struct {
		name      string
		payload   []byte
		wantTypes map[string]int
	}{
		{name: "dns_pointer_loop", payload: loop, wantTypes: map[string]int{TypeUDP: 1}},
		{name: "dns_claims_many_questions", payload: claims, wantTypes: map[string]int{TypeUDP: 1}},
		{name: "dns_forty_questions", payload: mustPack(many), wantTypes: map[string]int{TypeDNS: maxQuestions}},
	}
	for _, tc := range udp {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: h.cfg.UDPPort})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			// One goroutine handles a socket's datagrams in order, so once a
			// second datagram is recorded every event of the first is in.
			if _, err := c.Write([]byte("barrier")); err != nil {
				t.Fatal(err)
			}
			port := localPort(c)
			h.wait(func(ev Event) bool { return ev.SrcPort == port && string(ev.Data) == "barrier" }, 3*time.Second)
			got := map[string]int{}
			for _, ev := range h.events() {
				if ev.SrcPort == port && string(ev.Data) != "barrier" {
					got[ev.Type]++
				}
			}
			if diff := cmp.Diff(tc.wantTypes, got); diff != "" {
				t.Errorf("events by type (-want +got):\n%s", diff)
			}
		})
	}

	// The sink still works after all of that.
	c := dialTCP(t, h)
	_, _ = c.Write([]byte("alive"))
	_ = c.CloseWrite()
	if ev := h.wait(bySrcPort(TypeTCP, localPort(c)), 3*time.Second); string(ev.Data) != "alive" {
		t.Errorf("after hostile inputs, data = %q, want %q", ev.Data, "alive")
	}
}

func TestShutdownRecordsInFlight(t *testing.T) {
	h := startSink(t, Config{ReadTimeout: time.Minute})
	c := dialTCP(t, h)
	if _, err := c.Write([]byte("still-open")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := h.stop(); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	var found *Event
	for _, ev := range h.events() {
		if ev.Type == TypeTCP && ev.SrcPort == localPort(c) {
			found = &ev
		}
	}
	if found == nil || string(found.Data) != "still-open" {
		t.Fatalf("in-flight connection not recorded at shutdown; events:\n%s", h.dump())
	}
}

func TestServeErrors(t *testing.T) {
	busy, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name    string
		cfg     Config
		control io.Reader
		events  io.Writer
		wantErr string
	}{
		{name: "bad_port", cfg: Config{TCPPort: 70000, Advertise: testAdvertise}, wantErr: "sink config: port 70000 out of range"},
		{name: "port_in_use", cfg: Config{TCPPort: busy.Addr().(*net.TCPAddr).Port, UDPPort: freePort(t, "udp"), Advertise: testAdvertise}, wantErr: "sink listen on tcp"},
		{name: "events_unwritable", cfg: Config{TCPPort: freePort(t, "tcp"), UDPPort: freePort(t, "udp"), Advertise: testAdvertise}, events: failWriter{}, wantErr: "write event: disk full"},
		{name: "control_fails", cfg: Config{TCPPort: freePort(t, "tcp"), UDPPort: freePort(t, "udp"), Advertise: testAdvertise}, control: failReader{}, wantErr: "read sink control: pipe broke"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctl := tc.control
			if ctl == nil {
				pr, pw := io.Pipe()
				defer pw.Close()
				ctl = pr
			}
			ev := tc.events
			if ev == nil {
				ev = io.Discard
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := Serve(ctx, tc.cfg, ctl, ev)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Serve = %v, want an error containing %q", err, tc.wantErr)
			}
			if ctx.Err() != nil {
				t.Errorf("Serve returned only when the test's context ended")
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("pipe broke") }

func TestServeEndsWithContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out safeBuffer
	go func() {
		done <- Serve(ctx, Config{TCPPort: freePort(t, "tcp"), UDPPort: freePort(t, "udp"), Advertise: testAdvertise}, pr, &out)
	}()
	for !strings.Contains(out.String(), `"type":"ready"`) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestKeep(t *testing.T) {
	tests := []struct {
		name    string
		buf     []byte
		p       string
		max     int
		want    string
		wantCap int
	}{
		{name: "small_first_write", p: "abc", max: 64 << 10, want: "abc", wantCap: smallCapture},
		{name: "small_max", p: "abc", max: 10, want: "abc", wantCap: 10},
		{name: "cut_at_max", p: "abcdef", max: 4, want: "abcd", wantCap: 4},
		{name: "full_buffer_keeps_nothing", buf: []byte("abcd"), p: "ef", max: 4, want: "abcd", wantCap: 4},
		{name: "outgrowing_small_takes_max", buf: append(make([]byte, 0, smallCapture), bytes.Repeat([]byte("x"), smallCapture-1)...), p: "yz", max: 8192, want: strings.Repeat("x", smallCapture-1) + "yz", wantCap: 8192},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := keep(tc.buf, []byte(tc.p), tc.max)
			if string(got) != tc.want || cap(got) != tc.wantCap {
				t.Errorf("keep = %q (cap %d), want %q (cap %d)", got[:min(len(got), 16)], cap(got), tc.want[:min(len(tc.want), 16)], tc.wantCap)
			}
		})
	}
}

// TestNamePool: with a pool, each name gets an address of its own, the
// same one every time (names compare without case), and a datagram to a
// handed-out address is tied to its name and is not literal; one to an
// address of the pool that was never handed out is.
func TestNamePool(t *testing.T) {
	var dst atomic.Pointer[netip.AddrPort]
	h := startSink(t, Config{NamePool: netip.MustParsePrefix("198.18.0.0/15"), origDst: func(netip.AddrPort, netip.AddrPort) (netip.AddrPort, error) {
		if p := dst.Load(); p != nil {
			return *p, nil
		}
		return netip.MustParseAddrPort("198.18.0.1:53"), nil
	}})
	ask := func(name string) string {
		t.Helper()
		q := new(dns.Msg).SetQuestion(name, dns.TypeA)
		c := &dns.Client{Net: "udp", Timeout: 3 * time.Second}
		resp, _, err := c.Exchange(q, "127.0.0.1:"+strconv.Itoa(h.cfg.UDPPort))
		if err != nil || len(resp.Answer) != 1 {
			t.Fatalf("lookup %s: %v %v", name, resp, err)
		}
		return resp.Answer[0].(*dns.A).A.String()
	}
	a, b := ask("api.example.com."), ask("telemetry.example.net.")
	if a == b || a != ask("API.Example.com.") || !strings.HasPrefix(a, "198.18.") || a == "198.18.0.1" {
		t.Fatalf("answers %s, %s: want a distinct pool address per name, stable and not the sink's own", a, b)
	}
	send := func(to string) Event {
		t.Helper()
		ap := netip.MustParseAddrPort(to)
		dst.Store(&ap)
		conn, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: h.cfg.UDPPort})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		return h.wait(bySrcPort(TypeUDP, localPort(conn)), 3*time.Second)
	}
	if ev := send(a + ":443"); ev.LookedUp != "api.example.com" || ev.LiteralIP {
		t.Errorf("datagram to %s: looked up %q, literal %v; want api.example.com, not literal", a, ev.LookedUp, ev.LiteralIP)
	}
	if ev := send("198.18.200.7:443"); ev.LookedUp != "" || !ev.LiteralIP {
		t.Errorf("datagram to an address never handed out: looked up %q, literal %v; want literal", ev.LookedUp, ev.LiteralIP)
	}
}
