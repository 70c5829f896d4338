//go:build linux

package sink

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
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
	if block, _ := pem.Decode([]byte(got.CACert)); block == nil || block.Type != "CERTIFICATE" {
		t.Errorf("ready ca_cert = %q, want a PEM certificate", got.CACert)
	} else if ca, err := x509.ParseCertificate(block.Bytes); err != nil || !ca.IsCA {
		t.Errorf("ready ca_cert does not parse as a CA certificate: %v", err)
	}
	got.CACert = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ready event (-want +got):\n%s", diff)
	}
	if h.ready.Time.IsZero() || h.ready.Time.Location() != time.UTC {
		t.Errorf("ready time = %v, want a UTC time", h.ready.Time)
	}
}

// TestCAFile: with CAFile set, the run's CA certificate is written there
// before the sink is ready, the same one the ready event publishes, and
// no key with it.
func TestCAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ca-certificates.crt")
	h := startSink(t, Config{CAFile: path})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != h.ready.CACert || h.ready.CACert == "" {
		t.Errorf("CA file holds %q, the ready event %q: want the same certificate", data, h.ready.CACert)
	}
	if strings.Contains(string(data), "PRIVATE KEY") {
		t.Error("the CA file holds a private key")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("CA file mode %v, %v; want 0644, readable by the sandbox user", fi.Mode(), err)
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
