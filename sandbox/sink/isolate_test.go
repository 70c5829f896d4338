//go:build linux

package sink

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
)

type isolateReport struct {
	First, Second string // errors of the two Isolate calls ("" for none)
	HasAddr       bool
	RouteDev      string // the device the route to a far address uses
	WithDummy     string // error of Isolate once another interface exists
	DummyErr      string // why no dummy interface could be made
}

// isolateRole runs in a fresh network namespace (only lo, down).
func isolateRole() (*isolateReport, error) {
	rep := &isolateReport{}
	errStr := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	rep.First = errStr(Isolate())
	rep.Second = errStr(Isolate())
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return nil, err
	}
	addrs, _ := netlink.AddrList(lo, netlink.FAMILY_V4)
	for _, a := range addrs {
		if a.IP.Equal(IsolatedAddr) {
			rep.HasAddr = true
		}
	}
	if routes, err := netlink.RouteGet(net.ParseIP("203.0.113.9")); err == nil && len(routes) > 0 {
		if l, err := netlink.LinkByIndex(routes[0].LinkIndex); err == nil {
			rep.RouteDev = l.Attrs().Name
		}
	}
	if err := netlink.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "dummy0"}}); err == nil {
		rep.WithDummy = errStr(Isolate())
	} else {
		rep.DummyErr = err.Error()
	}
	return rep, nil
}

// TestIsolate: in a namespace with loopback only, Isolate gives lo the
// sink's address and a default route, so far addresses are routable (into
// the redirect rules); it is idempotent, and it refuses a namespace that
// has a real interface.
func TestIsolate(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=isolate")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("isolate role: %v", err)
	}
	var rep isolateReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if rep.First != "" || rep.Second != "" {
		t.Errorf("Isolate errors: first %q, second %q", rep.First, rep.Second)
	}
	if !rep.HasAddr {
		t.Errorf("lo lacks %s", IsolatedAddr)
	}
	if rep.RouteDev != "lo" {
		t.Errorf("route to a far address goes via %q, want lo", rep.RouteDev)
	}
	if rep.DummyErr != "" {
		t.Logf("no dummy interface here (%s); the refusal is not checked", rep.DummyErr)
	} else if rep.WithDummy == "" {
		t.Error("Isolate accepted a namespace with another interface")
	}
}
