//go:build linux

package sink

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"github.com/miekg/dns"
	"golang.org/x/sys/unix"
)

// The rules only mean something inside a network namespace with traffic
// from another user, so TestRedirectInNetns re-runs this test binary in a
// fresh network namespace (role "netns"), which installs the rules, serves,
// and runs the binary once more as uid 65534 (role "client") to make the
// traffic. Each role reports JSON on stdout; the test asserts on it.
const roleEnv = "VERIFYMCP_SINK_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "netns":
		os.Exit(report(netnsRole()))
	case "client":
		os.Exit(report(clientRole()))
	case "isolate":
		os.Exit(report(isolateRole()))
	}
	os.Exit(m.Run())
}

func report(v any, err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// nsAdvertise is what DNS answers give out in the namespace (only lo
// exists there).
const nsAdvertise = "192.0.2.10"

type chainInfo struct {
	Family   string
	Type     string
	Hook     uint32
	Priority int32
	Rules    []string
}

type netnsReport struct {
	IPv6           bool
	Chains         []chainInfo
	RootDialErr    string
	Client         clientReport
	Events         []Event
	TablesAfterDel int
}

type clientReport struct {
	UID        int
	DNSUDP     []string
	DNSUDPErr  string
	DNSPublic  []string
	DNSPubErr  string
	TLSPort    int
	TLSErr     string
	FarTCPPort int
	FarTCPErr  string
	FarUDPPort int
	// IPv6, when the namespace has it.
	V6DNS       []string
	V6DNSErr    string
	V6TCPPort   int
	V6TCPErr    string
	V6UDPPort   int
	DNSTCP      []string
	DNSTCPErr   string
	TCPPort     int
	TCPReply    string
	TCPErr      string
	LoopbackErr string
	UDPPort     int
	UDPErr      string
}

func netnsRole() (*netnsReport, error) {
	ctx := context.Background()
	if err := linkUp("lo"); err != nil {
		return nil, err
	}
	// An address outside 127/8 gives the namespace a route to 192.0.2.0/24,
	// so that the client can target non-loopback addresses and its source
	// address is not loopback (as with eth0 in a container).
	if err := addAddr("lo", netip.MustParsePrefix(nsAdvertise+"/24")); err != nil {
		return nil, err
	}
	if ipv6Enabled() {
		if err := addAddr("lo", netip.MustParsePrefix("2001:db8::10/64")); err != nil {
			return nil, err
		}
	}
	cfg := Config{Advertise: net.ParseIP(nsAdvertise)}
	// Twice: the second must replace the first, not add to it.
	for i := 0; i < 2; i++ {
		if err := Install(ctx, cfg); err != nil {
			return nil, err
		}
	}
	rep := &netnsReport{IPv6: ipv6Enabled()}
	chains, err := listChains()
	if err != nil {
		return nil, err
	}
	rep.Chains = chains

	// The sink's own user (root) is not redirected: nothing listens on
	// 127.0.0.11:80, so this must be refused.
	if c, err := net.DialTimeout("tcp4", "127.0.0.11:80", 2*time.Second); err != nil {
		rep.RootDialErr = err.Error()
	} else {
		c.Close()
	}

	cr, cw := io.Pipe()
	var out safeBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, cr, &out) }()
	for !strings.Contains(out.String(), `"type":"ready"`) {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Fprintln(cw, "phase netns")

	client, err := runAsNobody()
	if err != nil {
		cw.Close()
		<-done
		return nil, err
	}
	rep.Client = *client
	cw.Close()
	if err := <-done; err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	for {
		var ev Event
		if err := dec.Decode(&ev); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode events: %w", err)
		}
		rep.Events = append(rep.Events, ev)
	}

	for i := 0; i < 2; i++ {
		if err := Uninstall(); err != nil {
			return nil, err
		}
	}
	c, err := nftables.New()
	if err != nil {
		return nil, err
	}
	tables, err := c.ListTables()
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		if t.Name == TableName {
			rep.TablesAfterDel++
		}
	}
	return rep, nil
}

// linkUp sets an interface up.
func linkUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("link up %s: %w", name, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("link up %s: get flags: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("link up %s: set flags: %w", name, err)
	}
	return nil
}

// addAddr adds an address to an interface (ip addr add ... nodad).
func addAddr(name string, p netip.Prefix) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	c, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		return fmt.Errorf("add address: %w", err)
	}
	defer c.Close()
	a := p.Addr().AsSlice()
	attrs, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.IFA_LOCAL, Data: a},
		{Type: unix.IFA_ADDRESS, Data: a},
	})
	if err != nil {
		return err
	}
	fam := byte(unix.AF_INET)
	if p.Addr().Is6() {
		fam = unix.AF_INET6
	}
	// struct ifaddrmsg { u8 family, prefixlen, flags, scope; u32 index; }
	msg := []byte{fam, byte(p.Bits()), unix.IFA_F_NODAD, unix.RT_SCOPE_UNIVERSE, 0, 0, 0, 0}
	binary.NativeEndian.PutUint32(msg[4:], uint32(ifi.Index))
	_, err = c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_NEWADDR, Flags: netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl},
		Data:   append(msg, attrs...),
	})
	if err != nil {
		return fmt.Errorf("add address %v to %s: %w", p, name, err)
	}
	return nil
}

// listChains describes the sink's chains as the kernel reports them.
func listChains() ([]chainInfo, error) {
	c, err := nftables.New()
	if err != nil {
		return nil, err
	}
	chains, err := c.ListChains()
	if err != nil {
		return nil, fmt.Errorf("list chains: %w", err)
	}
	var out []chainInfo
	for _, ch := range chains {
		if ch.Table.Name != TableName {
			continue
		}
		ci := chainInfo{Family: map[nftables.TableFamily]string{nftables.TableFamilyIPv4: "ip", nftables.TableFamilyIPv6: "ip6"}[ch.Table.Family], Type: string(ch.Type)}
		if ch.Hooknum != nil {
			ci.Hook = uint32(*ch.Hooknum)
		}
		if ch.Priority != nil {
			ci.Priority = int32(*ch.Priority)
		}
		rules, err := c.GetRules(ch.Table, ch)
		if err != nil {
			return nil, fmt.Errorf("list rules: %w", err)
		}
		for _, r := range rules {
			ci.Rules = append(ci.Rules, describeRule(r.Exprs))
		}
		out = append(out, ci)
	}
	return out, nil
}

// describeRule renders a rule's expressions compactly, for comparison.
func describeRule(exprs []expr.Any) string {
	var parts []string
	for _, e := range exprs {
		switch e := e.(type) {
		case *expr.Meta:
			parts = append(parts, fmt.Sprintf("meta:%d", e.Key))
		case *expr.Payload:
			parts = append(parts, fmt.Sprintf("payload:%d+%d", e.Offset, e.Len))
		case *expr.Cmp:
			parts = append(parts, fmt.Sprintf("cmp:%d:%x", e.Op, e.Data))
		case *expr.Immediate:
			parts = append(parts, fmt.Sprintf("imm:%x", e.Data))
		case *expr.Redir:
			parts = append(parts, fmt.Sprintf("redir:%d:%d:%d", e.RegisterProtoMin, e.RegisterProtoMax, e.Flags))
		case *expr.Verdict:
			parts = append(parts, fmt.Sprintf("verdict:%d", e.Kind))
		default:
			parts = append(parts, fmt.Sprintf("%T", e))
		}
	}
	return strings.Join(parts, " ")
}

// runAsNobody runs this binary as uid 65534 in the client role. The test
// binary lives in a directory only root can enter, so it is copied out.
func runAsNobody() (*clientReport, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sink-client-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "client")
	data, err := os.ReadFile(self)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), roleEnv+"=client")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("client as uid 65534: %w: %s", err, stderr.String())
	}
	var rep clientReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("client report %q: %w", stdout.String(), err)
	}
	return &rep, nil
}

// clientRole makes the traffic: DNS to the embedded resolver's address
// over UDP and TCP, TCP and UDP to a non-loopback-exempt address, and TCP
// to an exempt loopback address.
func clientRole() (*clientReport, error) {
	rep := &clientReport{UID: os.Getuid()}
	answers := func(r *dns.Msg) []string {
		var out []string
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				out = append(out, a.A.String())
			}
		}
		return out
	}
	q := new(dns.Msg).SetQuestion("canary-udp.example.", dns.TypeA)
	if r, _, err := (&dns.Client{Net: "udp", Timeout: 3 * time.Second}).Exchange(q, "127.0.0.11:53"); err != nil {
		rep.DNSUDPErr = err.Error()
	} else {
		rep.DNSUDP = answers(r)
	}
	// A resolver other than the configured one, reached from the
	// namespace's non-loopback address: the answer only arrives if the
	// sink replies from the address the query was redirected to.
	q = new(dns.Msg).SetQuestion("canary-public.example.", dns.TypeA)
	if r, _, err := (&dns.Client{Net: "udp", Timeout: 3 * time.Second}).Exchange(q, "192.0.2.99:53"); err != nil {
		rep.DNSPubErr = err.Error()
	} else {
		rep.DNSPublic = answers(r)
	}
	// TLS to the advertised address, as after a DNS answer of ours.
	if c, err := net.DialTimeout("tcp4", nsAdvertise+":443", 3*time.Second); err != nil {
		rep.TLSErr = err.Error()
	} else {
		rep.TLSPort = c.LocalAddr().(*net.TCPAddr).Port
		tc := tls.Client(c, &tls.Config{ServerName: "api.example.org"})
		_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err == nil {
			rep.TLSErr = "handshake succeeded"
		}
		c.Close()
	}
	if c, err := net.DialTimeout("tcp4", "192.0.2.77:4444", 3*time.Second); err != nil {
		rep.FarTCPErr = err.Error()
	} else {
		rep.FarTCPPort = c.LocalAddr().(*net.TCPAddr).Port
		_, _ = c.Write([]byte("far-bytes"))
		c.Close()
	}
	if c, err := net.Dial("udp4", "192.0.2.77:9999"); err == nil {
		rep.FarUDPPort = c.LocalAddr().(*net.UDPAddr).Port
		_, _ = c.Write([]byte("far-udp"))
		c.Close()
	}
	if ipv6Enabled() {
		q := new(dns.Msg).SetQuestion("canary-v6.example.", dns.TypeA)
		if r, _, err := (&dns.Client{Net: "udp", Timeout: 3 * time.Second}).Exchange(q, "[2001:db8::99]:53"); err != nil {
			rep.V6DNSErr = err.Error()
		} else {
			rep.V6DNS = answers(r)
		}
		if c, err := net.DialTimeout("tcp6", "[2001:db8::77]:4444", 3*time.Second); err != nil {
			rep.V6TCPErr = err.Error()
		} else {
			rep.V6TCPPort = c.LocalAddr().(*net.TCPAddr).Port
			_, _ = c.Write([]byte("v6-bytes"))
			c.Close()
		}
		if c, err := net.Dial("udp6", "[2001:db8::77]:9999"); err == nil {
			rep.V6UDPPort = c.LocalAddr().(*net.UDPAddr).Port
			_, _ = c.Write([]byte("v6-udp"))
			c.Close()
		}
	}
	q = new(dns.Msg).SetQuestion("canary-tcp.example.", dns.TypeA)
	if r, _, err := (&dns.Client{Net: "tcp", Timeout: 3 * time.Second}).Exchange(q, "127.0.0.11:53"); err != nil {
		rep.DNSTCPErr = err.Error()
	} else {
		rep.DNSTCP = answers(r)
	}

	if c, err := net.DialTimeout("tcp4", "127.0.0.11:4444", 3*time.Second); err != nil {
		rep.TCPErr = err.Error()
	} else {
		rep.TCPPort = c.LocalAddr().(*net.TCPAddr).Port
		_, _ = c.Write([]byte("literal-bytes"))
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		rep.TCPReply = string(b)
		c.Close()
	}

	// 127.0.0.5 is loopback other than the resolver: not redirected, and
	// nothing listens there.
	if c, err := net.DialTimeout("tcp4", "127.0.0.5:4444", 3*time.Second); err != nil {
		rep.LoopbackErr = err.Error()
	} else {
		c.Close()
	}

	if c, err := net.Dial("udp4", "127.0.0.11:9999"); err != nil {
		rep.UDPErr = err.Error()
	} else {
		rep.UDPPort = c.LocalAddr().(*net.UDPAddr).Port
		_, _ = c.Write([]byte("udp-bytes"))
		c.Close()
	}
	// Let the sink read the datagram before the parent closes control.
	time.Sleep(200 * time.Millisecond)
	return rep, nil
}

func TestRedirectInNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace and installing nftables rules needs root; the docker-tagged test covers the same path in containers")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=netns")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("netns role: %v\nstderr: %s\nstdout: %s", err, stderr.String(), stdout.String())
	}
	var rep netnsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("netns report: %v\n%s", err, stdout.String())
	}

	t.Run("rules", func(t *testing.T) {
		// Keys: 10 = skuid, 16 = l4proto; verdict -5 = return; redir
		// flags 2 = NF_NAT_RANGE_PROTO_SPECIFIED.
		common := []string{"meta:10 cmp:0:00000000 verdict:-5"}
		redirs := []string{
			"meta:16 cmp:0:06 imm:3a99 redir:1:1:2",
			"meta:16 cmp:0:11 imm:3acd redir:1:1:2",
		}
		want := []chainInfo{{
			Family: "ip", Type: "nat", Hook: unix.NF_INET_LOCAL_OUT, Priority: -150,
			Rules: append(append(common, "payload:16+1 cmp:0:7f payload:16+4 cmp:1:7f00000b verdict:-5"), redirs...),
		}}
		if rep.IPv6 {
			want = append(want, chainInfo{
				Family: "ip6", Type: "nat", Hook: unix.NF_INET_LOCAL_OUT, Priority: -150,
				Rules: append(append(common, "payload:24+16 cmp:0:00000000000000000000000000000001 verdict:-5"), redirs...),
			})
		}
		if diff := cmp.Diff(want, rep.Chains); diff != "" {
			t.Errorf("chains after installing twice (-want +got):\n%s", diff)
		}
		if rep.TablesAfterDel != 0 {
			t.Errorf("%d sink tables left after Uninstall", rep.TablesAfterDel)
		}
	})

	t.Run("root_is_not_redirected", func(t *testing.T) {
		if !strings.Contains(rep.RootDialErr, "connection refused") {
			t.Errorf("root's dial to 127.0.0.11:80 = %q, want refused (not redirected)", rep.RootDialErr)
		}
	})

	cl := rep.Client
	t.Run("client_view", func(t *testing.T) {
		want := clientReport{
			UID: 65534, DNSUDP: []string{nsAdvertise}, DNSTCP: []string{nsAdvertise}, DNSPublic: []string{nsAdvertise},
			TCPPort: cl.TCPPort, UDPPort: cl.UDPPort, LoopbackErr: cl.LoopbackErr,
			TLSPort: cl.TLSPort, FarTCPPort: cl.FarTCPPort, FarUDPPort: cl.FarUDPPort,
			V6TCPPort: cl.V6TCPPort, V6UDPPort: cl.V6UDPPort,
		}
		if rep.IPv6 {
			want.V6DNS = []string{nsAdvertise}
		}
		if diff := cmp.Diff(want, cl); diff != "" {
			t.Errorf("client report (-want +got):\n%s", diff)
		}
		if !strings.Contains(cl.LoopbackErr, "connection refused") {
			t.Errorf("dial to exempt loopback 127.0.0.5 = %q, want refused", cl.LoopbackErr)
		}
	})

	t.Run("events", func(t *testing.T) {
		find := func(match func(Event) bool) *Event {
			for i := range rep.Events {
				if match(rep.Events[i]) {
					return &rep.Events[i]
				}
			}
			return nil
		}
		byName := func(name string) func(Event) bool {
			return func(ev Event) bool { return ev.Type == TypeDNS && ev.DNSName == name }
		}
		type row struct {
			Type, Proto, DstIP string
			DstPort            int
			Literal            bool
			Data, Error        string
			Phase, SNI         string
		}
		tests := []struct {
			name  string
			match func(Event) bool
			want  row
		}{
			{"dns_udp_via_conntrack", byName("canary-udp.example"), row{TypeDNS, "udp", "127.0.0.11", 53, false, "", "", "netns", ""}},
			{"dns_to_other_resolver_is_literal", byName("canary-public.example"), row{TypeDNS, "udp", "192.0.2.99", 53, true, "", "", "netns", ""}},
			{"dns_tcp", byName("canary-tcp.example"), row{TypeDNS, "tcp", "127.0.0.11", 53, false, "", "", "netns", ""}},
			{"tls_to_advertised_is_not_literal", func(ev Event) bool { return ev.Type == TypeTCP && ev.SrcPort == cl.TLSPort }, row{TypeTCP, "", nsAdvertise, 443, false, "", "refused", "netns", "api.example.org"}},
			{"tcp_to_resolver_other_port_is_literal", func(ev Event) bool { return ev.Type == TypeTCP && ev.SrcPort == cl.TCPPort }, row{TypeTCP, "", "127.0.0.11", 4444, true, "literal-bytes", "", "netns", ""}},
			{"tcp_far_literal", func(ev Event) bool { return ev.Type == TypeTCP && ev.SrcPort == cl.FarTCPPort }, row{TypeTCP, "", "192.0.2.77", 4444, true, "far-bytes", "", "netns", ""}},
			{"udp_via_conntrack", func(ev Event) bool { return ev.Type == TypeUDP && ev.SrcPort == cl.UDPPort }, row{TypeUDP, "", "127.0.0.11", 9999, true, "udp-bytes", "", "netns", ""}},
			{"udp_far_via_conntrack", func(ev Event) bool { return ev.Type == TypeUDP && ev.SrcPort == cl.FarUDPPort }, row{TypeUDP, "", "192.0.2.77", 9999, true, "far-udp", "", "netns", ""}},
		}
		if rep.IPv6 {
			tests = append(tests, []struct {
				name  string
				match func(Event) bool
				want  row
			}{
				{"v6_dns_via_conntrack", byName("canary-v6.example"), row{TypeDNS, "udp", "2001:db8::99", 53, true, "", "", "netns", ""}},
				{"v6_tcp_original_dst", func(ev Event) bool { return ev.Type == TypeTCP && ev.SrcPort == cl.V6TCPPort }, row{TypeTCP, "", "2001:db8::77", 4444, true, "v6-bytes", "", "netns", ""}},
				{"v6_udp_via_conntrack", func(ev Event) bool { return ev.Type == TypeUDP && ev.SrcPort == cl.V6UDPPort }, row{TypeUDP, "", "2001:db8::77", 9999, true, "v6-udp", "", "netns", ""}},
			}...)
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ev := find(tc.match)
				if ev == nil {
					t.Fatalf("no such event in %d events: %+v", len(rep.Events), rep.Events)
				}
				data, errText := string(ev.Data), ev.Error
				if ev.TLSRefused && strings.HasPrefix(errText, "tls: client refused the sink's certificate: ") {
					// The client does not trust the run's CA; the
					// alert's wording is the TLS library's.
					errText = "refused"
				}
				got := row{ev.Type, ev.Proto, ev.DstIP, ev.DstPort, ev.LiteralIP, data, errText, ev.Phase, ev.SNI}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("event (-want +got):\n%s", diff)
				}
			})
		}
	})
}
