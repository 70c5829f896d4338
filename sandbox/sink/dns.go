//go:build linux

package sink

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// maxQuestions bounds the events one DNS message can produce.
const maxQuestions = 16

// parseQuery returns the message in b when it is a standard DNS query.
func parseQuery(b []byte) (*dns.Msg, bool) {
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		return nil, false
	}
	if m.Response || m.Opcode != dns.OpcodeQuery || len(m.Question) == 0 {
		return nil, false
	}
	return m, true
}

// dnsEvents writes one dns event per question of q (up to maxQuestions),
// with base's time, phase, ports and destination.
func (s *server) dnsEvents(base Event, q *dns.Msg, proto string) {
	for i, question := range q.Question {
		ev := base
		ev.Type, ev.Proto = TypeDNS, proto
		ev.Data, ev.Truncated = nil, false
		ev.DNSName = strings.TrimSuffix(question.Name, ".")
		ev.DNSType = dns.Type(question.Qtype).String()
		if i == maxQuestions-1 && len(q.Question) > maxQuestions {
			ev.Error = joinErr(ev.Error, fmt.Sprintf("%d more questions in the same message not recorded", len(q.Question)-maxQuestions))
			s.em.emit(ev)
			return
		}
		s.em.emit(ev)
	}
}

// answer packs the reply to q: the advertised address for an A question,
// and an empty NOERROR answer for anything else (AAAA included, so that
// clients fall back to IPv4 and reach the sink). The TTL of 1 second keeps
// caches from carrying answers across phases.
func (s *server) answer(q *dns.Msg) ([]byte, error) {
	m := new(dns.Msg)
	m.SetReply(q)
	m.RecursionAvailable = true
	for _, question := range m.Question {
		if question.Qtype == dns.TypeA && question.Qclass == dns.ClassINET && s.advertise.Is4() {
			a := s.advertise
			if own, ok := s.names.addrFor(question.Name); ok && own.Is4() {
				a = own
			}
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1},
				A:   net.IP(a.AsSlice()),
			})
		}
	}
	if opt := q.IsEdns0(); opt != nil {
		m.SetEdns0(min(max(opt.UDPSize(), 512), 1232), false)
	}
	b, err := m.Pack()
	if err != nil {
		return nil, fmt.Errorf("pack dns answer: %w", err)
	}
	return b, nil
}

// serveDNSOverTCP answers DNS queries framed for TCP (RFC 1035 4.2.2) on a
// connection to port 53. It returns false, having consumed nothing, when
// the stream does not start with a DNS query.
func (s *server) serveDNSOverTCP(c *net.TCPConn, br *bufio.Reader, base Event) bool {
	base.Data, base.Truncated, base.Bytes = nil, false, 0
	first := true
	for {
		lb, err := br.Peek(2)
		if err != nil {
			return !first
		}
		n := int(binary.BigEndian.Uint16(lb))
		if n > br.Size()-2 {
			if first {
				return false
			}
			// Too long for the parser's buffer: record and stop.
			ev := base
			ev.Type, ev.Proto, ev.Error = TypeDNS, "tcp", fmt.Sprintf("dns message of %d bytes not parsed", n)
			s.em.emit(ev)
			return true
		}
		msg, err := br.Peek(2 + n)
		if err != nil {
			return !first
		}
		q, ok := parseQuery(msg[2:])
		if !ok {
			return !first
		}
		if _, err := br.Discard(2 + n); err != nil {
			return true
		}
		ev := base
		if !first {
			// Later queries on the connection carry their own time and phase.
			ev.Time, ev.Phase = time.Now(), s.currentPhase()
		}
		first = false
		reply, err := s.answer(q)
		if err == nil {
			framed := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reply)), uint16(len(reply)))
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, err = c.Write(append(framed, reply...))
		}
		if err != nil {
			ev.Error = joinErr(ev.Error, "answer: "+err.Error())
		}
		s.dnsEvents(ev, q, "tcp")
		if errors.Is(err, io.EOF) {
			return true
		}
	}
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
