package supplychain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/verifymcp/verifymcp/internal/thirdparty"
)

// MCPRegistryAuthPath is where a domain publishes its MCP registry key for
// the registry's HTTP authentication ("v=MCPv1; k=ed25519; p=<base64>" as
// the whole body), which proves the namespace of that exact domain, not
// its subdomains.
const MCPRegistryAuthPath = "/.well-known/mcp-registry-auth"

// wellKnownMaxBody is the most of the document read, as the registry
// reads it (4096 bytes).
const wellKnownMaxBody = 4096

// WellKnown fetches a domain's MCP registry key document the way the
// registry fetches it: GET https://<domain>/.well-known/mcp-registry-auth,
// no redirect followed, no credential sent, at most 4096 bytes read. The
// domain comes from a package's mcpName, so anyone can choose it: a direct
// connection to a loopback, private, link-local or otherwise non-public
// address is refused (through a configured proxy, the proxy decides).
type WellKnown struct {
	hc *http.Client
	// allowPrivate lets tests serve the documents on loopback.
	allowPrivate bool
	// proxied reports whether the transport's proxy carries a request.
	proxied func(*http.Request) bool
}

// WellKnownOptions configure a WellKnown client.
type WellKnownOptions struct {
	// HTTPClient is the client whose transport (CA bundle, proxy) and
	// timeout are used; nil means a client with a 10 second timeout, the
	// registry's own.
	HTTPClient *http.Client
	// AllowPrivate allows connections to non-public addresses (tests
	// that serve the documents on loopback).
	AllowPrivate bool
}

// NewWellKnown returns a client for the MCP registry key documents.
func NewWellKnown(o WellKnownOptions) *WellKnown {
	base := o.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 10 * time.Second}
	}
	w := &WellKnown{allowPrivate: o.AllowPrivate, proxied: func(*http.Request) bool { return false }}
	var tr *http.Transport
	switch t := base.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	}
	hc := *base
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if tr != nil {
		if tr.Proxy != nil {
			proxy := tr.Proxy
			w.proxied = func(r *http.Request) bool { u, err := proxy(r); return err == nil && u != nil }
		}
		if !o.AllowPrivate {
			dial := tr.DialContext
			if dial == nil {
				dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
			}
			guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: refusePrivate}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if ctx.Value(directDial{}) == true {
					return guarded.DialContext(ctx, network, addr)
				}
				return dial(ctx, network, addr)
			}
		}
		hc.Transport = tr
	}
	w.hc = &hc
	return w
}

// directDial marks a request's context when it connects to the domain
// itself, not through a proxy: its dials are guarded.
type directDial struct{}

// errPrivateAddress refuses a connection to a non-public address.
var errPrivateAddress = errors.New("refused: the domain resolves to a non-public address")

func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	ip = ip.Unmap()
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) || netip.MustParsePrefix("fc00::/7").Contains(ip) {
		return fmt.Errorf("%w (%s)", errPrivateAddress, ip)
	}
	return nil
}

// WellKnownAnswer is what a domain served at MCPRegistryAuthPath.
type WellKnownAnswer struct {
	URL    string
	Status int
	// Body is the document, trimmed, when Status is 200.
	Body string
}

// MCPRegistryAuth fetches https://<domain>/.well-known/mcp-registry-auth.
// Any HTTP answer is returned (a 404 is an answer: no key there); an error
// wraps thirdparty.ErrUnavailable when the domain could not be asked (no address, a
// refused or failed connection, TLS, a timeout, an address refused as
// non-public).
func (w *WellKnown) MCPRegistryAuth(ctx context.Context, domain string) (WellKnownAnswer, error) {
	u := "https://" + domain + MCPRegistryAuthPath
	a := WellKnownAnswer{URL: u}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return a, fmt.Errorf("%w: %s: %v", thirdparty.ErrUnavailable, u, err)
	}
	if !w.proxied(req) {
		req = req.WithContext(context.WithValue(ctx, directDial{}, true))
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := w.hc.Do(req)
	if err != nil {
		return a, fmt.Errorf("%w: %s: %v", thirdparty.ErrUnavailable, u, err)
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, wellKnownMaxBody))
		return a, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, wellKnownMaxBody))
	if err != nil {
		return a, fmt.Errorf("%w: %s: reading the answer: %v", thirdparty.ErrUnavailable, u, err)
	}
	a.Body = strings.TrimSpace(string(body))
	return a, nil
}
