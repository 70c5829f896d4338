package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// unitLockedBuffer is an io.Writer the proxy writes events to while the
// test reads them.
type unitLockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *unitLockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// events parses the JSON lines written so far; Time is checked and zeroed.
func (b *unitLockedBuffer) events(t *testing.T) []EgressEvent {
	t.Helper()
	b.mu.Lock()
	data := b.buf.String()
	b.mu.Unlock()
	evs := []EgressEvent{}
	for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		if line == "" {
			continue
		}
		var ev EgressEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q is not JSON: %v", line, err)
		}
		if ev.Time.IsZero() || time.Since(ev.Time) > time.Minute {
			t.Errorf("event %q has time %v, want now", line, ev.Time)
		}
		ev.Time = time.Time{}
		evs = append(evs, ev)
	}
	return evs
}

// unitProxy starts ServeEgressProxy on a loopback port; it is stopped, and
// its return value checked, when the test ends.
func unitProxy(t *testing.T, allow ...string) (string, *unitLockedBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	events := &unitLockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeEgressProxy(ctx, ln, allow, events) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeEgressProxy after cancel = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ServeEgressProxy did not return after its context ended")
		}
	})
	return ln.Addr().String(), events
}

// unitCounting wraps a listener and counts the connections it accepts.
type unitCounting struct {
	net.Listener
	n atomic.Int32
}

func (c *unitCounting) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.n.Add(1)
	}
	return conn, err
}

func unitTLSServer(t *testing.T, h http.Handler) (*httptest.Server, *unitCounting) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	cl := &unitCounting{Listener: srv.Listener}
	srv.Listener = cl
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, cl
}

// unitRaw sends one raw request to the proxy and reads the response head.
func unitRaw(t *testing.T, proxy, req string) (*http.Response, *bufio.Reader, net.Conn) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", proxy, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: strings.Fields(req)[0]})
	if err != nil {
		t.Fatalf("read proxy response: %v", err)
	}
	return resp, br, conn
}

func TestEgressProxyTunnelsAllowedHTTPS(t *testing.T) {
	upstream, _ := unitTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"path":"`+r.URL.Path+`","got":"`+string(body)+`"}`)
	}))
	host := strings.TrimPrefix(upstream.URL, "https://")
	proxy, events := unitProxy(t, host)

	pool := x509.NewCertPool()
	pool.AddCert(upstream.Certificate())
	tr := &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: proxy}),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	resp, err := hc.Post(upstream.URL+"/@modelcontextprotocol%2fserver-everything", "text/plain", strings.NewReader("ping from the sandbox"))
	if err != nil {
		t.Fatalf("request through the proxy: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %s, want 200", resp.Status)
	}
	if want := `{"path":"/@modelcontextprotocol/server-everything","got":"ping from the sandbox"}`; string(body) != want {
		t.Errorf("body = %s, want %s", body, want)
	}
	want := []EgressEvent{{Method: http.MethodConnect, Target: host, Allowed: true}}
	if d := unitDiff(want, events.events(t)); d != "" {
		t.Errorf("events (-want +got):%s", d)
	}
}

// Bytes a client sends right behind the CONNECT head (in the same packet)
// are buffered by the HTTP server and must still reach the upstream.
func TestEgressProxyForwardsEarlyBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	target := ln.Addr().String()
	proxy, events := unitProxy(t, target)

	resp, br, conn := unitRaw(t, proxy, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\nearly bytes|")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT status = %s, want 200", resp.Status)
	}
	if _, err := io.WriteString(conn, "later bytes|"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("early bytes|later bytes|"))
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatalf("read echo through the tunnel: %v (got %q)", err, got)
	}
	if want := "early bytes|later bytes|"; string(got) != want {
		t.Errorf("echo = %q, want %q", got, want)
	}
	want := []EgressEvent{{Method: http.MethodConnect, Target: target, Allowed: true}}
	if d := unitDiff(want, events.events(t)); d != "" {
		t.Errorf("events (-want +got):%s", d)
	}
}

func TestEgressProxyRefuses(t *testing.T) {
	allowedSrv, allowedConns := unitTLSServer(t, http.NotFoundHandler())
	otherSrv, otherConns := unitTLSServer(t, http.NotFoundHandler())
	allowed := strings.TrimPrefix(allowedSrv.URL, "https://")
	other := strings.TrimPrefix(otherSrv.URL, "https://")
	allowedHost, allowedPort, _ := net.SplitHostPort(allowed)

	tests := []struct {
		name string
		req  string
		want EgressEvent
	}{
		{
			name: "CONNECT to a host:port not allowed",
			req:  "CONNECT " + other + " HTTP/1.1\r\nHost: " + other + "\r\n\r\n",
			want: EgressEvent{Method: http.MethodConnect, Target: other, Allowed: false},
		},
		{
			name: "CONNECT to an allowed port on another host",
			req:  "CONNECT localhost:" + allowedPort + " HTTP/1.1\r\nHost: localhost:" + allowedPort + "\r\n\r\n",
			want: EgressEvent{Method: http.MethodConnect, Target: "localhost:" + allowedPort, Allowed: false},
		},
		{
			name: "CONNECT to the allowed host on another port",
			req:  "CONNECT " + allowedHost + ":443 HTTP/1.1\r\nHost: " + allowedHost + ":443\r\n\r\n",
			want: EgressEvent{Method: http.MethodConnect, Target: allowedHost + ":443", Allowed: false},
		},
		{
			name: "a Host header naming the allowed target does not override the CONNECT authority",
			req:  "CONNECT " + other + " HTTP/1.1\r\nHost: " + allowed + "\r\n\r\n",
			want: EgressEvent{Method: http.MethodConnect, Target: other, Allowed: false},
		},
		{
			name: "plain GET proxy request, even to the allowed host:port",
			req:  "GET http://" + allowed + "/left-pad HTTP/1.1\r\nHost: " + allowed + "\r\n\r\n",
			want: EgressEvent{Method: http.MethodGet, Target: "http://" + allowed + "/left-pad", Allowed: false},
		},
		{
			name: "POST proxy request",
			req:  "POST http://" + other + "/exfil HTTP/1.1\r\nHost: " + other + "\r\nContent-Length: 4\r\n\r\ndata",
			want: EgressEvent{Method: http.MethodPost, Target: "http://" + other + "/exfil", Allowed: false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy, events := unitProxy(t, allowed)
			resp, _, _ := unitRaw(t, proxy, tt.req)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("status = %s, want 403", resp.Status)
			}
			if n := allowedConns.n.Load() + otherConns.n.Load(); n != 0 {
				t.Errorf("the proxy opened %d upstream connections, want none", n)
			}
			if d := unitDiff([]EgressEvent{tt.want}, events.events(t)); d != "" {
				t.Errorf("events (-want +got):%s", d)
			}
		})
	}
}

func TestEgressProxyGETThroughTransport(t *testing.T) {
	var hits atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer upstream.Close()
	host := strings.TrimPrefix(upstream.URL, "http://")
	proxy, events := unitProxy(t, host)
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(upstream.URL + "/left-pad")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status = %s, want 403", resp.Status)
	}
	if hits.Load() != 0 {
		t.Errorf("upstream saw %d requests, want none", hits.Load())
	}
	want := []EgressEvent{{Method: http.MethodGet, Target: upstream.URL + "/left-pad", Allowed: false}}
	if d := unitDiff(want, events.events(t)); d != "" {
		t.Errorf("events (-want +got):%s", d)
	}
}

func TestEgressProxyAllowedButDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close()
	proxy, events := unitProxy(t, target)
	resp, _, _ := unitRaw(t, proxy, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status = %s, want 502", resp.Status)
	}
	want := []EgressEvent{{Method: http.MethodConnect, Target: target, Allowed: true}}
	if d := unitDiff(want, events.events(t)); d != "" {
		t.Errorf("events (-want +got):%s", d)
	}
}
