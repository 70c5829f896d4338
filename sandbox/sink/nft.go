//go:build linux

package sink

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// TableName is the nftables table Install owns, in the ip and ip6
// families.
const TableName = "verifymcp_sink"

// natPriority runs the sink's chain before Docker's DNAT of the embedded
// resolver (priority -100), so that queries to 127.0.0.11 reach the sink
// and not the engine's resolver, which could forward them.
const natPriority = -150

// Install puts the redirect rules in the current network namespace,
// replacing any earlier version of them atomically:
//
//	table ip verifymcp_sink {
//	  chain out { type nat hook output priority -150; policy accept;
//	    meta skuid 0 return
//	    ip daddr 127.0.0.0/8 ip daddr != 127.0.0.11 return
//	    meta l4proto tcp redirect to :<TCPPort>
//	    meta l4proto udp redirect to :<UDPPort>
//	  }
//	}
//
// Every socket not owned by root then reaches the sink, whatever address it
// targets, except loopback (other than the embedded resolver). When IPv6 is
// enabled in the namespace the same rules go into an ip6 table, with ::1 as
// loopback. Install needs CAP_NET_ADMIN in the namespace.
func Install(ctx context.Context, cfg Config) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("install sink rules: %w", err)
	}
	cfg, err := cfg.withPortDefaults()
	if err != nil {
		return err
	}
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("install sink rules: open netlink: %w", err)
	}
	for _, fam := range families() {
		// Adding an existing table is a no-op and deleting a missing one
		// fails the batch, so add, delete, add: the batch is atomic and
		// works whether or not an older table exists.
		t := &nftables.Table{Name: TableName, Family: fam}
		c.AddTable(t)
		c.DelTable(t)
		c.AddTable(t)
		policy := nftables.ChainPolicyAccept
		ch := c.AddChain(&nftables.Chain{
			Name:     "out",
			Table:    t,
			Type:     nftables.ChainTypeNAT,
			Hooknum:  nftables.ChainHookOutput,
			Priority: nftables.ChainPriorityRef(natPriority),
			Policy:   &policy,
		})
		for _, exprs := range ruleExprs(fam, cfg.TCPPort, cfg.UDPPort) {
			c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: exprs})
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("install sink rules (table %s): %w", TableName, err)
	}
	return nil
}

// Uninstall removes the rules Install put in the current network
// namespace. Removing rules that are not there is not an error.
func Uninstall() error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("uninstall sink rules: open netlink: %w", err)
	}
	for _, fam := range []nftables.TableFamily{nftables.TableFamilyIPv4, nftables.TableFamilyIPv6} {
		t := &nftables.Table{Name: TableName, Family: fam}
		c.AddTable(t)
		c.DelTable(t)
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("uninstall sink rules (table %s): %w", TableName, err)
	}
	return nil
}

// families returns the table families to install: ip always, ip6 when IPv6
// is enabled here.
func families() []nftables.TableFamily {
	fams := []nftables.TableFamily{nftables.TableFamilyIPv4}
	if ipv6Enabled() {
		fams = append(fams, nftables.TableFamilyIPv6)
	}
	return fams
}

// ipv6Enabled reports whether IPv6 is enabled in this network namespace.
func ipv6Enabled() bool {
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6")
	return err == nil && strings.TrimSpace(string(b)) == "0"
}

// ruleExprs returns the expressions of the chain's rules for one family,
// as nft itself encodes them (checked against `nft --debug=netlink`).
func ruleExprs(fam nftables.TableFamily, tcpPort, udpPort int) [][]expr.Any {
	ret := &expr.Verdict{Kind: expr.VerdictReturn}
	rules := [][]expr.Any{{
		// meta skuid 0 return: the sink's own sockets.
		&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)},
		ret,
	}}
	if fam == nftables.TableFamilyIPv4 {
		dns := EmbeddedDNS.As4()
		rules = append(rules, []expr.Any{
			// ip daddr 127.0.0.0/8 ip daddr != 127.0.0.11 return
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{127}},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
			&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: dns[:]},
			ret,
		})
	} else {
		lo := netip.IPv6Loopback().As16()
		rules = append(rules, []expr.Any{
			// ip6 daddr ::1 return
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 24, Len: 16},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: lo[:]},
			ret,
		})
	}
	for _, r := range []struct {
		proto byte
		port  int
	}{{unix.IPPROTO_TCP, tcpPort}, {unix.IPPROTO_UDP, udpPort}} {
		rules = append(rules, []expr.Any{
			// meta l4proto <proto> redirect to :<port>
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{r.proto}},
			&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(uint16(r.port))},
			&expr.Redir{RegisterProtoMin: 1, RegisterProtoMax: 1, Flags: unix.NF_NAT_RANGE_PROTO_SPECIFIED},
		})
	}
	return rules
}
