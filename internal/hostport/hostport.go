// Package hostport names the endpoint of a URL as a connection sees it.
package hostport

import (
	"net"
	"net/url"
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
