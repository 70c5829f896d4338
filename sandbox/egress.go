package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The fetch step reaches the registry through an egress proxy: a container
// on two networks, the run's internal network (which has no route out) and
// the engine's default bridge. It runs in the helper image (a static Linux
// build of this program, see helper.go), so no image registry is needed,
// and it tunnels CONNECT requests to an
// allow-list of host:port pairs and refuses everything else. npm in the
// fetch container is configured to use it; anything else in that container
// has no route at all.

// EgressEvent is one request the egress proxy saw.
type EgressEvent struct {
	Time    time.Time `json:"time"`
	Method  string    `json:"method"`
	Target  string    `json:"target"`
	Allowed bool      `json:"allowed"`
}

// ServeEgressProxy accepts proxy requests on ln until ctx ends. CONNECT to an
// allowed host:port is tunnelled; every other request gets 403. Each
// request is written to events as one JSON line.
func ServeEgressProxy(ctx context.Context, ln net.Listener, allow []string, events io.Writer) error {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[strings.ToLower(a)] = true
	}
	var mu sync.Mutex
	logEvent := func(ev EgressEvent) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(ev)
		_, _ = events.Write(append(b, '\n'))
	}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			target := req.Host
			if req.Method != http.MethodConnect {
				target = req.URL.String()
			}
			ok := req.Method == http.MethodConnect && allowed[strings.ToLower(req.Host)]
			logEvent(EgressEvent{Time: time.Now().UTC(), Method: req.Method, Target: target, Allowed: ok})
			if !ok {
				w.Header().Set(EgressErrorHeader, "not_allowed")
				http.Error(w, "verifymcp egress proxy: destination not allowed", http.StatusForbidden)
				return
			}
			upstream, err := (&net.Dialer{Timeout: 15 * time.Second}).DialContext(req.Context(), "tcp", req.Host)
			if err != nil {
				// The fetch driver reads why from the headers, so that a
				// registry that does not resolve or answer is diagnosed
				// exactly (see fault.go).
				w.Header().Set(EgressErrorHeader, dialFailure(err))
				w.Header().Set(EgressDetailHeader, oneLineText(err.Error()))
				http.Error(w, "verifymcp egress proxy: "+err.Error(), http.StatusBadGateway)
				return
			}
			hj, ok := w.(http.Hijacker)
			if !ok {
				upstream.Close()
				http.Error(w, "hijack unsupported", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusOK)
			conn, rw, err := hj.Hijack()
			if err != nil {
				upstream.Close()
				return
			}
			go tunnel(conn, rw, upstream)
		}),
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// EgressErrorHeader says, on a CONNECT the egress proxy did not tunnel,
// why: not_allowed (403), or why the dial failed (502): dns, refused,
// timeout, unreachable, error. EgressDetailHeader holds the dial error.
const (
	EgressErrorHeader  = "X-Verifymcp-Egress-Error"
	EgressDetailHeader = "X-Verifymcp-Egress-Detail"
)

// dialFailure names why a dial failed, from the error's type.
func dialFailure(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, syscall.ETIMEDOUT):
		return "timeout"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTDOWN), errors.Is(err, syscall.ENETDOWN):
		return "unreachable"
	default:
		return "error"
	}
}

func tunnel(client net.Conn, rw *bufio.ReadWriter, upstream net.Conn) {
	defer client.Close()
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the client sent after the CONNECT line are already buffered.
		if n := rw.Reader.Buffered(); n > 0 {
			b, _ := rw.Reader.Peek(n)
			_, _ = upstream.Write(b)
		}
		_, _ = io.Copy(upstream, client)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, upstream)
		done <- struct{}{}
	}()
	<-done
}
