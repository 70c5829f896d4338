//go:build linux

package sink

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/vishvananda/netlink"
)

// Isolate prepares a network namespace that has only a loopback interface
// (a container started with network mode "none") for the sink: it adds
// IsolatedAddr to lo and a default route through lo, so that a connection
// to any address finds a route, reaches the redirect rules and then the
// sink, and nothing can leave, as there is nowhere to leave to. IPv6 gets
// a default route through lo too when it is enabled. It is idempotent and
// needs CAP_NET_ADMIN.
func Isolate() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("isolate: find lo: %w", err)
	}
	for _, l := range mustLinks() {
		if l.Attrs().Name != "lo" {
			return fmt.Errorf("isolate: the namespace has interface %q; Isolate is for namespaces with loopback only", l.Attrs().Name)
		}
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("isolate: bring up lo: %w", err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: IsolatedAddr, Mask: net.CIDRMask(32, 32)}}
	if err := netlink.AddrAdd(lo, addr); err != nil && !errors.Is(err, os.ErrExist) && !isExist(err) {
		return fmt.Errorf("isolate: add %s to lo: %w", IsolatedAddr, err)
	}
	def := &netlink.Route{LinkIndex: lo.Attrs().Index, Scope: netlink.SCOPE_LINK, Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}}
	if err := netlink.RouteAdd(def); err != nil && !isExist(err) {
		return fmt.Errorf("isolate: add default route via lo: %w", err)
	}
	if ipv6Enabled() {
		def6 := &netlink.Route{LinkIndex: lo.Attrs().Index, Dst: &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}}
		if err := netlink.RouteAdd(def6); err != nil && !isExist(err) {
			return fmt.Errorf("isolate: add IPv6 default route via lo: %w", err)
		}
	}
	return nil
}

func mustLinks() []netlink.Link {
	ls, _ := netlink.LinkList()
	return ls
}

func isExist(err error) bool {
	var errno interface{ Is(error) bool }
	if errors.As(err, &errno) {
		return errno.Is(os.ErrExist)
	}
	return errors.Is(err, os.ErrExist)
}
