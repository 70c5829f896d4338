//go:build linux

package sink

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// soOriginalDst is SO_ORIGINAL_DST (IPv4) and IP6T_SO_ORIGINAL_DST (IPv6),
// both 80, from linux/netfilter_ipv4.h and linux/netfilter_ipv6/ip6_tables.h.
const soOriginalDst = 80

// Per-request HTTP header caps, on top of the MaxCapture byte bound.
const (
	maxHeaderFields = 128
	maxHeaderValue  = 4096
)

// httpOK is the whole answer to an HTTP request: clients that wait for a
// response get one and move on, and learn nothing.
const httpOK = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

func (s *server) acceptLoop(l *net.TCPListener, wg *sync.WaitGroup) {
	sem := make(chan struct{}, s.cfg.MaxConns)
	backoff := time.Duration(0)
	for {
		c, err := l.AcceptTCP()
		if err != nil {
			if s.isClosing() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Running out of file descriptors is the usual cause; wait
			// for handlers to release some instead of spinning.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.errorEvent("tcp accept: %v", err)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		start := time.Now()
		phase := s.currentPhase()
		select {
		case sem <- struct{}{}:
			s.track(c, true)
			wg.Go(func() {
				defer func() { <-sem }()
				defer s.track(c, false)
				defer c.Close()
				s.handleTCP(c, start, phase)
			})
		default:
			// Over the cap: record where it was going and close it without
			// reading, so that a flood costs no goroutines or buffers.
			ev, _ := s.tcpEvent(c, start, phase)
			ev.Error = fmt.Sprintf("connection limit (%d) reached: closed without reading", s.cfg.MaxConns)
			c.Close()
			s.em.emit(ev)
		}
	}
}

func (s *server) track(c *net.TCPConn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.active[c] = struct{}{}
		if s.isClosing() {
			// Accepted just as shutdown began: give it the same grace.
			_ = c.SetReadDeadline(time.Now().Add(s.drainGrace()))
		}
		return
	}
	delete(s.active, c)
}

// tcpEvent starts the event of an accepted connection; dst is where the
// client connected to.
func (s *server) tcpEvent(c *net.TCPConn, start time.Time, phase string) (ev Event, dst netip.AddrPort) {
	ev = Event{Type: TypeTCP, Time: start, Phase: phase}
	if ra, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ev.SrcPort = ra.Port
	}
	dst, err := originalDst(c)
	if err != nil {
		// No conntrack entry means no NAT happened: the client connected
		// to the sink's own address, which is then the true destination.
		dst = c.LocalAddr().(*net.TCPAddr).AddrPort()
	}
	s.setDst(&ev, dst)
	return ev, dst
}

// originalDst returns the destination a redirected connection was
// addressed to, from the conntrack entry behind the socket.
func originalDst(c *net.TCPConn) (netip.AddrPort, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	v6 := c.LocalAddr().(*net.TCPAddr).IP.To4() == nil
	var dst netip.AddrPort
	var gerr error
	err = rc.Control(func(fd uintptr) {
		if !v6 {
			// struct sockaddr_in fits the 16 bytes of an ipv6_mreq.
			m, err := unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, soOriginalDst)
			if err != nil {
				gerr = err
				return
			}
			b := m.Multiaddr[:]
			dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4]))
			return
		}
		// struct sockaddr_in6 (28 bytes) fits an ip6_mtuinfo (32 bytes).
		m, err := unix.GetsockoptIPv6MTUInfo(int(fd), unix.SOL_IPV6, soOriginalDst)
		if err != nil {
			gerr = err
			return
		}
		// The port field holds network byte order in native storage.
		var port [2]byte
		binary.NativeEndian.PutUint16(port[:], m.Addr.Port)
		dst = netip.AddrPortFrom(netip.AddrFrom16(m.Addr.Addr), binary.BigEndian.Uint16(port[:]))
	})
	if err == nil {
		err = gerr
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	return dst, nil
}

// handleTCP reads what the client sends, within the deadline and the
// capture bound, and writes one event.
func (s *server) handleTCP(c *net.TCPConn, start time.Time, phase string) {
	ev, dst := s.tcpEvent(c, start, phase)
	// Right away: the client's socket may be gone once it has sent. Its
	// peer is the address it connected to, before the redirect.
	if ra, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ev.PID = s.owners.owner("tcp", ra.AddrPort(), dst, uint16(s.cfg.TCPPort))
	}
	rec := &recorder{r: c, max: s.cfg.MaxCapture}
	// recorded is set when the connection's events are written already:
	// as dns events, or one per HTTP/2 request.
	recorded := false
	defer func() {
		if r := recover(); r != nil {
			ev.Error = fmt.Sprintf("sink panic handling connection: %v\n%s", r, debug.Stack())
			recorded = false
		}
		if recorded {
			return
		}
		total := rec.total.Load()
		ev.Data, ev.Bytes = rec.buf, total
		ev.Truncated = ev.Truncated || total > int64(len(rec.buf)) && !ev.TLS
		s.em.emit(ev)
	}()
	deadline := start.Add(s.cfg.ReadTimeout)
	if s.isClosing() {
		deadline = time.Now().Add(s.drainGrace())
	}
	_ = c.SetReadDeadline(deadline)
	// The limit bounds what the HTTP parser may buffer for a request line
	// and headers; it is lifted for bodies and raw streams, whose bytes
	// are counted and dropped past the capture.
	lim := &limitReader{r: rec, n: int64(s.cfg.MaxCapture)}
	br := bufio.NewReaderSize(lim, 4096)
	first, err := br.Peek(1)
	if err != nil {
		ev.Error = readError("read", err)
		return
	}
	switch {
	case first[0] == 0x16:
		_ = c.SetWriteDeadline(deadline)
		recorded = s.readTLS(c, br, lim, rec, &ev)
	case ev.DstPort == 53 && s.serveDNSOverTCP(c, br, ev):
		recorded = true
	case looksLikeHTTP(br):
		s.readHTTP(c, br, lim, rec, &ev, httpOK)
	default:
		lim.n = -1
		if _, err := br.WriteTo(io.Discard); err != nil {
			ev.Error = readError("read", err)
		}
	}
}

// readError describes why reading stopped; a client that simply closes
// is not an error.
func readError(what string, err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return ""
	case errors.Is(err, os.ErrDeadlineExceeded):
		return what + ": read deadline reached"
	case errors.Is(err, errLimit):
		return what + ": " + errLimit.Error()
	default:
		return what + ": " + err.Error()
	}
}

// looksLikeHTTP reports whether the stream starts with an HTTP method
// token (upper-case letters) and a space.
func looksLikeHTTP(br *bufio.Reader) bool {
	for n := 1; n <= 16; n++ {
		b, err := br.Peek(n)
		if len(b) < n || err != nil {
			return false
		}
		switch c := b[n-1]; {
		case c == ' ':
			return n >= 4 // "GET " is the shortest method.
		case c < 'A' || c > 'Z':
			return false
		}
	}
	return false
}

// readHTTP parses one request read from br, keeps its line, headers and
// the first bytes of its body, and answers with resp; the caller closes.
// br reads through lim (the header bound, lifted for the body) and rec
// (the capture the body shares) from c, a plain or a TLS connection.
func (s *server) readHTTP(c net.Conn, br *bufio.Reader, lim *limitReader, rec *recorder, ev *Event, resp string) {
	req, rerr := http.ReadRequest(br)
	if rerr != nil {
		ev.Error = readError("http request", rerr)
		return
	}
	lim.n = -1
	// Where the body starts in the raw capture: everything read from the
	// connection so far, less what the parser read ahead.
	bodyStart := rec.total.Load() - int64(br.Buffered())
	ev.HTTPMethod = req.Method
	ev.HTTPTarget = req.RequestURI
	ev.HTTPHost = req.Host
	ev.HTTPHeaders, ev.Truncated = capHeaders(req.Header)
	chunked := len(req.TransferEncoding) > 0
	if chunked {
		// ReadRequest moves this header out of req.Header; it was sent.
		ev.HTTPHeaders["Transfer-Encoding"] = req.TransferEncoding
	}
	if req.Header.Get("Expect") == "100-continue" {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
	}
	var err error
	if chunked {
		decoded := &capture{max: s.cfg.MaxCapture}
		_, err = io.Copy(decoded, req.Body)
		ev.Body, ev.Truncated = decoded.buf, ev.Truncated || decoded.dropped
	} else {
		// An identity-encoded body is in the raw capture as sent: share
		// those bytes rather than keep a second copy. Headers and body
		// then share MaxCapture.
		var n int64
		n, err = io.Copy(io.Discard, req.Body)
		if kept := int64(len(rec.buf)); bodyStart < kept && n > 0 {
			ev.Body = rec.buf[bodyStart:min(kept, bodyStart+n)]
		}
		ev.Truncated = ev.Truncated || int64(len(ev.Body)) < n
	}
	if err != nil {
		ev.Error = readError("http body", err)
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, resp)
}

// capHeaders copies at most maxHeaderFields header values, each cut to
// maxHeaderValue bytes, and reports whether anything was left out.
func capHeaders(h http.Header) (map[string][]string, bool) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string][]string, len(keys))
	n, cut := 0, false
	for _, k := range keys {
		for _, v := range h[k] {
			if n == maxHeaderFields {
				return out, true
			}
			if len(v) > maxHeaderValue {
				v, cut = v[:maxHeaderValue], true
			}
			out[k] = append(out[k], v)
			n++
		}
	}
	return out, cut
}

// errLimit is returned by limitReader at its limit.
var errLimit = errors.New("request line and headers exceed the capture limit")

// limitReader returns err (errLimit when nil) after n bytes; n < 0 means
// no limit.
type limitReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n == 0 {
		if l.err != nil {
			return 0, l.err
		}
		return 0, errLimit
	}
	if l.n > 0 && int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	if l.n > 0 {
		l.n -= int64(n)
	}
	return n, err
}

// recorder keeps the first max bytes read through it and counts them all.
// One goroutine reads; total may be loaded from others.
type recorder struct {
	r     io.Reader
	max   int
	buf   []byte
	total atomic.Int64
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.total.Add(int64(n))
	r.buf = keep(r.buf, p[:n], r.max)
	return n, err
}

// capture is a writer that keeps the first max bytes written to it.
type capture struct {
	max     int
	buf     []byte
	dropped bool
}

func (c *capture) Write(p []byte) (int, error) {
	if len(p) > c.max-len(c.buf) {
		c.dropped = true
	}
	c.buf = keep(c.buf, p, c.max)
	return len(p), nil
}

// smallCapture is the first allocation of a capture buffer. Most
// connections send less; those that send more get the whole capture at
// once, so that a buffer is reallocated at most once and a busy sink
// leaves little garbage behind.
const smallCapture = 4096

// keep appends as much of p to buf as fits within max bytes.
func keep(buf, p []byte, max int) []byte {
	k := min(len(p), max-len(buf))
	if k <= 0 {
		return buf
	}
	if len(buf)+k > cap(buf) {
		size := max
		if len(buf)+k <= smallCapture {
			size = min(max, smallCapture)
		}
		nb := make([]byte, len(buf), size)
		copy(nb, buf)
		buf = nb
	}
	return append(buf, p[:k]...)
}
