//go:build linux

package sink

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ownerBudget is how long finding the process behind one connection or
// datagram may take before its event goes without a PID.
const ownerBudget = 20 * time.Millisecond

// maxOwnerCache bounds the socket inodes whose owner is remembered.
const maxOwnerCache = 4096

// ownerFinder finds the process that owns a client socket of the sink's
// network namespace: the socket's inode comes from the kernel's table of
// sockets (net/tcp, net/tcp6, net/udp, net/udp6 under root), its owner is
// the process with a file descriptor linked to "socket:[inode]". It is
// safe for concurrent use.
type ownerFinder struct {
	// root is the proc file system, "/proc" but in tests.
	root string
	// self is the sink's own PID: a socket it holds has no owner to
	// report (the sink is never a client in a run, but is in tests).
	self int
	// budget bounds the walk of the processes.
	budget time.Duration

	mu    sync.Mutex
	cache map[uint64]int
}

func newOwnerFinder(root string, self int, budget time.Duration) *ownerFinder {
	if root == "" {
		root = "/proc"
	}
	if budget <= 0 {
		budget = ownerBudget
	}
	return &ownerFinder{root: root, self: self, budget: budget, cache: map[uint64]int{}}
}

// owner returns the PID of the process holding the proto ("tcp" or
// "udp") socket whose local address is src, or 0 when it cannot tell: no
// such socket (any more), a socket of the sink itself, or no process found
// within the budget. Sockets whose local port is skipPort (the sink's own
// listening and accepted sockets) are never matched.
func (f *ownerFinder) owner(proto string, src netip.AddrPort, skipPort uint16) int {
	if f == nil || !src.IsValid() {
		return 0
	}
	deadline := time.Now().Add(f.budget)
	inode := f.socketInode(proto, src, skipPort)
	if inode == 0 {
		return 0
	}
	f.mu.Lock()
	pid, ok := f.cache[inode]
	f.mu.Unlock()
	if ok {
		return pid
	}
	link := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	pid, complete := 0, true
	if f.self <= 0 || !f.holds(f.self, link) {
		pid, complete = f.walk(link, deadline)
	}
	if pid != 0 || complete {
		// A socket no process was found for within the budget may
		// still be found next time; one that is nobody's is settled.
		f.remember(inode, pid)
	}
	return pid
}

func (f *ownerFinder) remember(inode uint64, pid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cache) >= maxOwnerCache {
		clear(f.cache)
	}
	f.cache[inode] = pid
}

// socketInode returns the inode of the socket bound to src, from the IPv4
// table and then the IPv6 one (where a dual-stack socket shows an IPv4
// address mapped). An exact address wins over a wildcard one, which only
// UDP sockets that were never connected show.
func (f *ownerFinder) socketInode(proto string, src netip.AddrPort, skipPort uint16) uint64 {
	var wild uint64
	for _, name := range []string{proto, proto + "6"} {
		exact, w := scanSocketTable(filepath.Join(f.root, "net", name), src, skipPort)
		if exact != 0 {
			return exact
		}
		if wild == 0 {
			wild = w
		}
	}
	if proto == "udp" {
		return wild
	}
	return 0
}

// scanSocketTable reads one /proc/net/{tcp,udp}{,6} file until a socket
// with local address src, and returns its inode (exact), or the first
// socket on src's port bound to the unspecified address (wild). Lines it
// cannot parse are skipped.
func scanSocketTable(path string, src netip.AddrPort, skipPort uint16) (exact, wild uint64) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer fh.Close()
	want := src.Addr().Unmap()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		local, inode, ok := parseSocketLine(sc.Text())
		if !ok || inode == 0 || local.Port() != src.Port() || local.Port() == skipPort {
			continue
		}
		switch a := local.Addr().Unmap(); {
		case a == want:
			return inode, wild
		case a.IsUnspecified() && wild == 0:
			wild = inode
		}
	}
	return 0, wild
}

// parseSocketLine parses a line of /proc/net/{tcp,udp}{,6}:
//
//	sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
//
// An address is the hex of each 32-bit word of the address in the host's
// byte order (one word for IPv4, four for IPv6), a colon, and the port in
// hex.
func parseSocketLine(line string) (local netip.AddrPort, inode uint64, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 10 || !strings.HasSuffix(fields[0], ":") {
		return netip.AddrPort{}, 0, false
	}
	local, ok = parseHexAddrPort(fields[1])
	if !ok {
		return netip.AddrPort{}, 0, false
	}
	inode, err := strconv.ParseUint(fields[9], 10, 64)
	if err != nil {
		return netip.AddrPort{}, 0, false
	}
	return local, inode, true
}

func parseHexAddrPort(s string) (netip.AddrPort, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok || len(port) != 4 {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	// Each word was printed as a number: undo the host's byte order.
	var b [16]byte
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	if len(raw) == 4 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(p)), true
	}
	return netip.AddrPortFrom(netip.AddrFrom16(b), uint16(p)), true
}

// walk looks through the processes, newest PID first (a process that just
// connected is usually a recent one), for one holding link. complete is
// false when the deadline cut the walk short.
func (f *ownerFinder) walk(link string, deadline time.Time) (pid int, complete bool) {
	d, err := os.Open(f.root)
	if err != nil {
		return 0, true
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, true
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if p, err := strconv.Atoi(n); err == nil && p > 0 && p != f.self {
			pids = append(pids, p)
		}
	}
	slices.Sort(pids)
	slices.Reverse(pids)
	for _, p := range pids {
		if time.Now().After(deadline) {
			return 0, false
		}
		if f.holds(p, link) {
			return p, true
		}
	}
	return 0, true
}

// holds reports whether process pid has a file descriptor linked to link.
func (f *ownerFinder) holds(pid int, link string) bool {
	dir := filepath.Join(f.root, strconv.Itoa(pid), "fd")
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			if l, err := os.Readlink(dir + "/" + n); err == nil && l == link {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}
