//go:build linux

package sink

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/net/http2"
)

// maxHandshakeBytes bounds what a client may send before its TLS
// handshake completes; crypto/tls itself refuses a handshake message
// over 64 KiB, and ReadTimeout bounds the time.
const maxHandshakeBytes = 256 << 10

// errHandshakeLimit is returned by the limitReader under the handshake.
var errHandshakeLimit = fmt.Errorf("handshake exceeds %d bytes", maxHandshakeBytes)

// HTTP/2 bounds per connection: requests recorded (later ones are
// answered but not recorded), concurrent streams, and the flow-control
// windows (the protocol's minimum), which bound what the client may send
// before a handler reads. A connection then holds at most a window of
// unread body and maxH2Streams captures.
const (
	maxH2Requests = 64
	maxH2Streams  = 2
	h2Window      = 65535
	h2FrameSize   = 16 << 10
)

// refusalAlerts are the texts of the alerts a client sends when it does
// not accept a server's certificate.
var refusalAlerts = map[string]bool{
	"tls: bad certificate":                 true,
	"tls: unsupported certificate":         true,
	"tls: revoked certificate":             true,
	"tls: expired certificate":             true,
	"tls: unknown certificate":             true,
	"tls: unknown certificate authority":   true,
	"tls: access denied":                   true,
	"tls: bad certificate status response": true,
}

// h2Server serves every HTTP/2 connection; ServeConn is safe for
// concurrent use.
var h2Server = &http2.Server{
	MaxConcurrentStreams:         maxH2Streams,
	MaxReadFrameSize:             h2FrameSize,
	MaxUploadBufferPerStream:     h2Window,
	MaxUploadBufferPerConnection: h2Window,
}

// discardLog swallows the HTTP/2 server's own log lines; what matters is
// in the events.
var discardLog = log.New(io.Discard, "", 0)

// bufConn is a net.Conn whose reads come through r, which holds the
// bytes already peeked from the connection.
type bufConn struct {
	net.Conn
	r io.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// httpResponse returns the whole answer to an HTTP/1.1 request inside
// TLS: status, a JSON body "{}" where the status allows a body.
func httpResponse(status int) string {
	text := http.StatusText(status)
	if text == "" {
		text = "Status"
	}
	body := "{}"
	if !bodyAllowed(status) {
		body = ""
	}
	return "HTTP/1.1 " + strconv.Itoa(status) + " " + text + "\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
}

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && status >= 200
}

// readTLS terminates TLS with a certificate of the run's CA for the name
// the client asked for, then reads HTTP/1.1 or HTTP/2 requests inside.
// The raw bytes are counted in rec but not kept: they are ciphertext. It
// reports whether the connection's events were written already (one per
// HTTP/2 request), so that the caller writes none.
func (s *server) readTLS(c *net.TCPConn, br *bufio.Reader, lim *limitReader, rec *recorder, ev *Event) (recorded bool) {
	rec.buf, rec.max = nil, 0
	ev.TLS = true
	lim.n, lim.err = maxHandshakeBytes, errHandshakeLimit
	certSent := false
	tc := tls.Server(&bufConn{Conn: c, r: br}, &tls.Config{
		NextProtos:             []string{"h2", "http/1.1"},
		SessionTicketsDisabled: true,
		GetCertificate: func(hi *tls.ClientHelloInfo) (*tls.Certificate, error) {
			ev.SNI = hi.ServerName
			cert, err := s.leafFor(hi.ServerName, ev)
			certSent = err == nil
			return cert, err
		},
	})
	if err := tc.Handshake(); err != nil {
		ev.TLSRefused, ev.Error = handshakeError(err, certSent)
		return false
	}
	lim.n = -1
	ev.ALPN = tc.ConnectionState().NegotiatedProtocol
	if ev.ALPN == "h2" {
		return s.serveH2(tc, rec, ev)
	}
	// Inside, the same bounds as a plaintext connection: a recorder of
	// the decrypted bytes (which the body shares) and a header limit.
	prec := &recorder{r: tc, max: s.cfg.MaxCapture}
	plim := &limitReader{r: prec, n: int64(s.cfg.MaxCapture)}
	pbr := bufio.NewReaderSize(plim, 4096)
	if looksLikeHTTP(pbr) {
		s.readHTTP(tc, pbr, plim, prec, ev, s.tlsResponse)
		return false
	}
	// Not HTTP: keep the decrypted bytes as the body.
	plim.n = -1
	if _, err := pbr.WriteTo(io.Discard); err != nil {
		ev.Error = readError("tls read", err)
	}
	ev.Body = prec.buf
	ev.Truncated = prec.total.Load() > int64(len(prec.buf))
	return false
}

// leafFor returns the certificate for a handshake: for the SNI name;
// without one, for the name our DNS handed the destination out for
// (LookedUp) and the destination address.
func (s *server) leafFor(sni string, ev *Event) (*tls.Certificate, error) {
	if sni != "" {
		return s.ca.leaf(sni, netip.Addr{})
	}
	ip, _ := netip.ParseAddr(ev.DstIP)
	return s.ca.leaf(ev.LookedUp, ip)
}

// handshakeError describes a failed handshake, and reports whether the
// client refused the sink's certificate: it sent a certificate alert, or
// closed the connection once the certificate was sent.
func handshakeError(err error, certSent bool) (bool, string) {
	const refused = "tls: client refused the sink's certificate: "
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		if certSent && refusalAlerts[op.Err.Error()] {
			return true, refused + err.Error()
		}
		return false, "tls handshake: " + err.Error()
	}
	if certSent && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
		return true, refused + "the connection closed after the certificate was sent (" + err.Error() + ")"
	}
	return false, readError("tls handshake", err)
}

// serveH2 serves HTTP/2 on tc and writes one event per request, each
// with the connection's fields. It reports whether it wrote any; when it
// wrote none, or left requests out past maxH2Requests, the caller writes
// the connection's event.
func (s *server) serveH2(tc *tls.Conn, rec *recorder, ev *Event) bool {
	var (
		mu       sync.Mutex
		done     bool
		inflight sync.WaitGroup
		seen     atomic.Int64
	)
	base := *ev
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if done {
			mu.Unlock()
			return
		}
		inflight.Add(1)
		mu.Unlock()
		defer inflight.Done()
		if seen.Add(1) > maxH2Requests {
			s.answerH2(w)
			return
		}
		s.recordH2(w, r, base, rec)
	})
	h2Server.ServeConn(tc, &http2.ServeConnOpts{
		Handler:    handler,
		BaseConfig: &http.Server{MaxHeaderBytes: s.cfg.MaxCapture, ErrorLog: discardLog},
	})
	// ServeConn does not wait for handlers still running.
	mu.Lock()
	done = true
	mu.Unlock()
	inflight.Wait()

	n := seen.Load()
	if n > maxH2Requests {
		ev.Error = fmt.Sprintf("http2: %d requests past the %d-request cap were answered but not recorded", n-maxH2Requests, maxH2Requests)
	}
	return n > 0 && n <= maxH2Requests
}

// recordH2 writes the event of one HTTP/2 request and answers it.
func (s *server) recordH2(w http.ResponseWriter, r *http.Request, ev Event, rec *recorder) {
	defer func() {
		if p := recover(); p != nil {
			ev.Error = fmt.Sprintf("sink panic handling http2 request: %v\n%s", p, debug.Stack())
		}
		ev.Bytes = rec.total.Load()
		s.em.emit(ev)
	}()
	ev.HTTPMethod = r.Method
	ev.HTTPTarget = r.RequestURI
	ev.HTTPHost = r.Host
	ev.HTTPHeaders, ev.Truncated = capHeaders(r.Header)
	body := &capture{max: s.cfg.MaxCapture}
	_, err := io.Copy(body, r.Body)
	ev.Body, ev.Truncated = body.buf, ev.Truncated || body.dropped
	if err != nil {
		ev.Error = readError("http2 body", err)
		return
	}
	s.answerH2(w)
}

// answerH2 writes the TLS response to an HTTP/2 request.
func (s *server) answerH2(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.cfg.TLSResponseStatus)
	if bodyAllowed(s.cfg.TLSResponseStatus) {
		_, _ = io.WriteString(w, "{}")
	}
}
