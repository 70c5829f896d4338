package rubric

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/verifymcp/verifymcp/evidence"
)

func scoreSession(p *probe) verdict {
	s := p.b.Session
	if s == nil {
		return zeroPoint("session signal is observed but the bundle holds no session evidence")
	}
	var code, what string
	switch s.Outcome {
	case evidence.OutcomeOK:
		if late := lateDiscover(s); s.HandshakePath == evidence.HandshakeInitializeFallback && late != nil && p.atLeast("6") {
			// Slow, not silent: the answer came, after the probe's deadline.
			return scored(100, fmt.Sprintf("session established by the fallback initialize; the server answered server/discover %s after it was sent, past the probe's deadline", seconds(late.AfterMS)))
		}
		if s.HandshakePath == evidence.HandshakeInitializeFallback {
			p.emit(CodeDiscoverUnanswered, "",
				"the server gave no answer to server/discover; the session was established by a fallback initialize",
				"handshake path: "+s.HandshakePath)
			return scored(p.p.Session.DiscoverUnansweredScore, "session established after server/discover went unanswered")
		}
		return scored(100, "session established via "+orUnknown(s.HandshakePath))
	case evidence.OutcomeStartCrashed, evidence.OutcomeHandshakeTimeout, evidence.OutcomeProtocolError:
		if denied := p.deniedScripts(p.b.Install); p.atLeast("6") && len(denied) > 0 {
			msg := fmt.Sprintf("the session ended with %s after %s had failed when the sandbox denied it the network; the failure may follow from that, so it is not held against the package",
				s.Outcome, strings.Join(denied, " and "))
			p.emit(CodeSessionAfterDenied, "", msg, p.sessionEvidence(s))
			return zeroPoint(msg)
		}
	}
	switch s.Outcome {
	case evidence.OutcomeStartCrashed:
		code, what = CodeSessionStartCrashed, "the server exited before the handshake completed"
		if p.atLeast(limitsSince) {
			what = "the server exited" + exitText(s) + " before the handshake completed, and its output shows no configuration, network or memory the sandbox withheld"
		}
	case evidence.OutcomeHandshakeTimeout:
		code, what = CodeSessionHandshakeTimeout, "the server did not complete the handshake in time"
		if l := p.b.Sandbox.Limits; p.atLeast(limitsSince) && l.HandshakeTimeoutMS > 0 {
			what = fmt.Sprintf("the server did not complete the handshake within the sandbox's limit of %s, with %s and no network; its output does not say why",
				seconds(l.HandshakeTimeoutMS), cpusText(l.NanoCPUs))
		}
	case evidence.OutcomeProtocolError:
		code, what = CodeSessionProtocolError, "the server broke the MCP protocol during the handshake"
		if p.atLeast(limitsSince) && s.Error != "" {
			what += ": " + p.clip(firstLine(s.Error))
		}
	case evidence.OutcomeOOM:
		code, what = CodeSessionOOM, "the server was killed for exceeding the memory limit"
	default:
		return zeroPoint(fmt.Sprintf("session outcome %q is not one this rubric knows", s.Outcome))
	}
	p.emit(code, "", what, p.sessionEvidence(s))
	return scored(0, "session outcome "+string(s.Outcome))
}

// lateDiscover returns the late answer to server/discover, if one came.
func lateDiscover(s *evidence.Session) *evidence.LateAnswer {
	for i := range s.LateAnswers {
		if s.LateAnswers[i].Method == "server/discover" {
			return &s.LateAnswers[i]
		}
	}
	return nil
}

// sessionEvidence quotes how a failed session ended.
func (p *probe) sessionEvidence(s *evidence.Session) string {
	var parts []string
	if s.ExitCode != nil {
		parts = append(parts, "exit code "+strconv.Itoa(*s.ExitCode))
	}
	if s.OOMKilled {
		parts = append(parts, "oom killed")
	}
	if s.Error != "" {
		parts = append(parts, "error: "+p.clip(s.Error))
	}
	if s.StderrTail != "" {
		parts = append(parts, "stderr: "+p.tail(s.StderrTail))
	}
	if len(parts) == 0 {
		parts = append(parts, "outcome: "+string(s.Outcome))
	}
	return strings.Join(parts, "; ")
}

// maxTruncationFindings bounds the truncation findings of one session; the
// last one counts the rest.
const maxTruncationFindings = 10

// emitTruncations reports each cut the sandbox's bounds made, with its
// counts: what was kept is what every contract check ran over. A bundle
// recorded before cuts were itemised says only that the listing was cut.
func (p *probe) emitTruncations(s *evidence.Session) {
	if len(s.Truncations) == 0 {
		p.emit(CodeOutputTruncated, "", "the listing was cut short by the sandbox's bounds",
			fmt.Sprintf("stdout bytes %d; list %d ms", s.StdoutBytes, s.ListMS))
		return
	}
	for i, t := range s.Truncations {
		if i == maxTruncationFindings-1 && len(s.Truncations) > maxTruncationFindings {
			p.emit(CodeOutputTruncated, "", fmt.Sprintf("%d more cuts of what the server sent", len(s.Truncations)-i),
				fmt.Sprintf("%d cuts in all", len(s.Truncations)))
			return
		}
		subject, msg, ev := truncationText(t)
		p.emit(CodeOutputTruncated, subject, msg, p.clip(ev))
	}
}

// truncationText words one cut as a finding's subject, message and
// evidence.
func truncationText(t evidence.Truncation) (subject, msg, ev string) {
	kind := strings.TrimSuffix(strings.TrimPrefix(t.List, "resources/"), "/list")
	switch kind {
	case "templates":
		kind = "resource templates"
	case "list":
		kind = "resources"
	}
	switch {
	case t.Field != "":
		what := strings.TrimSuffix(kind, "s")
		subject = t.Item
		if t.Item == "" {
			what, subject = "server", t.List
		}
		msg = fmt.Sprintf("the %s of %s %q was %s bytes, longer than the sandbox keeps; the checks ran over what was kept", t.Field, what, t.Item, thousands(t.Bytes))
		if t.Kept > 0 {
			msg = fmt.Sprintf("the %s of %s %q was %s bytes; the first %s were kept and checked", t.Field, what, t.Item, thousands(t.Bytes), thousands(int64(t.Kept)))
		}
	case t.List == "stdout":
		subject, msg = "stdout", "the server wrote more to stdout than the sandbox reads; what came after the bound was not read"
	default:
		subject = t.List
		offered := "more than " + thousands(int64(t.Kept))
		if t.Offered > t.Kept {
			offered = thousands(int64(t.Offered))
		}
		if t.MorePages {
			offered = "at least " + offered + ", with more pages offered,"
		}
		msg = fmt.Sprintf("the server offered %s %s; the sandbox kept the first %s and the checks ran over those", offered, kind, thousands(int64(t.Kept)))
	}
	ev = t.Reason
	if t.Bytes > 0 && t.Field == "" {
		ev += fmt.Sprintf("; %s bytes", thousands(t.Bytes))
	}
	return subject, msg, ev
}

// thousands prints n with comma separators: 100,001.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func scoreProtocolHygiene(p *probe) verdict {
	s := p.b.Session
	if s == nil {
		return zeroPoint("session signal is observed but the bundle holds no session evidence")
	}
	// Findings are claims about what was observed and fire whatever the
	// outcome; the score needs a full session to mean anything.
	pp := p.p.ProtocolHygiene
	score := 100.0
	var notes []string
	if s.NonJSONLines > 0 {
		ev := plural(s.NonJSONLines, "line")
		if len(s.NonJSONSample) > 0 {
			ev += fmt.Sprintf("; first: %q", p.clip(s.NonJSONSample[0]))
		}
		p.emit(CodeStdoutNonJSON, "", fmt.Sprintf("the server wrote %s to stdout", plural(s.NonJSONLines, "non-JSON line")), ev)
		score -= pp.NonJSONPenalty
		notes = append(notes, plural(s.NonJSONLines, "non-JSON stdout line"))
	}
	methods := make([]string, 0, len(s.ListErrors))
	for m := range s.ListErrors {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	failed, unsupported := 0, 0
	var limited []string
	for _, m := range methods {
		// From rubric v11 a list that failed for what the sandbox does not
		// give (the network, configuration) is not assessed, not a
		// finding.
		if pp.ListUnsupportedPenalty != nil {
			if why, ok := evidence.ListLimit(m, s.ListErrors[m]); ok {
				limited = append(limited, why)
				continue
			}
		}
		// From rubric v11 "Method not found" for a list method of a
		// declared capability is the method unsupported, a restatement of
		// the server's answer that clients handle, not a failed call.
		if pp.ListUnsupportedPenalty != nil && methodNotFound(s.ListErrors[m]) {
			unsupported++
			p.emit(CodeListUnsupported, m, fmt.Sprintf("the server declared the capability of %s but answered it with Method not found", m), p.clip(m+": "+s.ListErrors[m]))
			score -= *pp.ListUnsupportedPenalty
			continue
		}
		failed++
		p.emit(CodeListFailed, m, fmt.Sprintf("%s failed", m), p.clip(m+": "+s.ListErrors[m]))
		score -= pp.ListFailedPenalty
	}
	if failed > 0 {
		notes = append(notes, plural(failed, "failed list call"))
	}
	if unsupported > 0 {
		notes = append(notes, plural(unsupported, "declared list method")+" answered with Method not found")
	}
	for _, why := range limited {
		notes = append(notes, "not assessed: "+why)
	}
	if s.Truncated || len(s.Truncations) > 0 {
		p.emitTruncations(s)
		score -= pp.TruncatedPenalty
		notes = append(notes, "listing truncated")
	}
	if s.Outcome != evidence.OutcomeOK {
		return zeroPoint(fmt.Sprintf("session outcome %s; protocol hygiene is scored only for an established session", orUnknown(string(s.Outcome))))
	}
	if len(notes) == 0 {
		return scored(100, "stdout carried only JSON-RPC and every list call answered")
	}
	return scored(score, strings.Join(notes, "; "))
}

func scoreSpecRecency(p *probe) verdict {
	c := p.b.Contract
	if c == nil {
		return zeroPoint("contract signal is observed but the bundle holds no contract")
	}
	v := c.ProtocolVersion
	score, listed := p.p.SpecRecency.Scores[v]
	if !listed {
		score = p.p.SpecRecency.UnlistedScore
	}
	if score < 100 {
		p.emit(CodeSpecOutdated, "", "the negotiated protocol version "+strconv.Quote(v)+" is not a current revision",
			p.clip("protocol version "+strconv.Quote(v)))
	}
	return scored(score, "protocol version "+strconv.Quote(v))
}

// methodNotFound reports whether a list call's recorded error is JSON-RPC's
// -32601, Method not found.
func methodNotFound(err string) bool {
	return strings.Contains(strings.ToLower(err), "method not found") || strings.Contains(err, "-32601")
}
