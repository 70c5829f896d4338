//go:build linux

// Package sink is the network sink of a sandbox run. It runs in its own
// container on the run's internal network; the package's containers join
// its network namespace, and the rules Install puts in that namespace send
// every connection and datagram of a non-root user to the sink, whatever
// address it was meant for. The sink answers DNS queries with its own
// address, records what each connection or datagram carried and where it
// was going, and never forwards anything or dials out.
//
// TLS is terminated, not just noted. Every Serve call makes a fresh
// certificate authority (ECDSA P-256, valid for a day) whose private key
// exists only in the sink's memory, and publishes its certificate in the
// ready event (Event.CACert). A connection that starts with a TLS
// handshake record is answered by crypto/tls with a leaf signed by that
// CA for the name in the SNI (without one, for the name our DNS answer
// handed the destination out for and for the destination address); the
// sink records the SNI and reads the HTTP/1.1 request, or the HTTP/2
// requests (ALPN h2), inside as it reads plaintext HTTP, and answers them
// Config.TLSResponseStatus with the JSON body "{}". A client that does
// not trust the CA aborts the handshake: its event has the SNI and
// TLSRefused. Making the package's containers trust the CA is the
// caller's part.
//
// Each tcp, udp and dns event names the process that owns the client's
// socket (Event.PID), found by the socket's inode (sock_diag, or
// /proc/net/{tcp,udp}{,6}) among the processes' descriptors, when the
// sink shares the clients' PID namespace.
//
// Serve writes what it sees as JSON lines (one Event per line) and takes
// its instructions (phase changes, marks) as text lines, so that it can run
// as a separate process whose stdin and stdout are the scanner's.
//
// Wiring it into a run:
//
//   - The sink container runs as uid 0 with CapDrop ALL and CapAdd
//     NET_ADMIN (nftables, conntrack, and SO_RCVBUFFORCE for a large UDP
//     queue); NET_BIND_SERVICE is only needed for ports below 1024. A
//     read-only root and no-new-privileges are fine. Its process calls
//     Install, then Serve with stdin as control and stdout as events
//     (internal/sinkd is such a main).
//   - The package's containers use NetworkMode "container:<sink id>" and
//     must run as a non-root uid: the rules exempt uid 0, which is the
//     sink itself. Start them after the ready event.
//   - For Event.PID, the package's containers also join the sink's PID
//     namespace (PidMode "container:<sink id>"), and the sink has
//     SYS_PTRACE: /proc/[pid]/fd of another uid is closed to it, so it
//     copies their descriptors (pidfd_getfd) to compare. Without these
//     PID stays 0.
//   - To see inside TLS, make the package's containers trust the ready
//     event's ca_cert (the system store, and the variables runtimes read
//     instead: NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, REQUESTS_CA_BUNDLE).
//     It is valid for this run only.
//   - Write "phase install" before the lifecycle scripts, "phase run"
//     before the server starts, "mark handshake_done" after the MCP
//     handshake; close stdin to end. Keep reading stdout until EOF: writes
//     are synchronous, and a reader that stops stalls the sink.
package sink

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
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
	"time"
)

// Defaults for the zero values of Config.
const (
	DefaultTCPPort     = 15001
	DefaultUDPPort     = 15053
	DefaultMaxCapture  = 64 << 10
	DefaultReadTimeout = 3 * time.Second
	DefaultMaxConns    = 256
)

// EmbeddedDNS is the address of the Docker engine's embedded resolver, the
// nameserver of every container on a user-defined network. Queries sent
// there are the normal path and are not flagged as literal-IP traffic.
var EmbeddedDNS = netip.AddrFrom4([4]byte{127, 0, 0, 11})

// Event types.
const (
	TypeReady = "ready"
	TypeMark  = "mark"
	TypeDNS   = "dns"
	TypeTCP   = "tcp"
	TypeUDP   = "udp"
	TypeError = "error"
)

// Config configures Install and Serve. The zero value is usable: ports,
// capture size, timeout and connection cap take the defaults above, and
// the advertised address is the IPv4 address of eth0.
type Config struct {
	// TCPPort and UDPPort are where redirected traffic arrives.
	TCPPort, UDPPort int
	// Advertise is the address DNS answers give out; when nil, the first
	// IPv4 address of eth0 (or of any other non-loopback interface).
	Advertise net.IP
	// MaxCapture is how many bytes are kept per TCP connection or UDP
	// datagram, and also bounds an HTTP request's header block and body,
	// in plaintext or inside TLS (the TLS handshake itself has a fixed
	// bound of 256 KiB, and ReadTimeout).
	MaxCapture int
	// ReadTimeout is how long a TCP connection may stay open, counted from
	// accept; a client that sends nothing (or sends slowly) is closed then.
	ReadTimeout time.Duration
	// MaxConns caps concurrently handled TCP connections; connections
	// beyond it are recorded with their destination and closed at once.
	MaxConns int
	// NamePool, when valid, gives every name a DNS answer hands out an
	// address of its own from this prefix (the advertised address stays
	// an answer too), so that a connection made after a lookup is tied to
	// the name that led there (Event.LookedUp) even when it carries no
	// TLS SNI or HTTP Host. The prefix must route to the sink, as the
	// benchmarking range does in an isolated namespace (see Isolate). When
	// it is not valid every A answer is the advertised address.
	NamePool netip.Prefix
	// DrainGrace is how long in-flight connections and queued datagrams get
	// to finish once Serve is told to stop; 0 means min(ReadTimeout, 250ms).
	// A caller that stops the sink only after every client is gone can
	// make it short.
	DrainGrace time.Duration
	// TLSResponseStatus is the status code of the answer to an HTTP
	// request inside TLS (HTTP/1.1 or HTTP/2), which carries the body
	// "{}" as application/json; 0 means 200. Plaintext HTTP is always
	// answered 200 with an empty body.
	TLSResponseStatus int
	// CAFile, when set, is where Serve writes the run's CA certificate
	// (PEM, mode 0644) before it is ready: the trust store the caller
	// mounts into the package's containers. The key is never written.
	CAFile string

	// origDst replaces the conntrack lookup of a datagram's original
	// destination. Tests use it to simulate a missing or failing conntrack.
	origDst func(local, remote netip.AddrPort) (netip.AddrPort, error)
	// onCA, when set, is given the run's CA certificate and the CA and
	// leaf keys, so that tests can look for the keys in the events.
	onCA func(cert *x509.Certificate, caKey, leafKey *ecdsa.PrivateKey)
	// procRoot replaces /proc, and ownerBudget the time a PID lookup may
	// take (see ownerFinder), in tests.
	procRoot    string
	ownerBudget time.Duration
}

// withPortDefaults fills in ports, sizes and timeouts, and checks them.
func (c Config) withPortDefaults() (Config, error) {
	if c.TCPPort == 0 {
		c.TCPPort = DefaultTCPPort
	}
	if c.UDPPort == 0 {
		c.UDPPort = DefaultUDPPort
	}
	if c.MaxCapture <= 0 {
		c.MaxCapture = DefaultMaxCapture
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.TLSResponseStatus == 0 {
		c.TLSResponseStatus = http.StatusOK
	}
	if c.TLSResponseStatus < 200 || c.TLSResponseStatus > 599 {
		return c, fmt.Errorf("sink config: TLS response status %d is not in 200-599", c.TLSResponseStatus)
	}
	for _, p := range []int{c.TCPPort, c.UDPPort} {
		if p < 1 || p > 65535 {
			return c, fmt.Errorf("sink config: port %d out of range", p)
		}
	}
	return c, nil
}

// advertiseAddr returns the configured address or finds one.
func (c Config) advertiseAddr() (netip.Addr, error) {
	if c.Advertise != nil {
		a, ok := netip.AddrFromSlice(c.Advertise)
		if !ok {
			return netip.Addr{}, fmt.Errorf("sink config: advertise address %v is not an IP address", c.Advertise)
		}
		return a.Unmap(), nil
	}
	return findAdvertise()
}

// findAdvertise returns the first IPv4 address of eth0, or failing that of
// any up, non-loopback interface.
func findAdvertise() (netip.Addr, error) {
	first := func(ifi *net.Interface) (netip.Addr, bool) {
		addrs, err := ifi.Addrs()
		if err != nil {
			return netip.Addr{}, false
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() {
					return ip.Unmap(), true
				}
			}
		}
		return netip.Addr{}, false
	}
	if ifi, err := net.InterfaceByName("eth0"); err == nil {
		if a, ok := first(ifi); ok {
			return a, nil
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("find advertise address: list interfaces: %w", err)
	}
	for i := range ifs {
		if ifs[i].Flags&net.FlagUp == 0 || ifs[i].Flags&net.FlagLoopback != 0 {
			continue
		}
		if a, ok := first(&ifs[i]); ok {
			return a, nil
		}
	}
	return netip.Addr{}, errors.New("find advertise address: no IPv4 address on eth0 or any other non-loopback interface")
}

// Event is one line of Serve's output.
//
// For tcp events Time is when the connection was accepted and Phase the
// phase then; the line itself is written when the connection ends, so
// lines are in order of completion, not of start. Data holds the first
// MaxCapture bytes the client sent, exactly as sent; Bytes counts all of
// them. DstIP is empty when the original destination could not be
// recovered (Error says why).
//
// For a TLS connection (TLS set) Data stays empty, since the bytes on the
// wire are ciphertext, and Bytes still counts them; the HTTP fields and
// Body are those of the request inside. When the decrypted stream is not
// HTTP, Body holds its first MaxCapture bytes. An HTTP/2 connection
// gives one event per request (up to a cap), each with the connection's
// fields, and Bytes what the connection had received when the request
// ended; it gives a connection event of its own only when it carried no
// request or more than the cap.
//
// PID is looked up when a connection is accepted or a datagram arrives,
// within a small time budget; it is 0 when the process is not visible
// (another PID namespace, no right to read its fds), already gone, or
// not found in time, and on connections closed over the MaxConns cap.
type Event struct {
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	Phase string    `json:"phase,omitempty"`
	// PID is, on tcp, udp and dns events, the process that owns the
	// client's socket, as the sink's PID namespace numbers it; 0 when it
	// is unknown (see the package doc).
	PID int `json:"pid,omitempty"`

	// Set on the ready event.
	Advertise string `json:"advertise,omitempty"`
	TCPPort   int    `json:"tcp_port,omitempty"`
	UDPPort   int    `json:"udp_port,omitempty"`
	// CACert is the PEM certificate of the run's CA, made afresh by each
	// Serve call: the leaves the sink presents to TLS clients are signed
	// by it, so a client that trusts it lets the sink see inside. Its key
	// never leaves the sink's memory.
	CACert string `json:"ca_cert,omitempty"`

	// Set on mark events.
	Label string `json:"label,omitempty"`

	// Proto is "udp" or "tcp" on dns events.
	Proto   string `json:"proto,omitempty"`
	SrcPort int    `json:"src_port,omitempty"`
	DstIP   string `json:"dst_ip,omitempty"`
	DstPort int    `json:"dst_port,omitempty"`
	// LiteralIP is true when the destination is known and is neither the
	// advertised address, an address a DNS answer of ours handed out, nor
	// port 53 of the embedded resolver: no DNS answer of ours led there,
	// so the code used an address it carried or computed (a DNS query sent
	// straight to 8.8.8.8 is literal too).
	LiteralIP bool `json:"literal_ip,omitempty"`
	// LookedUp is, on a tcp or udp event, the name whose DNS answer gave
	// out the destination address (with Config.NamePool).
	LookedUp string `json:"looked_up,omitempty"`

	DNSName string `json:"dns_name,omitempty"`
	DNSType string `json:"dns_type,omitempty"`

	SNI string `json:"sni,omitempty"`
	// TLS is set on a connection that started a TLS handshake; ALPN is
	// the protocol it negotiated ("h2", "http/1.1", or empty).
	TLS  bool   `json:"tls,omitempty"`
	ALPN string `json:"alpn,omitempty"`
	// TLSRefused is set when the client aborted the handshake on the
	// sink's certificate (a certificate alert, or closing once it was
	// sent): it does not trust the run's CA. Error says how.
	TLSRefused bool `json:"tls_refused,omitempty"`

	HTTPMethod  string              `json:"http_method,omitempty"`
	HTTPTarget  string              `json:"http_target,omitempty"`
	HTTPHost    string              `json:"http_host,omitempty"`
	HTTPHeaders map[string][]string `json:"http_headers,omitempty"`
	// Body is the first MaxCapture bytes of an HTTP request body, after
	// chunked transfer decoding.
	Body []byte `json:"body,omitempty"`

	Data  []byte `json:"data,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
	// Truncated is set when Data or Body holds less than was sent.
	Truncated bool `json:"truncated,omitempty"`

	Error string `json:"error,omitempty"`
}

// emitter writes events as JSON lines; it is safe for concurrent use.
// Events are encoded and written one at a time under the lock, so that a
// burst of large events costs one encoding buffer, not one per connection,
// and a slow reader slows the sink down instead of growing a queue.
type emitter struct {
	mu     sync.Mutex
	w      io.Writer
	buf    bytes.Buffer
	err    error
	failed func(error)
}

// maxKeptBuffer is the encoding buffer capacity kept between events.
const maxKeptBuffer = 1 << 20

func (e *emitter) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Time = ev.Time.UTC()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return
	}
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		// Nothing in Event fails to encode; keep a line rather than
		// lose the event silently.
		e.buf.Reset()
		_ = enc.Encode(Event{Type: TypeError, Time: ev.Time, Error: "encode event: " + err.Error()})
	}
	_, err := e.w.Write(e.buf.Bytes())
	if e.buf.Cap() > maxKeptBuffer {
		e.buf = bytes.Buffer{}
	}
	if err != nil {
		e.err = fmt.Errorf("write event: %w", err)
		if e.failed != nil {
			e.failed(e.err)
		}
	}
}

func (e *emitter) flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if f, ok := e.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			e.err = fmt.Errorf("flush events: %w", err)
		}
	}
	return e.err
}

// server is the state of one Serve call.
type server struct {
	cfg       Config
	advertise netip.Addr
	em        *emitter
	phase     atomic.Pointer[string]
	origDst   func(local, remote netip.AddrPort) (netip.AddrPort, error)
	// owners finds the process behind a client socket (Event.PID).
	owners *ownerFinder

	// closing is closed when shutdown begins.
	closing chan struct{}

	mu     sync.Mutex
	active map[*net.TCPConn]struct{}

	// names hands out pool addresses, one per name (see Config.NamePool).
	names namePool

	// ca signs the certificates TLS clients are shown; tlsResponse is
	// the answer to an HTTP/1.1 request inside TLS.
	ca          *runCA
	tlsResponse string
}

// namePool is the addresses DNS answers handed out, one per name.
type namePool struct {
	mu     sync.Mutex
	prefix netip.Prefix
	next   netip.Addr
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
}

// addrFor returns the address of name, handing out the next one of the
// pool the first time; ok is false when the pool is off or spent.
func (p *namePool) addrFor(name string) (netip.Addr, bool) {
	if !p.prefix.IsValid() {
		return netip.Addr{}, false
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.byName[name]; ok {
		return a, true
	}
	if p.byName == nil {
		p.byName, p.byAddr = map[string]netip.Addr{}, map[netip.Addr]string{}
		// The first address of the prefix is its network; the sink's own
		// address is usually the second.
		p.next = p.prefix.Masked().Addr().Next().Next()
	}
	a := p.next
	if !p.prefix.Contains(a) || len(p.byName) >= maxPoolNames {
		return netip.Addr{}, false
	}
	p.next = a.Next()
	p.byName[name], p.byAddr[a] = a, name
	return a, true
}

// nameOf returns the name an address was handed out for.
func (p *namePool) nameOf(a netip.Addr) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.byAddr[a]
	return n, ok
}

// maxPoolNames bounds the names one run can be given addresses for; past
// it, answers give the advertised address.
const maxPoolNames = 1 << 16

func (s *server) currentPhase() string {
	if p := s.phase.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *server) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// errorEvent records a problem of the sink itself.
func (s *server) errorEvent(format string, args ...any) {
	s.em.emit(Event{Type: TypeError, Phase: s.currentPhase(), Error: fmt.Sprintf(format, args...)})
}

// literal reports whether traffic to dst was not led there by our DNS:
// it is neither the advertised address nor a DNS query to the embedded
// resolver.
func (s *server) literal(dst netip.AddrPort) bool {
	a := dst.Addr().Unmap()
	if !a.IsValid() {
		return false
	}
	if _, handed := s.names.nameOf(a); handed {
		return false
	}
	return a != s.advertise && !(a == EmbeddedDNS && dst.Port() == 53)
}

// setDst fills the destination fields of ev.
func (s *server) setDst(ev *Event, dst netip.AddrPort) {
	if !dst.IsValid() {
		return
	}
	ev.DstIP = dst.Addr().Unmap().String()
	ev.DstPort = int(dst.Port())
	ev.LiteralIP = s.literal(dst)
	if name, ok := s.names.nameOf(dst.Addr().Unmap()); ok {
		ev.LookedUp = name
	}
}

// drainGrace is how long in-flight connections and queued datagrams get to
// finish once shutdown begins.
func (s *server) drainGrace() time.Duration {
	if s.cfg.DrainGrace > 0 {
		return s.cfg.DrainGrace
	}
	return min(s.cfg.ReadTimeout, 250*time.Millisecond)
}

// Serve listens on cfg's TCP and UDP ports on all addresses, answers and
// records what arrives, and writes one JSON Event per line to events. The
// first line is a ready event once every socket listens. Lines read from
// control steer it: "phase <name>" tags later events with the phase,
// "mark <label>" writes a mark event. Serve returns nil after EOF on
// control or the end of ctx, once in-flight connections and queued
// datagrams are recorded; it returns an error when it cannot listen, when
// control fails other than by EOF, or when events cannot be written.
//
// A read on control that blocks forever is not interrupted by ctx; the
// goroutine reading it ends when the reader does.
func Serve(ctx context.Context, cfg Config, control io.Reader, events io.Writer) error {
	cfg, err := cfg.withPortDefaults()
	if err != nil {
		return err
	}
	adv, err := cfg.advertiseAddr()
	if err != nil {
		return err
	}
	ca, err := newRunCA()
	if err != nil {
		return err
	}
	if cfg.onCA != nil {
		cfg.onCA(ca.cert, ca.key, ca.leafKey)
	}
	if cfg.CAFile != "" {
		if err := os.WriteFile(cfg.CAFile, []byte(ca.certPEM), 0o644); err != nil {
			return fmt.Errorf("sink: write the run's CA: %w", err)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	s := &server{
		cfg:       cfg,
		advertise: adv,
		em:        &emitter{w: events, failed: func(err error) { cancel(err) }},
		closing:   make(chan struct{}),
		active:    map[*net.TCPConn]struct{}{},
		names:     namePool{prefix: cfg.NamePool},

		ca:          ca,
		tlsResponse: httpResponse(cfg.TLSResponseStatus),
	}

	s.owners = newOwnerFinder(cfg.procRoot, os.Getpid(), cfg.ownerBudget)
	if cfg.procRoot == "" {
		s.owners.diag, s.owners.probe = diagTCPInode, probeFDs
	}

	tcpLns, udpConns, v6Err, err := listen(cfg)
	if err != nil {
		return err
	}
	closeAll := func() {
		for _, l := range tcpLns {
			l.Close()
		}
		for _, c := range udpConns {
			c.Close()
		}
	}

	var closeLookup func()
	var lookupErr error
	s.origDst, closeLookup = cfg.origDst, func() {}
	if s.origDst == nil {
		lookup, err := dialConntrack()
		if err != nil {
			// Without conntrack a datagram's original destination is
			// unknown, but the datagram is still worth recording.
			lookupErr = err
			s.origDst = func(netip.AddrPort, netip.AddrPort) (netip.AddrPort, error) { return netip.AddrPort{}, err }
		} else {
			s.origDst, closeLookup = lookup.origDst, func() { lookup.Close() }
		}
	}
	defer closeLookup()

	s.em.emit(Event{Type: TypeReady, Advertise: adv.String(), TCPPort: cfg.TCPPort, UDPPort: cfg.UDPPort, CACert: ca.certPEM})
	if lookupErr != nil {
		s.errorEvent("%v: datagrams will be recorded without their original destination", lookupErr)
	}
	if v6Err != nil {
		s.errorEvent("IPv6 is enabled but the sink listens on IPv4 only: %v", v6Err)
	}

	controlDone := make(chan error, 1)
	go func() { controlDone <- s.readControl(control) }()

	var wg sync.WaitGroup
	for _, l := range tcpLns {
		wg.Go(func() { s.acceptLoop(l, &wg) })
	}
	for _, c := range udpConns {
		wg.Go(func() { s.udpLoop(c) })
	}

	var controlErr error
	select {
	case controlErr = <-controlDone:
	case <-ctx.Done():
	}

	// Shut down: stop accepting, let in-flight connections and queued
	// datagrams finish for a short grace, then wait for every handler.
	close(s.closing)
	deadline := time.Now().Add(s.drainGrace())
	for _, l := range tcpLns {
		l.Close()
	}
	for _, c := range udpConns {
		_ = c.SetReadDeadline(deadline)
	}
	s.mu.Lock()
	for c := range s.active {
		_ = c.SetReadDeadline(deadline)
	}
	s.mu.Unlock()
	wg.Wait()
	closeAll()

	return errors.Join(controlErr, s.em.flush())
}

// listen opens the IPv4 sockets, and the IPv6 ones when IPv6 is enabled in
// this namespace (the rules redirect IPv6 traffic too then). Failing to
// listen on IPv6 is reported in v6Err and is not fatal.
func listen(cfg Config) (tcpLns []*net.TCPListener, udpConns []*net.UDPConn, v6Err, err error) {
	fail := func(err error) ([]*net.TCPListener, []*net.UDPConn, error, error) {
		for _, l := range tcpLns {
			l.Close()
		}
		for _, c := range udpConns {
			c.Close()
		}
		return nil, nil, nil, err
	}
	fams := []struct {
		tcp, udp string
		any      net.IP
	}{{"tcp4", "udp4", net.IPv4zero}}
	if ipv6Enabled() {
		fams = append(fams, struct {
			tcp, udp string
			any      net.IP
		}{"tcp6", "udp6", net.IPv6unspecified})
	}
	for i, f := range fams {
		l, err := net.ListenTCP(f.tcp, &net.TCPAddr{IP: f.any, Port: cfg.TCPPort})
		if err == nil {
			var c *net.UDPConn
			c, err = listenUDP(f.udp, &net.UDPAddr{IP: f.any, Port: cfg.UDPPort})
			if err != nil {
				l.Close()
			} else {
				tcpLns = append(tcpLns, l)
				udpConns = append(udpConns, c)
				continue
			}
		}
		if i == 0 {
			return fail(fmt.Errorf("sink listen on tcp %d / udp %d: %w", cfg.TCPPort, cfg.UDPPort, err))
		}
		v6Err = err
	}
	return tcpLns, udpConns, v6Err, nil
}

// maxControlLine bounds one control line.
const maxControlLine = 4096

// readControl applies control lines until EOF.
func (s *server) readControl(r io.Reader) error {
	br := bufio.NewReaderSize(r, maxControlLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.errorEvent("control line longer than %d bytes ignored", maxControlLine)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			s.applyControl(string(bytes.TrimSpace(line)))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read sink control: %w", err)
		}
	}
}

func (s *server) applyControl(line string) {
	if line == "" {
		return
	}
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch verb {
	case "phase":
		s.phase.Store(&arg)
	case "mark":
		s.em.emit(Event{Type: TypeMark, Phase: s.currentPhase(), Label: arg})
	default:
		s.errorEvent("unknown control line %s", strconv.Quote(line))
	}
}
