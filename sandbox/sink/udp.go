//go:build linux

package sink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime/debug"
	"syscall"
	"time"
	"unsafe"

	"github.com/ti-mo/conntrack"
	"golang.org/x/sys/unix"
)

// udpReadBuffer is the socket receive buffer the sink asks for. Bursts
// queue in the kernel rather than in the sink, and a burst the buffer
// cannot hold is dropped by the kernel, not the sink's memory.
const udpReadBuffer = 4 << 20

// listenUDP opens a UDP socket that reports each datagram's destination
// address (IP_PKTINFO), which the conntrack lookup needs and which the DNS
// answer must come from for the kernel to undo the redirect on it.
func listenUDP(network string, addr *net.UDPAddr) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(network, address string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			// SO_RCVBUFFORCE passes net.core.rmem_max with CAP_NET_ADMIN,
			// which the sink has; without it the capped request is fine.
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, udpReadBuffer) != nil {
				_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, udpReadBuffer)
			}
			if network == "udp6" {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
				return
			}
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
		})
		if err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("enable packet info: %w", serr)
		}
		return nil
	}}
	pc, err := lc.ListenPacket(context.Background(), network, addr.String())
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}

// udpLoop reads datagrams until the socket closes or shutdown's deadline.
// One buffer serves every datagram: events are written before the next
// read, so a flood costs time, not memory.
func (s *server) udpLoop(c *net.UDPConn) {
	buf := make([]byte, 1<<16)
	oob := make([]byte, 256)
	backoff := time.Duration(0)
	for {
		n, oobn, flags, src, err := c.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if s.isClosing() || errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.errorEvent("udp read: %v", err)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		s.handleDatagram(c, buf[:n], flags&unix.MSG_TRUNC != 0, src, pktinfoDst(oob[:oobn]), time.Now())
	}
}

// handleDatagram records one datagram, answering it when it is a DNS
// query.
func (s *server) handleDatagram(c *net.UDPConn, b []byte, trunc bool, src netip.AddrPort, local netip.Addr, now time.Time) {
	src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
	ev := Event{Type: TypeUDP, Time: now, Phase: s.currentPhase(), SrcPort: int(src.Port()), Bytes: int64(len(b))}
	defer func() {
		if r := recover(); r != nil {
			ev.Type = TypeError
			ev.Error = fmt.Sprintf("sink panic handling datagram: %v\n%s", r, debug.Stack())
			ev.Data = b[:min(len(b), s.cfg.MaxCapture)]
			s.em.emit(ev)
		}
	}()
	ev.PID = s.owners.owner("udp", src, netip.AddrPort{}, uint16(s.cfg.UDPPort))
	if !local.IsValid() {
		ev.Error = "original destination: datagram carried no destination address"
	} else if dst, err := s.origDst(netip.AddrPortFrom(local, uint16(s.cfg.UDPPort)), src); err != nil {
		ev.Error = "original destination: " + err.Error()
	} else {
		s.setDst(&ev, dst)
	}
	if q, ok := parseQuery(b); ok {
		reply, err := s.answer(q)
		if err == nil {
			_, _, err = c.WriteMsgUDPAddrPort(reply, pktinfoSrc(local), src)
		}
		if err != nil {
			ev.Error = joinErr(ev.Error, "answer: "+err.Error())
		}
		s.dnsEvents(ev, q, "udp")
		return
	}
	// Events are written synchronously, so Data may share the read buffer.
	ev.Data = b[:min(len(b), s.cfg.MaxCapture)]
	ev.Truncated = trunc || len(b) > s.cfg.MaxCapture
	s.em.emit(ev)
}

// pktinfoDst returns the destination address of a received datagram from
// its IP_PKTINFO or IPV6_PKTINFO control message (after the redirect,
// that is the loopback address the sink received it on).
func pktinfoDst(oob []byte) netip.Addr {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return netip.Addr{}
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_PKTINFO && len(m.Data) >= unix.SizeofInet4Pktinfo:
			// struct in_pktinfo { int ifindex; in_addr spec_dst; in_addr addr; }
			return netip.AddrFrom4([4]byte(m.Data[8:12]))
		case m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_PKTINFO && len(m.Data) >= unix.SizeofInet6Pktinfo:
			// struct in6_pktinfo { in6_addr addr; int ifindex; }
			return netip.AddrFrom16([16]byte(m.Data[0:16])).Unmap()
		}
	}
	return netip.Addr{}
}

// pktinfoSrc returns the control message that makes a reply leave from
// local. The redirect's conntrack entry expects the reply from exactly the
// address the query was redirected to; a reply from another local address
// would not be translated back and the client would drop it.
func pktinfoSrc(local netip.Addr) []byte {
	if !local.IsValid() {
		return nil
	}
	if local.Is4() {
		b := make([]byte, unix.CmsgSpace(unix.SizeofInet4Pktinfo))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
		h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
		pi := (*unix.Inet4Pktinfo)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
		pi.Spec_dst = local.As4()
		return b
	}
	b := make([]byte, unix.CmsgSpace(unix.SizeofInet6Pktinfo))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
	h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
	pi := (*unix.Inet6Pktinfo)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
	pi.Addr = local.As16()
	return b
}

// ctLookup finds the original destination of redirected datagrams in the
// conntrack table.
type ctLookup struct{ c *conntrack.Conn }

func dialConntrack() (*ctLookup, error) {
	c, err := conntrack.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("conntrack unavailable: %w", err)
	}
	return &ctLookup{c: c}, nil
}

func (l *ctLookup) Close() error { return l.c.Close() }

// origDst looks up the flow whose reply tuple runs from the sink's socket
// (local) back to the datagram's source (remote); the flow's original
// tuple holds the destination the client addressed.
func (l *ctLookup) origDst(local, remote netip.AddrPort) (netip.AddrPort, error) {
	var f conntrack.Flow
	f.TupleReply.IP.SourceAddress = local.Addr()
	f.TupleReply.IP.DestinationAddress = remote.Addr()
	f.TupleReply.Proto.Protocol = unix.IPPROTO_UDP
	f.TupleReply.Proto.SourcePort = local.Port()
	f.TupleReply.Proto.DestinationPort = remote.Port()
	got, err := l.c.Get(f)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("conntrack lookup of reply tuple %v -> %v: %w", local, remote, err)
	}
	return netip.AddrPortFrom(got.TupleOrig.IP.DestinationAddress.Unmap(), got.TupleOrig.Proto.DestinationPort), nil
}
