package sandbox

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/verifymcp/verifymcp/internal/hostport"
)

// The fetch step is the only step with egress, so it is where the
// environment shows: a TLS-intercepting proxy whose CA the sandbox does not
// trust, a registry the engine's network does not reach, a registry that
// fails. Those are not the package's doing and must never become its
// verdict. The fetch driver reports what it saw as data (the preflight's
// stage, Node.js error code and HTTP status; npm's own --json error; the git
// URLs npm asked for), and the functions below classify that data: an
// environment fault becomes an *EnvironmentError, which Scan returns;
// anything else stays package evidence (install_failed) with a one-line
// reason.

// FaultKind names where an environment fault lies.
type FaultKind string

const (
	// FaultTLS: the fetch step could not verify the registry's TLS
	// certificate: usually a TLS-intercepting proxy whose CA the sandbox was
	// not given.
	FaultTLS FaultKind = "tls_verification"
	// FaultDNS: the registry's host name does not resolve on the engine's
	// network.
	FaultDNS FaultKind = "registry_dns"
	// FaultUnreachable: the registry's host refused, reset or did not answer
	// connections from the engine's network.
	FaultUnreachable FaultKind = "registry_unreachable"
	// FaultRegistry: the registry answered with a server error or a rate
	// limit.
	FaultRegistry FaultKind = "registry_failing"
	// FaultEgress: the fetch container could not use the sandbox's own
	// egress proxy: the engine's networking failed.
	FaultEgress FaultKind = "egress_proxy"
	// FaultDisk: the fetch step ran out of disk space. It runs no package
	// code and writes to unbounded volumes on the engine's host, so the
	// host's disk is full, whatever the package.
	FaultDisk FaultKind = "host_disk_full"
)

// EnvironmentError is a failure of the environment the sandbox runs in,
// not of the package: nothing was learnt about the package, so a caller
// must not store or report it as the package's result. Scan returns it.
type EnvironmentError struct {
	Kind FaultKind
	// Host is the host:port that could not be reached or verified.
	Host string
	// Code is the Node.js or npm error code the fetch step saw
	// (SELF_SIGNED_CERT_IN_CHAIN, ECONNREFUSED, E503, ...), or the egress
	// proxy's reason (dns, refused, timeout).
	Code string
	// Cause says what failed, in one line; Fix says what to do about it.
	Cause string
	Fix   string
}

func (e *EnvironmentError) Error() string { return e.Cause + "; " + e.Fix }

// Engine reports whether the fault lies with the Docker engine (its
// networking, its host's disk) rather than with the registry or the
// network beyond it.
func (e *EnvironmentError) Engine() bool { return e.Kind == FaultEgress || e.Kind == FaultDisk }

// preflightResult is the fetch driver's check that it reaches the
// registry before npm runs (see drivers/fetch.js).
type preflightResult struct {
	OK bool `json:"ok"`
	// Stage is where it failed: proxy (the egress proxy itself), connect
	// (the proxy's tunnel to the registry), tls, http (the registry's
	// answer); "skipped" when no proxy was configured.
	Stage       string `json:"stage"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Status      int    `json:"status"`
	EgressError string `json:"egress_error"`
	Host        string `json:"host"`
	MS          int64  `json:"ms"`
}

// npmError is the error object npm prints with --json.
type npmError struct {
	Code    string `json:"code"`
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
}

// Node.js and OpenSSL codes of a certificate that could not be verified.
var tlsUntrusted = map[string]bool{
	"UNABLE_TO_GET_ISSUER_CERT_LOCALLY": true, "UNABLE_TO_GET_ISSUER_CERT": true, "SELF_SIGNED_CERT_IN_CHAIN": true,
	"DEPTH_ZERO_SELF_SIGNED_CERT": true, "UNABLE_TO_VERIFY_LEAF_SIGNATURE": true, "CERT_UNTRUSTED": true,
	"CERT_REJECTED": true, "CERT_SIGNATURE_FAILURE": true, "UNABLE_TO_DECRYPT_CERT_SIGNATURE": true,
	"UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY": true, "CERT_CHAIN_TOO_LONG": true, "INVALID_CA": true, "PATH_LENGTH_EXCEEDED": true,
}

// Codes of a certificate that is trusted but wrong: expired, not yet
// valid, for another name.
var tlsInvalid = map[string]bool{
	"CERT_HAS_EXPIRED": true, "CERT_NOT_YET_VALID": true, "ERR_TLS_CERT_ALTNAME_INVALID": true, "HOSTNAME_MISMATCH": true,
	"ERROR_IN_CERT_NOT_BEFORE_FIELD": true, "ERROR_IN_CERT_NOT_AFTER_FIELD": true, "CERT_REVOKED": true,
}

// Codes of a TLS handshake that failed before any certificate was judged
// (a plain-HTTP proxy on the TLS port, an interceptor speaking another
// protocol version).
var tlsHandshake = map[string]bool{
	"EPROTO": true, "ERR_SSL_WRONG_VERSION_NUMBER": true, "ERR_SSL_PACKET_LENGTH_TOO_LONG": true,
	"ERR_SSL_UNSUPPORTED_PROTOCOL": true, "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION": true, "ERR_TLS_HANDSHAKE_TIMEOUT": true,
}

var dnsCodes = map[string]bool{"ENOTFOUND": true, "EAI_AGAIN": true, "EAI_FAIL": true, "EAI_NODATA": true, "EAI_NONAME": true}

var netCodes = map[string]bool{
	"ECONNREFUSED": true, "ECONNRESET": true, "ETIMEDOUT": true, "ESOCKETTIMEDOUT": true, "ERR_SOCKET_TIMEOUT": true,
	"ERR_SOCKET_CONNECTION_TIMEOUT": true, "ECONNABORTED": true, "EHOSTUNREACH": true, "ENETUNREACH": true,
	"EHOSTDOWN": true, "ENETDOWN": true, "EPIPE": true, "UND_ERR_CONNECT_TIMEOUT": true, "UND_ERR_SOCKET": true,
}

const (
	fixCA       = "pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA"
	fixCAGiven  = "the CA bundle given (--ca-bundle or VERIFYMCP_CA_BUNDLE) does not hold the CA that signed it: pass the proxy's CA"
	fixNetwork  = "check that the Docker engine's bridge network reaches the registry (firewall, proxy, --registry), then `verifymcp sandbox doctor`"
	fixDNS      = "check the Docker engine's DNS (dockerd --dns) and the registry URL (--registry or VERIFYMCP_NPM_REGISTRY), then `verifymcp sandbox doctor`"
	fixRegistry = "try again later, or use a mirror with --registry (or VERIFYMCP_NPM_REGISTRY)"
	fixEgress   = "the engine's networks are not working: check dockerd (its bridge driver and iptables), then `verifymcp sandbox doctor`"
	fixDisk     = "free disk space on the Docker engine's host (`docker system df` shows what holds it; `verifymcp sandbox prune` removes what dead scans left), then scan again"
)

// diskFull reports whether a fetch step's own words say the disk was
// full: Node.js's and npm's ENOSPC, the C library's text, Rust's (uv's)
// "os error 28".
func diskFull(texts ...string) bool {
	for _, s := range texts {
		if strings.Contains(s, "ENOSPC") || strings.Contains(s, "No space left on device") || strings.Contains(s, "os error 28") {
			return true
		}
	}
	return false
}

// diskFault is the fault of a fetch step that ran out of disk space.
func diskFault(step string) *EnvironmentError {
	return &EnvironmentError{Kind: FaultDisk, Code: "ENOSPC", Fix: fixDisk,
		Cause: step + " in the fetch step ran out of disk space on the Docker engine's host"}
}

// classifyFetch turns what the fetch driver reported into an environment
// fault, or nil when the failure (if any) is the package's. registry is
// the registry URL, caGiven whether the operator passed a CA bundle.
func classifyFetch(fr *fetchResult, registry string, caGiven bool) *EnvironmentError {
	regHost, _ := registryHostPort(registry)
	if p := fr.Preflight; p != nil && !p.OK {
		host := p.Host
		if host == "" {
			host = regHost
		}
		return preflightFault(p, host, caGiven)
	}
	if !fr.OK && (diskFull(fr.LogTail) || fr.NPMError != nil && diskFull(fr.NPMError.Code, fr.NPMError.Summary)) {
		return diskFault("npm")
	}
	if fr.OK || fr.NPMError == nil || len(fr.GitWanted) > 0 {
		return nil
	}
	e := fr.NPMError
	host := regHost
	if u := failingURL(e.Summary); u != nil {
		if h := hostport.Of(u); !strings.EqualFold(h, regHost) {
			// A dependency from another host: the sandbox refuses it by
			// design, so it is the package's property, not a fault.
			return nil
		}
	}
	detail := e.Code + ": " + oneLineText(e.Summary)
	return codeFault(e.Code, detail, fmt.Sprintf("npm in the fetch step failed against the registry %s (%s)", host, detail), host, caGiven)
}

// preflightFault classifies a failed preflight.
func preflightFault(p *preflightResult, host string, caGiven bool) *EnvironmentError {
	detail := p.Code
	if p.Message != "" {
		detail = strings.TrimSpace(detail + ": " + oneLineText(p.Message))
	}
	switch p.Stage {
	case "proxy":
		return &EnvironmentError{Kind: FaultEgress, Host: host, Code: p.Code,
			Cause: fmt.Sprintf("the fetch step could not reach the sandbox's egress proxy (%s)", strings.TrimPrefix(detail, ": ")), Fix: fixEgress}
	case "connect":
		reason := p.EgressError
		what := fmt.Sprintf("the sandbox's egress proxy could not connect to the registry %s", host)
		if p.Message != "" {
			what += " (" + oneLineText(p.Message) + ")"
		}
		switch reason {
		case "dns":
			return &EnvironmentError{Kind: FaultDNS, Host: host, Code: reason, Cause: what + ": its name does not resolve on the engine's network", Fix: fixDNS}
		case "not_allowed":
			return &EnvironmentError{Kind: FaultEgress, Host: host, Code: reason, Cause: what + ": the proxy does not allow it", Fix: fixEgress}
		case "refused", "timeout", "unreachable", "error":
			return &EnvironmentError{Kind: FaultUnreachable, Host: host, Code: reason, Cause: what, Fix: fixNetwork}
		}
		return &EnvironmentError{Kind: FaultUnreachable, Host: host, Code: fmt.Sprint(p.Status),
			Cause: fmt.Sprintf("%s: it answered the CONNECT with HTTP %d", what, p.Status), Fix: fixNetwork}
	case "tls", "http":
		if p.Status >= 500 {
			// The driver asked twice (see drivers/fetch.js).
			return &EnvironmentError{Kind: FaultRegistry, Host: host, Code: fmt.Sprint(p.Status),
				Cause: fmt.Sprintf("the registry %s answered the fetch step with HTTP %d, twice", host, p.Status), Fix: fixRegistry}
		}
		what := fmt.Sprintf("the fetch step could not talk to the registry %s (%s)", host, detail)
		if p.Stage == "tls" {
			what = fmt.Sprintf("TLS to the registry %s failed in the fetch step (%s)", host, detail)
		}
		if f := codeFault(p.Code, detail, what, host, caGiven); f != nil {
			return f
		}
		return &EnvironmentError{Kind: FaultUnreachable, Host: host, Code: p.Code, Cause: what, Fix: fixNetwork}
	}
	return &EnvironmentError{Kind: FaultUnreachable, Host: host, Code: p.Code,
		Cause: fmt.Sprintf("the fetch step could not check the registry %s (%s)", host, detail), Fix: fixNetwork}
}

// codeFault classifies a Node.js or npm error code met while talking to
// the registry host; nil when the code says nothing about the environment.
// detail is the code with its message; what is the cause for the codes of
// the network and the registry.
func codeFault(code, detail, what, host string, caGiven bool) *EnvironmentError {
	f := &EnvironmentError{Host: host, Code: code, Cause: what}
	switch {
	case tlsUntrusted[code]:
		f.Kind, f.Fix = FaultTLS, fixCA
		f.Cause = fmt.Sprintf("the fetch step does not trust the TLS certificate it was shown for %s, as happens behind a TLS-intercepting proxy (%s)", host, detail)
		if caGiven {
			f.Fix = fixCAGiven
		}
	case tlsInvalid[code]:
		f.Kind, f.Fix = FaultTLS, "check this machine's clock and the certificate of any TLS-intercepting proxy; "+fixCA
		f.Cause = fmt.Sprintf("the TLS certificate the fetch step was shown for %s is not valid for it (%s)", host, detail)
	case tlsHandshake[code]:
		f.Kind, f.Fix = FaultTLS, "check the registry URL's scheme and port (--registry) and any proxy between the engine and the registry"
		f.Cause = fmt.Sprintf("the TLS handshake with %s failed in the fetch step (%s)", host, detail)
	case dnsCodes[code]:
		f.Kind, f.Fix = FaultDNS, fixDNS
	case netCodes[code]:
		f.Kind, f.Fix = FaultUnreachable, fixNetwork
	case code == "E429" || (len(code) == 4 && code[0] == 'E' && code[1] == '5' && isDigits(code[2:])):
		f.Kind, f.Fix = FaultRegistry, fixRegistry
	case code == "E401":
		// The registry wants credentials, and the sandbox passes none: the
		// registry's setting, not the package's doing.
		f.Kind, f.Fix = FaultRegistry, "the sandbox passes the registry no credentials: use a registry that serves the package without them (--registry or VERIFYMCP_NPM_REGISTRY)"
	default:
		return nil
	}
	return f
}

// fetchFailure says in one line why a fetch step that was not an
// environment fault failed: the package's own reason.
func fetchFailure(fr *fetchResult, registry string) string {
	regHost, _ := registryHostPort(registry)
	if len(fr.GitWanted) > 0 {
		return fmt.Sprintf("npm install failed: a dependency comes from a git repository (%s); the sandbox fetches only from the registry (%s), not with git",
			strings.Join(fr.GitWanted, ", "), regHost)
	}
	e := fr.NPMError
	if e == nil {
		if fr.NPMExit != nil {
			return fmt.Sprintf("npm install exited with status %d", *fr.NPMExit)
		}
		return "npm install failed"
	}
	if u := failingURL(e.Summary); u != nil {
		if h := hostport.Of(u); !strings.EqualFold(h, regHost) {
			return fmt.Sprintf("npm install failed (%s): a dependency is fetched from %s (%s); the sandbox fetches only from the registry (%s)",
				e.Code, h, u.Redacted(), regHost)
		}
	}
	msg := oneLineText(e.Summary)
	if e.Code == "E404" {
		if first, _, _ := strings.Cut(strings.TrimSpace(e.Detail), "\n"); first != "" {
			msg += ": " + strings.TrimSpace(first)
		}
	}
	return fmt.Sprintf("npm install failed (%s): %s", e.Code, msg)
}

// failingURL returns the first http(s) URL in npm's summary of an error
// ("request to URL failed, reason: ...", "404 Not Found - GET URL").
func failingURL(summary string) *url.URL {
	for _, w := range strings.Fields(summary) {
		w = strings.TrimRight(w, ",.;:)'\"")
		w = strings.TrimLeft(w, "('\"")
		if !strings.HasPrefix(w, "https://") && !strings.HasPrefix(w, "http://") {
			continue
		}
		if u, err := url.Parse(w); err == nil && u.Host != "" {
			return u
		}
	}
	return nil
}

func oneLineText(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
