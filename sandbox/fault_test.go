package sandbox

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The fetch results under testdata/fetchfaults are what the fetch driver
// printed in a real fetch step on this project's machines (egress proxy,
// internal network, npm 10.9, Node.js 22), behind the TLS-intercepting
// proxy with and without its CA, against fixture tarballs with one broken
// dependency each and against registries that do not resolve or refuse.
// The inline ones follow npm's and Node's formats for what cannot be
// produced on demand here (a registry answering 503, a certificate that
// expired).

func TestClassifyFetch(t *testing.T) {
	const npmjs = "https://registry.npmjs.org/"
	tests := []struct {
		name     string
		file     string // under testdata/fetchfaults, or
		result   string // the driver's result line
		registry string
		caGiven  bool
		// An environment fault: its kind, code, host and whole message.
		kind    FaultKind
		code    string
		host    string
		message string
		// Otherwise the package's failure as the install evidence says it
		// ("" when the fetch succeeded).
		pkgError string
	}{
		{
			name: "no CA bundle behind the intercepting proxy", file: "tls_self_signed.txt", registry: npmjs,
			kind: FaultTLS, code: "SELF_SIGNED_CERT_IN_CHAIN", host: "registry.npmjs.org:443",
			message: "the fetch step does not trust the TLS certificate it was shown for registry.npmjs.org:443, as happens behind a TLS-intercepting proxy " +
				"(SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain); pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA",
		},
		{
			name: "a CA bundle that lacks the proxy's CA", registry: npmjs, caGiven: true,
			result: `{"ok":false,"npm_exit":null,"preflight":{"ok":false,"stage":"tls","code":"UNABLE_TO_GET_ISSUER_CERT_LOCALLY","message":"unable to get local issuer certificate","host":"registry.npmjs.org:443","ms":31}}`,
			kind:   FaultTLS, code: "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", host: "registry.npmjs.org:443",
			message: "the fetch step does not trust the TLS certificate it was shown for registry.npmjs.org:443, as happens behind a TLS-intercepting proxy " +
				"(UNABLE_TO_GET_ISSUER_CERT_LOCALLY: unable to get local issuer certificate); the CA bundle given (--ca-bundle or VERIFYMCP_CA_BUNDLE) does not hold the CA that signed it: pass the proxy's CA",
		},
		{
			name: "an expired certificate", registry: npmjs,
			result: `{"ok":false,"preflight":{"ok":false,"stage":"tls","code":"CERT_HAS_EXPIRED","message":"certificate has expired","host":"registry.npmjs.org:443"}}`,
			kind:   FaultTLS, code: "CERT_HAS_EXPIRED", host: "registry.npmjs.org:443",
			message: "the TLS certificate the fetch step was shown for registry.npmjs.org:443 is not valid for it (CERT_HAS_EXPIRED: certificate has expired); " +
				"check this machine's clock and the certificate of any TLS-intercepting proxy; pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA",
		},
		{
			name: "a certificate for another name", registry: npmjs,
			result: `{"ok":false,"preflight":{"ok":false,"stage":"tls","code":"ERR_TLS_CERT_ALTNAME_INVALID","message":"Hostname/IP does not match certificate's altnames: Host: registry.npmjs.org. is not in the cert's altnames: DNS:proxy.corp.example","host":"registry.npmjs.org:443"}}`,
			kind:   FaultTLS, code: "ERR_TLS_CERT_ALTNAME_INVALID", host: "registry.npmjs.org:443",
			message: "the TLS certificate the fetch step was shown for registry.npmjs.org:443 is not valid for it (ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: " +
				"Host: registry.npmjs.org. is not in the cert's altnames: DNS:proxy.corp.example); check this machine's clock and the certificate of any TLS-intercepting proxy; pass --ca-bundle (or VERIFYMCP_CA_BUNDLE) with the proxy's CA",
		},
		{
			name: "the registry's name does not resolve", file: "registry_dns.txt", registry: "https://nonexistent.invalid/",
			kind: FaultDNS, code: "dns", host: "nonexistent.invalid:443",
			message: "the sandbox's egress proxy could not connect to the registry nonexistent.invalid:443 (dial tcp: lookup nonexistent.invalid on 127.0.0.11:53: no such host): " +
				"its name does not resolve on the engine's network; check the Docker engine's DNS (dockerd --dns) and the registry URL (--registry or VERIFYMCP_NPM_REGISTRY), then `verifymcp sandbox doctor`",
		},
		{
			name: "the registry refuses connections", file: "registry_refused.txt", registry: "https://127.0.0.1:9/",
			kind: FaultUnreachable, code: "refused", host: "127.0.0.1:9",
			message: "the sandbox's egress proxy could not connect to the registry 127.0.0.1:9 (dial tcp 127.0.0.1:9: connect: connection refused); " +
				"check that the Docker engine's bridge network reaches the registry (firewall, proxy, --registry), then `verifymcp sandbox doctor`",
		},
		{
			name: "the registry does not answer", registry: npmjs,
			result: `{"ok":false,"preflight":{"ok":false,"stage":"connect","status":502,"egress_error":"timeout","message":"dial tcp 104.16.0.35:443: i/o timeout","host":"registry.npmjs.org:443","ms":15003}}`,
			kind:   FaultUnreachable, code: "timeout", host: "registry.npmjs.org:443",
			message: "the sandbox's egress proxy could not connect to the registry registry.npmjs.org:443 (dial tcp 104.16.0.35:443: i/o timeout); " +
				"check that the Docker engine's bridge network reaches the registry (firewall, proxy, --registry), then `verifymcp sandbox doctor`",
		},
		{
			name: "the registry answers 503 twice", registry: npmjs,
			result: `{"ok":false,"preflight":{"ok":false,"stage":"http","status":503,"host":"registry.npmjs.org:443","ms":240}}`,
			kind:   FaultRegistry, code: "503", host: "registry.npmjs.org:443",
			message: "the registry registry.npmjs.org:443 answered the fetch step with HTTP 503, twice; try again later, or use a mirror with --registry (or VERIFYMCP_NPM_REGISTRY)",
		},
		{
			name: "the connection is reset during the handshake", registry: npmjs,
			result: `{"ok":false,"preflight":{"ok":false,"stage":"tls","code":"ECONNRESET","message":"Client network socket disconnected before secure TLS connection was established","host":"registry.npmjs.org:443"}}`,
			kind:   FaultUnreachable, code: "ECONNRESET", host: "registry.npmjs.org:443",
			message: "TLS to the registry registry.npmjs.org:443 failed in the fetch step (ECONNRESET: Client network socket disconnected before secure TLS connection was established); " +
				"check that the Docker engine's bridge network reaches the registry (firewall, proxy, --registry), then `verifymcp sandbox doctor`",
		},
		{
			name: "the fetch container cannot reach the egress proxy", file: "egress_refused.txt", registry: npmjs,
			kind: FaultEgress, code: "ECONNREFUSED", host: "registry.npmjs.org:443",
			message: "the fetch step could not reach the sandbox's egress proxy (ECONNREFUSED: connect ECONNREFUSED 172.26.0.2:1); " +
				"the engine's networks are not working: check dockerd (its bridge driver and iptables), then `verifymcp sandbox doctor`",
		},
		{
			name: "the preflight passed but the registry failed npm midway", registry: npmjs,
			result: `{"ok":false,"npm_exit":1,"preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"},"npm_error":{"code":"E503","summary":"503 Service Unavailable - GET https://registry.npmjs.org/zod","detail":""}}`,
			kind:   FaultRegistry, code: "E503", host: "registry.npmjs.org:443",
			message: "npm in the fetch step failed against the registry registry.npmjs.org:443 (E503: 503 Service Unavailable - GET https://registry.npmjs.org/zod); try again later, or use a mirror with --registry (or VERIFYMCP_NPM_REGISTRY)",
		},
		{
			name: "a registry that wants credentials", registry: "https://npm.corp.example/",
			result: `{"ok":false,"npm_exit":1,"preflight":{"ok":true,"stage":"http","status":404,"host":"npm.corp.example:443"},"npm_error":{"code":"E401","summary":"Unable to authenticate, your authentication token seems to be invalid.","detail":"To correct this please try logging in again with:\n  npm login"}}`,
			kind:   FaultRegistry, code: "E401", host: "npm.corp.example:443",
			message: "npm in the fetch step failed against the registry npm.corp.example:443 (E401: Unable to authenticate, your authentication token seems to be invalid.); " +
				"the sandbox passes the registry no credentials: use a registry that serves the package without them (--registry or VERIFYMCP_NPM_REGISTRY)",
		},
		{
			name: "a connection to the registry reset during npm", registry: npmjs,
			result: `{"ok":false,"npm_exit":1,"preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"},"npm_error":{"code":"ECONNRESET","summary":"request to https://registry.npmjs.org/zod/-/zod-3.25.76.tgz failed, reason: socket hang up","detail":"network aborted"}}`,
			kind:   FaultUnreachable, code: "ECONNRESET", host: "registry.npmjs.org:443",
			message: "npm in the fetch step failed against the registry registry.npmjs.org:443 (ECONNRESET: request to https://registry.npmjs.org/zod/-/zod-3.25.76.tgz failed, reason: socket hang up); " +
				"check that the Docker engine's bridge network reaches the registry (firewall, proxy, --registry), then `verifymcp sandbox doctor`",
		},

		{
			name: "the host's disk full while npm unpacks (no error object)", registry: npmjs,
			result: `{"ok":false,"npm_exit":1,"log_tail":"npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write\nnpm error A complete log of this run can be found in: /cache/npm/_logs/2026-12-06T20_02_20_473Z-debug-0.log\n","preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"}}`,
			kind:   FaultDisk, code: "ENOSPC",
			message: "npm in the fetch step ran out of disk space on the Docker engine's host; " + fixDisk,
		},
		{
			name: "the host's disk full, npm's error object", registry: npmjs,
			result: `{"ok":false,"npm_exit":1,"preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"},"npm_error":{"code":"ENOSPC","summary":"nospc: ENOSPC: no space left on device, write","detail":""}}`,
			kind:   FaultDisk, code: "ENOSPC",
			message: "npm in the fetch step ran out of disk space on the Docker engine's host; " + fixDisk,
		},

		// The package's own failures stay package evidence.
		{
			name: "a dependency that does not exist", file: "dep_missing_e404.txt", registry: npmjs,
			pkgError: "npm install failed (E404): Not Found - GET https://registry.npmjs.org/verifymcp-surely-not-a-package-4242: 'verifymcp-surely-not-a-package-4242@^1.0.0' is not in this registry.",
		},
		{
			name: "a dependency range no version satisfies", file: "dep_range_etarget.txt", registry: npmjs,
			pkgError: "npm install failed (ETARGET): No matching version found for is-number@^99.0.0.",
		},
		{
			name: "a dependency whose bytes do not match its integrity", file: "dep_integrity.txt", registry: npmjs,
			pkgError: "npm install failed (EINTEGRITY): sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA== integrity checksum failed when using sha512: " +
				"wanted sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA== but got sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==. (3730 bytes)",
		},
		{
			name: "a dependency from a tarball URL on another host", file: "dep_tarball_other_host.txt", registry: npmjs,
			pkgError: "npm install failed (E403): a dependency is fetched from example.com:443 (https://example.com/foo-1.0.0.tgz); the sandbox fetches only from the registry (registry.npmjs.org:443)",
		},
		{
			name: "a dependency from git", file: "dep_git.txt", registry: npmjs,
			pkgError: "npm install failed: a dependency comes from a git repository (https://github.com/jonschlinkert/is-number.git, ssh://git@github.com/jonschlinkert/is-number.git); " +
				"the sandbox fetches only from the registry (registry.npmjs.org:443), not with git",
		},
		{
			name: "a dependency on another host that does not resolve is still the package's", registry: npmjs,
			result:   `{"ok":false,"npm_exit":1,"preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"},"npm_error":{"code":"ENOTFOUND","summary":"request to https://downloads.example.net/pkg.tgz failed, reason: getaddrinfo ENOTFOUND downloads.example.net","detail":""}}`,
			pkgError: "npm install failed (ENOTFOUND): a dependency is fetched from downloads.example.net:443 (https://downloads.example.net/pkg.tgz); the sandbox fetches only from the registry (registry.npmjs.org:443)",
		},
		{
			name: "a dependency the registry forbids (security hold)", registry: npmjs,
			result:   `{"ok":false,"npm_exit":1,"preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"},"npm_error":{"code":"E403","summary":"403 Forbidden - GET https://registry.npmjs.org/evil-dep - Forbidden","detail":"In most cases, you or one of your dependencies are requesting\na package version that is forbidden by your security policy, or\non a server you do not have access to."}}`,
			pkgError: "npm install failed (E403): 403 Forbidden - GET https://registry.npmjs.org/evil-dep - Forbidden",
		},
		{
			name: "npm killed without a word", registry: npmjs,
			result:   `{"ok":false,"npm_exit":137,"log_tail":"","preflight":{"ok":true,"stage":"http","status":200,"host":"registry.npmjs.org:443"}}`,
			pkgError: "npm install exited with status 137",
		},
		{
			name: "with the CA bundle it fetches", file: "ok_with_ca.txt", registry: npmjs, caGiven: true,
		},
		{
			name: "a result recorded before the preflight existed", registry: npmjs,
			result: `{"ok":true,"npm_exit":0,"target":{"name":"is-number","version":"7.0.0"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := []byte(resultMark + tt.result)
			if tt.file != "" {
				var err error
				if line, err = os.ReadFile(filepath.Join("testdata", "fetchfaults", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			var fr fetchResult
			if err := decodeResult(append([]byte("npm output\n"), line...), &fr); err != nil {
				t.Fatalf("decodeResult: %v", err)
			}
			fault := classifyFetch(&fr, tt.registry, tt.caGiven)
			if tt.kind == "" {
				if fault != nil {
					t.Fatalf("classifyFetch = %v (%s), want the package's failure", fault, fault.Kind)
				}
				if got := failedText(&fr, tt.registry); got != tt.pkgError {
					t.Errorf("install error\n got %q\nwant %q", got, tt.pkgError)
				}
				return
			}
			if fault == nil {
				t.Fatalf("classifyFetch = nil (install error %q), want a %s fault", fetchFailure(&fr, tt.registry), tt.kind)
			}
			if fault.Kind != tt.kind || fault.Code != tt.code || fault.Host != tt.host {
				t.Errorf("fault = {%s %s %s}, want {%s %s %s}", fault.Kind, fault.Code, fault.Host, tt.kind, tt.code, tt.host)
			}
			if got := fault.Error(); got != tt.message {
				t.Errorf("message\n got %q\nwant %q", got, tt.message)
			}
			var ee *EnvironmentError
			if err := error(fault); !errors.As(err, &ee) || ee.Engine() != (tt.kind == FaultEgress || tt.kind == FaultDisk) {
				t.Errorf("errors.As / Engine() = %v for %s", ee, tt.kind)
			}
		})
	}
}

// failedText is the install error for a failed fetch, "" for one that
// succeeded.
func failedText(fr *fetchResult, registry string) string {
	if fr.OK && fr.Target != nil {
		return ""
	}
	return fetchFailure(fr, registry)
}

func TestDialFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", closed)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no such host", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nonexistent.invalid", IsNotFound: true}}, "dns"},
		{"a real refused connection", refused, "refused"},
		{"a dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, "timeout"},
		{"no route to host", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, "unreachable"},
		{"something else", errors.New("tls: oversized record"), "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("no error to classify")
			}
			if got := dialFailure(tt.err); got != tt.want {
				t.Errorf("dialFailure(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestEgressProxySaysWhy: the proxy tells the fetch driver, in a header,
// why it did not open a tunnel, so that the driver's preflight names the
// cause exactly.
func TestEgressProxySaysWhy(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := closed.Addr().String()
	closed.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ServeEgressProxy(ctx, ln, []string{down}, &unitLockedBuffer{})
	tests := []struct {
		target     string
		status     int
		why        string
		withDetail bool
	}{
		{down, http.StatusBadGateway, "refused", true},
		{"example.com:443", http.StatusForbidden, "not_allowed", false},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write([]byte("CONNECT " + tt.target + " HTTP/1.1\r\nHost: " + tt.target + "\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get(EgressErrorHeader) != tt.why {
				t.Errorf("CONNECT %s: %s with %s %q, want %d %q", tt.target, resp.Status, EgressErrorHeader, resp.Header.Get(EgressErrorHeader), tt.status, tt.why)
			}
			if got := resp.Header.Get(EgressDetailHeader) != ""; got != tt.withDetail {
				t.Errorf("CONNECT %s: %s = %q", tt.target, EgressDetailHeader, resp.Header.Get(EgressDetailHeader))
			}
		})
	}
}
