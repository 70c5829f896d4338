//go:build linux

package sink

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The header and lines of a fake /proc/net table, in the kernel's format
// (words of the address in little-endian hex, the port big-endian).
const (
	tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	udpHeader = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
)

// fakeProc builds a /proc tree: net tables with the given contents (after
// the header), and processes with fds linked to the given targets.
func fakeProc(t *testing.T, tables map[string]string, procs map[int][]string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range tables {
		head := tcpHeader
		if strings.HasPrefix(name, "udp") {
			head = udpHeader
		}
		if err := os.WriteFile(filepath.Join(root, "net", name), []byte(head+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pid, links := range procs {
		dir := filepath.Join(root, fmt.Sprint(pid), "fd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, l := range links {
			if err := os.Symlink(l, filepath.Join(dir, fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Entries that are not processes.
	for _, d := range []string{"self", "sys", "0x10"} {
		_ = os.MkdirAll(filepath.Join(root, d, "fd"), 0o755)
	}
	return root
}

func TestOwnerFakeProc(t *testing.T) {
	const self = 7
	tables := map[string]string{
		"tcp": "" +
			// Malformed lines, which are skipped.
			"garbage\n" +
			"   9: 0100007G:9C40 0100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 20 4 30 10 -1\n" +
			"  10: 0100007F:9C40 0100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 notanode 1\n" +
			"  11: 0100007F:9C4 0100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 112 1\n" +
			"  12: 0100007F9C40 0100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 113 1\n" +
			"  13: 0100007F:9C40 0100007F:3A99 01\n" +
			// The sink listening on 15001, and the socket it accepted.
			"   0: 00000000:3A99 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 500 1 0000000000000000 100 0 0 10 0\n" +
			"   1: 0100007F:3A99 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 501 1 0000000000000000 20 4 30 10 -1\n" +
			// 127.0.0.1:40000 -> 127.0.0.1:15001, inode 777.
			"   2: 0100007F:9C40 0100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 20 4 30 10 -1\n" +
			// 10.0.2.15:51234 -> 203.0.113.7:4444, in TIME_WAIT (no inode).
			"   3: 0F02000A:C822 0771CBCB:115C 06 00000000:00000000 03:00000F6A 00000000     0        0 0 3 0000000000000000\n" +
			// 10.0.2.15:51235, held by the sink itself (pid 7) and pid 9.
			"   4: 0F02000A:C823 0771CBCB:115C 01 00000000:00000000 00:00000000 00000000     0        0 666 1 0000000000000000 20 4 30 10 -1\n" +
			// 10.0.2.15:51236, held by nobody visible.
			"   5: 0F02000A:C824 0771CBCB:115C 01 00000000:00000000 00:00000000 00000000 65534        0 667 1 0000000000000000 20 4 30 10 -1\n" +
			// A client whose port is the sink's: never matched.
			"   6: 0F02000A:3A99 0771CBCB:115C 01 00000000:00000000 00:00000000 00000000 65534        0 668 1 0000000000000000 20 4 30 10 -1\n",
		"tcp6": "" +
			// [2001:db8::5]:51000 -> [2001:db8::1]:443, inode 888.
			"   0: B80D0120000000000000000005000000:C738 B80D0120000000000000000001000000:01BB 01 00000000:00000000 00:00000000 00000000  1000        0 888 1 0000000000000000 20 4 30 10 -1\n" +
			// [::ffff:127.0.0.1]:41000, a dual-stack socket, inode 999.
			"   1: 0000000000000000FFFF00000100007F:A028 0000000000000000FFFF00000100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 999 1 0000000000000000 20 4 30 10 -1\n" +
			"   2: 000000000000000000000000000001:A028 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 998 1\n",
		"udp": "" +
			// 0.0.0.0:5353 (never connected), inode 555.
			"  100: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000  1000        0 555 2 0000000000000000 0\n" +
			// 0.0.0.0:6000 and 127.0.0.1:6000: the exact one wins.
			"  101: 00000000:1770 00000000:0000 07 00000000:00000000 00:00000000 00000000  1000        0 556 2 0000000000000000 0\n" +
			"  102: 0100007F:1770 0100007F:3AFD 01 00000000:00000000 00:00000000 00000000  1000        0 557 2 0000000000000000 0\n" +
			// The sink's UDP socket.
			"  103: 00000000:3AFD 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 502 2 0000000000000000 0\n",
		"udp6": "" +
			// [::]:7000, inode 560.
			"  100: 00000000000000000000000000000000:1B58 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000  1000        0 560 2 0000000000000000 0\n",
	}
	procs := map[int][]string{
		self: {"/dev/null", "socket:[500]", "socket:[501]", "socket:[502]", "socket:[666]"},
		9:    {"socket:[666]"},
		4242: {"/dev/null", "pipe:[12]", "anon_inode:[eventpoll]", "socket:[7770]", "socket:[777]"},
		100:  {"socket:[888]"},
		300:  {"socket:[999]"},
		200:  {"socket:[555]"},
		201:  {"socket:[556]"},
		202:  {"socket:[557]"},
		203:  {"socket:[560]", "socket:[998]"},
		50:   {},
	}
	root := fakeProc(t, tables, procs)
	f := newOwnerFinder(root, self, time.Second)
	ap := netip.MustParseAddrPort
	tests := []struct {
		name  string
		proto string
		src   netip.AddrPort
		skip  uint16
		want  int
	}{
		{"tcp4", "tcp", ap("127.0.0.1:40000"), 15001, 4242},
		{"tcp4_mapped_source", "tcp", ap("[::ffff:127.0.0.1]:40000"), 15001, 4242},
		{"tcp6", "tcp", ap("[2001:db8::5]:51000"), 15001, 100},
		{"tcp_dual_stack_socket", "tcp", ap("127.0.0.1:41000"), 15001, 300},
		{"tcp_time_wait", "tcp", ap("10.0.2.15:51234"), 15001, 0},
		{"tcp_sinks_own_socket", "tcp", ap("10.0.2.15:51235"), 15001, 0},
		{"tcp_no_owner", "tcp", ap("10.0.2.15:51236"), 15001, 0},
		{"tcp_sink_port_skipped", "tcp", ap("10.0.2.15:15001"), 15001, 0},
		{"tcp_no_socket", "tcp", ap("10.0.2.15:1"), 15001, 0},
		{"tcp_wildcard_does_not_match", "tcp", ap("10.0.0.2:5353"), 15001, 0},
		{"udp_wildcard", "udp", ap("10.0.0.2:5353"), 15053, 200},
		{"udp_exact_over_wildcard", "udp", ap("127.0.0.1:6000"), 15053, 202},
		{"udp6_wildcard", "udp", ap("[2001:db8::5]:7000"), 15053, 203},
		{"udp_sink_port_skipped", "udp", ap("10.0.0.2:15053"), 15053, 0},
		{"udp_no_socket", "udp", ap("10.0.0.2:9"), 15053, 0},
		{"invalid_source", "tcp", netip.AddrPort{}, 15001, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.owner(tc.proto, tc.src, netip.AddrPort{}, tc.skip); got != tc.want {
				t.Errorf("owner(%s, %v) = %d, want %d", tc.proto, tc.src, got, tc.want)
			}
		})
	}

	t.Run("cached_by_inode", func(t *testing.T) {
		// The owner is remembered: it answers after the fd is gone.
		if err := os.Remove(filepath.Join(root, "4242", "fd", "4")); err != nil {
			t.Fatal(err)
		}
		if got := f.owner("tcp", ap("127.0.0.1:40000"), netip.AddrPort{}, 15001); got != 4242 {
			t.Errorf("cached owner = %d, want 4242", got)
		}
		if got := newOwnerFinder(root, self, time.Second).owner("tcp", ap("127.0.0.1:40000"), netip.AddrPort{}, 15001); got != 0 {
			t.Errorf("uncached owner of a closed fd = %d, want 0", got)
		}
	})
	t.Run("missing_proc", func(t *testing.T) {
		g := newOwnerFinder(filepath.Join(root, "nothing"), self, time.Second)
		if got := g.owner("tcp", ap("127.0.0.1:40000"), netip.AddrPort{}, 15001); got != 0 {
			t.Errorf("owner without /proc = %d, want 0", got)
		}
	})
	t.Run("nil_finder", func(t *testing.T) {
		var g *ownerFinder
		if got := g.owner("tcp", ap("127.0.0.1:40000"), netip.AddrPort{}, 15001); got != 0 {
			t.Errorf("nil finder = %d, want 0", got)
		}
	})
}

// TestOwnerBudget checks that a walk cut short by the budget gives 0 and
// is not remembered as settled.
func TestOwnerBudget(t *testing.T) {
	tables := map[string]string{"tcp": "   0: 0100007F:9C40 0100007F:3A99 01 00000000:00000000 00:00000000 00000000  1000        0 777 1\n"}
	root := fakeProc(t, tables, map[int][]string{3: {"socket:[777]"}, 4: {}, 5: {}})
	f := newOwnerFinder(root, 1, time.Nanosecond)
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	if got := f.owner("tcp", src, netip.AddrPort{}, 15001); got != 0 {
		t.Errorf("owner past the budget = %d, want 0", got)
	}
	f.budget = time.Second
	if got := f.owner("tcp", src, netip.AddrPort{}, 15001); got != 3 {
		t.Errorf("owner within the budget = %d, want 3", got)
	}
}

func TestParseHexAddrPort(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for not parsed
	}{
		{"0100007F:0035", "127.0.0.1:53"},
		{"0F02000A:C822", "10.0.2.15:51234"},
		{"00000000:FFFF", "0.0.0.0:65535"},
		{"00000000000000000000000001000000:1F90", "[::1]:8080"},
		{"B80D0120000000000000000005000000:01BB", "[2001:db8::5]:443"},
		{"0000000000000000FFFF00000100007F:A028", "[::ffff:127.0.0.1]:41000"},
		{"0100007F", ""},
		{"0100007F:35", ""},
		{"0100007F:00G5", ""},
		{"0100007:0035", ""},
		{"0100007F00:0035", ""},
		{"XX00007F:0035", ""},
		{":0035", ""},
	}
	for _, tc := range tests {
		got, ok := parseHexAddrPort(tc.in)
		if (tc.want == "") != !ok || ok && got.String() != tc.want {
			t.Errorf("parseHexAddrPort(%q) = %v, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}
