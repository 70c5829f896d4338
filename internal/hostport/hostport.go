// Package hostport names the endpoint of a URL as a connection sees it,
// and says whether a host is this machine.
package hostport

import (
	"net"
	"net/url"
	"strings"
)

// Of returns u's host and port, the port defaulting by scheme (80 for
// http, 443 otherwise).
func Of(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// Loopback reports whether host names this machine only: localhost,
// 127.0.0.0/8 or ::1.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
