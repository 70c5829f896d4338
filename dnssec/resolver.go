package dnssec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// ErrResolver is wrapped by every error that comes from asking the
// resolver: no answer, a transport error, or an answer to another question.
var ErrResolver = errors.New("resolver failed")

// ednsSize is the UDP payload size advertised: the DNS flag day 2020 value,
// which avoids IP fragmentation; larger answers come back truncated and are
// asked again over TCP.
const ednsSize = 1232

// client asks one recursive resolver for DNSSEC data: DO set so that it
// returns signatures and denial proofs, CD set so that a validating
// resolver hands over bogus data for us to judge instead of a SERVFAIL.
type client struct {
	addr     string
	udp, tcp *dns.Client
	attempts int
}

func newClient(addr string, timeout time.Duration, attempts int) *client {
	return &client{
		addr:     addr,
		udp:      &dns.Client{Net: "udp", Timeout: timeout, UDPSize: ednsSize},
		tcp:      &dns.Client{Net: "tcp", Timeout: timeout},
		attempts: attempts,
	}
}

// query asks one question. A response with any RCODE is returned as is;
// an error means no usable response arrived.
func (c *client) query(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	m.CheckingDisabled = true
	m.SetEdns0(ednsSize, true)

	var lastErr error
	for attempt := 0; attempt < c.attempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: %s %s: %w", ErrResolver, strings.TrimSuffix(name, "."), dns.TypeToString[qtype], err)
		}
		r, _, err := c.udp.ExchangeContext(ctx, m, c.addr)
		if r != nil && r.Truncated {
			r, _, err = c.tcp.ExchangeContext(ctx, m, c.addr)
		}
		if err == nil {
			err = checkReply(m, r)
		}
		if err == nil {
			return r, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("%w: %s %s at %s: %w", ErrResolver, name, dns.TypeToString[qtype], c.addr, lastErr)
}

func checkReply(q, r *dns.Msg) error {
	if r == nil {
		return errors.New("no response")
	}
	if !r.Response {
		return errors.New("response without QR bit")
	}
	if r.Truncated {
		return errors.New("response truncated even over TCP")
	}
	if len(r.Question) != 1 || !strings.EqualFold(r.Question[0].Name, q.Question[0].Name) ||
		r.Question[0].Qtype != q.Question[0].Qtype || r.Question[0].Qclass != q.Question[0].Qclass {
		return errors.New("response to another question")
	}
	return nil
}
