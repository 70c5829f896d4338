//go:build linux

package sink

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// clientScript connects or sends as argv[1] says, prints its PID and its
// local port, and keeps its socket open until stdin ends.
const clientScript = `
import socket, ssl, struct, sys, os
mode, port = sys.argv[1], int(sys.argv[2])
if mode in ("tcp", "tcp6", "tls"):
    fam, host = (socket.AF_INET6, "::1") if mode == "tcp6" else (socket.AF_INET, "127.0.0.1")
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.connect((host, port))
    print(os.getpid(), s.getsockname()[1], flush=True)
    try:
        if mode == "tls":
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            s = ctx.wrap_socket(s, server_hostname="pid.example")
            s.sendall(b"GET /pid HTTP/1.1\r\nHost: pid.example\r\nConnection: close\r\n\r\n")
        else:
            s.sendall(b"pid-canary\n")
            s.shutdown(socket.SHUT_WR)
        while s.recv(4096):
            pass
    except (OSError, ssl.SSLError):
        pass
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    msg = b"udp-canary"
    if mode == "dns":
        msg = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x03pid\x07example\x00" + struct.pack(">HH", 1, 1)
    s.sendto(msg, ("127.0.0.1", port))
    print(os.getpid(), s.getsockname()[1], flush=True)
    if mode == "dns":
        s.recv(512)
sys.stdin.read()
`

// TestEventPIDFromChildProcess checks, on loopback, that the events of a
// connection, a datagram and a DNS query made by a child process carry
// its PID.
func TestEventPIDFromChildProcess(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	// A loaded machine may walk /proc slowly: the budget is generous here.
	h := startSink(t, Config{ownerBudget: 5 * time.Second})
	tests := []struct {
		mode  string
		port  int
		match func(port int) func(Event) bool
		check func(t *testing.T, ev Event)
	}{
		{mode: "tcp", port: h.cfg.TCPPort, match: func(p int) func(Event) bool { return bySrcPort(TypeTCP, p) },
			check: func(t *testing.T, ev Event) {
				if string(ev.Data) != "pid-canary\n" {
					t.Errorf("data = %q, want pid-canary", ev.Data)
				}
			}},
		{mode: "tcp6", port: h.cfg.TCPPort, match: func(p int) func(Event) bool { return bySrcPort(TypeTCP, p) }},
		{mode: "tls", port: h.cfg.TCPPort, match: func(p int) func(Event) bool { return bySrcPort(TypeTCP, p) },
			check: func(t *testing.T, ev Event) {
				if !ev.TLS || ev.HTTPTarget != "/pid" {
					t.Errorf("tls event = TLS %v target %q, want a TLS request for /pid", ev.TLS, ev.HTTPTarget)
				}
			}},
		{mode: "udp", port: h.cfg.UDPPort, match: func(p int) func(Event) bool { return bySrcPort(TypeUDP, p) }},
		{mode: "dns", port: h.cfg.UDPPort, match: func(p int) func(Event) bool { return bySrcPort(TypeDNS, p) },
			check: func(t *testing.T, ev Event) {
				if ev.DNSName != "pid.example" || ev.Proto != "udp" {
					t.Errorf("dns event = %s over %s, want pid.example over udp", ev.DNSName, ev.Proto)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			if tc.mode == "tcp6" && !ipv6Enabled() {
				t.Skip("IPv6 disabled")
			}
			if tc.mode == "tcp6" {
				if l, err := net.Listen("tcp6", "[::1]:0"); err != nil {
					t.Skipf("no IPv6 loopback: %v", err)
				} else {
					l.Close()
				}
			}
			pid, port, stop := runClient(t, py, tc.mode, tc.port)
			ev := h.wait(tc.match(port), 10*time.Second)
			stop()
			if ev.PID != pid {
				t.Errorf("%s event PID = %d, want the client's %d (event %+v)", tc.mode, ev.PID, pid, ev)
			}
			if tc.check != nil {
				tc.check(t, ev)
			}
		})
	}
}

// runClient starts clientScript and returns the PID and local port it
// printed, and a function that lets it end and waits for it.
func runClient(t *testing.T, py, mode string, port int) (pid, localPort int, stop func()) {
	t.Helper()
	cmd := exec.Command(py, "-c", clientScript, mode, strconv.Itoa(port))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start client: %v", err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("client %s: %v; stderr: %s", mode, err, stderr.String())
		}
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("client %s printed nothing: %v; stderr: %s", mode, err, stderr.String())
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		t.Fatalf("client %s printed %q", mode, line)
	}
	pid, _ = strconv.Atoi(f[0])
	localPort, _ = strconv.Atoi(f[1])
	if pid != cmd.Process.Pid {
		t.Logf("client %s runs as PID %d, started as %d", mode, pid, cmd.Process.Pid)
	}
	return pid, localPort, stop
}

// TestEventPIDOwnSocket checks that a connection of the sink's own
// process (every other test's client) gets no PID, without error.
func TestEventPIDOwnSocket(t *testing.T) {
	h := startSink(t, Config{})
	c := dialTCP(t, h)
	port := localPort(c)
	_, _ = c.Write([]byte("own"))
	c.Close()
	ev := h.wait(bySrcPort(TypeTCP, port), 3*time.Second)
	if ev.PID != 0 || ev.Error != "" {
		t.Errorf("own connection: PID %d, error %q; want 0 and none", ev.PID, ev.Error)
	}
}

// BenchmarkOwner measures a lookup on the real /proc: the socket's inode
// from /proc/net/tcp, then the walk of the processes to this one (the
// skip of the sink's own PID is off), without the cache; and a walk of
// every process that finds nothing.
func BenchmarkOwner(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	src := c.LocalAddr().(*net.TCPAddr).AddrPort()
	skip := uint16(l.Addr().(*net.TCPAddr).Port)
	names, _ := os.ReadDir("/proc")
	procs := 0
	for _, n := range names {
		if _, err := strconv.Atoi(n.Name()); err == nil {
			procs++
		}
	}
	b.Logf("%d processes in /proc", procs)
	b.Run("found", func(b *testing.B) {
		for b.Loop() {
			f := newOwnerFinder("/proc", 0, time.Second)
			if got := f.owner("tcp", src, netip.AddrPort{}, skip); got != os.Getpid() {
				b.Fatalf("owner = %d, want %d", got, os.Getpid())
			}
		}
	})
	b.Run("own_socket", func(b *testing.B) {
		for b.Loop() {
			f := newOwnerFinder("/proc", os.Getpid(), time.Second)
			if got := f.owner("tcp", src, netip.AddrPort{}, skip); got != 0 {
				b.Fatalf("owner = %d, want 0", got)
			}
		}
	})
	b.Run("found_sock_diag", func(b *testing.B) {
		for b.Loop() {
			f := newOwnerFinder("/proc", 0, time.Second)
			f.diag = diagTCPInode
			if got := f.owner("tcp", src, l.Addr().(*net.TCPAddr).AddrPort(), skip); got != os.Getpid() {
				b.Fatalf("owner = %d, want %d", got, os.Getpid())
			}
		}
	})
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if ino, err := diagTCPInode(src, l.Addr().(*net.TCPAddr).AddrPort()); ino == 0 || err != nil {
				b.Fatalf("diag = %d, %v", ino, err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		f := newOwnerFinder("/proc", 0, time.Second)
		f.diag = diagTCPInode
		for b.Loop() {
			f.owner("tcp", src, l.Addr().(*net.TCPAddr).AddrPort(), skip)
		}
	})
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		b.Run("scan_"+table, func(b *testing.B) {
			for b.Loop() {
				scanSocketTable("/proc/net/"+table, src, skip)
			}
		})
	}
	b.Run("probe_fds", func(b *testing.B) {
		ino, err := diagTCPInode(src, l.Addr().(*net.TCPAddr).AddrPort())
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if !probeFDs("/proc", os.Getpid(), ino, time.Now().Add(time.Second)) {
				b.Fatal("probeFDs: not found")
			}
		}
	})
	b.Run("full_walk", func(b *testing.B) {
		f := newOwnerFinder("/proc", os.Getpid(), time.Second)
		for b.Loop() {
			if pid, complete := f.walk(0, time.Now().Add(time.Second)); pid != 0 || !complete {
				b.Fatalf("walk = %d, %v", pid, complete)
			}
		}
	})
}

// TestDiagTCPInode checks that sock_diag finds the same socket as
// /proc/net/tcp{,6}, and nothing for a connection that does not exist.
func TestDiagTCPInode(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "tcp6" {
				addr = "[::1]:0"
			}
			l, err := net.Listen(network, addr)
			if err != nil {
				t.Skipf("listen %s: %v", network, err)
			}
			defer l.Close()
			c, err := net.Dial(network, l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			src := c.LocalAddr().(*net.TCPAddr).AddrPort()
			dst := l.Addr().(*net.TCPAddr).AddrPort()
			got, err := diagTCPInode(src, dst)
			if err != nil {
				t.Fatalf("diagTCPInode(%v, %v): %v", src, dst, err)
			}
			want := newOwnerFinder("/proc", 0, time.Second).socketInode("tcp", src, dst.Port())
			if got == 0 || got != want {
				t.Errorf("sock_diag inode = %d, /proc/net inode = %d", got, want)
			}
			other := netip.AddrPortFrom(dst.Addr(), dst.Port()+1)
			if ino, err := diagTCPInode(src, other); ino != 0 || err == nil {
				t.Errorf("diagTCPInode to a port never connected = %d, %v; want an error", ino, err)
			}
		})
	}
}

// TestProbeFDs checks the pidfd_getfd probe on this process's own socket.
func TestProbeFDs(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inode, err := diagTCPInode(c.LocalAddr().(*net.TCPAddr).AddrPort(), l.Addr().(*net.TCPAddr).AddrPort())
	if err != nil || inode == 0 {
		t.Fatalf("diagTCPInode = %d, %v", inode, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	if _, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	if !probeFDs("/proc", os.Getpid(), inode, deadline) {
		t.Errorf("probeFDs did not find socket %d in this process", inode)
	}
	if probeFDs("/proc", os.Getpid(), 1<<62, deadline) {
		t.Errorf("probeFDs found a socket that does not exist")
	}
}

func TestFDTableSize(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		status string
		want   int
	}{
		{"Name:\tnode\nFDSize:\t64\nGroups:\n", 64},
		{"FDSize:\t1000000\n", maxProbedFDs},
		{"FDSize:\tx\n", 256},
		{"Name:\tnode\n", 256},
	} {
		p := filepath.Join(dir, "status")
		if err := os.WriteFile(p, []byte(tc.status), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := fdTableSize(p); got != tc.want {
			t.Errorf("fdTableSize(%q) = %d, want %d", tc.status, got, tc.want)
		}
	}
	if got := fdTableSize(filepath.Join(dir, "missing")); got != 256 {
		t.Errorf("fdTableSize of a missing file = %d, want 256", got)
	}
}
