//go:build docker

package sandbox_test

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/rubric"
)

// findingsOf returns the findings of a bundle with the given code.
func findingsOf(b *evidence.Bundle, code string) []rubric.Finding {
	var out []rubric.Finding
	for _, f := range rubric.Evaluate(b, rubric.Current()).Findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// TestLookupIsNotLiteralIP: an ordinary name lookup is a DNS event with
// the name, in the script step and in the run phase; a literal-IP finding
// fires only for the address the package's own code chose. Before the
// watched containers' resolver pointed at the sink, every lookup reached
// the sink as a packet to the host's nameserver and was reported as
// literal-IP egress.
func TestLookupIsNotLiteralIP(t *testing.T) {
	s := behaviourSandbox(t)
	const lookupThenConnect = `require('dns').lookup('example.com', {family: 4}, (e, addr) => { for (const [port, host] of [[80, '203.0.113.9'], [443, addr]]) { const c = require('net').connect(port, host); c.on('error', () => {}); c.on('connect', () => c.end()); } });`
	b, _ := scanFixture(t, s, fixture{
		Name:        "lookup",
		Postinstall: `node -e "` + lookupThenConnect + `; setTimeout(() => {}, 500)"`,
		OnStart:     lookupThenConnect,
	})
	if b.Behavior == nil {
		t.Fatalf("no behaviour evidence: %+v", b.Signals[evidence.SignalBehavior])
	}
	for _, phase := range []string{evidence.PhaseScripts, evidence.PhaseRun} {
		var dns, literal []evidence.NetEvent
		for _, n := range b.Behavior.Network {
			if n.Phase != phase {
				continue
			}
			if n.Kind == "dns" {
				dns = append(dns, n)
			}
			if n.LiteralIP {
				literal = append(literal, n)
			}
		}
		if len(dns) != 1 || dns[0].DNSName != "example.com" || dns[0].DNSType != "A" || dns[0].LiteralIP {
			t.Errorf("%s: DNS events %+v, want exactly one A lookup of example.com, not literal", phase, dns)
		}
		if len(literal) != 1 || literal[0].DstIP != "203.0.113.9" || literal[0].DstPort != 80 || literal[0].Kind != "tcp" {
			t.Errorf("%s: literal-IP events %+v, want exactly the connect to 203.0.113.9:80", phase, literal)
		}
		// The connection to the address the lookup gave out is tied to
		// the name, though it sent no TLS SNI or HTTP Host.
		named := false
		for _, n := range b.Behavior.Network {
			if n.Phase == phase && n.Kind == "tcp" && n.DstPort == 443 && n.LookedUp == "example.com" && !n.LiteralIP {
				named = true
			}
		}
		if !named {
			t.Errorf("%s: no connection to 443 tied to example.com: %+v", phase, b.Behavior.Network)
		}
	}
	for _, f := range findingsOf(b, rubric.CodeEgressAttempt) {
		if strings.Contains(f.Message, ":443") && !strings.Contains(f.Message, "example.com:443") {
			t.Errorf("egress finding %q names an address, not example.com", f.Message)
		}
	}
	got := findingsOf(b, rubric.CodeEgressLiteralIP)
	if len(got) != 2 {
		t.Fatalf("literal-IP findings %+v, want one per phase", got)
	}
	for _, f := range got {
		if !strings.Contains(f.Evidence, "203.0.113.9:80") {
			t.Errorf("literal-IP finding %s %q: evidence %q does not name the address the code chose", f.Subject, f.Message, f.Evidence)
		}
	}
}
