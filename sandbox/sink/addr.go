package sink

import (
	"net"
	"net/netip"
)

// The sink, like the rest of the observer, runs only in the Linux helper
// container, so every other file of this package is built for Linux only.
// These addresses are what the host side (any system the scanner runs on)
// configures the watched containers with.

// IsolatedAddr is the address the sink gives itself in a network namespace
// with no interface but loopback: 198.18.0.1, from the range reserved for
// benchmarking (RFC 2544), which is never routed anywhere.
var IsolatedAddr = net.IPv4(198, 18, 0, 1)

// IsolatedPool is the range the sink hands out per-name addresses from in
// such a namespace (see Config.NamePool): the rest of 198.18.0.0/15,
// which the default route through lo sends to the redirect rules.
var IsolatedPool = netip.MustParsePrefix("198.18.0.0/15")
