//go:build linux

package sink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

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
		{name: "tls_record_too_big", payload: bigRecord, wantErr: "tls handshake: tls: oversized record received with length 65535"},
		{name: "tls_not_clienthello", payload: []byte{0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00}, wantErr: "tls handshake: local error: tls: error decoding message"},
		{name: "tls_truncated_hello", payload: []byte{0x16, 0x03, 0x01, 0x00, 0x08, 0x01, 0x00, 0x00, 0x04, 0x03, 0x03, 0x00, 0x00}, wantErr: "tls handshake: local error: tls: error decoding message"},
		{name: "tls_cut_mid_record", payload: []byte{0x16, 0x03, 0x01, 0x00, 0x40, 0x01}, wantErr: "tls handshake: unexpected EOF"},
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
