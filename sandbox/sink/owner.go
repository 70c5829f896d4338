//go:build linux

package sink

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ownerBudget is how long finding the process behind one connection or
// datagram may take before its event goes without a PID.
const ownerBudget = 20 * time.Millisecond

// maxOwnerCache bounds the socket inodes whose owner is remembered.
const maxOwnerCache = 4096

// ownerFinder finds the process that owns a client socket of the sink's
// network namespace: the socket's inode comes from sock_diag (TCP) or the
// kernel's tables of sockets (net/tcp, net/tcp6, net/udp, net/udp6 under
// root), its owner is the process with a file descriptor linked to
// "socket:[inode]" (or, where the fd directory is closed, a descriptor of
// that inode). Owners are cached by inode. It is safe for concurrent use.
type ownerFinder struct {
	// root is the proc file system, "/proc" but in tests.
	root string
	// self is the sink's own PID: a socket it holds has no owner to
	// report (the sink is never a client in a run, but is in tests).
	self int
	// budget bounds the walk of the processes.
	budget time.Duration

	// diag, when set, finds a TCP socket's inode from its two ends
	// without reading net/tcp (diagTCPInode).
	diag func(local, remote netip.AddrPort) (uint64, error)
	// probe, when set, tells whether a process holds the socket when its
	// fd directory cannot be read (probeFDs).
	probe func(root string, pid int, inode uint64, deadline time.Time) bool
	// scans bounds the table reads in flight: reading net/tcp walks the
	// kernel's whole hash table, milliseconds each.
	scans chan struct{}

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
	return &ownerFinder{root: root, self: self, budget: budget, scans: make(chan struct{}, 2), cache: map[uint64]int{}}
}

// owner returns the PID of the process holding the proto ("tcp" or
// "udp") socket whose local address is src, or 0 when it cannot tell: no
// such socket (any more), a socket of the sink itself, or no process found
// within the budget. dst, when valid, is where a TCP socket is connected
// to. Sockets whose local port is skipPort (the sink's own listening and
// accepted sockets) are never matched.
func (f *ownerFinder) owner(proto string, src, dst netip.AddrPort, skipPort uint16) int {
	if f == nil || !src.IsValid() {
		return 0
	}
	deadline := time.Now().Add(f.budget)
	var inode uint64
	if proto == "tcp" && f.diag != nil && dst.IsValid() {
		inode, _ = f.diag(src, dst)
	}
	if inode == 0 {
		inode = f.scan(proto, src, skipPort, deadline)
	}
	if inode == 0 {
		return 0
	}
	f.mu.Lock()
	pid, ok := f.cache[inode]
	f.mu.Unlock()
	if ok {
		return pid
	}
	pid, complete := 0, true
	if f.self <= 0 || !f.holds(f.self, inode, deadline) {
		pid, complete = f.walk(inode, deadline)
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

// scan is socketInode, given up when other scans hold it past deadline.
func (f *ownerFinder) scan(proto string, src netip.AddrPort, skipPort uint16, deadline time.Time) uint64 {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case f.scans <- struct{}{}:
	case <-t.C:
		return 0
	}
	defer func() { <-f.scans }()
	return f.socketInode(proto, src, skipPort)
}

// socketInode returns the inode of the socket bound to src, from the IPv4
// table and then the IPv6 one (where a dual-stack socket shows an IPv4
// address mapped), reading each at most once. An exact address wins over
// a wildcard one within a table; a wildcard only counts for UDP, where a
// socket that was never connected shows one.
func (f *ownerFinder) socketInode(proto string, src netip.AddrPort, skipPort uint16) uint64 {
	tables := []string{proto, proto + "6"}
	if a := src.Addr(); a.Is6() && !a.Is4In6() {
		tables = tables[1:]
	}
	for _, name := range tables {
		exact, wild := scanSocketTable(filepath.Join(f.root, "net", name), src, skipPort)
		if exact != 0 {
			return exact
		}
		if wild != 0 && proto == "udp" {
			return wild
		}
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
func (f *ownerFinder) walk(inode uint64, deadline time.Time) (pid int, complete bool) {
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
		if f.holds(p, inode, deadline) {
			return p, true
		}
	}
	return 0, true
}

// holds reports whether process pid has a file descriptor of the socket
// inode. It reads the links in /proc/[pid]/fd; where that directory, which
// belongs to the process's uid, is closed to the sink (reading it takes
// CAP_DAC_READ_SEARCH, which the sink does not have), it asks probe.
func (f *ownerFinder) holds(pid int, inode uint64, deadline time.Time) bool {
	dir := filepath.Join(f.root, strconv.Itoa(pid), "fd")
	d, err := os.Open(dir)
	if err != nil {
		if f.probe != nil && errors.Is(err, os.ErrPermission) {
			return f.probe(f.root, pid, inode, deadline)
		}
		return false
	}
	defer d.Close()
	link := "socket:[" + strconv.FormatUint(inode, 10) + "]"
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

// maxProbedFDs bounds the descriptors probed in one process.
const maxProbedFDs = 4096

// probeFDs reports whether process pid holds the socket inode, by taking
// a copy of each of its descriptors in turn (pidfd_getfd, which
// CAP_SYS_PTRACE allows) and comparing the inode; the copy is closed at
// once. The descriptors tried are those below the size of its table
// (FDSize in /proc/[pid]/status).
func probeFDs(root string, pid int, inode uint64, deadline time.Time) bool {
	n := fdTableSize(filepath.Join(root, strconv.Itoa(pid), "status"))
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(pfd)
	for fd := range n {
		if fd%64 == 63 && time.Now().After(deadline) {
			return false
		}
		nfd, err := unix.PidfdGetfd(pfd, fd, 0)
		if err != nil {
			if errors.Is(err, unix.EBADF) {
				continue
			}
			return false
		}
		var st unix.Stat_t
		err = unix.Fstat(nfd, &st)
		unix.Close(nfd)
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK && st.Ino == inode {
			return true
		}
	}
	return false
}

// fdTableSize reads FDSize from a /proc/[pid]/status file: 256 when it
// cannot, and at most maxProbedFDs.
func fdTableSize(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 256
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "FDSize:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return min(n, maxProbedFDs)
			}
		}
	}
	return 256
}

// Sizes and values of the sock_diag protocol (linux/inet_diag.h).
const (
	sizeofNlmsghdr       = 16
	sizeofInetDiagReqV2  = 56
	inetDiagMsgInodeOff  = 68 // idiag_inode in struct inet_diag_msg
	sizeofInetDiagMsg    = 72
	inetDiagNoCookie     = 0xffffffff
	inetDiagAllStates    = 0xffffffff
	inetDiagSockIDSrcOff = 4 + 4 // family, protocol, ext, pad; states
)

// diagTCPInode asks the kernel (NETLINK_SOCK_DIAG) for the TCP socket of
// this network namespace connected from local to remote, and returns its
// inode: one hash lookup, where /proc/net/tcp walks every bucket of the
// table.
func diagTCPInode(local, remote netip.AddrPort) (uint64, error) {
	la, ra := local.Addr().Unmap(), remote.Addr().Unmap()
	family := uint8(unix.AF_INET)
	if !la.Is4() || !ra.Is4() {
		family, la, ra = unix.AF_INET6, netip.AddrFrom16(la.As16()), netip.AddrFrom16(ra.As16())
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(ownerBudget))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)

	req := make([]byte, sizeofNlmsghdr+sizeofInetDiagReqV2)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence
	r := req[sizeofNlmsghdr:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], inetDiagAllStates)
	id := r[inetDiagSockIDSrcOff:]
	// struct inet_diag_sockid: ports and addresses in network order.
	binary.BigEndian.PutUint16(id[0:], local.Port())
	binary.BigEndian.PutUint16(id[2:], remote.Port())
	copy(id[4:20], la.AsSlice())
	copy(id[20:36], ra.AsSlice())
	ne.PutUint32(id[40:], inetDiagNoCookie)
	ne.PutUint32(id[44:], inetDiagNoCookie)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("sock_diag request: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("sock_diag reply: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return 0, fmt.Errorf("sock_diag reply: %w", err)
	}
	for _, m := range msgs {
		switch {
		case m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4:
			if errno := int32(ne.Uint32(m.Data)); errno != 0 {
				return 0, fmt.Errorf("sock_diag: %w", unix.Errno(-errno))
			}
		case m.Header.Type == unix.SOCK_DIAG_BY_FAMILY && len(m.Data) >= sizeofInetDiagMsg:
			return uint64(ne.Uint32(m.Data[inetDiagMsgInodeOff:])), nil
		}
	}
	return 0, errors.New("sock_diag: no socket in the reply")
}
